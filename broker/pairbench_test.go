package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkMasterSlavePairSend: sync sends of 1 KiB from n goroutines to a
// master with an in-process slave (inSyncReplicas=2), ASYNC_MASTER beside
// SYNC_MASTER, everything over loopback TCP in one process: what the
// replication wait costs the send path without cross-process scheduling.
func BenchmarkMasterSlavePairSend(b *testing.B) {
	for _, role := range []string{"ASYNC_MASTER", "SYNC_MASTER"} {
		for _, n := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/%d", role, n), func(b *testing.B) {
				master := startBroker(b, func(c *Config) {
					c.BrokerRole = role
					c.HaListenPort = 0
					c.InSyncReplicas, c.TotalReplicas = 2, 2
				})
				_, _ = startBrokerAt(b, b.TempDir(), func(c *Config) {
					c.BrokerRole, c.BrokerID = "SLAVE", 1
					c.HaMasterAddress = master.HAAddr()
				})
				deadline := time.Now().Add(10 * time.Second)
				for len(master.HASlaves()) == 0 {
					if time.Now().After(deadline) {
						b.Fatal("the slave never connected")
					}
					time.Sleep(time.Millisecond) // polling with a deadline
				}
				master.topics.createIfAbsent("SM", 8, 6, 0)
				body := make([]byte, 1024)
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				per := b.N/n + 1
				start := time.Now()
				for w := 0; w < n; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < per; i++ {
							resp, err := master.cli.Invoke(context.Background(), master.addr, sendV1("SM", w%8, "", body))
							if err != nil || resp.Code != 0 {
								b.Errorf("send: %v %v", err, resp)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(per*n)/time.Since(start).Seconds(), "msgs/s")
			})
		}
	}
}
