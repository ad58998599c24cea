package index

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func openT(t *testing.T, dir string, slots, max int) *Service {
	t.Helper()
	s, err := Open(Config{Dir: dir, MaxHashSlotNum: slots, MaxIndexNum: max,
		Now: func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 4e6, time.Local) }})
	require.NoError(t, err)
	return s
}

func TestFileLayout(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, 10, 100)
	require.Equal(t, int64(-1), s.MaxPhyOffset())
	require.NoError(t, s.Put("T", "a b", "", 1000, 1_700_000_000_000))
	require.NoError(t, s.Put("T", "", "U1", 2000, 1_700_000_005_500))
	require.Equal(t, int64(2000), s.MaxPhyOffset())
	require.NoError(t, s.Close())

	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	require.Equal(t, "20261130010203004", ents[0].Name())
	b, err := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	require.NoError(t, err)
	require.Len(t, b, 40+10*4+100*20)
	be := binary.BigEndian
	require.Equal(t, uint64(1_700_000_000_000), be.Uint64(b[0:]))
	require.Equal(t, uint64(1_700_000_005_500), be.Uint64(b[8:]))
	require.Equal(t, uint64(1000), be.Uint64(b[16:]))
	require.Equal(t, uint64(2000), be.Uint64(b[24:]))
	require.Equal(t, uint32(4), be.Uint32(b[36:]), "index count starts at 1")

	// Entry 3 is T#U1: hash, offset, time diff in seconds, no predecessor.
	h := keyHashPositive(message.JavaStringHash("T#U1"))
	e := b[40+10*4+3*20:]
	require.Equal(t, uint32(h), be.Uint32(e))
	require.Equal(t, uint64(2000), be.Uint64(e[4:]))
	require.Equal(t, uint32(5), be.Uint32(e[12:]))
	require.Equal(t, uint32(0), be.Uint32(e[16:]))
	require.Equal(t, uint32(3), be.Uint32(b[40+int(h%10)*4:]), "slot points at the entry")
}

func TestQueryChainsAndRolls(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, 7, 50) // tiny: collisions and several files
	defer s.Close()
	base := int64(1_700_000_000_000)
	for i := 0; i < 200; i++ {
		key := "even"
		if i%2 == 1 {
			key = "odd"
		}
		require.NoError(t, s.Put("T", key, "", int64(i*100), base+int64(i)*1000))
	}
	got := s.Query("T", "odd", 1000, 0, math.MaxInt64)
	require.Len(t, got, 100)
	for j, off := range got {
		require.Equal(t, int64((199-2*j)*100), off, "newest first")
	}
	got = s.Query("T", "even", 5, 0, math.MaxInt64)
	require.Equal(t, []int64{19800, 19600, 19400, 19200, 19000}, got)
	got = s.Query("T", "even", 1000, base+10_000, base+20_000)
	require.Len(t, got, 6) // 10,12,...,20
	require.Empty(t, s.Query("T", "none", 10, 0, math.MaxInt64))
	require.Empty(t, s.Query("U", "odd", 10, 0, math.MaxInt64))

	// Replays of already indexed offsets are ignored.
	require.NoError(t, s.Put("T", "odd", "", 19900, base+199_000))
	require.Len(t, s.Query("T", "odd", 1000, 0, math.MaxInt64), 100)

	// Deleting files below an offset keeps the newest.
	s.DeleteBelow(10_000)
	got = s.Query("T", "odd", 1000, 0, math.MaxInt64)
	require.Less(t, len(got), 100)
	require.Equal(t, int64(19900), got[0])

	// Dropping from an offset removes the files that reach it.
	from, ok := s.DropFrom(19_000)
	require.True(t, ok)
	require.LessOrEqual(t, from, int64(19_000))
	require.Less(t, s.MaxPhyOffset(), from)
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, 11, 100)
	require.NoError(t, s.Put("T", "k", "", 5, 1_700_000_000_000))
	require.NoError(t, s.Close())
	s = openT(t, dir, 11, 100)
	defer s.Close()
	require.Equal(t, []int64{5}, s.Query("T", "k", 10, 0, math.MaxInt64))
	require.Equal(t, int64(5), s.MaxPhyOffset())
}

func TestKeyHashPositive(t *testing.T) {
	require.Equal(t, int32(0), keyHashPositive(math.MinInt32))
	require.Equal(t, int32(5), keyHashPositive(-5))
	require.Equal(t, int32(5), keyHashPositive(5))
}

// Put does not wait for a Flush in progress: the dispatcher, which wakes
// long polls, never stalls behind an msync of the index.
func TestPutDuringSlowFlush(t *testing.T) {
	s := openT(t, t.TempDir(), 10, 100)
	defer s.Close()
	require.NoError(t, s.Put("T", "a", "", 1000, 1_700_000_000_000))
	entered, release := make(chan struct{}), make(chan struct{})
	s.syncFile = func(x *file) error {
		close(entered)
		<-release // a disk that takes its time
		return x.sync()
	}
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush() }()
	<-entered
	put := make(chan error, 1)
	go func() { put <- s.Put("T", "b", "", 2000, 1_700_000_000_001) }()
	select {
	case err := <-put:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Put waited for the index flush")
	}
	require.Equal(t, []int64{2000}, s.Query("T", "b", 10, 0, math.MaxInt64))
	close(release)
	require.NoError(t, <-flushed)
}

// entriesOf counts what Put writes: the unique key plus every non-empty
// space-separated key, without allocating.
func TestEntriesOfCountsWords(t *testing.T) {
	for _, c := range []struct {
		keys, uniq string
		want       int
	}{
		{"", "", 0}, {"", "U", 1}, {"a", "", 1}, {"a b", "U", 3}, {"  a  b ", "", 2}, {" ", "U", 1},
	} {
		require.Equal(t, c.want, entriesOf(c.keys, c.uniq), "%q %q", c.keys, c.uniq)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { entriesOf("k1 k2 k3", "U") }))
}
