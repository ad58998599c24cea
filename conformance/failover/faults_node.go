package failover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// codeGetRouteInfoByTopic is GET_ROUTEINFO_BY_TOPIC (any answer of the
// name server, even "no route", says it is up).
const codeGetRouteInfoByTopic = 105

// logEvery is how often LogWatch reads the log file: the line it waits
// for is the synchronization, so the poll is short.
const logEvery = time.Millisecond

// LogPath is the file holding the node's lines of log: out.log (stdout
// and stderr) for our binaries; Java's store logger (AutoSwitchHAClient)
// writes to logs/rocketmqlogs/store.log under its user.home.
func (n *Node) LogPath() string {
	if n.Java && n.Kind == "broker" {
		return filepath.Join(n.dir, "logs", "rocketmqlogs", "store.log")
	}
	return n.log
}

// LogWatch follows one log file from an offset.
type LogWatch struct {
	Path string
	Off  int64 // first byte not yet looked at
}

// WatchLog starts at the current end of path (a missing file is empty).
func WatchLog(path string) *LogWatch {
	w := &LogWatch{Path: path}
	if fi, err := os.Stat(path); err == nil {
		w.Off = fi.Size()
	}
	return w
}

// errNoLine: the line did not appear in time.
var errNoLine = errors.New("log line not seen")

// Next polls the file every logEvery until a complete line past Off
// contains one of subs, and returns it (without the newline) and the
// index of the sub it holds; Off moves past it.
func (w *LogWatch) Next(ctx context.Context, timeout time.Duration, subs ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		line, i, err := w.scan(subs)
		if err != nil {
			return "", -1, err
		}
		if i >= 0 {
			return line, i, nil
		}
		select {
		case <-ctx.Done():
			return "", -1, fmt.Errorf("%w within %v in %s: %q", errNoLine, timeout, w.Path, subs)
		case <-time.After(logEvery):
		}
	}
}

// scan reads the complete lines past Off once.
func (w *LogWatch) scan(subs []string) (string, int, error) {
	f, err := os.Open(w.Path)
	if errors.Is(err, os.ErrNotExist) {
		return "", -1, nil
	}
	if err != nil {
		return "", -1, fmt.Errorf("log %s: %w", w.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < w.Off {
		w.Off = 0 // rolled over
	}
	b, err := io.ReadAll(io.NewSectionReader(f, w.Off, 1<<40))
	if err != nil {
		return "", -1, fmt.Errorf("log %s: %w", w.Path, err)
	}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return "", -1, nil // a partial line: next time
		}
		line := b[:nl]
		b = b[nl+1:]
		w.Off += int64(nl + 1)
		for i, s := range subs {
			if bytes.Contains(line, []byte(s)) {
				return string(line), i, nil
			}
		}
	}
	return "", -1, nil
}

// Answers reports whether the node's server answers one request: a
// broker GET_BROKER_EPOCH_CACHE, a controller GET_METADATA_INFO, the name
// server any reply to GET_ROUTEINFO_BY_TOPIC.
func (n *Node) Answers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	switch n.Kind {
	case "broker":
		_, err := GetEpochCache(ctx, n.Addr)
		return err == nil
	case "controller":
		f, err := harness.Call(ctx, n.Addr, codeCtlGetMetadataInfo, nil, nil)
		return err == nil && f.Code == 0
	default:
		_, err := harness.Call(ctx, n.Addr, codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil)
		return err == nil
	}
}

// WaitBack waits until n answers and the controller names a master that
// answers as master (the set is back after a restart of n).
func (s *Set) WaitBack(ctx context.Context, n *Node, d time.Duration) (*Node, error) {
	start := time.Now()
	if !poll(ctx, d, func() bool { return n.Answers(ctx) }) {
		return nil, fmt.Errorf("%s does not answer %v after its restart", n.Name, d)
	}
	m, _, err := s.WaitMaster(ctx, "", d-time.Since(start))
	return m, err
}

// commitLogDir is a broker's commit log directory (storePathRootDir is
// <dir>/store for both kinds).
func (n *Node) commitLogDir() string { return filepath.Join(n.dir, "store", "commitlog") }

// CompareCommitLogs compares the commit logs of a and b byte for byte
// over [from, upTo) and returns the first offset where they differ, or -1.
// Both must hold the range (segments are named by their start offset).
func CompareCommitLogs(a, b *Node, from, upTo int64) (int64, error) {
	segs, err := commitLogSegments(a.commitLogDir())
	if err != nil {
		return 0, err
	}
	for i, start := range segs {
		end := upTo
		if i+1 < len(segs) {
			end = min(end, segs[i+1])
		}
		if end <= from || start >= upTo {
			continue
		}
		name := fmt.Sprintf("%020d", start)
		x, err := os.ReadFile(filepath.Join(a.commitLogDir(), name))
		if err != nil {
			return 0, fmt.Errorf("commit log of %s: %w", a.Name, err)
		}
		y, err := os.ReadFile(filepath.Join(b.commitLogDir(), name))
		if err != nil {
			return 0, fmt.Errorf("commit log of %s: %w", b.Name, err)
		}
		lo, hi := max(from, start)-start, end-start
		if int64(len(x)) < hi || int64(len(y)) < hi {
			return 0, fmt.Errorf("segment %s shorter than %d (%s %d, %s %d)", name, hi, a.Name, len(x), b.Name, len(y))
		}
		if !bytes.Equal(x[lo:hi], y[lo:hi]) {
			for j := lo; j < hi; j++ {
				if x[j] != y[j] {
					return start + j, nil
				}
			}
		}
	}
	return -1, nil
}

// commitLogSegments lists the start offsets of a commit log's segments.
func commitLogSegments(dir string) ([]int64, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("commit log dir: %w", err)
	}
	var out []int64
	for _, e := range es {
		if v, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && len(e.Name()) == 20 {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}
