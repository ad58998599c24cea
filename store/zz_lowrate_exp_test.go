package store

import (
	"os"
	"slices"
	"testing"
	"time"
)

func TestZZLowRateExperiment(t *testing.T) {
	if os.Getenv("E12EXP") == "" {
		t.Skip()
	}
	cfg := DefaultConfig(t.TempDir())
	cfg.MappedFileSizeCommitLog = 64 << 20
	s := openT(t, cfg)
	defer s.Close()
	var c collector
	c.wg.Add(300000)
	for i := range 300000 {
		s.Put(testMsg("Bulk", int32(i%8), i, 1024), c.done)
	}
	c.wg.Wait()
	t.Logf("bulk done")
	arrived := make(chan time.Time, 1)
	s.OnArrival(func(string, int32, int64, int64, string) { arrived <- time.Now() })
	var putD, dispD []time.Duration
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := range 300 {
		<-tick.C
		t0 := time.Now()
		var t1 time.Time
		s.Put(testMsg("Low", 0, i, 1024), func(PutResult) { t1 = time.Now() })
		at := <-arrived
		putD = append(putD, t1.Sub(t0))
		dispD = append(dispD, at.Sub(t0))
	}
	for i := range putD {
		if putD[i] > time.Millisecond || dispD[i] > 2*time.Millisecond {
			t.Logf("#%d put %v arrival %v", i, putD[i], dispD[i])
		}
	}
	slices.Sort(putD)
	slices.Sort(dispD)
	n := len(putD)
	t.Logf("put p50 %v p99 %v max %v; put→arrival p50 %v p99 %v max %v", putD[n/2], putD[n*99/100], putD[n-1], dispD[n/2], dispD[n*99/100], dispD[n-1])
}
