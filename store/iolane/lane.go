package iolane

import (
	"os"
	"runtime"
)

// Lanes is how many goroutines of a store may sit in a blocking disk call
// at once: the commit-log flusher and one background Lane.
const Lanes = 2

// Lane admits one blocking disk call at a time. The zero value is not
// usable; a nil *Lane admits every call at once (tests, tools).
type Lane struct {
	slot chan struct{}
}

// New returns a Lane admitting one call at a time.
func New() *Lane { return &Lane{slot: make(chan struct{}, 1)} }

// Do runs f once the lane is free and returns its error.
func (l *Lane) Do(f func() error) error {
	if l == nil {
		return f()
	}
	l.slot <- struct{}{}
	defer func() { <-l.slot }()
	return f()
}

// Run is Do for a call without an error.
func (l *Lane) Run(f func()) {
	if l == nil {
		f()
		return
	}
	l.slot <- struct{}{}
	defer func() { <-l.slot }()
	f()
}

// Reserve raises GOMAXPROCS by lanes, once at process start, and returns
// the new value. An explicit GOMAXPROCS in the environment is left alone:
// the operator chose it.
func Reserve(lanes int) int {
	if os.Getenv("GOMAXPROCS") != "" || lanes <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	n := runtime.GOMAXPROCS(0) + lanes
	runtime.GOMAXPROCS(n)
	return n
}

// Hold takes the lane until the returned release is called: for a caller
// that makes several calls in one turn (and for tests that stall the lane).
func (l *Lane) Hold() (release func()) {
	if l == nil {
		return func() {}
	}
	l.slot <- struct{}{}
	return func() { <-l.slot }
}
