package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// WatchResult holds the persists of one config file seen from outside.
type WatchResult struct {
	File     string         `json:"file"`
	Persists int            `json:"persists"`
	Bytes    int64          `json:"bytes"` // the file's size at the end
	Write    LatencySummary `json:"writeMs"`
	GapS     float64        `json:"meanGapS"` // between persists
}

// scaleWatch watches -dir for -duration and times each persist of -file:
// from the first event of a burst on FILE, FILE.bak or FILE.tmp* (Java
// 5.3.3 reads FILE, writes FILE.bak, then rewrites FILE in place; ours
// writes FILE.tmpN, syncs, writes FILE.bak, renames) to the event that
// completes FILE (IN_CLOSE_WRITE of FILE, or IN_MOVED_TO FILE). The JSON
// encoding before the first write is not visible from outside.
func scaleWatch(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale watch", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("dir", "", "config directory")
	file := fs.String("file", "consumerOffset.json", "file name in -dir")
	duration := fs.Duration("duration", 20*time.Second, "watch this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	defer syscall.Close(fd)
	const mask = syscall.IN_OPEN | syscall.IN_CREATE | syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_TO
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if _, err := syscall.InotifyAddWatch(fd, *dir, mask); err != nil {
		return nil, fmt.Errorf("inotify watch %s: %w", *dir, err)
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	defer syscall.Close(ep)
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	evs := make([]syscall.EpollEvent, 1)
	var lat latencies
	var starts []time.Time
	var burst time.Time // zero: no persist under way
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(*duration)
	for time.Now().Before(deadline) {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EAGAIN {
			// Nothing queued: wait for the next event (at most 100 ms, to see the deadline).
			if _, err := syscall.EpollWait(ep, evs, 100); err != nil && err != syscall.EINTR {
				return nil, fmt.Errorf("epoll wait: %w", err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("inotify read: %w", err)
		}
		now := time.Now()
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameB := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			name := string(bytes.TrimRight(nameB, "\x00"))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if name != *file && name != *file+".bak" && !strings.HasPrefix(name, *file+".tmp") {
				continue
			}
			if burst.IsZero() {
				burst = now
				starts = append(starts, now)
			}
			end := name == *file && (ev.Mask&syscall.IN_MOVED_TO != 0 || ev.Mask&syscall.IN_CLOSE_WRITE != 0)
			if end {
				lat.add(now.Sub(burst))
				burst = time.Time{}
			}
		}
	}
	res := WatchResult{File: *file, Write: lat.summary()}
	res.Persists = res.Write.N
	if st, err := os.Stat(filepath.Join(*dir, *file)); err == nil {
		res.Bytes = st.Size()
	}
	if len(starts) > 1 {
		res.GapS = starts[len(starts)-1].Sub(starts[0]).Seconds() / float64(len(starts)-1)
	}
	return res, nil
}
