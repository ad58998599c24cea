package store

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func benchConfig(b *testing.B, ft FlushType) Config {
	cfg := testConfig(b, b.TempDir())
	cfg.MappedFileSizeCommitLog = 64 << 20
	cfg.MappedFileSizeConsumeQueue = 300000 * CQUnitSize
	cfg.MaxHashSlotNum = 100000
	cfg.MaxIndexNum = 400000
	cfg.MessageIndexEnable = false
	cfg.FlushDiskType = ft
	cfg.FlushIntervalCommitLog = 500 * 1e6
	return cfg
}

func benchMsg(qid int32) *message.Message {
	m := testMsg("Bench", qid, 1, 1024)
	m.Properties = "TAGS\x01TagA\x02"
	return m
}

// BenchmarkPutAsync appends 1 KiB records under ASYNC_FLUSH.
func BenchmarkPutAsync(b *testing.B) {
	s, err := Open(benchConfig(b, AsyncFlush))
	require.NoError(b, err)
	defer s.Close()
	m := benchMsg(0)
	var failed int
	done := func(r PutResult) {
		if r.Status != PutOK {
			failed++
		}
	}
	b.SetBytes(int64(m.RecordSize()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Put(m, done)
	}
	b.StopTimer()
	require.Zero(b, failed)
}

// BenchmarkPutSync appends 1 KiB records under SYNC_FLUSH from concurrent
// writers, each waiting for its own acknowledgement (group commit).
func BenchmarkPutSync(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := Open(benchConfig(b, SyncFlush))
			require.NoError(b, err)
			defer s.Close()
			b.SetBytes(int64(benchMsg(0).RecordSize()))
			b.ReportAllocs()
			var wg sync.WaitGroup
			per := b.N / writers
			extra := b.N % writers
			b.ResetTimer()
			for w := 0; w < writers; w++ {
				n := per
				if w < extra {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					m := benchMsg(int32(w % 8))
					ch := make(chan PutResult, 1)
					done := func(r PutResult) { ch <- r }
					for i := 0; i < n; i++ {
						s.Put(m, done)
						if r := <-ch; r.Status != PutOK {
							b.Errorf("put: %v %v", r.Status, r.Err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func filledStore(b *testing.B, n int) *Store {
	s, err := Open(benchConfig(b, AsyncFlush))
	require.NoError(b, err)
	m := benchMsg(0)
	for i := 0; i < n; i++ {
		s.Put(m, func(PutResult) {})
	}
	require.Eventually(b, func() bool { return s.DispatchBehind() == 0 }, 30e9, 1e6)
	return s
}

// BenchmarkGetMessages pulls 32 records per call sequentially; crc=off is
// the read path without verifyRecord (the code before it), to re-measure
// what the check costs.
func BenchmarkGetMessages(b *testing.B) {
	const n = 20000
	s := filledStore(b, n)
	defer s.Close()
	for _, verify := range []bool{true, false} {
		name := "crc=on"
		if !verify {
			name = "crc=off"
		}
		b.Run(name, func(b *testing.B) {
			s.noVerify = !verify
			defer func() { s.noVerify = false }()
			benchGetMessages(b, s, n)
		})
	}
}

func benchGetMessages(b *testing.B, s *Store, n int64) {
	var res GetResult
	b.ReportAllocs()
	b.ResetTimer()
	off := int64(0)
	var bytes int64
	for i := 0; i < b.N; i++ {
		s.GetMessages("Bench", 0, off, 32, 256<<10, nil, &res)
		if res.Status != Found {
			b.Fatalf("status %v", res.Status)
		}
		bytes += int64(res.TotalBytes)
		off = res.NextBeginOffset
		if off >= n {
			off = 0
		}
		res.Release()
	}
	b.StopTimer()
	b.ReportMetric(float64(bytes)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(b.N*32)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkGetRandom reads single records at random queue offsets.
func BenchmarkGetRandom(b *testing.B) {
	const n = 20000
	s := filledStore(b, n)
	defer s.Close()
	var res GetResult
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.GetMessages("Bench", 0, r.Int64N(n), 1, math.MaxInt32, nil, &res)
		if res.Status != Found {
			b.Fatalf("status %v", res.Status)
		}
		res.Release()
	}
}

func TestAllocationBudget(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.MessageIndexEnable = false
	s := openT(t, cfg)
	defer s.Close()
	m := benchMsg(0)
	done := func(PutResult) {}
	s.Put(m, done) // first use of the queue creates its table entry
	require.Zero(t, testing.AllocsPerRun(200, func() { s.Put(m, done) }), "Put")
	waitDispatched(t, s)
	var res GetResult
	s.GetMessages("Bench", 0, 0, 32, 1<<20, nil, &res)
	res.Release()
	require.Zero(t, testing.AllocsPerRun(200, func() {
		s.GetMessages("Bench", 0, 0, 32, 1<<20, nil, &res)
		res.Release()
	}), "GetMessages")
}

// BenchmarkPutSyncMaster is BenchmarkPutSync on a SYNC_MASTER that needs
// one slave (inSyncReplicas 2), with a fake slave that acknowledges what
// the master has in the page cache as soon as it grows (no network): the
// replication wait overlaps the fdatasync, so SYNC_FLUSH costs about what
// it costs without a slave.
func BenchmarkPutSyncMaster(b *testing.B) {
	for _, ft := range []FlushType{AsyncFlush, SyncFlush} {
		for _, writers := range []int{16, 64} {
			b.Run(fmt.Sprintf("%v/writers=%d", ft, writers), func(b *testing.B) {
				cfg := benchConfig(b, ft)
				cfg.BrokerRole = SyncMaster
				cfg.InSyncReplicas = 2
				s, err := Open(cfg)
				require.NoError(b, err)
				defer s.Close()
				raw, stop := make(chan struct{}, 1), make(chan struct{})
				defer s.WatchRaw(raw)()
				go func() {
					for {
						select {
						case <-stop:
							return
						case <-raw:
							s.AckReplicated(s.RawEnd())
						}
					}
				}()
				defer close(stop)
				b.SetBytes(int64(benchMsg(0).RecordSize()))
				b.ReportAllocs()
				var wg sync.WaitGroup
				per, extra := b.N/writers, b.N%writers
				b.ResetTimer()
				for w := 0; w < writers; w++ {
					n := per
					if w < extra {
						n++
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						m := benchMsg(int32(w % 8))
						ch := make(chan PutResult, 1)
						done := func(r PutResult) { ch <- r }
						for i := 0; i < n; i++ {
							s.Put(m, done)
							if r := <-ch; r.Status != PutOK {
								b.Errorf("put: %v %v", r.Status, r.Err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}
