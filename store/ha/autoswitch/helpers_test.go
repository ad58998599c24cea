package autoswitch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

const segSize = 64 << 10

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// node is one broker's store and epoch file in a directory.
type node struct {
	dir string
	cfg store.Config
	st  *store.Store
	ep  *epoch.File
}

func storeConfig(dir string, role store.Role) store.Config {
	cfg := store.DefaultConfig(dir)
	cfg.MappedFileSizeCommitLog = segSize
	cfg.MappedFileSizeConsumeQueue = 1000 * store.CQUnitSize
	cfg.MaxMessageSize = 16 << 10
	cfg.MaxHashSlotNum = 1000
	cfg.MaxIndexNum = 4000
	cfg.FlushIntervalCommitLog = 10 * time.Millisecond
	cfg.FlushIntervalConsumeQueue = 20 * time.Millisecond
	cfg.DeleteWhen = "99"
	cfg.BrokerRole = role
	cfg.SlaveTimeout = 10 * time.Second
	cfg.Logger = quiet
	return cfg
}

func openNode(t testing.TB, dir string, role store.Role) *node {
	t.Helper()
	n := &node{dir: dir, cfg: storeConfig(dir, role)}
	var err error
	n.st, err = store.Open(n.cfg)
	require.NoError(t, err)
	n.ep, err = epoch.Open(filepath.Join(dir, "epochFileCheckpoint"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.st.Close() })
	return n
}

func newNode(t testing.TB, role store.Role) *node { return openNode(t, t.TempDir(), role) }

// becomeMaster switches n to a master of epoch (the broker's changeToMaster).
func (n *node) becomeMaster(t testing.TB, role store.Role, ep int32) {
	t.Helper()
	require.NoError(t, n.st.SetRole(role))
	require.NoError(t, BeginMasterEpoch(n.ep, ep, n.st.MaxPhyOffset()))
}

var (
	bornHost  = netip.MustParseAddrPort("10.0.0.7:51234")
	storeHost = netip.MustParseAddrPort("192.168.0.1:10911")
)

func msg(topic string, qid int32, i, bodyLen int) *message.Message {
	body := make([]byte, bodyLen)
	for j := range body {
		body[j] = byte(i + j)
	}
	var props []byte
	props = message.AppendProperty(props, message.PropertyKeys, fmt.Sprintf("k%d", i))
	return &message.Message{Topic: topic, QueueID: qid, Body: body, Properties: string(props),
		BornTimestamp: 1700000000000 + int64(i), BornHost: bornHost, StoreHost: storeHost}
}

func put(t testing.TB, s *store.Store, m *message.Message) store.PutResult {
	t.Helper()
	ch := make(chan store.PutResult, 1)
	s.Put(m, func(r store.PutResult) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("put did not complete")
		return store.PutResult{}
	}
}

// fill puts n records of mixed sizes over several queues.
func fill(t testing.TB, s *store.Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		r := put(t, s, msg(fmt.Sprintf("T%d", i%3), int32(i%4), i, 100+i*397%6000))
		require.Equal(t, store.PutOK, r.Status, "%v", r.Err)
	}
}

func serverConfig(id int64) ServerConfig {
	return ServerConfig{Addr: "127.0.0.1:0", SegmentSize: segSize, LocalBrokerID: id,
		HeartbeatInterval: 50 * time.Millisecond, HousekeepingInterval: 3 * time.Second,
		MaxTimeSlaveNotCatchup: 3 * time.Second, CheckSyncStateSetPeriod: 50 * time.Millisecond, Logger: quiet}
}

func startServer(t testing.TB, n *node, cfg ServerConfig) *Server {
	t.Helper()
	srv, err := NewServer(cfg, n.st, n.ep)
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func clientConfig(id int64) ClientConfig {
	return ClientConfig{BrokerID: id, HeartbeatInterval: 50 * time.Millisecond, HousekeepingInterval: 3 * time.Second,
		MinBackoff: 10 * time.Millisecond, ReconnectInterval: 200 * time.Millisecond, Logger: quiet}
}

func newClient(n *node, cfg ClientConfig, addr string) *Client {
	c := NewClient(cfg, n.st, n.ep)
	c.SetMasterAddr(addr)
	return c
}

func startClient(t testing.TB, n *node, cfg ClientConfig, addr string) *Client {
	t.Helper()
	c := newClient(n, cfg, addr)
	c.Start()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func commitLog(t testing.TB, cfg store.Config, from, end int64) []byte {
	t.Helper()
	var out []byte
	for off := from - from%segSize; off < end; off += segSize {
		b, err := os.ReadFile(filepath.Join(cfg.RootDir, "commitlog", fmt.Sprintf("%020d", off)))
		require.NoError(t, err)
		out = append(out, b[max(from-off, 0):min(end-off, segSize)]...)
	}
	return out
}

// requireSame waits until slave has master's log and checks the two are
// byte for byte equal from from on, with equal consume queues and epochs.
func requireSame(t testing.TB, master, slave *node, from int64) {
	t.Helper()
	require.Eventually(t, func() bool { return slave.st.MaxPhyOffset() == master.st.MaxPhyOffset() }, 15*time.Second, time.Millisecond,
		"slave %d, master %d", slave.st.MaxPhyOffset(), master.st.MaxPhyOffset())
	for _, s := range []*store.Store{master.st, slave.st} {
		require.Eventually(t, func() bool { return s.DispatchBehind() == 0 }, 10*time.Second, time.Millisecond)
	}
	end := master.st.MaxPhyOffset()
	require.Equal(t, commitLog(t, master.cfg, from, end), commitLog(t, slave.cfg, from, end), "commit logs byte for byte")
	require.Equal(t, master.st.Topics(), slave.st.Topics())
	for _, topic := range master.st.Topics() {
		for _, q := range master.st.QueueIDs(topic) {
			lo := slave.st.MinOffset(topic, q)
			require.Equal(t, master.st.MaxOffset(topic, q), slave.st.MaxOffset(topic, q))
			mu, _ := master.st.ConsumeQueueUnits(topic, q, lo, 1<<20, nil)
			su, _ := slave.st.ConsumeQueueUnits(topic, q, lo, 1<<20, nil)
			require.Equal(t, mu, su, "consume queue %s/%d", topic, q)
		}
	}
	require.Equal(t, entries(master.ep.Entries()), entries(slave.ep.Entries()), "epoch files")
}

// entries drops end offsets (the last entry's is unbounded on both).
func entries(es []epoch.Entry) []EpochEntry {
	out := make([]EpochEntry, len(es))
	for i, e := range es {
		out[i] = EpochEntry{e.Epoch, e.StartOffset}
	}
	return out
}

// rawSlave is a hand-driven slave connection.
type rawSlave struct {
	c  net.Conn
	mr *MasterReader
}

func dialRaw(t testing.TB, addr string) *rawSlave {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawSlave{c: c, mr: NewMasterReader(bufio.NewReader(c), 8<<20)}
}

func (r *rawSlave) send(t testing.TB, b []byte) {
	t.Helper()
	_, err := r.c.Write(b)
	require.NoError(t, err)
}

// handshake sends a handshake as id and returns the master's answer.
func (r *rawSlave) handshake(t testing.TB, id int64, lastFile bool) (MasterHeader, []EpochEntry) {
	t.Helper()
	r.send(t, AppendSlaveHandshake(nil, SlaveHandshake{BrokerID: id, SyncFromLastFile: lastFile}))
	h, es, _, err := r.mr.Next(Handshake)
	require.NoError(t, err)
	return h, append([]EpochEntry(nil), es...)
}

// requireClosed waits until the peer closed the connection.
func (r *rawSlave) requireClosed(t testing.TB) {
	t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [4096]byte
	for {
		_, err := r.c.Read(b[:])
		if err != nil {
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "connection still open")
			return
		}
	}
}

// proposals records the SyncStateSets a Server proposed and, when accept
// is set, answers each as a controller would (SetSyncStateSet).
type proposals struct {
	mu     sync.Mutex
	sets   [][]int64
	srv    *Server
	accept bool
}

func (p *proposals) on(set []int64) {
	p.mu.Lock()
	p.sets = append(p.sets, set)
	srv, ok := p.srv, p.accept
	p.mu.Unlock()
	if ok && srv != nil {
		srv.SetSyncStateSet(set)
	}
}

func (p *proposals) last() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sets) == 0 {
		return nil
	}
	return p.sets[len(p.sets)-1]
}
