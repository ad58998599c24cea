package javalog

import (
	"compress/gzip"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// Records land in Java's files by the package their message names, in
// Java's line pattern with the time in GMT+8.
func TestLayoutFilesAndPattern(t *testing.T) {
	home := t.TempDir()
	at := time.Date(2026, 12, 2, 1, 2, 3, 0, time.UTC)
	l, err := Open(home, "broker", Options{Now: func() time.Time { return at }})
	require.NoError(t, err)
	log := slog.New(l.Handler())
	log.Info("broker started", "addr", "127.0.0.1:10911")
	log.With("component", "replicas").Warn("transport: pool full, answering SYSTEM_BUSY", "pool", "send")
	log.Error("store: segment sync", "err", "EIO")
	log.Info("ha: slave connected")
	log.Debug("not shown at info")
	require.NoError(t, l.Close())

	dir := filepath.Join(home, "logs", "rocketmqlogs")
	require.Equal(t, dir, l.Dir())
	broker := read(t, filepath.Join(dir, "broker.log"))
	require.Regexp(t, regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO main - broker started addr="127.0.0.1:10911"\n$`), broker)
	require.NotContains(t, broker, "not shown")
	remoting := read(t, filepath.Join(dir, "remoting.log"))
	require.True(t, strings.HasSuffix(remoting, "WARN replicas - transport: pool full, answering SYSTEM_BUSY pool=\"send\"\n"), remoting)
	store := read(t, filepath.Join(dir, "store.log"))
	require.Contains(t, store, "ERROR main - store: segment sync err=\"EIO\"\n")
	require.Contains(t, store, "INFO main - ha: slave connected\n")
}

// A file rolls at its size into otherdays/<name>.1.log.gz, the window
// shifts and keeps MaxIndex copies; nothing logged is lost in between.
func TestRollingWindow(t *testing.T) {
	home := t.TempDir()
	l, err := Open(home, "namesrv", Options{MaxFileSize: 200, MaxIndex: 3})
	require.NoError(t, err)
	log := slog.New(l.Handler())
	const n = 40
	for i := range n {
		log.Info("namesrv: line", "i", i) // ~50 bytes: a roll every 4 lines
	}
	require.NoError(t, l.Close())
	dir := filepath.Join(home, "logs", "rocketmqlogs")
	var kept []string
	for i := 1; i <= 4; i++ {
		p := filepath.Join(dir, "otherdays", "namesrv."+string(rune('0'+i))+".log.gz")
		if _, err := os.Stat(p); err == nil {
			kept = append(kept, p)
		}
	}
	require.Len(t, kept, 3, "the window keeps MaxIndex rolled files")
	// The newest rolled file holds the lines just before the current file's.
	f, err := os.Open(kept[0])
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	cur := read(t, filepath.Join(dir, "namesrv.log"))
	require.Contains(t, cur, "i=\"39\"")
	require.NotEmpty(t, string(b))
	require.Less(t, len(cur), 200+80)
	left, _ := filepath.Glob(filepath.Join(dir, "*.rolling"))
	require.Empty(t, left, "every rolled file was compressed")
}
