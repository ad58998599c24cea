package broker

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/store"
)

const brokerDiskFullChildEnv = "ROCKETGO_BROKER_DISKFULL_CHILD"

const brokerDiskRecheck = 200 * time.Millisecond

// TestBrokerDiskFullChild is the broker process of TestBrokerDiskFullCycle
// (re-executed test binary, so a SIGBUS shows as a crash of the child).
func TestBrokerDiskFullChild(t *testing.T) {
	dir := os.Getenv(brokerDiskFullChildEnv)
	if dir == "" {
		t.Skip("helper process for TestBrokerDiskFullCycle")
	}
	tb, _ := startBrokerAt(t, filepath.Join(dir, "store"), func(c *Config) {
		c.CleanResourceInterval = brokerDiskRecheck.Milliseconds()
		c.CleanFileForciblyEnable = false // only deleting the filler frees space
		c.TimerWheelEnable = false        // its wheel alone takes more than this disk
	})
	const topic = "DiskFull"
	body := bytes.Repeat([]byte("x"), 1000)
	send := func() *codec.Frame {
		return tb.invoke(t, sendV1(topic, 0, props("KEYS", "k"), body))
	}
	require.Equal(t, int32(codec.RespSuccess), send().Code)

	// Fill the file system.
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	var size int64
	for _, chunk := range []int64{1 << 20, 64 << 10, 4 << 10} {
		for unix.Fallocate(int(f.Fd()), 0, size, chunk) == nil {
			size += chunk
		}
	}
	// Sends are refused with Java's code and remark; nothing crashes.
	ok := 1
	var refused *codec.Frame
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < 200000 && time.Now().Before(deadline); i++ {
		r := send()
		if r.Code == int32(codec.RespSuccess) {
			ok++
			continue
		}
		refused = r
		break
	}
	require.NotNil(t, refused, "sends never refused on a full disk")
	require.Equal(t, int32(codec.RespServiceNotAvailable), refused.Code, refused.Remark)
	require.Regexp(t, `the broker.s disk is full \[CL:  ?[01]\.[0-9]{2} CQ:  ?[01]\.[0-9]{2} INDEX:  ?[01]\.[0-9]{2}\]`, refused.Remark)
	t.Logf("full after %d sends: code %d %q", ok, refused.Code, refused.Remark)

	// Consumers keep reading while the disk is full: everything
	// dispatched (an acknowledged message whose consume-queue file could
	// not be allocated becomes visible once there is room again).
	pullAll := func(upTo int64) int {
		n := 0
		for off := int64(0); off < upTo; {
			r := tb.invoke(t, pullReq("cg", topic, 0, off, pullFlagSubscription, 0, "*"))
			require.Equal(t, int32(codec.RespSuccess), r.Code, r.Remark)
			recs := decodeRecords(t, r.Body)
			for i := range recs {
				require.Equal(t, body, recs[i].Body)
			}
			n += len(recs)
			off += int64(len(recs))
		}
		return n
	}
	visible := tb.store.MaxOffset(topic, 0)
	require.Positive(t, visible)
	require.Equal(t, int(visible), pullAll(visible))

	// Freeing space: sends succeed again within the re-check interval.
	require.NoError(t, f.Close())
	require.NoError(t, os.Remove(f.Name()))
	freed := time.Now()
	require.Eventually(t, func() bool { return send().Code == int32(codec.RespSuccess) }, 2*brokerDiskRecheck+time.Second, 5*time.Millisecond)
	t.Logf("sends accepted again %v after the space was freed; %d of %d acknowledged were visible while full",
		time.Since(freed).Round(time.Millisecond), visible, ok)
	ok++
	tb.waitDispatched(t, topic, 0, int64(ok))
	require.Equal(t, ok, pullAll(int64(ok)), "every acknowledged message is delivered")
	fmt.Println("BROKER-DISKFULL-CHILD-OK")
}

// TestBrokerDiskFullCycle: a broker on a 16 MiB tmpfs, with a real client
// connection, answers SERVICE_NOT_AVAILABLE (14) with Java's remark while
// the disk is full, keeps serving pulls, and accepts sends again by itself
// once space is freed.
func TestBrokerDiskFullCycle(t *testing.T) {
	if os.Getenv(brokerDiskFullChildEnv) != "" {
		t.Skip("in child")
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokerDiskFullChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), brokerDiskFullChildEnv+"="+dir)
	var out syncBuf
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("child did not finish:\n%s", out.String())
	}
	if i := strings.Index(out.String(), "[signal "); i >= 0 {
		t.Fatalf("broker process crashed: %s", out.String()[max(i-200, 0):min(len(out.String()), i+1500)])
	}
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("broker process killed by %v:\n%s", ws.Signal(), out.String())
		}
	}
	require.NoError(t, err, "child failed:\n%s", out.String())
	require.Contains(t, out.String(), "BROKER-DISKFULL-CHILD-OK")
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "diskfull_test.go:") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRetentionWarnsUnconsumed: a segment deleted before its retention
// time is logged at WARN with, per consumer group, how many of its
// messages the group had not consumed.
func TestRetentionWarnsUnconsumed(t *testing.T) {
	cfg := testConfig(t.TempDir())
	offsets := newOffsetTable(&cfg)
	offsets.commit("g1", "T", 0, 7)  // consumed 0..6 of [0, 10): 3 lost
	offsets.commit("g1", "T", 1, 50) // consumed all of queue 1
	offsets.commit("g2", "T", 1, 0)  // consumed nothing of [20, 30) on queue 1; none on queue 0
	offsets.commit("g3", "Other", 0, 0)
	var logs syncBuf
	w := &retentionWatcher{offsets: offsets, log: slog.New(slog.NewTextHandler(&logs, nil))}
	d := store.DeletedSegment{Start: 0, End: 4 << 20, Forced: true, Queues: []store.QueueRange{
		{Topic: "T", QueueID: 0, From: 0, To: 10},
		{Topic: "T", QueueID: 1, From: 20, To: 30},
	}}
	require.Equal(t, []groupLoss{{"g1", "T", 3}, {"g2", "T", 20}}, w.unconsumed(d.Queues))
	w.deleted(d)
	out := logs.String()
	require.Contains(t, out, "level=WARN")
	require.Contains(t, out, "start=0 end=4194304 unconsumed=23")
	require.Contains(t, out, "g1 on T: 3, g2 on T: 20")
	// Expired segments (not forced) are not reported as losses.
	logs = syncBuf{}
	d.Forced = false
	w.deleted(d)
	require.Empty(t, logs.String())
}
