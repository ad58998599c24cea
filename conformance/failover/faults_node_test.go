package failover

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLogWatchNext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.log")
	require.NoError(t, os.WriteFile(p, []byte("old "+lineConsistentOurs+" offset=1 localMax=2\n"), 0o644))
	w := WatchLog(p) // from the end: the old line does not count
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("time=x level=INFO msg=\"autoswitch: master handshake\"\npartial " + lineConsistentOurs)
	require.NoError(t, err)
	_, _, err = w.Next(context.Background(), 20*time.Millisecond, lineConsistentOurs)
	require.ErrorIs(t, err, errNoLine, "a line without its newline is not complete")
	_, err = f.WriteString(" broker=broker-a offset=48402 localMax=48712 masterMax=50000\n")
	require.NoError(t, err)
	line, i, err := w.Next(context.Background(), time.Second, lineCutOurs, lineConsistentOurs)
	require.NoError(t, err)
	require.Equal(t, 1, i)
	cp, localMax := parseTruncLine(false, line)
	require.Equal(t, int64(48402), cp)
	require.Equal(t, int64(48712), localMax)
	_, _, err = w.Next(context.Background(), 0, lineConsistentOurs)
	require.ErrorIs(t, err, errNoLine, "the line is consumed")
}

func TestParseTruncLineJava(t *testing.T) {
	cp, localMax := parseTruncLine(true, "2026-12-01 22:14:36 INFO AutoSwitchHAClient - truncateOffset is 45684")
	require.Equal(t, int64(45684), cp)
	require.Equal(t, int64(-1), localMax)
}

func TestCompareCommitLogs(t *testing.T) {
	mk := func(name string, segs ...[]byte) *Node {
		n := &Node{Name: name, dir: filepath.Join(t.TempDir(), name)}
		require.NoError(t, os.MkdirAll(n.commitLogDir(), 0o755))
		for i, b := range segs {
			require.NoError(t, os.WriteFile(filepath.Join(n.commitLogDir(), segName(int64(i*8))), b, 0o644))
		}
		return n
	}
	a := mk("a", []byte("01234567"), []byte("89abcdef"))
	b := mk("b", []byte("01234567"), []byte("89abXXXX"))
	at, err := CompareCommitLogs(a, b, 0, 12)
	require.NoError(t, err)
	require.Equal(t, int64(-1), at, "equal below 12")
	at, err = CompareCommitLogs(a, b, 0, 16)
	require.NoError(t, err)
	require.Equal(t, int64(12), at)
	_, err = CompareCommitLogs(a, b, 0, 17)
	require.Error(t, err, "past the segments")
}

func segName(off int64) string { return fmt.Sprintf("%020d", off) }

func TestSameEpochs(t *testing.T) {
	master := []EpochEntry{{1, 0, 100}, {2, 100, 250}, {3, 250, 1<<63 - 1}}
	require.True(t, sameEpochs([]EpochEntry{{1, 0, 100}, {2, 100, 1<<63 - 1}}, master, 250),
		"a slave at the start of an epoch without records has not learnt it")
	require.False(t, sameEpochs([]EpochEntry{{1, 0, 100}, {2, 100, 1<<63 - 1}}, master, 260))
	require.False(t, sameEpochs([]EpochEntry{{1, 0, 120}, {2, 120, 1<<63 - 1}}, master, 200), "another start")
}
