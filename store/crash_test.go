package store

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

const crashChildEnv = "ROCKETGO_STORE_CRASH_CHILD"

// crashBody is the deterministic body of message i of writer w.
func crashBody(w, i int) []byte {
	b := make([]byte, 100+(i*7)%900)
	for j := range b {
		b[j] = byte(w*31 + i + j)
	}
	return b
}

// TestCrashChild is the writer process of TestCrashRecovery; it does nothing
// unless re-executed with crashChildEnv set. It appends from 4 goroutines
// until killed and prints "ack <writer> <i> <phy> <queueOffset>" for every
// acknowledged message.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashChildEnv)
	if spec == "" {
		t.Skip("helper process for TestCrashRecovery")
	}
	dir, mode, _ := strings.Cut(spec, ",")
	cfg := testConfig(t, dir)
	if mode == "sync" {
		cfg.FlushDiskType = SyncFlush
	}
	s, err := Open(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	fmt.Println("ready")
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				m := &message.Message{Topic: "Crash", QueueID: int32(w), Body: crashBody(w, i),
					Properties: "KEYS\x01w" + strconv.Itoa(w) + "i" + strconv.Itoa(i) + "\x02",
					BornHost:   bornHost, StoreHost: storeHost}
				done := make(chan PutResult, 1)
				s.Put(m, func(r PutResult) { done <- r })
				r := <-done
				if r.Status != PutOK {
					continue
				}
				out.Lock()
				fmt.Printf("ack %d %d %d %d\n", w, i, r.WroteOffset, r.QueueOffset)
				out.Unlock()
			}
		}()
	}
	wg.Wait() // forever: the parent kills us
}

type ack struct {
	w, i    int
	phy, qo int64
}

func runCrash(t *testing.T, mode string, minAcks int, maxTime time.Duration) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir+","+mode)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	var killed atomic.Bool
	defer func() {
		if !killed.Load() {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	var acks []ack
	sc := bufio.NewScanner(stdout)
	deadline := time.Now().Add(maxTime)
	ready := false
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			ready = true
			continue
		}
		var a ack
		if _, err := fmt.Sscanf(line, "ack %d %d %d %d", &a.w, &a.i, &a.phy, &a.qo); err != nil {
			continue // test framework output
		}
		acks = append(acks, a)
		if len(acks) >= minAcks || time.Now().After(deadline) {
			break
		}
	}
	require.True(t, ready, "child never started")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	killed.Store(true)
	cmd.Wait()
	require.NotEmpty(t, acks)
	t.Logf("%s: %d acknowledged messages before SIGKILL", mode, len(acks))

	cfg := testConfig(t, dir)
	s := openT(t, cfg)
	defer s.Close()
	require.NoError(t, s.Check())
	var res GetResult
	defer res.Release()
	var e message.Ext
	for _, a := range acks {
		b, err := s.ReadRecord(a.phy, 0)
		require.NoError(t, err, "ack %+v", a)
		require.NoError(t, message.Decode(b, &e))
		require.Equal(t, crashBody(a.w, a.i), e.Body, "ack %+v", a)
		s.GetMessages("Crash", int32(a.w), a.qo, 1, math.MaxInt32, nil, &res)
		require.Equal(t, Found, res.Status, "ack %+v", a)
		require.Equal(t, b, res.Records[0])
		res.Release()
	}
	// The store keeps working after recovery.
	next := s.MaxOffset("Crash", 0)
	r := putSync(t, s, testMsg("Crash", 0, 1, 10))
	require.Equal(t, PutOK, r.Status)
	require.Equal(t, next, r.QueueOffset)
}

func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in child")
	}
	for _, mode := range []string{"sync", "async"} {
		t.Run(mode, func(t *testing.T) { runCrash(t, mode, 3000, 3*time.Second) })
	}
}
