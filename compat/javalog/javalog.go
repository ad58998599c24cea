package javalog

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Java's rolling policy of broker.log: 128 MB files, 20 kept.
const (
	DefaultMaxFileSize = 128 << 20
	DefaultMaxIndex    = 20
)

// gmt8 is the zone of Java's pattern (%d{…,GMT+8}).
var gmt8 = time.FixedZone("GMT+8", 8*3600)

// storePrefixes name the packages whose messages go to store.log.
var storePrefixes = map[string]bool{
	"store": true, "ha": true, "autoswitch": true, "timer": true, "index": true, "epoch": true,
	"commitlog": true, "consumequeue": true, "flush": true, "recover": true,
}

// Options tune a Layout.
type Options struct {
	MaxFileSize int64 // bytes before a file rolls (DefaultMaxFileSize)
	MaxIndex    int   // rolled files kept (DefaultMaxIndex)
	Level       slog.Leveler
	Now         func() time.Time // nil: time.Now
}

// Layout is the open log files of one process.
type Layout struct {
	dir   string
	opt   Options
	files map[string]*rollingFile // by file name; fixed after Open
	main  string
	wg    sync.WaitGroup // background compressions
}

// Open creates <home>/logs/rocketmqlogs and opens its files; process is
// "broker", "namesrv" or "controller" (the name of its main file).
func Open(home, process string, opt Options) (*Layout, error) {
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = DefaultMaxFileSize
	}
	if opt.MaxIndex <= 0 {
		opt.MaxIndex = DefaultMaxIndex
	}
	if opt.Level == nil {
		opt.Level = slog.LevelInfo
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	dir := filepath.Join(home, "logs", "rocketmqlogs")
	if err := os.MkdirAll(filepath.Join(dir, "otherdays"), 0o755); err != nil {
		return nil, fmt.Errorf("javalog: %w", err)
	}
	l := &Layout{dir: dir, opt: opt, files: map[string]*rollingFile{}, main: process + ".log"}
	for _, name := range []string{l.main, "store.log", "remoting.log"} {
		f, err := openRolling(l, name)
		if err != nil {
			_ = l.Close()
			return nil, err
		}
		l.files[name] = f
	}
	return l, nil
}

// Dir is the directory of the log files.
func (l *Layout) Dir() string { return l.dir }

// Handler is the slog handler writing into the layout.
func (l *Layout) Handler() slog.Handler { return &handler{l: l} }

// Close flushes and closes every file and waits for rolled files to be
// compressed.
func (l *Layout) Close() error {
	var first error
	for _, f := range l.files {
		if err := f.close(); err != nil && first == nil {
			first = err
		}
	}
	l.wg.Wait()
	return first
}

// fileFor picks the file of a message by the package it starts with.
func (l *Layout) fileFor(msg string) *rollingFile {
	if i := strings.IndexByte(msg, ':'); i > 0 && i < 24 {
		switch pkg := msg[:i]; {
		case pkg == "transport":
			return l.files["remoting.log"]
		case storePrefixes[pkg]:
			return l.files["store.log"]
		}
	}
	return l.files[l.main]
}

type handler struct {
	l     *Layout
	attrs []slog.Attr
	group string
}

func (h *handler) Enabled(_ context.Context, lv slog.Level) bool { return lv >= h.l.opt.Level.Level() }

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

// javaLevel is logback's %p.
func javaLevel(lv slog.Level) string {
	switch {
	case lv >= slog.LevelError:
		return "ERROR"
	case lv >= slog.LevelWarn:
		return "WARN"
	case lv >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	t := r.Time
	if t.IsZero() {
		t = h.l.opt.Now()
	}
	b := make([]byte, 0, 256)
	b = t.In(gmt8).AppendFormat(b, "2006-01-02 15:04:05")
	b = append(b, ' ')
	b = append(b, javaLevel(r.Level)...)
	// %t, the thread: the component when the logger names one.
	thread := "main"
	for _, a := range h.attrs {
		if a.Key == "component" {
			thread = a.Value.String()
		}
	}
	b = append(b, ' ')
	b = append(b, thread...)
	b = append(b, " - "...)
	b = append(b, r.Message...)
	add := func(a slog.Attr) bool {
		if a.Key == "component" {
			return true
		}
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		b = append(b, ' ')
		b = append(b, key...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, a.Value.Resolve().String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	b = append(b, '\n')
	return h.l.fileFor(r.Message).write(b)
}

// rollingFile is one log file and its fixed window of rolled copies.
type rollingFile struct {
	l    *Layout
	name string
	mu   sync.Mutex
	f    *os.File
	size int64
	busy chan struct{} // closed when the last roll's compression ended; nil: none
}

func openRolling(l *Layout, name string) (*rollingFile, error) {
	f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("javalog: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("javalog: %w", err)
	}
	return &rollingFile{l: l, name: name, f: f, size: st.Size()}, nil
}

func (r *rollingFile) write(b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(b)) > r.l.opt.MaxFileSize {
		if err := r.roll(); err != nil {
			return err
		}
	}
	n, err := r.f.Write(b)
	r.size += int64(n)
	return err
}

// rolled is the path of the i-th rolled copy (Java's otherdays/<base>.<i>.log.gz).
func (r *rollingFile) rolled(i int) string {
	base := strings.TrimSuffix(r.name, ".log")
	return filepath.Join(r.l.dir, "otherdays", base+"."+strconv.Itoa(i)+".log.gz")
}

// roll shifts the window (the oldest drops out), moves the current file
// aside and compresses it in the background into index 1. r.mu is held.
func (r *rollingFile) roll() error {
	if r.busy != nil {
		<-r.busy // the previous roll still owns index 1 and the aside file
	}
	max := r.l.opt.MaxIndex
	_ = os.Remove(r.rolled(max))
	for i := max - 1; i >= 1; i-- {
		_ = os.Rename(r.rolled(i), r.rolled(i+1))
	}
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("javalog: roll %s: %w", r.name, err)
	}
	cur := filepath.Join(r.l.dir, r.name)
	aside := cur + ".rolling"
	if err := os.Rename(cur, aside); err != nil {
		return fmt.Errorf("javalog: roll %s: %w", r.name, err)
	}
	dst := r.rolled(1)
	done := make(chan struct{})
	r.busy = done
	r.l.wg.Add(1)
	go func() {
		defer r.l.wg.Done()
		defer close(done)
		_ = compress(aside, dst)
	}()
	f, err := os.OpenFile(cur, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		r.f = nil
		return fmt.Errorf("javalog: roll %s: %w", r.name, err)
	}
	r.f, r.size = f, 0
	return nil
}

// compress gzips src into dst and removes src.
func compress(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst + ".tmp")
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(dst + ".tmp")
		return err
	}
	if err := os.Rename(dst+".tmp", dst); err != nil {
		return err
	}
	return os.Remove(src)
}

func (r *rollingFile) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// Logger is a command's logger: slog's text form on stderr when home is
// empty, else Java's file layout under home (Java's -Duser.home) for the
// process. close flushes and closes the files (a no-op for stderr).
func Logger(home, process string, stderr io.Writer) (log *slog.Logger, close func() error, err error) {
	if home == "" {
		return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})), func() error { return nil }, nil
	}
	l, err := Open(home, process, Options{})
	if err != nil {
		return nil, nil, err
	}
	return slog.New(l.Handler()), l.Close, nil
}
