package ha

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The rate is the byte count of the last complete second (Java
// FlowMonitor.getTransferredByteInSecond); a gap of seconds reads 0.
func TestRate(t *testing.T) {
	var r Rate
	t0 := time.Unix(1000, 0)
	r.Add(10, t0)
	r.Add(5, t0.Add(900*time.Millisecond))
	require.Zero(t, r.PerSecond(t0.Add(950*time.Millisecond)))
	require.Equal(t, int64(15), r.PerSecond(t0.Add(time.Second)))
	r.Add(7, t0.Add(1500*time.Millisecond))
	require.Equal(t, int64(15), r.PerSecond(t0.Add(1999*time.Millisecond)))
	require.Equal(t, int64(7), r.PerSecond(t0.Add(2*time.Second)))
	require.Zero(t, r.PerSecond(t0.Add(5*time.Second)))
}
