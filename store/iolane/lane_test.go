package iolane

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLaneAdmitsOneCallAtATime(t *testing.T) {
	l := New()
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				l.Run(func() {
					n := inside.Add(1)
					for {
						m := most.Load()
						if n <= m || most.CompareAndSwap(m, n) {
							break
						}
					}
					runtime.Gosched() // give the others a chance to enter
					inside.Add(-1)
				})
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int32(1), most.Load())
}

func TestLaneDoReturnsTheError(t *testing.T) {
	want := errTest{}
	require.ErrorIs(t, New().Do(func() error { return want }), want)
	var nilLane *Lane
	require.ErrorIs(t, nilLane.Do(func() error { return want }), want)
}

type errTest struct{}

func (errTest) Error() string { return "test" }

func TestReserveRaisesGOMAXPROCS(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	require.Equal(t, before+Lanes, Reserve(Lanes))
	require.Equal(t, before+Lanes, runtime.GOMAXPROCS(0))
}

func TestReserveKeepsAnExplicitSetting(t *testing.T) {
	t.Setenv("GOMAXPROCS", "3")
	before := runtime.GOMAXPROCS(0)
	require.Equal(t, before, Reserve(Lanes))
}
