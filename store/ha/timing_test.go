package ha

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store"
)

// fakeStore is a MasterStore over a byte slice: tests of the Server that
// need no disk.
type fakeStore struct {
	mu    sync.Mutex
	data  []byte
	acked int64
	watch []chan struct{}
}

func (f *fakeStore) ReadRaw(off int64, max int, v *store.RawView) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	v.Release()
	if off < 0 || off > int64(len(f.data)) {
		return store.ErrOffsetNotFound
	}
	segEnd := off - off%segSize + segSize
	n := min(int64(max), int64(len(f.data))-off, segEnd-off)
	v.Data, v.Offset = f.data[off:off+n], off
	return nil
}

func (f *fakeStore) WatchRaw(ch chan struct{}) func() {
	f.mu.Lock()
	f.watch = append(f.watch, ch)
	f.mu.Unlock()
	return func() {}
}

func (f *fakeStore) RawEnd() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.data))
}

func (f *fakeStore) AckReplicated(off int64) {
	f.mu.Lock()
	f.acked = max(f.acked, min(off, int64(len(f.data))))
	f.mu.Unlock()
}

func (f *fakeStore) ackedOffset() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acked
}

// The server's frames never cross a segment and never exceed the batch
// size; an idle connection gets empty heartbeat frames at its offset; a
// slave silent past the housekeeping interval is closed; with
// inSyncReplicas=3 the replicated offset is the second slave's ack.
func TestServerFramesHeartbeatsHousekeeping(t *testing.T) {
	// Long enough that slave a, which reports only at its start and at the
	// ack step, is not closed before that on a loaded machine.
	const housekeeping = 1500 * time.Millisecond
	f := &fakeStore{data: make([]byte, 3*segSize+1000)}
	for i := range f.data {
		f.data[i] = byte(i * 7)
	}
	srv, err := NewServer(ServerConfig{Addr: "127.0.0.1:0", SegmentSize: segSize, InSyncReplicas: 3, TransferBatchSize: 24 << 10,
		HeartbeatInterval: 30 * time.Millisecond, HousekeepingInterval: housekeeping, Logger: quiet}, f)
	require.NoError(t, err)
	srv.Start()
	defer srv.Close()

	a, err := net.Dial("tcp", srv.Addr().String())
	require.NoError(t, err)
	defer a.Close()
	_, err = a.Write(AppendReport(nil, 0))
	require.NoError(t, err)
	fr := NewFrameReader(a, 1<<20)
	_ = a.SetReadDeadline(time.Now().Add(5 * time.Second))
	next := int64(3 * segSize) // empty slave: the last segment
	var got []byte
	for next < int64(len(f.data)) {
		h, body, err := fr.Next()
		require.NoError(t, err)
		require.Equal(t, next, h.Offset)
		require.LessOrEqual(t, len(body), 24<<10)
		require.Equal(t, h.Offset/segSize, (h.Offset+int64(len(body))-1)/segSize, "within one segment")
		got = append(got, body...)
		next += int64(len(body))
	}
	require.Equal(t, f.data[3*segSize:], got)
	for i := 0; i < 3; i++ {
		h, body, err := fr.Next()
		require.NoError(t, err)
		require.Equal(t, Header{Offset: next}, h, "heartbeat")
		require.Empty(t, body)
	}

	b, err := net.Dial("tcp", srv.Addr().String())
	require.NoError(t, err)
	defer b.Close()
	go func() { _, _ = io.Copy(io.Discard, b) }()
	_, err = b.Write(AppendReport(nil, 1000))
	require.NoError(t, err)
	_, err = a.Write(AppendReport(nil, next))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.ackedOffset() == 1000 }, 5*time.Second, time.Millisecond, "second largest ack")
	_, err = b.Write(AppendReport(nil, 3*segSize))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.ackedOffset() == 3*segSize }, 5*time.Second, time.Millisecond)

	// a stops reporting: closed after the housekeeping interval.
	start := time.Now()
	_ = a.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, a)
	require.NoError(t, err, "closed by the master")
	require.GreaterOrEqual(t, time.Since(start), housekeeping/2)
}

// The client reports on connect and every heartbeat interval while idle,
// and drops a master silent past the housekeeping interval, then
// reconnects.
func TestClientHeartbeatHousekeeping(t *testing.T) {
	slave := openStore(t, storeConfig(t, store.Slave))
	ln, conns := fakeMaster(t)
	c := NewClient(ClientConfig{HeartbeatInterval: 30 * time.Millisecond, HousekeepingInterval: 400 * time.Millisecond,
		MinBackoff: 10 * time.Millisecond, ReconnectInterval: 100 * time.Millisecond, Logger: quiet}, slave)
	c.SetMasterAddr(ln.Addr().String())
	c.Start()
	defer c.Close()
	conn, rep := accept(t, conns)
	require.Zero(t, rep)
	start := time.Now()
	var b [8]byte
	for i := 0; i < 3; i++ {
		_, err := io.ReadFull(conn, b[:])
		require.NoError(t, err, "heartbeat report %d", i)
	}
	requireClosedByPeer(t, conn, "closed by the slave")
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	_, rep = accept(t, conns)
	require.Zero(t, rep)

	c.SetMasterAddr("")
	require.Eventually(t, func() bool { return !c.Status().Connected }, 5*time.Second, time.Millisecond)
}

// recordingSlave accepts any append (a store that would not check the
// offset) and records them: the client's own check must refuse a frame at
// a wrong offset before it reaches the store.
type recordingSlave struct {
	mu      sync.Mutex
	recv    int64
	appends []int64
}

func (r *recordingSlave) AppendRaw(off int64, b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.appends = append(r.appends, off)
	r.recv = off + int64(len(b))
	return nil
}

func (r *recordingSlave) ReceivedOffset() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recv
}

func TestClientRefusesWrongOffsetBeforeAppend(t *testing.T) {
	st := &recordingSlave{recv: 5000}
	ln, conns := fakeMaster(t)
	c := startClient(t, st, ln.Addr().String())
	conn, rep := accept(t, conns)
	require.Equal(t, int64(5000), rep)
	_, err := conn.Write(append(AppendHeader(nil, Header{Offset: 5000, Size: 10}), make([]byte, 10)...))
	require.NoError(t, err)
	_, err = conn.Write(append(AppendHeader(nil, Header{Offset: 4000, Size: 10}), make([]byte, 10)...))
	require.NoError(t, err)
	requireClosedByPeer(t, conn, "closed by the slave")
	_, rep = accept(t, conns)
	require.Equal(t, int64(5010), rep)
	st.mu.Lock()
	require.Equal(t, []int64{5000}, st.appends)
	st.mu.Unlock()
	require.GreaterOrEqual(t, c.Disconnects(), 1)
}
