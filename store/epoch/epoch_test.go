package epoch

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The example in Java's CheckpointFile documentation (its CRC is the real
// CRC32 of the two entry lines, masked to 31 bits).
const javaExample = "2\n773307083\n7-7000\n8-8000\n"

func TestParseAndFormatJavaExample(t *testing.T) {
	es, err := Parse([]byte(javaExample))
	require.NoError(t, err)
	require.Equal(t, []Entry{{Epoch: 7, StartOffset: 7000}, {Epoch: 8, StartOffset: 8000}}, es)
	require.Equal(t, javaExample, string(Format(es)))
}

func TestParseRejects(t *testing.T) {
	for name, text := range map[string]string{
		"empty":       "",
		"count":       "x\n0\n",
		"crc":         "1\nabc\n1-0\n",
		"short":       "2\n0\n1-100\n",
		"crcMismatch": "1\n12345\n1-100\n",
		"order":       "2\n0\n2-100\n1-200\n",
	} {
		_, err := Parse([]byte(text))
		require.Error(t, err, name)
	}
	// CRC 0 means unchecked, as in Java.
	es, err := Parse([]byte("1\n0\n3-42\n"))
	require.NoError(t, err)
	require.Equal(t, []Entry{{Epoch: 3, StartOffset: 42}}, es)
}

func newFile(t *testing.T) (*File, string) {
	path := filepath.Join(t.TempDir(), "epochFileCheckpoint")
	f, err := Open(path)
	require.NoError(t, err)
	require.Empty(t, f.Entries())
	require.Equal(t, int32(-1), f.LastEpoch())
	return f, path
}

// Java's EpochFileCacheTest set-up, reopened from disk.
func TestAppendPersistsAndReopens(t *testing.T) {
	f, path := newFile(t)
	require.NoError(t, f.Append(1, 100))
	require.NoError(t, f.Append(2, 300))
	require.NoError(t, f.Append(3, 500))
	require.ErrorIs(t, f.Append(3, 600), ErrNotIncreasing)
	require.ErrorIs(t, f.Append(4, 500), ErrNotIncreasing)
	e, ok := f.Get(2)
	require.True(t, ok)
	require.Equal(t, Entry{Epoch: 2, StartOffset: 300, EndOffset: 500}, e)
	e, ok = f.ByOffset(350)
	require.True(t, ok)
	require.Equal(t, int32(2), e.Epoch)
	last, _ := f.Last()
	require.Equal(t, int64(math.MaxInt64), last.EndOffset)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "3\n"+strconv.Itoa(int(checksum([]byte("1-100\n2-300\n3-500\n"))))+"\n1-100\n2-300\n3-500\n", string(b))
	bak, err := os.ReadFile(path + ".bak")
	require.NoError(t, err)
	require.Equal(t, string(Format([]Entry{{Epoch: 1, StartOffset: 100}, {Epoch: 2, StartOffset: 300}})), string(bak), "the backup holds the previous content")

	g, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, f.Entries(), g.Entries())
	n, ok := g.Next(1)
	require.True(t, ok)
	require.Equal(t, int32(2), n.Epoch)
}

func TestTruncate(t *testing.T) {
	f, path := newFile(t)
	for i, off := range []int64{100, 300, 500} {
		require.NoError(t, f.Append(int32(i+1), off))
	}
	require.NoError(t, f.TruncateFromOffset(150))
	require.Equal(t, []Entry{{Epoch: 1, StartOffset: 100, EndOffset: math.MaxInt64}}, f.Entries())
	require.NoError(t, f.Append(5, 900))
	require.NoError(t, f.TruncateFromEpoch(5))
	require.Equal(t, int32(1), f.LastEpoch())
	require.NoError(t, f.Append(6, 1000))
	require.NoError(t, f.TruncateBelowOffset(1000)) // epoch 1 ended at 1000
	require.Equal(t, []Entry{{Epoch: 6, StartOffset: 1000, EndOffset: math.MaxInt64}}, f.Entries())
	g, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, f.Entries(), g.Entries())
	require.NoError(t, f.TruncateFromEpoch(0))
	require.Empty(t, f.Entries())
	g, err = Open(path)
	require.NoError(t, err)
	require.Empty(t, g.Entries(), "an emptied list stays empty after a reopen")
}

func TestOpenFallsBackToBackup(t *testing.T) {
	f, path := newFile(t)
	require.NoError(t, f.Append(1, 0))
	require.NoError(t, f.Append(2, 4096))
	for name, broken := range map[string]string{"garbage": "3\nnot a crc\n", "empty": ""} {
		require.NoError(t, os.WriteFile(path, []byte(broken), 0o644), name)
		g, err := Open(path)
		require.NoError(t, err, name)
		require.Equal(t, []Entry{{Epoch: 1, StartOffset: 0, EndOffset: math.MaxInt64}}, g.Entries(), name)
	}
}

// Java's findConsistentPoint samples (EpochFileCacheTest), plus the cases
// a slave meets.
func TestConsistentPoint(t *testing.T) {
	e := func(pairs ...int64) []Entry {
		var es []Entry
		for i := 0; i < len(pairs); i += 2 {
			es = append(es, Entry{Epoch: int32(pairs[i]), StartOffset: pairs[i+1]})
		}
		return es
	}
	const inf = math.MaxInt64
	local := e(1, 100, 2, 300, 3, 500)
	require.Equal(t, int64(450), ConsistentPoint(local, inf, e(1, 100, 2, 300, 3, 450), inf))
	require.Equal(t, int64(600), ConsistentPoint(local, 700, e(1, 100, 2, 300, 3, 500), 600))
	require.Equal(t, int64(-1), ConsistentPoint(local, 700, e(1, 200, 2, 500), inf))
	require.Equal(t, int64(700), ConsistentPoint(e(1, 100, 2, 300, 3, 500, 4, 800), inf, local, 700))
	require.Equal(t, int64(-1), ConsistentPoint(nil, 0, local, 900))
	// A slave that missed epoch 3 and wrote nothing since epoch 2.
	require.Equal(t, int64(500), ConsistentPoint(e(1, 100, 2, 300), 800, local, 900))
}

const crashChildEnv = "EPOCH_CRASH_CHILD"

// TestCrashChild appends entries forever (until killed) when re-executed by
// TestKilledWhileWriting.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("helper process for TestKilledWhileWriting")
	}
	f, err := Open(path)
	require.NoError(t, err)
	ep := f.LastEpoch() + 1
	for i := 0; i < 1_000_000; i++ {
		last, ok := f.Last()
		start := int64(0)
		if ok {
			start = last.StartOffset + 1000
		}
		if err := f.Append(ep, start); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			fmt.Println("APPENDING")
		}
		ep++
		if ep%50 == 0 {
			require.NoError(t, f.TruncateFromEpoch(ep-25)) // rewrites of every size
			ep -= 25
		}
	}
}

// kill -9 of a process rewriting the file at random moments never leaves
// an unreadable file: Open always returns an ordered list (the file's or
// the backup's).
func TestKilledWhileWriting(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in child")
	}
	path := filepath.Join(t.TempDir(), "epochFileCheckpoint")
	deadline := time.Now().Add(20 * time.Second)
	for round := 0; round < 12 && time.Now().Before(deadline); round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		buf := make([]byte, 4096)
		seen := ""
		for !strings.Contains(seen, "APPENDING\n") {
			n, err := out.Read(buf)
			if err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("child ended before appending: %v: %s", err, seen)
			}
			seen += string(buf[:n])
		}
		time.Sleep(time.Duration(1+round*3) * time.Millisecond) // let it rewrite a while: the kill lands anywhere
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		f, err := Open(path)
		require.NoError(t, err, "round %d", round)
		es := f.Entries()
		require.NotEmpty(t, es, "round %d", round)
		for i := 1; i < len(es); i++ {
			require.Greater(t, es[i].Epoch, es[i-1].Epoch)
			require.Greater(t, es[i].StartOffset, es[i-1].StartOffset)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(javaExample))
	f.Add([]byte("1\n0\n3-42\n"))
	f.Add([]byte("0\n0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := Parse(b)
		if err != nil {
			return
		}
		again, err := Parse(Format(es))
		require.NoError(t, err)
		require.Equal(t, es, again)
	})
}
