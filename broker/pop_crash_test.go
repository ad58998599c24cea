package broker

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

const popCrashChildEnv = "ROCKETGO_POP_CRASH_CHILD"

// popCrashConfig: revive rounds every 100 ms and consumer offsets written
// every 100 ms, so the parent can wait for the pop offsets to be on disk
// before it kills (then the outcome is exact, see TestPopSurvivesKill).
func popCrashConfig(c *Config) {
	popConfig(c)
	c.FlushConsumerOffsetInterval = 100
}

// TestPopCrashChild is the broker process of TestPopSurvivesKill; it does
// nothing unless re-executed with popCrashChildEnv set to a store root. It
// prints "addr <ip:port>" and serves until killed.
func TestPopCrashChild(t *testing.T) {
	root := os.Getenv(popCrashChildEnv)
	if root == "" {
		t.Skip("helper process for TestPopSurvivesKill")
	}
	tb, _ := startBrokerAt(t, root, popCrashConfig)
	fmt.Println("addr", tb.addr)
	select {} // the parent kills us
}

// startPopCrashChild runs a broker process on root and returns a client
// view of it and a SIGKILL.
func startPopCrashChild(t *testing.T, root string) (*testBroker, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPopCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), popCrashChildEnv+"="+root)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		cfg := testConfig(root)
		return &testBroker{Broker: &Broker{cfg: cfg}, cli: newTestClient(t), addr: a}, kill
	case <-time.After(30 * time.Second):
		kill()
		t.Fatal("broker child did not start")
		return nil, nil
	}
}

// TestPopSurvivesKill: a broker process holding popped messages is killed
// with SIGKILL. After the restart, every message popped but not acked
// comes back once its invisible time has passed — none lost — and no acked
// one comes back. Before the kill the test waits until the pop offsets
// are on disk (consumerOffset.json), as a Java broker's would be after its
// flushConsumerOffsetInterval; without that wait a re-pop of the original
// queue would redeliver early, which is Java's at-least-once too.
func TestPopSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts broker processes")
	}
	const (
		topic, group = "KillPopTopic", "KillPopGroup"
		n, acked     = 20, 10
		invisibleMs  = 3000
	)
	root := t.TempDir()
	tb, kill := startPopCrashChild(t, root)
	for i := range n {
		resp := tb.invoke(t, sendV1(topic, 0, props("TAGS", "a"), []byte("m"+strconv.Itoa(i))))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	var msgs []popped
	require.Eventually(t, func() bool {
		msgs = append(msgs, tb.popMsgs(t, group, topic, 0, 32, invisibleMs)...)
		return len(msgs) >= n
	}, 10*time.Second, 20*time.Millisecond)
	require.Len(t, msgs, n)
	for _, m := range msgs[:acked] {
		tb.ackMsg(t, group, m)
	}
	lastPop := msgs[n-1].ck.PopTime

	// The pop offset (n) of the original queue is on disk.
	offsets := filepath.Join(root, "config", "consumerOffset.json")
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(offsets)
		return err == nil && strings.Contains(string(b), `"`+topic+"@"+group+`":{0:`+strconv.Itoa(n)+"}")
	}, 10*time.Second, 20*time.Millisecond, "pop offset never persisted")
	kill()

	tb2, _ := startPopCrashChild(t, root)
	got := map[string]int{}
	first := int64(0)
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < n-acked && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := tb2.cli.Invoke(ctx, tb2.addr, popReq(group, topic, -1, 32, 60000, 1000))
		cancel()
		require.NoError(t, err)
		for _, m := range popResult(t, resp, "broker-a") {
			if first == 0 {
				first = time.Now().UnixMilli()
			}
			got[string(m.Body)]++
			require.Equal(t, int32(1), m.ReconsumeTimes, "m=%s", m.Body)
		}
	}
	want := map[string]int{}
	for _, m := range msgs[acked:] {
		want[string(m.Body)] = 1
	}
	require.Equal(t, want, got, "after the kill: every unacked message once, no acked one")
	require.GreaterOrEqual(t, first, lastPop+invisibleMs, "redelivered before the invisible time ended")

	// Nothing more arrives: a held pop times out empty.
	resp := tb2.invoke(t, popReq(group, topic, -1, 32, 60000, 1500))
	require.Equal(t, int32(codec.RespPollingTimeout), resp.Code, resp.Remark)
}
