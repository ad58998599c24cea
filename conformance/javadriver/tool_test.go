package javadriver

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseAck(t *testing.T) {
	a, ok := ParseAck("ACK ha-17 7F000001AB1C18B4AAC2 3 1042 FLUSH_SLAVE_TIMEOUT batch")
	require.True(t, ok)
	require.Equal(t, Ack{Key: "ha-17", MsgID: "7F000001AB1C18B4AAC2", QueueID: 3, QueueOffset: 1042,
		Status: "FLUSH_SLAVE_TIMEOUT", Kind: "batch"}, a)

	a, ok = ParseAck("ACK ha-9 id 0 -1 SEND_OK")
	require.True(t, ok)
	require.Equal(t, int64(-1), a.QueueOffset)
	require.Empty(t, a.Kind)

	for _, bad := range []string{"ACK ha-1 id x 1 SEND_OK single", "ACK ha-1 id 1", "MSG ha-1 id 0 1 broker-a", ""} {
		_, ok := ParseAck(bad)
		require.False(t, ok, bad)
	}
}

func TestParseErr(t *testing.T) {
	e, ok := ParseErr("ERR ha-5 MQClientException No route info of this topic: t1 <- x")
	require.True(t, ok)
	require.Equal(t, SendErr{Key: "ha-5", Class: "MQClientException", Message: "No route info of this topic: t1 <- x"}, e)
	_, ok = ParseErr("ERR ha-5")
	require.False(t, ok)
}

func TestParseMsg(t *testing.T) {
	d, ok := ParseMsg("MSG ha-3 7F00000100002A9F 2 77 broker-a")
	require.True(t, ok)
	require.Equal(t, Delivery{Key: "ha-3", MsgID: "7F00000100002A9F", QueueID: 2, QueueOffset: 77, BrokerName: "broker-a"}, d)
	for _, bad := range []string{"MSG ha-3 id 2 77", "MSG ha-3 id two 77 broker-a", "ACK ha-3 id 2 77 broker-a"} {
		_, ok := ParseMsg(bad)
		require.False(t, ok, bad)
	}
}

func TestParseOff(t *testing.T) {
	o, ok := ParseOff("OFF broker-a 1 5000 1 127.0.0.1:30911")
	require.True(t, ok)
	require.Equal(t, Offset{BrokerName: "broker-a", QueueID: 1, Offset: 5000, BrokerID: 1, Addr: "127.0.0.1:30911"}, o)

	o, ok = ParseOff("OFF broker-b 0 -1")
	require.True(t, ok)
	require.Equal(t, Offset{BrokerName: "broker-b", Offset: -1, BrokerID: -1}, o)

	for _, bad := range []string{"OFF broker-a 1", "OFF broker-a 1 5000 x 127.0.0.1:1", "OFF broker-a q 1"} {
		_, ok := ParseOff(bad)
		require.False(t, ok, bad)
	}
}

func TestParseDoneAndFatal(t *testing.T) {
	m, ok := ParseDone("DONE acked=19990 failed=10 rolledback=0 unresolved=0 ms=8123")
	require.True(t, ok)
	require.Equal(t, map[string]int64{"acked": 19990, "failed": 10, "rolledback": 0, "unresolved": 0, "ms": 8123}, m)
	_, ok = ParseDone("DONE acked=x")
	require.False(t, ok)
	_, ok = ParseDone("MSG a b 0 0 c")
	require.False(t, ok)

	err := ParseFatal("FATAL IllegalArgumentException missing --topic")
	require.ErrorIs(t, err, ErrFatal)
	require.Contains(t, err.Error(), "missing --topic")
	require.NoError(t, ParseFatal("DONE queues=0 errors=0"))
}

// runChild passes every stdout line in order and reports a failing exit
// with the tail of stderr.
func TestRunChildLinesAndExit(t *testing.T) {
	var lines []string
	cmd := exec.CommandContext(context.Background(), "sh", "-c", "echo ACK a; echo boom >&2; echo 'DONE acked=1'; exit 3")
	err := runChild(context.Background(), "sh", cmd, func(l string) { lines = append(lines, l) })
	require.Equal(t, []string{"ACK a", "DONE acked=1"}, lines)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.ExitCode())
	require.Contains(t, err.Error(), "boom")
}

// Cancelling ctx kills the child's whole process group: a grandchild (as a
// JVM's own children would be) does not outlive RunTool.
func TestRunChildKillsGroupOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 60 & echo pid $!; wait")
	grandchild := 0
	start := time.Now()
	err := runChild(ctx, "sh", cmd, func(l string) {
		if pid, ok := strings.CutPrefix(l, "pid "); ok {
			grandchild, _ = strconv.Atoi(pid)
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), 20*time.Second)
	require.NotZero(t, grandchild)
	require.Eventually(t, func() bool {
		return errors.Is(syscall.Kill(grandchild, 0), syscall.ESRCH)
	}, 5*time.Second, 20*time.Millisecond, "grandchild %d still alive", grandchild)
}

// Leading -D args become JVM properties before the class; the rest are the
// tool's, in order.
func TestToolArgs(t *testing.T) {
	jargs, mode := toolArgs("/j/target/client-5", []string{"-Dx=1", "-Dy=2", "consume", "--topic", "-Dnot-a-prop"})
	require.Equal(t, "consume", mode)
	cls := slices.Index(jargs, HaToolClass)
	require.Positive(t, cls)
	require.Equal(t, []string{"consume", "--topic", "-Dnot-a-prop"}, jargs[cls+1:])
	require.Equal(t, []string{"-cp", "/j/target/client-5/classes:/j/target/client-5/lib/*"}, jargs[cls-2:cls])
	require.Subset(t, jargs[:cls-2], []string{"-Dx=1", "-Dy=2"})
}

// classArgs puts any main class where toolArgs puts HaTool.
func TestClassArgs(t *testing.T) {
	jargs, mode := classArgs("/j/target/client-5", FailoverToolClass, []string{"-Dx=1", "load", "--topic", "t"})
	require.Equal(t, "load", mode)
	cls := slices.Index(jargs, FailoverToolClass)
	require.Positive(t, cls)
	require.NotContains(t, jargs, HaToolClass)
	require.Equal(t, []string{"load", "--topic", "t"}, jargs[cls+1:])
	require.Equal(t, []string{"-cp", "/j/target/client-5/classes:/j/target/client-5/lib/*"}, jargs[cls-2:cls])
	require.Contains(t, jargs[:cls-2], "-Dx=1")
}
