package transporttest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The watch notices growth past its limit, reports it and aborts once.
func TestWatchHeapTrips(t *testing.T) {
	inner := &testing.T{}
	aborted := make(chan struct{}, 2)
	var hold [][]byte
	w := WatchHeap(inner, 8<<20, func() { aborted <- struct{}{} })
	for range 64 {
		hold = append(hold, make([]byte, 1<<20))
	}
	<-aborted
	w.Stop()
	require.True(t, w.Tripped())
	require.True(t, inner.Failed())
	require.GreaterOrEqual(t, w.Peak(), uint64(8<<20))
	require.Len(t, aborted, 0)
	require.Len(t, hold, 64)
}
