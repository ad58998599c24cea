package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pacer waits until an open-loop send's scheduled time. Go timers cannot do
// it: on Linux the runtime rounds a wait shorter than 1 ms up to a 1 ms
// epoll timeout and truncates longer ones to whole milliseconds, so a
// producer woken by a timer sends up to ~1 ms late, and because latency
// counts from the scheduled time that lateness (the generator's, not the
// broker's) used to be about half of the measured median. The pacer sleeps
// on a Go timer until shortly before the send and spends the rest on a
// timerfd armed for the exact time: a timerfd is a pollable file, so the
// goroutine parks in the netpoller and epoll returns when the hrtimer
// fires, without blocking a thread or spinning a core.
type pacer struct {
	tfd   *os.File
	fd    int
	timer *time.Timer
	buf   [8]byte
}

// pacerCoarse is how much of a wait the Go timer covers: it may wake up to
// 1 ms late, so it is stopped that far before the deadline (plus margin).
const pacerCoarse = 2 * time.Millisecond

func newPacer() (*pacer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("mqbench: timerfd: %w", err)
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	// os.NewFile registers a non-blocking descriptor with the netpoller.
	return &pacer{tfd: os.NewFile(uintptr(fd), "timerfd"), fd: fd, timer: t}, nil
}

// wait returns once the clock reaches sched (clk.mono() nanoseconds), or
// false when done closes first.
func (p *pacer) wait(clk *clock, sched int64, done <-chan struct{}) bool {
	d := time.Duration(sched - clk.mono())
	if d <= 0 {
		return true
	}
	if d > pacerCoarse {
		p.timer.Reset(d - pacerCoarse)
		select {
		case <-p.timer.C:
		case <-done:
			p.timer.Stop()
			return false
		}
		d = time.Duration(sched - clk.mono())
		if d <= 0 {
			return true
		}
	}
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		time.Sleep(d)
		return true
	}
	at := unix.NsecToTimespec(now.Nano() + int64(d))
	spec := unix.ItimerSpec{Value: at}
	if err := unix.TimerfdSettime(p.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		time.Sleep(d)
		return true
	}
	if _, err := p.tfd.Read(p.buf[:]); err != nil {
		time.Sleep(time.Duration(sched - clk.mono()))
	}
	return true
}

func (p *pacer) close() {
	p.timer.Stop()
	p.tfd.Close()
}
