package main

import (
	"bytes"
	"runtime"
	"runtime/trace"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sleepInSyscall blocks its goroutine in a real system call for d.
func sleepInSyscall(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

func TestAttributesSyscallsAndSchedulingWaits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: a runnable goroutine must wait for it
	var buf bytes.Buffer
	require.NoError(t, trace.Start(&buf))
	done := make(chan struct{})
	go func() {
		sleepInSyscall(30 * time.Millisecond)
		close(done)
	}()
	<-done
	// A goroutine readied while the only P spins for 20 ms waits that long.
	started, ready, waited := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		close(started)
		<-ready
		close(waited)
	}()
	<-started // on one P the goroutine is parked on ready once main runs again
	close(ready)
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	<-waited
	trace.Stop()

	a, err := analyze(&buf)
	require.NoError(t, err)
	var sys *hist
	for site, h := range a.sys {
		if strings.Contains(site, "sleepInSyscall") {
			sys = h
		}
	}
	require.NotNil(t, sys, "the nanosleep call site is attributed: %v", keys(a.sys))
	require.GreaterOrEqual(t, sys.max, 30*time.Millisecond)

	var longest time.Duration
	for _, w := range a.long {
		longest = max(longest, w.d)
	}
	require.GreaterOrEqual(t, longest, 5*time.Millisecond, "the readied goroutine's wait for the busy P is seen")

	var out bytes.Buffer
	a.report(&out, 5, time.Millisecond)
	require.Contains(t, out.String(), "longest scheduling waits")
	require.Contains(t, out.String(), "sleepInSyscall")
}

func keys(m map[string]*hist) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
