package failover

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecodeOffsetMsgID(t *testing.T) {
	host, off, ok := decodeOffsetMsgID("0A4D001E00002A9F00000000000004D2")
	require.True(t, ok)
	require.Equal(t, "10.77.0.30:10911", host)
	require.Equal(t, int64(1234), off)
	_, _, ok = decodeOffsetMsgID("zz")
	require.False(t, ok)
}

// Two hosts in one epoch range is split brain; an acknowledged offset
// that holds another host's record is a stale ack; a missing key is lost;
// an old master's ack after the new master's first is a stale-window ack.
func TestCheck(t *testing.T) {
	t0 := time.Now()
	cache := EpochCache{EpochList: []EpochEntry{{Epoch: 1, StartOffset: 0, EndOffset: 100}, {Epoch: 2, StartOffset: 100, EndOffset: -1}}}
	a, b := "10.77.0.30:10911", "10.77.0.31:10911"
	stored := []Stored{{"k0", a, 0}, {"k1", a, 50}, {"k2", b, 100}, {"k3", b, 150}}
	acks := []Ack{
		{Key: "k0", OK: true, Host: a, PhyOffset: 0, Start: t0.Add(-time.Second), End: t0.Add(-time.Second)},
		{Key: "k2", OK: true, Host: b, PhyOffset: 100, Start: t0.Add(time.Second), End: t0.Add(2 * time.Second)},
	}
	var r Result
	Check(&r, acks, nil, stored, cache, t0, a, b)
	require.Zero(t, r.Lost)
	require.False(t, r.SplitBrain())
	require.Equal(t, 2*time.Second, r.Recovery)

	acks = append(acks, Ack{Key: "kx", OK: true, Host: a, PhyOffset: 150, Start: t0.Add(3 * time.Second), End: t0.Add(3 * time.Second)})
	stored = append(stored, Stored{"k4", a, 160})
	r = Result{}
	Check(&r, acks, nil, stored, cache, t0, a, b)
	require.Equal(t, 1, r.Lost)
	require.Equal(t, 1, r.StaleAcks)
	require.Equal(t, []int{2}, r.SplitEpochs)
	require.Equal(t, 1, r.StaleWindowAcks) // kx: the old master took it after the new one took k2
}
