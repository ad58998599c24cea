//go:build interop

package autoswitch

// Manual interop run against a Java 5.3.3 master in controller mode (see
// testdata/README.md): a loopback proxy between this package's Client and
// the Java master's HA port records both directions; the slave must end
// byte for byte equal to the Java master's commit log and epoch file.
//
//	ASW_JAVA_HA=127.0.0.1:26912 ASW_JAVA_STORE=/tmp/asw-interop/bk/store \
//	ASW_SEGMENT=1048576 ASW_CAPTURE=testdata \
//	go test -tags interop -run TestJavaMasterInterop -count=1 -v ./store/ha/autoswitch/

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

// recorder is a thread-safe byte log of one direction.
type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(b)
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.buf.Bytes()...)
}

// proxy forwards the first connection to target and records it.
func proxy(t *testing.T, target string) (addr string, s2m, m2s *recorder) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s2m, m2s = &recorder{}, &recorder{}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	first := true
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			var ws, wm io.Writer = io.Discard, io.Discard
			if first {
				ws, wm, first = s2m, m2s, false
			}
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(io.MultiWriter(up, ws), c); _ = up.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(io.MultiWriter(c, wm), up); _ = c.Close() }()
			t.Cleanup(func() { _ = c.Close(); _ = up.Close() })
		}
	}()
	return ln.Addr().String(), s2m, m2s
}

func TestJavaMasterInterop(t *testing.T) {
	target := os.Getenv("ASW_JAVA_HA")
	if target == "" {
		t.Skip("ASW_JAVA_HA not set")
	}
	javaStore := os.Getenv("ASW_JAVA_STORE")
	seg, _ := strconv.ParseInt(os.Getenv("ASW_SEGMENT"), 10, 64)
	require.Positive(t, seg)
	addr, s2m, m2s := proxy(t, target)

	dir := t.TempDir()
	cfg := storeConfig(dir, store.Slave)
	cfg.MappedFileSizeCommitLog = seg
	cfg.MaxMessageSize = 512 << 10
	st, err := store.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ep, err := epoch.Open(filepath.Join(dir, "epochFileCheckpoint"))
	require.NoError(t, err)
	ccfg := clientConfig(2)
	ccfg.HeartbeatInterval = time.Second
	ccfg.HousekeepingInterval = 30 * time.Second
	c := NewClient(ccfg, st, ep)
	c.SetMasterAddr(addr)
	c.Start()
	t.Cleanup(func() { _ = c.Close() })

	// The master's max offset, from its handshake.
	var masterMax int64 = -1
	require.Eventually(t, func() bool {
		b := m2s.bytes()
		if len(b) < MasterHandshakeHeader {
			return false
		}
		masterMax = int64(binary.BigEndian.Uint64(b[8:16]))
		return true
	}, 20*time.Second, 10*time.Millisecond)
	t.Logf("java master max offset %d", masterMax)
	require.Eventually(t, func() bool { return st.MaxPhyOffset() >= masterMax }, 60*time.Second, 10*time.Millisecond)
	// Wait for a heartbeat (haSendHeartbeatInterval, 5 s) on the wire.
	require.Eventually(t, func() bool { return heartbeats(m2s.bytes()) > 0 }, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, c.Close())
	t.Logf("slave status %+v disconnects %d", c.Status(), c.Disconnects())
	if out := os.Getenv("ASW_CAPTURE"); out != "" {
		require.NoError(t, os.WriteFile(filepath.Join(out, "java533-master-to-slave.bin"), m2s.bytes(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(out, "go-slave-to-java533-master.bin"), s2m.bytes(), 0o644))
	}

	end := st.MaxPhyOffset()
	jcfg := cfg
	jcfg.RootDir = javaStore
	require.Equal(t, commitLogSeg(t, jcfg.RootDir, seg, 0, end), commitLogSeg(t, dir, seg, 0, end), "commit log byte for byte")
	jep, err := epoch.Open(filepath.Join(javaStore, "epochFileCheckpoint"))
	require.NoError(t, err)
	require.Equal(t, entries(jep.Entries()), entries(ep.Entries()), "epoch file")
	t.Logf("epochs %v, %d bytes replicated, m2s %d bytes, s2m %d bytes", entries(ep.Entries()), end, len(m2s.bytes()), len(s2m.bytes()))

}

// heartbeats counts the empty TRANSFER frames in a master stream.
func heartbeats(b []byte) int {
	r := NewMasterReader(bytes.NewReader(b), 64<<20)
	if _, _, _, err := r.Next(Handshake); err != nil {
		return 0
	}
	n := 0
	for {
		_, _, body, err := r.Next(Transfer)
		if err != nil {
			return n
		}
		if len(body) == 0 {
			n++
		}
	}
}

func commitLogSeg(t *testing.T, root string, seg, from, end int64) []byte {
	t.Helper()
	var out []byte
	for off := from - from%seg; off < end; off += seg {
		b, err := os.ReadFile(filepath.Join(root, "commitlog", fmt.Sprintf("%020d", off)))
		require.NoError(t, err)
		out = append(out, b[max(from-off, 0):min(end-off, seg)]...)
	}
	return out
}

// TestJavaSlaveInterop: a Java 5.3.3 slave (controller mode, registered
// with the Java controller, caught up from the Java master) is pointed at
// this package's Server (EXCHANGE_BROKER_HA_INFO, 906; it reconnects after
// its haHousekeepingInterval). The Server runs on a replica of the Java
// master (replicated first, so the epochs agree) that took a new epoch 6
// and more records; the Java slave must end with the same bytes and epoch
// 6 in its epoch file.
//
//	ASW_JAVA_HA=127.0.0.1:26912 ASW_JAVA_STORE=/tmp/asw-interop/bk/store \
//	ASW_JAVA_SLAVE=127.0.0.1:26921 ASW_JAVA_SLAVE_STORE=/tmp/asw-interop/bk2/store \
//	ASW_SEGMENT=1048576 ASW_CAPTURE=$PWD/store/ha/autoswitch/testdata \
//	go test -tags interop -run TestJavaSlaveInterop -count=1 -v ./store/ha/autoswitch/
func TestJavaSlaveInterop(t *testing.T) {
	target, slaveAddr := os.Getenv("ASW_JAVA_HA"), os.Getenv("ASW_JAVA_SLAVE")
	if target == "" || slaveAddr == "" {
		t.Skip("ASW_JAVA_HA or ASW_JAVA_SLAVE not set")
	}
	slaveStore := os.Getenv("ASW_JAVA_SLAVE_STORE")
	seg, _ := strconv.ParseInt(os.Getenv("ASW_SEGMENT"), 10, 64)
	require.Positive(t, seg)

	// 1. A replica of the Java master.
	dir := t.TempDir()
	cfg := storeConfig(dir, store.Slave)
	cfg.MappedFileSizeCommitLog = seg
	cfg.MaxMessageSize = 512 << 10
	st, err := store.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ep, err := epoch.Open(filepath.Join(dir, "epochFileCheckpoint"))
	require.NoError(t, err)
	jaddr, _, jm2s := proxy(t, target)
	c := NewClient(clientConfig(3), st, ep)
	c.SetMasterAddr(jaddr)
	c.Start()
	var masterMax int64 = -1
	require.Eventually(t, func() bool {
		b := jm2s.bytes()
		if len(b) < MasterHandshakeHeader {
			return false
		}
		masterMax = int64(binary.BigEndian.Uint64(b[8:16]))
		return true
	}, 20*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return st.MaxPhyOffset() >= masterMax }, 60*time.Second, 10*time.Millisecond)
	require.NoError(t, c.Close())
	base := st.MaxPhyOffset()
	t.Logf("replica of the Java master: %d bytes, epochs %v", base, entries(ep.Entries()))

	// 2. It becomes master of epoch 6 (as broker id 1) and writes.
	require.NoError(t, st.SetRole(store.SyncMaster))
	last, _ := ep.Last()
	require.NoError(t, BeginMasterEpoch(ep, last.Epoch+1, st.MaxPhyOffset()))
	fill(t, st, 0, 30)
	goMax := st.MaxPhyOffset()
	masterID := int64(1) // the Java master's controller id, which the replica stands in for
	if v := os.Getenv("ASW_MASTER_ID"); v != "" {
		masterID, _ = strconv.ParseInt(v, 10, 64)
	}
	scfg := serverConfig(masterID)
	scfg.HeartbeatInterval = time.Second
	scfg.HousekeepingInterval = 20 * time.Second
	var props [][]int64
	var pmu sync.Mutex
	scfg.OnSyncStateSetChanged = func(p []int64) { pmu.Lock(); props = append(props, p); pmu.Unlock() }
	srv, err := NewServer(scfg, st, ep)
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() { _ = srv.Close() })
	paddr, s2m, m2s := proxy(t, srv.Addr().String())

	// 3. Point the Java slave at it.
	cl := transport.NewClient(transport.ClientConfig{})
	t.Cleanup(func() { _ = cl.Close() })
	req := &codec.Frame{Code: 906}
	req.Set("masterHaAddress", paddr)
	req.Set("masterAddress", "127.0.0.1:26911")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, slaveAddr, req)
	require.NoError(t, err)
	require.Equal(t, int32(0), resp.Code, resp.Remark)
	t.Logf("POINTED the Java slave at %s (our Server %s)", paddr, srv.Addr())

	// 4. The Java slave replicates from us.
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(slaveStore, "commitlog", fmt.Sprintf("%020d", base-base%seg)))
		return err == nil && int64(len(b)) >= goMax-(base-base%seg) && bytes.Equal(b[:goMax-(base-base%seg)], commitLogSeg(t, dir, seg, base-base%seg, goMax))
	}, 60*time.Second, 100*time.Millisecond, "the Java slave's commit log")
	require.Eventually(t, func() bool {
		jep, err := epoch.Open(filepath.Join(slaveStore, "epochFileCheckpoint"))
		if err != nil {
			return false
		}
		l, _ := jep.Last()
		return l.Epoch == last.Epoch+1 && l.StartOffset == base
	}, 20*time.Second, 100*time.Millisecond, "epoch 6 in the Java slave's epoch file")
	require.Eventually(t, func() bool {
		for _, s := range srv.Slaves() {
			if s.AckOffset == goMax {
				return true
			}
		}
		return false
	}, 20*time.Second, 100*time.Millisecond, "the Java slave's ack")
	jep, _ := epoch.Open(filepath.Join(slaveStore, "epochFileCheckpoint"))
	pmu.Lock()
	t.Logf("java slave: %+v; its epochs %v; proposals %v", srv.Slaves(), entries(jep.Entries()), props)
	pmu.Unlock()
	require.NoError(t, srv.Close())
	if out := os.Getenv("ASW_CAPTURE"); out != "" {
		require.NoError(t, os.WriteFile(filepath.Join(out, "java533-slave-to-go-master.bin"), s2m.bytes(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(out, "go-master-to-java533-slave.bin"), m2s.bytes(), 0o644))
	}
}

// TestJavaMasterTruncatesDivergedSlave: a Go replica of the Java master
// is cut back to epoch 1's end, writes a tail as master of epoch 3 (an
// epoch the Java master never had), and rejoins the Java master (epochs
// 1-0, 5-21560) as a slave: it truncates to 21560 and ends byte for byte
// equal to the Java master, with its epoch file.
//
//	ASW_JAVA_HA=127.0.0.1:26912 ASW_JAVA_STORE=/tmp/asw-interop/bk/store ASW_SEGMENT=1048576 \
//	go test -tags interop -run TestJavaMasterTruncatesDivergedSlave -count=1 -v ./store/ha/autoswitch/
func TestJavaMasterTruncatesDivergedSlave(t *testing.T) {
	target, javaStore := os.Getenv("ASW_JAVA_HA"), os.Getenv("ASW_JAVA_STORE")
	if target == "" {
		t.Skip("ASW_JAVA_HA not set")
	}
	seg, _ := strconv.ParseInt(os.Getenv("ASW_SEGMENT"), 10, 64)
	require.Positive(t, seg)
	jep, err := epoch.Open(filepath.Join(javaStore, "epochFileCheckpoint"))
	require.NoError(t, err)
	je := jep.Entries()
	require.GreaterOrEqual(t, len(je), 2)
	cut := je[1].StartOffset

	dir := t.TempDir()
	cfg := storeConfig(dir, store.Slave)
	cfg.MappedFileSizeCommitLog = seg
	cfg.MaxMessageSize = 512 << 10
	st, err := store.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ep, err := epoch.Open(filepath.Join(dir, "epochFileCheckpoint"))
	require.NoError(t, err)
	jaddr, _, jm2s := proxy(t, target)
	c := NewClient(clientConfig(3), st, ep)
	c.SetMasterAddr(jaddr)
	c.Start()
	var masterMax int64 = -1
	require.Eventually(t, func() bool {
		b := jm2s.bytes()
		if len(b) < MasterHandshakeHeader {
			return false
		}
		masterMax = int64(binary.BigEndian.Uint64(b[8:16]))
		return true
	}, 20*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return st.MaxPhyOffset() >= masterMax }, 60*time.Second, 10*time.Millisecond)
	require.NoError(t, c.Close())

	require.NoError(t, st.TruncateTo(cut))
	require.NoError(t, ep.TruncateFromOffset(cut))
	require.NoError(t, st.SetRole(store.AsyncMaster))
	require.NoError(t, BeginMasterEpoch(ep, je[0].Epoch+1, st.MaxPhyOffset()))
	require.Less(t, je[0].Epoch+1, je[1].Epoch, "an epoch between the Java master's two")
	fill(t, st, 0, 30)
	stale := st.MaxPhyOffset()
	require.NoError(t, st.SetRole(store.Slave))
	require.NoError(t, CheckSlaveEpoch(ep, jep.LastEpoch()))

	c = NewClient(clientConfig(3), st, ep)
	c.SetMasterAddr(target)
	c.Start()
	t.Cleanup(func() { _ = c.Close() })
	require.Eventually(t, func() bool { return c.Handshakes() > 0 && st.MaxPhyOffset() == masterMax }, 60*time.Second, 10*time.Millisecond)
	require.Equal(t, cut, c.Status().ConsistentPoint)
	require.NoError(t, c.Close())
	require.Equal(t, commitLogSeg(t, javaStore, seg, 0, masterMax), commitLogSeg(t, dir, seg, 0, masterMax))
	require.Equal(t, entries(je), entries(ep.Entries()))
	t.Logf("stale tail [%d, %d) in epoch %d truncated at %d; replica equals the Java master up to %d, epochs %v",
		cut, stale, je[0].Epoch+1, cut, masterMax, entries(ep.Entries()))
}
