package broker

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// BenchmarkMetricsCost is the send path with metrics off, on
// (metricsExporterType DISABLE vs PROM) and on with a scrape every second
// (as a Prometheus server would), each sub-benchmark a fresh broker and 8
// connections sending 1 KiB SEND_MESSAGE_V2 round trips side by side.
// It reports msg/s and allocs/op: the raw clients allocate nothing, so
// allocations are the broker's per message (and, with scrapes, each
// scrape's allocations spread over the messages sent meanwhile).
//
//	go test ./broker/ -run '^$' -bench BenchmarkMetricsCost -benchtime 20000x
//
// scripts/bench-metrics.sh runs it COUNT times (so the three alternate, as
// a noisy machine needs) and prints the medians and their ratios.
func BenchmarkMetricsCost(b *testing.B) {
	for _, c := range []struct {
		name       string
		on, scrape bool
	}{{"metrics=off", false, false}, {"metrics=on", true, false}, {"metrics=on+scrape", true, true}} {
		on := c.on
		b.Run(c.name, func(b *testing.B) {
			tb := startBroker(b, func(c *Config) {
				if on {
					c.MetricsExporterType = "PROM"
					c.MetricsPromExporterHost = "127.0.0.1"
					c.MetricsPromExporterPort = 0
				}
			})
			if c.scrape {
				stop := scrapeEverySecond(b, tb.MetricsAddr())
				defer stop()
			}
			const conns = 8
			clients := make(chan *rawClient, conns)
			for range conns {
				clients <- dialRawClient(b, tb.addr)
			}
			wire := sendV2Wire("BenchMetricsCost", 0, props("TAGS", "TagA", "UNIQ_KEY", "0A0000010000000000000000000000AA"), make([]byte, 1024))
			for range 200 { // warm: children of the histograms, pools, segments
				rc := <-clients
				rc.roundTrip(wire)
				clients <- rc
			}
			b.SetBytes(1024)
			b.SetParallelism((conns + 1) / 2) // GOMAXPROCS × this ≥ conns on 2 cores
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				rc := <-clients
				defer func() { clients <- rc }()
				for pb.Next() {
					if code := replyCode(b, rc.roundTrip(wire)); code != int(codec.RespSuccess) {
						b.Errorf("send answered %d", code)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msg/s")
		})
	}
}

// scrapeEverySecond GETs addr's /metrics once a second until stop, as a
// Prometheus server would (the scrape's cost belongs to metrics=on).
func scrapeEverySecond(tb testing.TB, addr string) (stop func()) {
	tb.Helper()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
