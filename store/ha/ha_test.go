package ha

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
)

const segSize = 64 << 10

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func storeConfig(t *testing.T, role store.Role) store.Config {
	cfg := store.DefaultConfig(t.TempDir())
	cfg.MappedFileSizeCommitLog = segSize
	cfg.MappedFileSizeConsumeQueue = 1000 * store.CQUnitSize
	cfg.MaxMessageSize = 16 << 10
	cfg.MaxHashSlotNum = 1000
	cfg.MaxIndexNum = 4000
	cfg.FlushIntervalCommitLog = 10 * time.Millisecond
	cfg.FlushIntervalConsumeQueue = 20 * time.Millisecond
	cfg.DeleteWhen = "99"
	cfg.BrokerRole = role
	cfg.Logger = quiet
	return cfg
}

func openStore(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
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
	props = message.AppendProperty(props, message.PropertyTags, fmt.Sprintf("tag%d", i%3))
	props = message.AppendProperty(props, message.PropertyKeys, fmt.Sprintf("k%d", i))
	return &message.Message{Topic: topic, QueueID: qid, Body: body, Properties: string(props),
		BornTimestamp: 1700000000000 + int64(i), BornHost: bornHost, StoreHost: storeHost}
}

func put(t *testing.T, s *store.Store, m *message.Message) store.PutResult {
	t.Helper()
	ch := make(chan store.PutResult, 1)
	s.Put(m, func(r store.PutResult) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("put did not complete")
		return store.PutResult{}
	}
}

// fill puts n records of mixed sizes over several queues.
func fill(t *testing.T, s *store.Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		r := put(t, s, msg(fmt.Sprintf("T%d", i%3), int32(i%4), i, 100+i*397%6000))
		require.Equal(t, store.PutOK, r.Status, "%v", r.Err)
	}
}

func startServer(t *testing.T, st MasterStore, isr int) *Server {
	t.Helper()
	srv, err := NewServer(ServerConfig{Addr: "127.0.0.1:0", SegmentSize: segSize, InSyncReplicas: isr,
		HeartbeatInterval: 50 * time.Millisecond, HousekeepingInterval: 2 * time.Second, Logger: quiet}, st)
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func startClient(t *testing.T, st SlaveStore, addr string) *Client {
	t.Helper()
	c := NewClient(ClientConfig{HeartbeatInterval: 50 * time.Millisecond, HousekeepingInterval: 2 * time.Second,
		MinBackoff: 10 * time.Millisecond, ReconnectInterval: 200 * time.Millisecond, Logger: quiet}, st)
	c.SetMasterAddr(addr)
	c.Start()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func waitSlaves(t *testing.T, srv *Server, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		k := 0
		for _, s := range srv.Slaves() {
			if s.TransferFrom >= 0 {
				k++
			}
		}
		return k == n
	}, 5*time.Second, time.Millisecond)
}

func waitCaughtUp(t *testing.T, master, slave *store.Store) {
	t.Helper()
	require.Eventually(t, func() bool { return slave.MaxPhyOffset() == master.MaxPhyOffset() }, 10*time.Second, time.Millisecond)
}

func commitLog(t *testing.T, cfg store.Config, from, end int64) []byte {
	t.Helper()
	var out []byte
	for off := from - from%segSize; off < end; off += segSize {
		b, err := os.ReadFile(filepath.Join(cfg.RootDir, "commitlog", fmt.Sprintf("%020d", off)))
		require.NoError(t, err)
		out = append(out, b[max(from-off, 0):min(end-off, segSize)]...)
	}
	return out
}

func requireSame(t *testing.T, mc, sc store.Config, master, slave *store.Store, from int64) {
	t.Helper()
	waitCaughtUp(t, master, slave)
	for _, s := range []*store.Store{master, slave} {
		require.Eventually(t, func() bool { return s.DispatchBehind() == 0 }, 10*time.Second, time.Millisecond)
	}
	end := master.MaxPhyOffset()
	require.Equal(t, commitLog(t, mc, from, end), commitLog(t, sc, from, end), "commit logs byte for byte")
	require.Equal(t, master.Topics(), slave.Topics())
	for _, topic := range master.Topics() {
		require.Equal(t, master.QueueIDs(topic), slave.QueueIDs(topic))
		for _, q := range master.QueueIDs(topic) {
			lo := slave.MinOffset(topic, q)
			require.Equal(t, master.MaxOffset(topic, q), slave.MaxOffset(topic, q))
			mu, _ := master.ConsumeQueueUnits(topic, q, lo, 1<<20, nil)
			su, _ := slave.ConsumeQueueUnits(topic, q, lo, 1<<20, nil)
			require.Equal(t, mu, su, "consume queue %s/%d", topic, q)
		}
	}
}

// A slave connected to an empty master receives everything it writes, over
// several segment rolls, byte for byte; its consume queues equal the
// master's; a slave restarted later continues where it stopped.
func TestReplicateByteIdentical(t *testing.T) {
	for _, ft := range []store.FlushType{store.AsyncFlush, store.SyncFlush} {
		t.Run(ft.String(), func(t *testing.T) {
			mc, sc := storeConfig(t, store.AsyncMaster), storeConfig(t, store.Slave)
			mc.FlushDiskType, sc.FlushDiskType = ft, ft
			master, slave := openStore(t, mc), openStore(t, sc)
			srv := startServer(t, master, 1)
			c := startClient(t, slave, srv.Addr().String())
			waitSlaves(t, srv, 1)
			fill(t, master, 0, 150)
			require.Greater(t, master.MaxPhyOffset(), int64(3*segSize), "several rolls")
			requireSame(t, mc, sc, master, slave, 0)

			require.NoError(t, c.Close())
			fill(t, master, 150, 60)
			startClient(t, slave, srv.Addr().String())
			requireSame(t, mc, sc, master, slave, 0)
			require.Eventually(t, func() bool {
				s := srv.Slaves()
				return len(s) == 1 && s[0].AckOffset == master.MaxPhyOffset() && s[0].Diff == 0 && s[0].InSync
			}, 5*time.Second, time.Millisecond, "acks reach the master: %+v", srv.Slaves())
		})
	}
}

// An empty slave joining a master with history starts at the beginning of
// the master's last segment, as Java does.
func TestEmptySlaveStartsAtLastSegment(t *testing.T) {
	mc, sc := storeConfig(t, store.AsyncMaster), storeConfig(t, store.Slave)
	master, slave := openStore(t, mc), openStore(t, sc)
	fill(t, master, 0, 120)
	end := master.MaxPhyOffset()
	start := end - end%segSize
	require.Greater(t, start, int64(2*segSize))
	srv := startServer(t, master, 1)
	startClient(t, slave, srv.Addr().String())
	waitSlaves(t, srv, 1)
	require.Equal(t, start, srv.Slaves()[0].TransferFrom)
	fill(t, master, 120, 60)
	requireSame(t, mc, sc, master, slave, start)
	require.Equal(t, start, slave.MinPhyOffset())
}

// SYNC_MASTER with inSyncReplicas=2: a put completes only once the slave
// acknowledged it; with the slave stopped it answers FlushSlaveTimeout
// (stored), and puts recover when the slave is back.
func TestSyncMasterWaitsForSlave(t *testing.T) {
	for _, ft := range []store.FlushType{store.AsyncFlush, store.SyncFlush} {
		t.Run(ft.String(), func(t *testing.T) { testSyncMasterWaitsForSlave(t, ft) })
	}
}

func testSyncMasterWaitsForSlave(t *testing.T, ft store.FlushType) {
	mc, sc := storeConfig(t, store.SyncMaster), storeConfig(t, store.Slave)
	mc.FlushDiskType, sc.FlushDiskType = ft, ft
	mc.InSyncReplicas = 2
	mc.SlaveTimeout = 300 * time.Millisecond
	master, slave := openStore(t, mc), openStore(t, sc)
	srv := startServer(t, master, 2)
	c := startClient(t, slave, srv.Addr().String())
	waitSlaves(t, srv, 1)
	for i := 0; i < 40; i++ {
		r := put(t, master, msg("Sync", 0, i, 500+i*300))
		require.Equal(t, store.PutOK, r.Status, "%v", r.Err)
		end := r.WroteOffset + int64(r.WroteBytes)
		require.GreaterOrEqual(t, slave.ReceivedOffset(), end, "put %d completed before the slave had it", i)
		require.GreaterOrEqual(t, master.ReplicatedOffset(), end)
	}
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return len(srv.Slaves()) == 0 }, 5*time.Second, time.Millisecond)
	r := put(t, master, msg("Sync", 0, 99, 100))
	require.Equal(t, store.FlushSlaveTimeout, r.Status)
	require.Equal(t, r.WroteOffset+int64(r.WroteBytes), master.MaxPhyOffset(), "the message stays stored")

	startClient(t, slave, srv.Addr().String())
	waitSlaves(t, srv, 1)
	r = put(t, master, msg("Sync", 0, 100, 100))
	require.Equal(t, store.PutOK, r.Status, "%v", r.Err)
	requireSame(t, mc, sc, master, slave, 0)
}

// Bad input on the master port — garbage, half reports, a first report past
// the master's end, decreasing reports, a lying second slave — closes the
// offending connections only; the good slave keeps replicating and no
// acknowledgement passes what the master wrote.
func TestBadInputKeepsGoodSlave(t *testing.T) {
	mc, sc := storeConfig(t, store.SyncMaster), storeConfig(t, store.Slave)
	mc.InSyncReplicas = 2
	master, slave := openStore(t, mc), openStore(t, sc)
	srv := startServer(t, master, 2)
	startClient(t, slave, srv.Addr().String())
	waitSlaves(t, srv, 1)
	fill(t, master, 0, 30)

	dial := func() net.Conn {
		c, err := net.Dial("tcp", srv.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	report := func(c net.Conn, off int64) {
		_, err := c.Write(AppendReport(nil, off))
		require.NoError(t, err)
	}
	// requireClosed: the master hangs up (reads drain frames until EOF).
	requireClosed := func(c net.Conn, what string) {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c)
		require.NoError(t, err, "%s: the master closes the connection", what)
	}

	garbage := dial()
	_, err := garbage.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff"))
	require.NoError(t, err)
	beyond := dial()
	report(beyond, master.MaxPhyOffset()+1<<30)
	requireClosed(beyond, "first report beyond the master")
	backwards := dial()
	report(backwards, master.MaxPhyOffset())
	report(backwards, master.MaxPhyOffset()-100)
	requireClosed(backwards, "decreasing report")
	half := dial()
	_, err = half.Write([]byte{0, 0, 0})
	require.NoError(t, err)
	require.NoError(t, half.Close())

	// A second slave that reads frames and then claims far more than sent.
	liar := dial()
	report(liar, master.MaxPhyOffset())
	fr := NewFrameReader(liar, 1<<20)
	_ = liar.SetReadDeadline(time.Now().Add(5 * time.Second))
	h, _, err := fr.Next()
	require.NoError(t, err)
	require.Equal(t, master.MaxPhyOffset(), h.Offset)
	report(liar, 1<<50)
	go func() { _, _ = io.Copy(io.Discard, liar) }()
	require.Eventually(t, func() bool {
		for _, s := range srv.Slaves() {
			if s.AckOffset > master.RawEnd() {
				return false
			}
		}
		return true
	}, time.Second, time.Millisecond)

	fill(t, master, 30, 80) // SYNC puts still need and get the good slave's acks
	for _, s := range srv.Slaves() {
		require.LessOrEqual(t, s.AckOffset, master.RawEnd(), "%+v", s)
	}
	require.LessOrEqual(t, master.ReplicatedOffset(), master.RawEnd())
	requireSame(t, mc, sc, master, slave, 0)
	require.NoError(t, garbage.Close())
	// garbage (decoded as a report beyond the master) and half are gone;
	// the good slave and the liar remain.
	require.Eventually(t, func() bool { return len(srv.Slaves()) == 2 }, 5*time.Second, time.Millisecond, "%+v", srv.Slaves())
}

// fakeMaster accepts one slave and hands its connection to the test.
func fakeMaster(t *testing.T) (net.Listener, chan net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	ch := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			ch <- c
		}
	}()
	return ln, ch
}

func accept(t *testing.T, ch chan net.Conn) (net.Conn, int64) {
	t.Helper()
	select {
	case c := <-ch:
		t.Cleanup(func() { _ = c.Close() })
		var b [8]byte
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.ReadFull(c, b[:])
		require.NoError(t, err)
		return c, int64(binary.BigEndian.Uint64(b[:]))
	case <-time.After(5 * time.Second):
		t.Fatal("the slave did not connect")
		return nil, 0
	}
}

// A slave fed a frame at an offset other than its received end closes the
// connection without appending it, reconnects, and reports where it is.
// An oversized frame header closes it too.
// requireClosedByPeer reads conn until the peer closes it (within 5 s).
// A close with our bytes still unread in the peer's receive buffer is a
// reset rather than a FIN: closed either way. A timeout is not.
func requireClosedByPeer(t *testing.T, conn net.Conn, msg string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, conn)
	if errors.Is(err, syscall.ECONNRESET) {
		err = nil
	}
	require.NoError(t, err, msg)
}

func TestSlaveClosesOnWrongOffset(t *testing.T) {
	mc, sc := storeConfig(t, store.AsyncMaster), storeConfig(t, store.Slave)
	master, slave := openStore(t, mc), openStore(t, sc)
	fill(t, master, 0, 5)
	var v store.RawView
	require.NoError(t, master.ReadRaw(0, 1<<20, &v))
	data := append([]byte(nil), v.Data...)
	v.Release()
	first, _, _ := message.PeekSize(data)

	ln, conns := fakeMaster(t)
	c := startClient(t, slave, ln.Addr().String())
	conn, rep := accept(t, conns)
	require.Zero(t, rep)
	send := func(conn net.Conn, off int64, body []byte) {
		_, err := conn.Write(append(AppendHeader(nil, Header{Offset: off, Size: int32(len(body))}), body...))
		require.NoError(t, err)
	}
	send(conn, 0, data[:first])
	require.Eventually(t, func() bool { return slave.ReceivedOffset() == int64(first) }, 5*time.Second, time.Millisecond)
	send(conn, 0, data) // the start again: wrong offset
	send(conn, int64(first)+7, data[first:])
	requireEOF := func(conn net.Conn) { requireClosedByPeer(t, conn, "the slave closes the connection") }
	requireEOF(conn)
	require.Equal(t, int64(first), slave.ReceivedOffset(), "nothing appended at a wrong offset")
	require.Equal(t, int64(first), slave.MaxPhyOffset())

	conn, rep = accept(t, conns)
	require.Equal(t, int64(first), rep, "reconnects and reports its offset")
	_, err := conn.Write(AppendHeader(nil, Header{Offset: int64(first), Size: 1 << 30}))
	require.NoError(t, err)
	requireEOF(conn)
	require.Equal(t, int64(first), slave.ReceivedOffset())

	conn, rep = accept(t, conns)
	require.Equal(t, int64(first), rep)
	send(conn, int64(first), data[first:])
	require.Eventually(t, func() bool { return slave.MaxPhyOffset() == int64(len(data)) }, 5*time.Second, time.Millisecond)
	require.GreaterOrEqual(t, c.Disconnects(), 2)
	require.True(t, c.Status().Connected)
}

// Two real slaves at once, inSyncReplicas=3: every put completes only
// once both have it, and both end byte-identical to the master.
func TestTwoSlaves(t *testing.T) {
	mc := storeConfig(t, store.SyncMaster)
	mc.InSyncReplicas = 3
	master := openStore(t, mc)
	srv := startServer(t, master, 3)
	sc1, sc2 := storeConfig(t, store.Slave), storeConfig(t, store.Slave)
	s1, s2 := openStore(t, sc1), openStore(t, sc2)
	startClient(t, s1, srv.Addr().String())
	startClient(t, s2, srv.Addr().String())
	waitSlaves(t, srv, 2)
	for i := 0; i < 60; i++ {
		r := put(t, master, msg("Two", int32(i%2), i, 2000+i*100))
		require.Equal(t, store.PutOK, r.Status, "%v", r.Err)
		end := r.WroteOffset + int64(r.WroteBytes)
		require.GreaterOrEqual(t, min(s1.ReceivedOffset(), s2.ReceivedOffset()), end, "put %d", i)
	}
	requireSame(t, mc, sc1, master, s1, 0)
	requireSame(t, mc, sc2, master, s2, 0)
}

// A slave whose log diverged from the master's (its own record ends where
// the master has the middle of one) refuses the master's bytes: nothing is
// made visible at a wrong offset, the connection closes and is retried,
// and the master keeps serving its good slave.
func TestDivergedSlaveNeverAppends(t *testing.T) {
	mc, gc := storeConfig(t, store.AsyncMaster), storeConfig(t, store.Slave)
	master, good := openStore(t, mc), openStore(t, gc)
	srv := startServer(t, master, 1)
	startClient(t, good, srv.Addr().String())
	waitSlaves(t, srv, 1)
	for i := 0; i < 100; i++ {
		require.Equal(t, store.PutOK, put(t, master, msg("D", 0, i, 1000)).Status)
	}

	div := openStore(t, storeConfig(t, store.AsyncMaster))
	require.Equal(t, store.PutOK, put(t, div, msg("D", 0, 7, 1500)).Status)
	require.NoError(t, div.SetRole(store.Slave))
	l := div.MaxPhyOffset()
	c := startClient(t, div, srv.Addr().String())
	require.Eventually(t, func() bool { return c.Disconnects() >= 3 }, 10*time.Second, time.Millisecond)
	require.Equal(t, l, div.MaxPhyOffset(), "no record appended at a wrong offset")

	for i := 100; i < 150; i++ {
		require.Equal(t, store.PutOK, put(t, master, msg("D", 0, i, 1000)).Status)
	}
	requireSame(t, mc, gc, master, good, 0)
	require.Equal(t, l, div.MaxPhyOffset())
}
