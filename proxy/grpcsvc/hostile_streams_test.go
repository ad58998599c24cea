package grpcsvc

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	gstatus "google.golang.org/grpc/status"

	"github.com/rocketgo/rocketgo/broker"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// 10,000 idle Telemetry streams against the native endpoint, on 20
// connections (MaxConcurrentStreams bounds one connection to 1,024): half
// never send a command, half send their Settings and never read. A
// watchdog fails the test when the process heap passes 512 MiB at any
// check (every 500 streams), so a regression cannot take the machine down;
// a well-behaved client on its own connection sends and routes meanwhile.
// The streams that never sent are ended by the server at
// TelemetryFirstCommand (INVALID_ARGUMENT) and their memory comes back;
// the never-reading ones stay (they are clients) at a bounded cost each.
// Client and server run in this process: the figures are both sides'.
//
// It holds ~20,000 goroutines and takes ~30 s: ROCKETGO_HOSTILE=1 (make
// test runs it on its own).
func TestHostileTenThousandIdleStreams(t *testing.T) {
	if os.Getenv("ROCKETGO_HOSTILE") == "" {
		t.Skip("set ROCKETGO_HOSTILE=1 (make test runs it on its own)")
	}
	const (
		n, conns  = 10000, 20
		watchdog  = 512 << 20
		firstCmd  = 15 * time.Second
		perStream = 48 << 10 // bound per open stream, both sides
	)
	c := startCluster(t, func(_ *broker.Config, g *Config) { g.TelemetryFirstCommand = firstCmd })
	c.createTopic(t, "IdleStreamsT", "NORMAL", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	served := func(tag string) {
		t.Helper()
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		r, err := c.cli.QueryRoute(as(cctx, "well-behaved"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "IdleStreamsT"}, Endpoints: &v2.Endpoints{}})
		require.NoError(t, err, tag)
		require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), tag)
		sr, err := c.cli.SendMessage(as(cctx, "well-behaved"), &v2.SendMessageRequest{Messages: []*v2.Message{newMessage("IdleStreamsT", "WB-"+tag, "x")}})
		require.NoError(t, err, tag)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), tag)
	}
	heap := func() int64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapInuse + ms.StackInuse)
	}
	runtime.GC()
	base, g0 := heap(), runtime.NumGoroutine()

	clients := make([]v2.MessagingServiceClient, conns)
	for i := range clients {
		conn, err := grpc.NewClient(c.ep.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer conn.Close()
		clients[i] = v2.NewMessagingServiceClient(conn)
	}
	var silent, deaf []grpc.BidiStreamingClient[v2.TelemetryCommand, v2.TelemetryCommand]
	began := time.Now()
	var peak int64
	for i := range n {
		cli := clients[i%conns]
		tc, err := cli.Telemetry(as(ctx, "idle-"+strconv.Itoa(i)))
		require.NoError(t, err)
		if i%2 == 0 {
			silent = append(silent, tc) // never sends
		} else {
			// Sends its Settings, never reads the answer.
			require.NoError(t, tc.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: producerSettings("IdleStreamsT")}}))
			deaf = append(deaf, tc)
		}
		if i%500 == 499 {
			h := heap()
			peak = max(peak, h)
			require.Less(t, h, int64(watchdog), "watchdog: heap past %d MiB after %d streams", watchdog>>20, i+1)
		}
		if i%2500 == 2499 {
			served(strconv.Itoa(i + 1))
		}
	}
	flood := time.Since(began)
	// Every stream reached its server handler: the server's goroutines and
	// ours together grew by at least two per stream.
	require.Eventually(t, func() bool { return runtime.NumGoroutine()-g0 >= 2*n }, 60*time.Second, 100*time.Millisecond)
	runtime.GC()
	open := heap() - base
	t.Logf("%d idle telemetry streams on %d connections opened in %v: heap+stacks +%d MiB (%d B per stream, both sides; peak %d MiB), %d goroutines",
		n, conns, flood.Round(time.Millisecond), open>>20, open/n, peak>>20, runtime.NumGoroutine()-g0)
	require.Less(t, open, int64(n*perStream), "idle streams cost more than %d KiB each", perStream>>10)
	served("flood")

	// The streams that never sent end at TelemetryFirstCommand.
	deadline := began.Add(firstCmd + 60*time.Second)
	for i, s := range silent {
		_, err := s.Recv()
		require.Equal(t, codes.InvalidArgument, gstatus.Code(err), "silent stream %d: %v", i, err)
		require.True(t, time.Now().Before(deadline), "silent streams not ended by %v", deadline)
	}
	runtime.GC()
	// Three goroutines a stream at the peak (client, handler, and the
	// first-command wait or the writer), the never-reading ones' after.
	require.Eventually(t, func() bool { return runtime.NumGoroutine()-g0 < 2*n }, 30*time.Second, 100*time.Millisecond,
		"the silent streams' goroutines stay")
	runtime.GC()
	left := heap() - base
	t.Logf("after the server ended the %d silent streams: heap+stacks +%d MiB, %d goroutines (the %d never-reading streams stay open)",
		len(silent), left>>20, runtime.NumGoroutine()-g0, len(deaf))
	require.Less(t, left, open, "memory did not come back")
	served("after")
	for _, s := range deaf {
		_ = s.CloseSend()
	}
}

// The first-command bound at a short setting: a stream that sends nothing
// ends with INVALID_ARGUMENT, one that sends its Settings in time is
// served and stays open past the bound.
func TestTelemetryFirstCommandBound(t *testing.T) {
	c := startCluster(t, func(_ *broker.Config, g *Config) { g.TelemetryFirstCommand = 300 * time.Millisecond })
	c.createTopic(t, "FirstCmdT", "NORMAL", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tc, _ := c.telemetry(t, as(ctx, "talker"), producerSettings("FirstCmdT"))
	silent, err := c.cli.Telemetry(as(ctx, "silent"))
	require.NoError(t, err)
	start := time.Now()
	_, err = silent.Recv()
	require.Equal(t, codes.InvalidArgument, gstatus.Code(err), "%v", err)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)

	// The talker's stream, open longer than the bound by now, still
	// answers a second Settings.
	require.NoError(t, tc.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: producerSettings("FirstCmdT")}}))
	resp, err := tc.Recv()
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, resp.GetStatus().GetCode())
	require.NoError(t, tc.CloseSend())
}
