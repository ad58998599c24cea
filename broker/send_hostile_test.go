package broker

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// A client that pipelines sends and reads none of the replies gets at
// most maxInflightRequestsPerConnection of them into the shared send
// queue (the send path counts its queued sends on the connection, as the
// worker pools do); the rest stay unread in the kernel and its writes
// block. A well-behaved producer beside it is answered SUCCESS every time,
// never SYSTEM_BUSY. Before, the attacker alone filled the 10,000-slot
// queue and its neighbours waited behind it or were refused.
func TestNonReadingSenderCappedInSendQueue(t *testing.T) {
	const inflight = 64
	tb := startBroker(t, func(c *Config) {
		c.MaxInflightRequestsPerConnection = inflight
		c.SendMessageThreadPoolNums = 1
	})
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("Storm", 0, "", []byte("x"))).Code)

	nc, err := net.DialTimeout("tcp", tb.addr, time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	require.NoError(t, nc.(*net.TCPConn).SetReadBuffer(16<<10))
	var burst []byte
	for range 64 {
		burst = sendV1("Storm", 0, "", make([]byte, 1024)).AppendTo(burst)
	}

	stop := make(chan struct{})
	var depth int
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() { // the deepest the send queue gets
		defer sampled.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				depth = max(depth, tb.sendPool.Pending())
			}
		}
	}()
	attacked := make(chan int)
	go func() {
		frames := 0
		for range 500 { // 32,000 sends at most
			_ = nc.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
			n, err := nc.Write(burst)
			frames += n * 64 / len(burst)
			if err != nil {
				break // blocked: the broker stopped reading it (or cut it)
			}
		}
		attacked <- frames
	}()

	var busy, failed int
	for i := range 200 {
		resp := tb.invoke(t, sendV1("Storm", 0, "", []byte("probe")))
		switch resp.Code {
		case int32(codec.RespSuccess):
		case int32(codec.RespSystemBusy):
			busy++
		default:
			failed++
			t.Logf("probe %d: %d %q", i, resp.Code, resp.Remark)
		}
	}
	frames := <-attacked
	close(stop)
	sampled.Wait()
	t.Logf("the attacker wrote %d sends before its writes stopped; send queue at most %d deep", frames, depth)
	require.Zero(t, failed)
	require.Zero(t, busy, "the well-behaved producer was refused SYSTEM_BUSY")
	require.LessOrEqual(t, depth, inflight+8, "one connection filled the shared send queue")

	// Cut: its queued sends are not kept (nothing waits for them).
	require.NoError(t, nc.Close())
	require.Eventually(t, func() bool { return tb.sendPool.Pending() == 0 && tb.send.inflight.Load() == 0 },
		5*time.Second, 10*time.Millisecond)
}
