package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Request codes used only by the restart test (Apache RocketMQ RequestCode).
const codeGetMaxOffset = 30

// startForRestart starts kind, skipping when its binaries or Java are missing.
func startForRestart(t *testing.T, kind Kind) *Cluster {
	t.Helper()
	env, err := FindEnv()
	require.NoError(t, err)
	c, err := Start(context.Background(), env, kind, Options{Dir: t.TempDir()})
	if err != nil && (errors.Is(err, ErrNotBuilt) || errors.Is(err, ErrNoJava)) {
		t.Skipf("%s: %v", kind, err)
	}
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func sendRaw(ctx context.Context, t *testing.T, c *Cluster, topic, body string) {
	t.Helper()
	f, err := Call(ctx, c.BrokerAddr, codeSendMessage, map[string]string{
		"producerGroup": "restart_test_p", "topic": topic, "defaultTopic": "TBW102",
		"defaultTopicQueueNums": "4", "queueId": "0", "sysFlag": "0",
		"bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": "", "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
	}, []byte(body))
	require.NoError(t, err)
	require.Equal(t, int32(0), f.Code, f.Remark)
}

// waitMaxOffset polls queue 0's max offset until it reaches want
// (dispatch to the consume queue is asynchronous) and returns the last value.
func waitMaxOffset(ctx context.Context, t *testing.T, c *Cluster, topic string, want int64) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := Call(ctx, c.BrokerAddr, codeGetMaxOffset, map[string]string{"topic": topic, "queueId": "0"}, nil)
		require.NoError(t, err)
		require.Equal(t, int32(0), f.Code, f.Remark)
		n, err := strconv.ParseInt(f.Ext["offset"], 10, 64)
		require.NoError(t, err)
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRestartBrokerKeepsStoreAndPorts restarts our broker both ways and
// checks that it comes back on the same address with its messages, routed
// by the name server, and that the old log is kept.
func TestRestartBrokerKeepsStoreAndPorts(t *testing.T) {
	c := startForRestart(t, Ours)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "restart_test"
	require.NoError(t, c.CreateTopic(ctx, topic, 1, nil))
	sendRaw(ctx, t, c, topic, "before-restart")
	require.Equal(t, int64(1), waitMaxOffset(ctx, t, c, topic, 1))
	oldLog := c.broker.Log

	for i, mode := range []StopMode{Kill, Graceful} {
		r, err := c.RestartBroker(ctx, RestartOptions{Mode: mode, DownFor: 500 * time.Millisecond, Topics: []string{topic}})
		require.NoError(t, err, mode)
		require.False(t, r.Killed, "%s: graceful stop needed SIGKILL", mode)
		require.GreaterOrEqual(t, r.Started.Sub(r.Stopped), 500*time.Millisecond, "%s: DownFor not honoured", mode)
		require.False(t, r.Ready.Before(r.Started))
		require.FileExists(t, oldLog+"."+strconv.Itoa(i+1))
		require.Equal(t, int64(i+1), waitMaxOffset(ctx, t, c, topic, int64(i+1)), "%s: store lost messages", mode)
		sendRaw(ctx, t, c, topic, "after-"+string(mode))
	}
	require.Equal(t, int64(3), waitMaxOffset(ctx, t, c, topic, 3))
	// Close stops the restarted process, not the dead one.
	c.Close()
	done, _ := c.broker.Exited()
	require.True(t, done)
}

// TestRestartJavaBroker runs the same check against the Java reference
// broker when CONFORMANCE_JAVA_RESTART_TEST=1 (slow: two JVM start-ups).
func TestRestartJavaBroker(t *testing.T) {
	if os.Getenv("CONFORMANCE_JAVA_RESTART_TEST") != "1" {
		t.Skip("set CONFORMANCE_JAVA_RESTART_TEST=1")
	}
	c := startForRestart(t, Java)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const topic = "restart_test"
	require.NoError(t, c.CreateTopic(ctx, topic, 1, nil))
	sendRaw(ctx, t, c, topic, "before-restart")
	_, err := c.RestartBroker(ctx, RestartOptions{Mode: Kill, Topics: []string{topic}})
	require.NoError(t, err)
	require.Equal(t, int64(1), waitMaxOffset(ctx, t, c, topic, 1))
	require.FileExists(t, filepath.Join(c.Dir, "java-broker", "broker.log.1"))
}

func TestRestartWithoutBroker(t *testing.T) {
	_, err := Attach(External, "127.0.0.1:1", "127.0.0.1:2").RestartBroker(context.Background(), RestartOptions{})
	require.ErrorIs(t, err, ErrNoRestart)
}
