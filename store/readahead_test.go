package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store/internal/smaps"
)

func randomRead(t *testing.T, p *byte) bool {
	t.Helper()
	rr, err := smaps.RandomRead(p)
	require.NoError(t, err)
	return rr
}

// TestReadaheadOffAheadOfTheWriter checks the commit log's readahead
// advice (adviseUnwritten): a segment being written has readahead off, a
// segment the writer has left gets it back, and after a restart only the
// unwritten tail of the writer's segment has it off. Without the advice a
// prefault piece in every read_ahead_kb (8 MiB on virtio) zeroed a whole
// readahead window in one call (22 ms of kernel CPU on a fresh VM).
func TestReadaheadOffAheadOfTheWriter(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.MappedFileSizeCommitLog = 8 << 20
	cfg.MessageIndexEnable = false
	s := openT(t, cfg)

	first := s.cl.last()
	require.True(t, randomRead(t, &first.data[0]), "a fresh segment has readahead off")

	// Fill past the first segment.
	msg := testMsg("RA", 0, 0, 1024)
	n := int(cfg.MappedFileSizeCommitLog)/msg.RecordSize() + 100
	var c collector
	c.wg.Add(n)
	for i := 0; i < n; i++ {
		s.Put(testMsg("RA", int32(i%4), i, 1024), c.done)
	}
	c.wg.Wait()
	for _, r := range c.res {
		require.Equal(t, PutOK, r.Status)
	}
	cur := s.cl.last()
	require.NotEqual(t, first, cur, "the writer rolled")
	require.True(t, randomRead(t, &cur.data[0]), "the writer's segment has readahead off")
	require.Eventually(t, func() bool { return !randomRead(t, &first.data[0]) }, 5*time.Second, time.Millisecond,
		"the segment the writer left gets readahead back")
	end := s.MaxPhyOffset()
	require.NoError(t, s.Close())

	s = openT(t, cfg)
	defer s.Close()
	cur = s.cl.find(end)
	require.NotNil(t, cur)
	require.False(t, randomRead(t, &cur.data[0]), "after a restart the written head reads ahead (cold reads)")
	tail := (end - cur.start + residentPageSize - 1) &^ (residentPageSize - 1)
	require.True(t, randomRead(t, &cur.data[tail]), "after a restart the unwritten tail has readahead off")
	require.False(t, randomRead(t, &s.cl.list()[0].data[0]), "a sealed segment reads ahead after a restart")
}
