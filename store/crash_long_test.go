//go:build long

package store

import (
	"testing"
	"time"
)

// TestCrashSoak repeats the SIGKILL crash test with more traffic.
func TestCrashSoak(t *testing.T) {
	for round := 0; round < 5; round++ {
		for _, mode := range []string{"sync", "async"} {
			t.Run(mode, func(t *testing.T) { runCrash(t, mode, 200000, 20*time.Second) })
		}
	}
}
