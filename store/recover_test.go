package store

import (
	"cmp"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

// snapshot copies a running store's directory: what a SIGKILL leaves (the
// page cache survives a process crash), abort file included.
func snapshot(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	require.NoError(t, err)
	return dst
}

type written struct {
	res PutResult
	msg *message.Message
	i   int
}

// fillStore writes n messages over 4 queues of topic "D" and returns them.
func fillStore(t *testing.T, s *Store, n int) []written {
	var out []written
	for i := 0; i < n; i++ {
		m := testMsg("D", int32(i%4), i, 200+i%50)
		r := putSync(t, s, m)
		require.Equal(t, PutOK, r.Status)
		out = append(out, written{r, m, i})
	}
	waitDispatched(t, s)
	return out
}

// verifyPresent checks every record in ws is readable, intact and reachable
// through its consume queue.
func verifyPresent(t *testing.T, s *Store, ws []written) {
	t.Helper()
	var res GetResult
	defer res.Release()
	var e message.Ext
	for _, w := range ws {
		b, err := s.ReadRecord(w.res.WroteOffset, 0)
		require.NoError(t, err, "record %d", w.i)
		require.NoError(t, message.Decode(b, &e))
		require.NoError(t, e.CheckCRC())
		require.Equal(t, w.msg.Body, e.Body)
		s.GetMessages(w.msg.Topic, w.msg.QueueID, w.res.QueueOffset, 1, math.MaxInt32, nil, &res)
		require.Equal(t, Found, res.Status, "record %d", w.i)
		require.Equal(t, b, res.Records[0])
		res.Release()
	}
}

func corruptAt(t *testing.T, cfg Config, phy int64, fn func(seg []byte, pos int)) {
	t.Helper()
	start := phy - phy%cfg.MappedFileSizeCommitLog
	p := filepath.Join(cfg.CommitLogDir, segmentName(start))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	fn(data, int(phy-start))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

// rewindCheckpoint makes the checkpoint in dir say that only the commit
// log below off was flushed and dispatched: the state of a crash before the
// flush that would have covered the records from off on.
func rewindCheckpoint(t *testing.T, dir string, off int64) {
	t.Helper()
	p := filepath.Join(dir, "checkpoint")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Len(t, b, checkpointSize)
	for _, at := range []int{24, 32, 40} { // flushed (twice), dispatched
		binary.BigEndian.PutUint64(b[at:], uint64(off))
	}
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

func reopenCopy(t *testing.T, cfg Config, dir string) (Config, *Store) {
	c := cfg
	c.RootDir = dir
	c.CommitLogDir = filepath.Join(dir, "commitlog")
	s := openT(t, c)
	t.Cleanup(func() { s.Close() })
	return c, s
}

func TestRecoverTornTail(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	ws := fillStore(t, s, 300)
	c2 := cfg
	c2.RootDir = snapshot(t, cfg.RootDir)
	c2.CommitLogDir = filepath.Join(c2.RootDir, "commitlog")
	last := ws[len(ws)-1]
	// Tear the last record: its second half never reached the disk.
	corruptAt(t, c2, last.res.WroteOffset, func(seg []byte, pos int) {
		clear(seg[pos+int(last.res.WroteBytes)/2 : pos+int(last.res.WroteBytes)])
	})
	s2 := openT(t, c2)
	defer s2.Close()
	require.NoError(t, s2.Check())
	verifyPresent(t, s2, ws[:len(ws)-1])
	require.Equal(t, last.res.WroteOffset, s2.MaxPhyOffset())
	q := last.msg.QueueID
	require.Equal(t, last.res.QueueOffset, s2.MaxOffset("D", q), "unit of the torn record dropped")
	// The next append reuses the torn record's place and queue offset.
	r := putSync(t, s2, testMsg("D", q, 9999, 10))
	require.Equal(t, last.res.WroteOffset, r.WroteOffset)
	require.Equal(t, last.res.QueueOffset, r.QueueOffset)
	waitDispatched(t, s2)
	require.NoError(t, s2.Check())
}

func TestRecoverFlippedBit(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	ws := fillStore(t, s, 300)
	dir := snapshot(t, cfg.RootDir)
	victim := ws[250]
	// The crash came before the victim was flushed (a flushed record
	// cannot be torn by a crash, and recovery checksums only what follows
	// the checkpoint).
	rewindCheckpoint(t, dir, ws[200].res.WroteOffset)
	c2 := cfg
	c2.RootDir, c2.CommitLogDir = dir, filepath.Join(dir, "commitlog")
	corruptAt(t, c2, victim.res.WroteOffset, func(seg []byte, pos int) {
		seg[pos+100] ^= 0x10 // inside the body
	})
	_, s2 := reopenCopy(t, cfg, dir)
	require.NoError(t, s2.Check())
	var rest []written
	for _, w := range ws {
		if w.i != victim.i {
			rest = append(rest, w)
		}
	}
	verifyPresent(t, s2, rest)
	// The corrupt record is never served.
	var res GetResult
	s2.GetMessages("D", victim.msg.QueueID, victim.res.QueueOffset, 1, math.MaxInt32, nil, &res)
	require.Equal(t, Found, res.Status)
	require.Equal(t, victim.res.QueueOffset+1, res.QueueOffsets[0])
	res.Release()
	_, err := s2.ReadRecord(victim.res.WroteOffset, 0)
	require.Error(t, err)
}

func TestRecoverMissingCheckpointAndConsumeQueues(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	ws := fillStore(t, s, 400)
	for _, clean := range []bool{false, true} {
		dir := snapshot(t, cfg.RootDir)
		if clean {
			require.NoError(t, os.Remove(filepath.Join(dir, "abort")))
		}
		require.NoError(t, os.Remove(filepath.Join(dir, "checkpoint")))
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "consumequeue")))
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "index")))
		_, s2 := reopenCopy(t, cfg, dir)
		require.NoError(t, s2.Check())
		verifyPresent(t, s2, ws)
		got, err := s2.QueryByKey("D", "k123", 4, 0, math.MaxInt64)
		require.NoError(t, err)
		require.Contains(t, got, ws[123].res.WroteOffset)
	}
}

func TestRecoverConsumeQueueAheadAndBehind(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	ws := fillStore(t, s, 400)

	// Ahead: the commit log lost its last 10 records, the queues did not.
	dir := snapshot(t, cfg.RootDir)
	c2 := cfg
	c2.RootDir, c2.CommitLogDir = dir, filepath.Join(dir, "commitlog")
	cut := ws[390].res.WroteOffset
	corruptAt(t, c2, cut, func(seg []byte, pos int) { clear(seg[pos:]) })
	_, s2 := reopenCopy(t, cfg, dir)
	require.NoError(t, s2.Check())
	verifyPresent(t, s2, ws[:390])
	for q := int32(0); q < 4; q++ {
		var want int64
		for _, w := range ws[:390] {
			if w.msg.QueueID == q {
				want = w.res.QueueOffset + 1
			}
		}
		require.Equal(t, want, s2.MaxOffset("D", q))
	}

	// Behind: queue 1 lost its last 20 units.
	dir = snapshot(t, cfg.RootDir)
	p := filepath.Join(dir, "consumequeue", "D", "1", segmentName(0))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	n := int(s.MaxOffset("D", 1))
	clear(data[(n-20)*CQUnitSize : n*CQUnitSize])
	require.NoError(t, os.WriteFile(p, data, 0o644))
	_, s3 := reopenCopy(t, cfg, dir)
	require.NoError(t, s3.Check())
	verifyPresent(t, s3, ws)
	require.Equal(t, int64(n), s3.MaxOffset("D", 1))
}

func TestRecoverCheckpointLayout(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	ws := fillStore(t, s, 10)
	require.NoError(t, s.Close())
	b, err := os.ReadFile(filepath.Join(cfg.RootDir, "checkpoint"))
	require.NoError(t, err)
	require.Len(t, b, checkpointSize)
	last := ws[len(ws)-1].res
	require.Equal(t, last.StoreTimestamp, int64(binary.BigEndian.Uint64(b[0:])), "physicMsgTimestamp")
	require.Equal(t, last.StoreTimestamp, int64(binary.BigEndian.Uint64(b[8:])), "logicsMsgTimestamp")
	require.Equal(t, last.StoreTimestamp, int64(binary.BigEndian.Uint64(b[16:])), "indexMsgTimestamp")
	require.Equal(t, last.WroteOffset+int64(last.WroteBytes), int64(binary.BigEndian.Uint64(b[40:])))
}

// After a crash recovery reads only the segment holding the checkpoint and
// checksums only what follows the checkpoint; so does a clean restart.
func TestRecoverReadsFromCheckpoint(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	// About 5 segments of 1 MiB, appended without waiting for each.
	const n = 1300
	var c collector
	c.wg.Add(n)
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = testMsg("D", int32(i%4), i, 4000)
		s.Put(msgs[i], c.done)
	}
	c.wg.Wait()
	require.NoError(t, s.Close())
	slices.SortFunc(c.res, func(a, b PutResult) int { return cmp.Compare(a.WroteOffset, b.WroteOffset) })
	ws := make([]written, n)
	for i, r := range c.res {
		// One writer: message i went to queue i%4 as its (i/4)-th.
		require.Equal(t, PutOK, r.Status)
		require.Equal(t, int64(i/4), r.QueueOffset)
		ws[i] = written{res: r, msg: msgs[i], i: i}
	}
	last := ws[n-1].res
	end := last.WroteOffset + int64(last.WroteBytes)
	require.GreaterOrEqual(t, end/cfg.MappedFileSizeCommitLog, int64(4))

	// A crash shortly after the checkpoint: the last 50 records were not
	// flushed yet (the page cache kept them).
	dir := snapshot(t, cfg.RootDir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "abort"), nil, 0o644))
	ck := ws[n-50].res.WroteOffset
	rewindCheckpoint(t, dir, ck)
	_, s2 := reopenCopy(t, cfg, dir)
	rs := s2.recovery
	require.True(t, rs.abnormal)
	require.Equal(t, ck-ck%cfg.MappedFileSizeCommitLog, rs.scanFrom, "scan starts at the segment holding the checkpoint")
	require.Equal(t, ck, rs.crcFrom, "only records after the checkpoint are checksummed")
	require.Equal(t, end, rs.end)
	require.Equal(t, rs.scanFrom, rs.redispatchFrom)
	require.NoError(t, s2.Check())
	verifyPresent(t, s2, ws)

	// A clean restart reads no more than that either.
	require.NoError(t, s2.Close())
	_, s3 := reopenCopy(t, cfg, dir)
	require.False(t, s3.recovery.abnormal)
	require.Equal(t, end, s3.recovery.crcFrom)
	require.Equal(t, end-end%cfg.MappedFileSizeCommitLog, s3.recovery.scanFrom)
	require.Equal(t, end, s3.recovery.redispatchFrom)
	verifyPresent(t, s3, ws[n-100:])
}
