package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A record is readable by offset from the moment its put completes (the
// reply a client acts on), without waiting for dispatch; under SYNC_FLUSH
// that moment is after the flush.
func TestReadRecordRightAfterPut(t *testing.T) {
	for _, mode := range []FlushType{AsyncFlush, SyncFlush} {
		cfg := testConfig(t, t.TempDir())
		cfg.FlushDiskType = mode
		s := openT(t, cfg)
		for i := range 200 {
			m := testMsg("RR", 0, i, 64)
			done := make(chan error, 1)
			s.Put(m, func(r PutResult) {
				if r.Status != PutOK {
					done <- r.Err
					return
				}
				_, err := s.ReadRecord(r.WroteOffset, 0)
				done <- err
			})
			require.NoError(t, <-done, "mode %v record %d", mode, i)
		}
		_, err := s.ReadRecord(s.MaxPhyOffset(), 0)
		require.ErrorIs(t, err, ErrOffsetNotFound)
		require.NoError(t, s.Close())
	}
}
