package store

import (
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func TestPutGetRoundTrip(t *testing.T) {
	for _, ft := range []FlushType{AsyncFlush, SyncFlush} {
		t.Run(ft.String(), func(t *testing.T) {
			cfg := testConfig(t, t.TempDir())
			cfg.FlushDiskType = ft
			s := openT(t, cfg)
			defer s.Close()
			var wrote []PutResult
			for i := 0; i < 50; i++ {
				r := putSync(t, s, testMsg("TopicA", int32(i%2), i, 100+i))
				require.Equal(t, PutOK, r.Status, "%v", r.Err)
				require.Equal(t, int64(i/2), r.QueueOffset)
				wrote = append(wrote, r)
			}
			waitDispatched(t, s)
			require.Equal(t, int64(25), s.MaxOffset("TopicA", 0))
			require.Equal(t, int64(0), s.MinOffset("TopicA", 1))

			var res GetResult
			s.GetMessages("TopicA", 1, 3, 5, 1<<20, nil, &res)
			require.Equal(t, Found, res.Status)
			require.Len(t, res.Records, 5)
			require.Equal(t, int64(8), res.NextBeginOffset)
			var e message.Ext
			for j, rec := range res.Records {
				require.NoError(t, message.Decode(rec, &e))
				require.NoError(t, e.CheckCRC())
				i := (3+j)*2 + 1
				want := testMsg("TopicA", 1, i, 100+i)
				require.Equal(t, "TopicA", e.Topic)
				require.Equal(t, int32(1), e.QueueID)
				require.Equal(t, int64(3+j), e.QueueOffset)
				require.Equal(t, res.QueueOffsets[j], e.QueueOffset)
				require.Equal(t, wrote[i].WroteOffset, e.PhysicalOffset)
				require.Equal(t, want.Body, e.Body)
				require.Equal(t, want.Properties, e.Properties)
				require.Equal(t, bornHost, e.BornHost)
				require.Equal(t, storeHost, e.StoreHost)
				require.Equal(t, wrote[i].StoreTimestamp, e.StoreTimestamp)
			}
			res.Release()

			// ReadRecord copies the same bytes.
			b, err := s.ReadRecord(wrote[7].WroteOffset, 0)
			require.NoError(t, err)
			require.Len(t, b, int(wrote[7].WroteBytes))
			require.NoError(t, s.Check())
		})
	}
}

func TestGetMessagesStatuses(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	var res GetResult
	s.GetMessages("Nope", 0, 0, 32, 1<<20, nil, &res)
	require.Equal(t, NoMatchedLogicQueue, res.Status)

	for i := 0; i < 10; i++ {
		require.Equal(t, PutOK, putSync(t, s, testMsg("T", 0, i, 10)).Status)
	}
	waitDispatched(t, s)
	cases := []struct {
		offset int64
		status GetStatus
		next   int64
	}{
		{10, OffsetOverflowOne, 10},
		{15, OffsetOverflowBadly, 10},
		{0, Found, 10},
		{-1, OffsetTooSmall, 0},
	}
	for _, c := range cases {
		s.GetMessages("T", 0, c.offset, 32, 1<<20, nil, &res)
		require.Equal(t, c.status, res.Status, "offset %d", c.offset)
		require.Equal(t, c.next, res.NextBeginOffset, "offset %d", c.offset)
		require.Equal(t, int64(0), res.MinOffset)
		require.Equal(t, int64(10), res.MaxOffset)
		res.Release()
	}
	// Tag filter at the consume-queue stage.
	want := message.TagsHash("tag1")
	s.GetMessages("T", 0, 0, 32, 1<<20, &Filter{CQ: func(tc int64) bool { return tc == want }}, &res)
	require.Equal(t, Found, res.Status)
	require.Equal(t, []int64{1, 4, 7}, res.QueueOffsets)
	res.Release()
	s.GetMessages("T", 0, 0, 32, 1<<20, &Filter{CQ: func(int64) bool { return false }}, &res)
	require.Equal(t, NoMatchedMessage, res.Status)
	require.Equal(t, int64(10), res.NextBeginOffset)
	res.Release()
	// Record filter and maxBytes.
	s.GetMessages("T", 0, 0, 32, 1<<20, &Filter{Record: func(r []byte) bool {
		var e message.Ext
		require.NoError(t, message.Decode(r, &e))
		k, _ := message.Property(e.Properties, message.PropertyKeys)
		return k == "k5 shared"
	}}, &res)
	require.Equal(t, []int64{5}, res.QueueOffsets)
	res.Release()
	s.GetMessages("T", 0, 0, 32, 1, nil, &res)
	require.Len(t, res.Records, 1, "at least one record even past maxBytes")
	require.Equal(t, int64(1), res.NextBeginOffset)
	res.Release()

	// An empty queue (only known through DeleteTopic/recreate) answers NoMessageInQueue.
	require.NoError(t, s.DeleteTopic("T"))
	s.GetMessages("T", 0, 0, 32, 1<<20, nil, &res)
	require.Equal(t, NoMatchedLogicQueue, res.Status)
}

func TestSegmentRollWritesBlank(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	s := openT(t, cfg)
	var last PutResult
	n := 0
	for last.WroteOffset < 2*cfg.MappedFileSizeCommitLog+1000 {
		last = putSync(t, s, testMsg("Roll", 0, n, 30000))
		require.Equal(t, PutOK, last.Status)
		n++
	}
	waitDispatched(t, s)
	require.NoError(t, s.Check())
	require.Equal(t, int64(n), s.MaxOffset("Roll", 0))
	require.NoError(t, s.Close())

	// The first segment ends with a blank marker covering the rest of it.
	names, err := listSegmentFiles(cfg.CommitLogDir)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(names), 3)
	require.Equal(t, "00000000000000000000", names[0].name)
	require.Equal(t, "00000000000001048576", names[1].name)
	data, err := os.ReadFile(filepath.Join(cfg.CommitLogDir, names[0].name))
	require.NoError(t, err)
	var e message.Ext
	pos := 0
	for {
		err := message.Decode(data[pos:], &e)
		if err == message.ErrBlank {
			break
		}
		require.NoError(t, err)
		pos += int(e.TotalSize)
	}
	require.Equal(t, int32(len(data)-pos), e.TotalSize)
	require.Equal(t, message.BlankMagic, e.Magic)
	require.Less(t, len(data)-pos, 30000+200+message.BlankLen)

	// Reopen (clean) and read across the boundary.
	s = openT(t, cfg)
	defer s.Close()
	require.NoError(t, s.Check())
	var res GetResult
	s.GetMessages("Roll", 0, 0, 1000, math.MaxInt32, nil, &res)
	require.Equal(t, Found, res.Status)
	require.Len(t, res.Records, n)
	res.Release()
	r := putSync(t, s, testMsg("Roll", 0, n, 10))
	require.Equal(t, int64(n), r.QueueOffset)
	require.Equal(t, last.WroteOffset+int64(last.WroteBytes), r.WroteOffset)
}

func TestConsumeQueueFileLayout(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	var rs []PutResult
	for i := 0; i < 1500; i++ { // more than one CQ file (1000 units)
		rs = append(rs, putSync(t, s, testMsg("Layout", 3, i, 8)))
	}
	waitDispatched(t, s)
	require.NoError(t, s.Close())
	dir := filepath.Join(cfg.RootDir, "consumequeue", "Layout", "3")
	f0, err := os.ReadFile(filepath.Join(dir, "00000000000000000000"))
	require.NoError(t, err)
	require.Len(t, f0, 20000)
	f1, err := os.ReadFile(filepath.Join(dir, "00000000000000020000"))
	require.NoError(t, err)
	for _, i := range []int{0, 999, 1000, 1499} {
		b := f0
		if i >= 1000 {
			b = f1
		}
		phy, size, tags := readUnit(b[(i%1000)*20:])
		require.Equal(t, rs[i].WroteOffset, phy)
		require.Equal(t, rs[i].WroteBytes, size)
		require.Equal(t, message.TagsHash("tag"+string(rune('0'+i%3))), tags)
	}
}

func TestOffsetByTimeAndStoreTime(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	var now atomic.Int64
	now.Store(1_800_000_000_000)
	cfg.Now = func() timeT { return timeMs(now.Load()) }
	s := openT(t, cfg)
	defer s.Close()
	for i := 0; i < 20; i++ {
		now.Store(1_800_000_000_000 + int64(i)*1000)
		require.Equal(t, PutOK, putSync(t, s, testMsg("Time", 0, i, 10)).Status)
	}
	waitDispatched(t, s)
	require.Equal(t, int64(0), s.OffsetByTime("Time", 0, 0))
	require.Equal(t, int64(5), s.OffsetByTime("Time", 0, 1_800_000_005_000))
	require.Equal(t, int64(6), s.OffsetByTime("Time", 0, 1_800_000_005_001))
	require.Equal(t, int64(20), s.OffsetByTime("Time", 0, 1_900_000_000_000))
	ts, err := s.StoreTime("Time", 0, 7)
	require.NoError(t, err)
	require.Equal(t, int64(1_800_000_007_000), ts)
	ts, err = s.EarliestMessageTime("Time", 0)
	require.NoError(t, err)
	require.Equal(t, int64(1_800_000_000_000), ts)
	_, err = s.StoreTime("Time", 0, 20)
	require.ErrorIs(t, err, ErrOffsetNotFound)
}

func TestQueryByKey(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	var rs []PutResult
	for i := 0; i < 3000; i++ { // > MaxIndexNum entries: several index files
		rs = append(rs, putSync(t, s, testMsg("Q", 0, i, 10)))
	}
	waitDispatched(t, s)
	got, err := s.QueryByKey("Q", "k17", 10, 0, math.MaxInt64)
	require.NoError(t, err)
	require.Contains(t, got, rs[17].WroteOffset)
	got, err = s.QueryByKey("Q", "U000000000000000000000000002999", 10, 0, math.MaxInt64)
	require.NoError(t, err)
	require.Contains(t, got, rs[2999].WroteOffset)
	got, err = s.QueryByKey("Q", "shared", 32, 0, math.MaxInt64)
	require.NoError(t, err)
	require.Len(t, got, 32)
	got, err = s.QueryByKey("Other", "k17", 10, 0, math.MaxInt64)
	require.NoError(t, err)
	require.NotContains(t, got, rs[17].WroteOffset)
	got, err = s.QueryByKey("Q", "k17", 10, 0, 1000)
	require.NoError(t, err)
	require.Empty(t, got, "time range excludes it")
	ents, err := os.ReadDir(filepath.Join(cfg.RootDir, "index"))
	require.NoError(t, err)
	require.Greater(t, len(ents), 1)
	require.NoError(t, s.Check())
}

func TestPutBatchAndLimits(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	require.Equal(t, PutOK, putSync(t, s, testMsg("B", 0, 0, 10)).Status)
	ms := []message.Message{*testMsg("B", 0, 1, 10), *testMsg("B", 0, 2, 20), *testMsg("B", 0, 3, 30)}
	ch := make(chan PutResult, 1)
	s.PutBatch(ms, func(r PutResult) { ch <- r })
	r := <-ch
	require.Equal(t, PutOK, r.Status)
	require.Equal(t, int64(1), r.QueueOffset)
	require.Equal(t, int32(3), r.MsgCount)
	require.Equal(t, int32(ms[0].RecordSize()+ms[1].RecordSize()+ms[2].RecordSize()), r.WroteBytes)
	waitDispatched(t, s)
	require.Equal(t, int64(4), s.MaxOffset("B", 0))
	require.NoError(t, s.Check())

	big := testMsg("B", 0, 9, cfg.MaxMessageSize+1)
	require.Equal(t, MessageIllegal, putSync(t, s, big).Status)
	props := testMsg("B", 0, 9, 1)
	props.Properties = string(make([]byte, 40000))
	require.Equal(t, PropertiesSizeExceeded, putSync(t, s, props).Status)
	s.PutBatch([]message.Message{*testMsg("B", 0, 1, 1), *testMsg("B", 1, 1, 1)}, func(r PutResult) { ch <- r })
	require.Equal(t, MessageIllegal, (<-ch).Status)

	// Prepared transaction messages get no unit and queue offset 0.
	p := testMsg("B", 0, 10, 10)
	p.SysFlag = message.TransactionPreparedType
	r = putSync(t, s, p)
	require.Equal(t, PutOK, r.Status)
	require.Equal(t, int64(0), r.QueueOffset)
	require.Equal(t, PutOK, putSync(t, s, testMsg("B", 0, 11, 10)).Status)
	waitDispatched(t, s)
	require.Equal(t, int64(5), s.MaxOffset("B", 0))
	require.NoError(t, s.Check())
}

func TestOnArrivalAndClosed(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	type arrival struct {
		topic string
		max   int64
		tags  int64
	}
	ch := make(chan arrival, 10)
	s.OnArrival(func(topic string, qid int32, max, tags int64, props string) {
		ch <- arrival{topic, max, tags}
	})
	putSync(t, s, testMsg("Arr", 0, 0, 10))
	putSync(t, s, testMsg("Arr", 0, 1, 10))
	require.Equal(t, arrival{"Arr", 1, message.TagsHash("tag0")}, <-ch)
	require.Equal(t, arrival{"Arr", 2, message.TagsHash("tag1")}, <-ch)
	require.NoError(t, s.Close())
	r := putSync(t, s, testMsg("Arr", 0, 2, 10))
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.ErrorIs(t, r.Err, ErrClosed)
	_, err := os.Stat(filepath.Join(cfg.RootDir, "abort"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestSyncFlushTimeout(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.FlushDiskType = SyncFlush
	cfg.SyncFlushTimeout = time.Nanosecond // every flush is "too slow"
	s := openT(t, cfg)
	defer s.Close()
	r := putSync(t, s, testMsg("Slow", 0, 0, 10))
	require.Equal(t, FlushDiskTimeout, r.Status)
	require.Error(t, r.Err)
	// Like Java, the record itself was appended and becomes visible once flushed.
	require.Eventually(t, func() bool { return s.MaxOffset("Slow", 0) == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, s.Check())
}
