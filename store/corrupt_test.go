package store

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

const corruptChildEnv = "ROCKETGO_STORE_CORRUPT_CHILD"

// corruptBatch is how many records each of the two batches has.
const corruptBatch = 20

type storedRec struct {
	i       int
	phy, qo int64
}

func corruptMsg(i int) *message.Message {
	m := testMsg("Flip", 0, i, 300+i)
	m.Properties = string(message.AppendProperty([]byte(m.Properties), "ID", fmt.Sprint(i)))
	return m
}

// writeBatch appends records [from, from+corruptBatch).
func writeBatch(t testing.TB, s *Store, from int) []storedRec {
	var out []storedRec
	for i := from; i < from+corruptBatch; i++ {
		r := putSync(t, s, corruptMsg(i))
		require.Equal(t, PutOK, r.Status)
		out = append(out, storedRec{i, r.WroteOffset, r.QueueOffset})
	}
	return out
}

// flipBody inverts n bytes at position at of the body of the record at
// phy (at < 0 counts from the end of the body), through the file.
func flipBody(t *testing.T, cfg Config, phy int64, at, n int) {
	t.Helper()
	start := phy - phy%cfg.MappedFileSizeCommitLog
	f, err := os.OpenFile(filepath.Join(cfg.CommitLogDir, segmentName(start)), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	pos := phy - start
	hdr := make([]byte, 128)
	_, err = f.ReadAt(hdr, pos)
	require.NoError(t, err)
	sysFlag := int32(binary.BigEndian.Uint32(hdr[message.PosSysFlag:]))
	p := 48 + 8 + 8 + 8 + 16 // IPv4 born and store hosts
	if sysFlag&message.BornHostV6Flag != 0 {
		p += 12
	}
	if sysFlag&message.StoreHostV6Flag != 0 {
		p += 12
	}
	bodyLen := int(binary.BigEndian.Uint32(hdr[p-4:]))
	if at < 0 {
		at += bodyLen
	}
	require.True(t, at >= 0 && at+n <= bodyLen)
	b := make([]byte, n)
	_, err = f.ReadAt(b, pos+int64(p+at))
	require.NoError(t, err)
	for j := range b {
		b[j] ^= 0xFF
	}
	_, err = f.WriteAt(b, pos+int64(p+at))
	require.NoError(t, err)
}

// flips are the damages applied: body offset, bytes.
var flips = []struct{ at, n int }{{0, 1}, {150, 3}, {-1, 1}}

// damage corrupts three records of each batch (first byte, 3 bytes in the
// middle, last byte of the body) and returns their queue offsets.
func damage(t *testing.T, cfg Config, a, b []storedRec) map[int64]storedRec {
	bad := make(map[int64]storedRec)
	for k, f := range flips {
		for _, r := range []storedRec{a[3+5*k], b[2+5*k]} {
			flipBody(t, cfg, r.phy, f.at, f.n)
			bad[r.qo] = r
		}
	}
	return bad
}

// requireNeverServed reads the queue from its start as a consumer does
// (following NextBeginOffset) and by offset, id and key: every damaged
// record is withheld, every other one is served intact.
func requireNeverServed(t *testing.T, s *Store, all []storedRec, bad map[int64]storedRec) {
	t.Helper()
	var res GetResult
	defer res.Release()
	var e message.Ext
	served := make(map[int64]bool)
	for off, rounds := int64(0), 0; off < s.MaxOffset("Flip", 0); rounds++ {
		require.Less(t, rounds, 1000, "consumer stuck at %d", off)
		s.GetMessages("Flip", 0, off, 4, math.MaxInt32, nil, &res)
		require.Greater(t, res.NextBeginOffset, off, "consumer does not move past %d (%v)", off, res.Status)
		for i, rec := range res.Records {
			qo := res.QueueOffsets[i]
			_, isBad := bad[qo]
			require.False(t, isBad, "damaged record at queue offset %d served", qo)
			require.NoError(t, message.Decode(rec, &e))
			require.NoError(t, e.CheckCRC())
			served[qo] = true
		}
		off = res.NextBeginOffset
		res.Release()
	}
	for _, r := range all {
		if _, isBad := bad[r.qo]; isBad {
			_, err := s.ReadRecord(r.phy, 0)
			require.ErrorIs(t, err, ErrCorrupt, "read by id of damaged record %d", r.i)
			// A pull starting at it skips it, too.
			s.GetMessages("Flip", 0, r.qo, 1, math.MaxInt32, nil, &res)
			for _, q := range res.QueueOffsets {
				require.NotEqual(t, r.qo, q)
			}
			require.Greater(t, res.NextBeginOffset, r.qo)
			res.Release()
			// Query by key finds at most its offset, which is then refused.
			offs, err := s.QueryByKey("Flip", fmt.Sprintf("k%d", r.i), 10, 0, math.MaxInt64)
			require.NoError(t, err)
			for _, o := range offs {
				if o == r.phy {
					_, err := s.ReadRecord(o, 0)
					require.ErrorIs(t, err, ErrCorrupt)
				}
			}
			continue
		}
		require.True(t, served[r.qo], "intact record %d (queue offset %d) not served", r.i, r.qo)
		b, err := s.ReadRecord(r.phy, 0)
		require.NoError(t, err)
		require.NoError(t, message.Decode(b, &e))
		require.Equal(t, corruptMsg(r.i).Body, e.Body)
	}
	require.Positive(t, s.CorruptRecordsSeen())
}

// TestCorruptRecordNeverServedAfterCleanStop: batch A is below the
// checkpoint, batch B after it (the checkpoint file is put back to what it
// was after A); a flipped bit anywhere in a body of either is never served.
func TestCorruptRecordNeverServedAfterCleanStop(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	a := writeBatch(t, s, 0)
	require.NoError(t, s.Close())
	ck, err := os.ReadFile(filepath.Join(cfg.RootDir, "checkpoint"))
	require.NoError(t, err)
	s = openT(t, cfg)
	b := writeBatch(t, s, corruptBatch)
	require.NoError(t, s.Close())
	require.NoError(t, os.WriteFile(filepath.Join(cfg.RootDir, "checkpoint"), ck, 0o644))
	bad := damage(t, cfg, a, b)
	s = openT(t, cfg)
	defer s.Close()
	requireNeverServed(t, s, append(a, b...), bad)
}

// TestCorruptRecordNeverServedLive: damage under a running store (through
// the page cache its mapping shares) is caught on read.
func TestCorruptRecordNeverServedLive(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	a := writeBatch(t, s, 0)
	b := writeBatch(t, s, corruptBatch)
	waitDispatched(t, s)
	bad := damage(t, cfg, a, b)
	requireNeverServed(t, s, append(a, b...), bad)
}

// TestCorruptChild writes batch A, stops cleanly, reopens without
// periodic checkpoints, writes batch B and waits to be killed.
func TestCorruptChild(t *testing.T) {
	dir := os.Getenv(corruptChildEnv)
	if dir == "" {
		t.Skip("helper process for TestCorruptRecordNeverServedAfterKill")
	}
	cfg := testConfig(t, dir)
	s := openT(t, cfg)
	a := writeBatch(t, s, 0)
	require.NoError(t, s.Close())
	cfg.FlushIntervalConsumeQueue = time.Hour // the checkpoint stays below B
	s = openT(t, cfg)
	b := writeBatch(t, s, corruptBatch)
	waitDispatched(t, s)
	for _, r := range append(a, b...) {
		fmt.Printf("rec %d %d %d\n", r.i, r.phy, r.qo)
	}
	fmt.Println("ready")
	select {} // until SIGKILL
}

func TestCorruptRecordNeverServedAfterKill(t *testing.T) {
	if os.Getenv(corruptChildEnv) != "" {
		t.Skip("in child")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCorruptChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), corruptChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var recs []storedRec
	ready := false
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			ready = true
			break
		}
		var r storedRec
		if strings.HasPrefix(line, "rec ") {
			_, err := fmt.Sscanf(line, "rec %d %d %d", &r.i, &r.phy, &r.qo)
			require.NoError(t, err)
			recs = append(recs, r)
		}
	}
	require.True(t, ready, "child never got ready")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	require.Len(t, recs, 2*corruptBatch)
	cfg := testConfig(t, dir)
	_, err = os.Stat(filepath.Join(dir, "abort"))
	require.NoError(t, err, "killed, not stopped")
	bad := damage(t, cfg, recs[:corruptBatch], recs[corruptBatch:])
	s := openT(t, cfg)
	defer s.Close()
	requireNeverServed(t, s, recs, bad)
}

// FuzzVerifyRecord: verifyRecord never panics on any bytes, and what it
// accepts is a whole record at the given offset whose body matches its CRC.
func FuzzVerifyRecord(f *testing.F) {
	m := corruptMsg(1)
	rec := message.AppendRecord(nil, m, message.BodyCRC(m.Body), 7, 4096)
	f.Add(rec, int64(4096))
	f.Add(rec[:len(rec)-1], int64(4096))
	f.Add(rec, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, phy int64) {
		if verifyRecord(b, phy) != nil {
			return
		}
		var e message.Ext
		require.NoError(t, message.Decode(b, &e))
		require.EqualValues(t, len(b), e.TotalSize)
		require.Equal(t, phy, e.PhysicalOffset)
		require.Equal(t, message.BodyCRC(e.Body), e.BodyCRC)
	})
}
