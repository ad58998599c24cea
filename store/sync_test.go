package store

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

// Every SYNC_FLUSH acknowledgement and every consumer-visible unit comes
// after the fdatasync that covers its record.
func TestSyncFlushGroupCommitDurability(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.FlushDiskType = SyncFlush
	s := openT(t, cfg)
	defer s.Close()
	var early atomic.Int32
	s.OnArrival(func(topic string, qid int32, max, tags int64, props string) {
		var res GetResult
		s.GetMessages(topic, qid, max-1, 1, math.MaxInt32, nil, &res)
		if res.Status != Found {
			early.Add(1)
		} else if phyEnd := s.FlushedOffset(); int64(len(res.Records[0]))+recordPhy(res.Records[0]) > phyEnd {
			early.Add(1)
		}
		res.Release()
	})
	const writers, per = 16, 100
	var wg sync.WaitGroup
	var notDurable, failed atomic.Int32
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				ch := make(chan struct{})
				s.Put(testMsg("G", int32(w%4), i, 500), func(r PutResult) {
					if r.Status != PutOK {
						failed.Add(1)
					} else if r.WroteOffset+int64(r.WroteBytes) > s.FlushedOffset() {
						notDurable.Add(1)
					}
					close(ch)
				})
				<-ch
			}
		}()
	}
	wg.Wait()
	waitDispatched(t, s)
	require.Zero(t, failed.Load())
	require.Zero(t, notDurable.Load(), "acknowledged before its fdatasync")
	require.Zero(t, early.Load(), "exposed to consumers before its fdatasync")
	var total int64
	for q := int32(0); q < 4; q++ {
		total += s.MaxOffset("G", q)
	}
	require.Equal(t, int64(writers*per), total)
	require.NoError(t, s.Check())
}

func recordPhy(rec []byte) int64 {
	var v int64
	for _, b := range rec[28:36] {
		v = v<<8 | int64(b)
	}
	return v
}

// A deleted topic does not come back from the commit log on restart, even
// when re-created with new messages.
func TestDeleteTopicStaysDeleted(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	for i := 0; i < 20; i++ {
		require.Equal(t, PutOK, putSync(t, s, testMsg("Gone", 0, i, 10)).Status)
	}
	waitDispatched(t, s)
	require.NoError(t, s.DeleteTopic("Gone"))
	require.Equal(t, int64(0), s.MaxOffset("Gone", 0))
	r := putSync(t, s, testMsg("Gone", 0, 100, 10))
	require.Equal(t, int64(0), r.QueueOffset, "re-created topic starts at 0")
	waitDispatched(t, s)
	require.NoError(t, s.Close())

	for _, crash := range []bool{false, true} {
		if crash {
			// Simulate a crash: the abort file is present at start.
			s = openT(t, cfg)
			dir := snapshot(t, cfg.RootDir)
			require.NoError(t, s.Close())
			c := cfg
			c.RootDir, c.CommitLogDir = dir, dir+"/commitlog"
			s = openT(t, c)
		} else {
			s = openT(t, cfg)
		}
		require.Equal(t, int64(1), s.MaxOffset("Gone", 0))
		var res GetResult
		s.GetMessages("Gone", 0, 0, 32, math.MaxInt32, nil, &res)
		require.Equal(t, Found, res.Status)
		require.Len(t, res.Records, 1)
		require.Equal(t, r.WroteOffset, recordPhy(res.Records[0]))
		res.Release()
		require.NoError(t, s.Close())
	}
}

// SYNC_FLUSH records go through the staging buffer (stage.go): concurrent
// writers of mixed sizes and batches across several segment rolls, while
// group commits write staged bytes out, end up intact, in order, and
// readable again after a restart.
func TestSyncFlushStagingAcrossSegments(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.FlushDiskType = SyncFlush
	s := openT(t, cfg)
	const writers, per = 8, 150
	var wg sync.WaitGroup
	var failed atomic.Int32
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half the writers wait for each acknowledgement, half keep
			// appending (as async sends do), so the stage fills while
			// the flusher writes the previous batch out.
			var acks sync.WaitGroup
			done := func(r PutResult) {
				if r.Status != PutOK {
					failed.Add(1)
				}
				acks.Done()
			}
			for i := 0; i < per; i++ {
				size := 100 + (w*7919+i*104729)%(20<<10)
				acks.Add(1)
				if i%10 == 9 {
					batch := []message.Message{*testMsg("S", int32(w), w*per+i, size/2), *testMsg("S", int32(w), w*per+i, size/3)}
					s.PutBatch(batch, done)
				} else {
					s.Put(testMsg("S", int32(w), w*per+i, size), done)
				}
				if w%2 == 0 {
					acks.Wait()
				}
			}
			acks.Wait()
		}()
	}
	wg.Wait()
	require.Zero(t, failed.Load())
	require.Greater(t, s.MaxPhyOffset(), 3*cfg.MappedFileSizeCommitLog, "the test must roll segments")
	waitDispatched(t, s)
	require.NoError(t, s.Check())
	bodies := func(s *Store) map[int32][]int {
		out := map[int32][]int{}
		for q := int32(0); q < writers; q++ {
			for off := int64(0); off < s.MaxOffset("S", q); {
				var res GetResult
				s.GetMessages("S", q, off, 32, math.MaxInt32, nil, &res)
				require.Equal(t, Found, res.Status)
				for _, rec := range res.Records {
					var e message.Ext
					require.NoError(t, message.Decode(rec, &e))
					require.NoError(t, e.CheckCRC())
					out[q] = append(out[q], len(e.Body))
				}
				off = res.NextBeginOffset
				res.Release()
			}
		}
		return out
	}
	before := bodies(s)
	for q := int32(0); q < writers; q++ {
		require.Len(t, before[q], per+per/10, "queue %d", q)
	}
	require.NoError(t, s.Close())
	s = openT(t, cfg)
	defer s.Close()
	require.Equal(t, before, bodies(s), "same records after a restart")
}

// SYNC_FLUSH appends allocate nothing once the staging buffers have grown.
func TestSyncFlushAllocationBudget(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.FlushDiskType = SyncFlush
	cfg.MessageIndexEnable = false
	s := openT(t, cfg)
	defer s.Close()
	m := benchMsg(0)
	ch := make(chan PutResult, 1)
	done := func(r PutResult) { ch <- r }
	for range 100 { // queue table entry, staging buffers, flush queue
		s.Put(m, done)
		<-ch
	}
	require.Zero(t, testing.AllocsPerRun(200, func() {
		s.Put(m, done)
		<-ch
	}))
}

// A record larger than a staging buffer's first allocation grows it, and
// big records roll segments like small ones.
func TestSyncFlushStagesLargeRecords(t *testing.T) {
	cfg := bigRecordSyncConfig(t, 10<<20)
	s := openT(t, cfg)
	defer s.Close()
	const n = 5
	for i := 0; i < n; i++ {
		r := putSync(t, s, testMsg("Big", 0, i, 4<<20))
		require.Equal(t, PutOK, r.Status)
		require.Equal(t, int64(i), r.QueueOffset)
	}
	require.Greater(t, s.MaxPhyOffset(), 2*cfg.MappedFileSizeCommitLog)
	waitDispatched(t, s)
	for i := 0; i < n; i++ {
		var res GetResult
		s.GetMessages("Big", 0, int64(i), 1, math.MaxInt32, nil, &res)
		require.Equal(t, Found, res.Status)
		var e message.Ext
		require.NoError(t, message.Decode(res.Records[0], &e))
		require.Equal(t, testMsg("Big", 0, i, 4<<20).Body, e.Body)
		res.Release()
	}
	require.NoError(t, s.Check())
}

// After a burst of large records the staging buffers shrink back: memory
// follows the load, not its peak.
func TestSyncFlushStagingShrinksAfterBurst(t *testing.T) {
	s := openT(t, bigRecordSyncConfig(t, 64<<20))
	defer s.Close()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ { // 8 × 4 MiB waiting together: groups of up to 32 MiB
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				require.Equal(t, PutOK, putSync(t, s, testMsg("Burst", int32(w), i, 4<<20)).Status)
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 10; i++ {
		require.Equal(t, PutOK, putSync(t, s, testMsg("Small", 0, i, 100)).Status)
	}
	s.mu.Lock()
	c := cap(s.stage.buf)
	s.mu.Unlock()
	require.LessOrEqual(t, c, stageKeepCap, "staging buffer kept after the burst")
}

// bigRecordSyncConfig is a SYNC_FLUSH store taking 4 MiB records in
// segments of segSize bytes.
func bigRecordSyncConfig(t *testing.T, segSize int64) Config {
	cfg := testConfig(t, t.TempDir())
	cfg.FlushDiskType = SyncFlush
	cfg.MappedFileSizeCommitLog = segSize
	cfg.MaxMessageSize = 5 << 20
	return cfg
}
