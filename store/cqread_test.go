package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func TestConsumeQueueUnits(t *testing.T) {
	s := openT(t, testConfig(t, t.TempDir()))
	defer s.Close()
	var wrote []PutResult
	for i := range 5 {
		wrote = append(wrote, putSync(t, s, testMsg("CQ", 1, i, 32)))
	}
	require.Eventually(t, func() bool { return s.MaxOffset("CQ", 1) == 5 }, 5*time.Second, time.Millisecond)

	units, ok := s.ConsumeQueueUnits("CQ", 1, 1, 3, nil)
	require.True(t, ok)
	require.Len(t, units, 3)
	for i, u := range units {
		w := wrote[i+1]
		require.Equal(t, int64(i+1), u.QueueOffset)
		require.Equal(t, w.WroteOffset, u.PhyOffset)
		require.Equal(t, w.WroteBytes, u.Size)
		require.Equal(t, message.TagsHash("tag"+string(rune('0'+(i+1)%3))), u.TagsCode)
	}
	units, ok = s.ConsumeQueueUnits("CQ", 1, 3, 100, units[:0])
	require.True(t, ok)
	require.Len(t, units, 2)
	units, ok = s.ConsumeQueueUnits("CQ", 1, 5, 10, nil)
	require.True(t, ok)
	require.Empty(t, units)
	_, ok = s.ConsumeQueueUnits("CQ", 2, 0, 10, nil)
	require.False(t, ok)
}
