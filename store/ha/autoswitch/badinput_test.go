package autoswitch

import (
	"bufio"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/transport/transporttest"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

// Broken slave input closes that connection only: the master keeps
// serving a real slave, and a report past what was sent is clamped
// (apache/rocketmq#3015).
func TestServerBadInput(t *testing.T) {
	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	fill(t, m.st, 0, 20)
	srv := startServer(t, m, serverConfig(1))
	addr := srv.Addr().String()
	watch := transporttest.WatchHeap(t, 256<<20, func() { _ = srv.Close() })
	end := m.st.MaxPhyOffset()

	for name, script := range map[string]func(r *rawSlave){
		"garbage":                 func(r *rawSlave) { r.send(t, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) },
		"state READY":             func(r *rawSlave) { r.send(t, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) },
		"report before handshake": func(r *rawSlave) { r.send(t, AppendSlaveReport(nil, 0)) },
		"negative broker id":      func(r *rawSlave) { r.send(t, AppendSlaveHandshake(nil, SlaveHandshake{BrokerID: -5})) },
		"the master's own id":     func(r *rawSlave) { r.send(t, AppendSlaveHandshake(nil, SlaveHandshake{BrokerID: 1})) },
		"handshake twice": func(r *rawSlave) {
			r.handshake(t, 2, false)
			r.send(t, AppendSlaveHandshake(nil, SlaveHandshake{BrokerID: 2}))
		},
		"first report past end": func(r *rawSlave) { r.handshake(t, 2, false); r.send(t, AppendSlaveReport(nil, end+1)) },
		"first report negative": func(r *rawSlave) { r.handshake(t, 2, false); r.send(t, AppendSlaveReport(nil, -1)) },
		"handshake during transfer": func(r *rawSlave) {
			r.handshake(t, 2, false)
			r.send(t, AppendSlaveReport(nil, end))
			r.send(t, AppendSlaveHandshake(nil, SlaveHandshake{BrokerID: 2}))
		},
		"report backwards": func(r *rawSlave) {
			r.handshake(t, 2, false)
			r.send(t, AppendSlaveReport(nil, end))
			r.send(t, AppendSlaveReport(nil, end-1))
		},
		"cut short": func(r *rawSlave) {
			r.send(t, AppendSlaveHandshake(nil, SlaveHandshake{BrokerID: 2})[:9])
			_ = r.c.(*net.TCPConn).CloseWrite()
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := dialRaw(t, addr)
			script(r)
			r.requireClosed(t)
			require.Eventually(t, func() bool { return len(srv.Slaves()) == 0 }, 5*time.Second, time.Millisecond)
		})
	}

	// Past what was sent: clamped, not taken.
	r := dialRaw(t, addr)
	r.handshake(t, 7, false)
	r.send(t, AppendSlaveReport(nil, 0))
	for got := int64(0); got < end; {
		_, _, body, err := r.mr.Next(Transfer)
		require.NoError(t, err)
		got += int64(len(body))
	}
	r.send(t, AppendSlaveReport(nil, end*10))
	require.Eventually(t, func() bool {
		sl := srv.Slaves()
		return len(sl) == 1 && sl[0].AckOffset == end
	}, 5*time.Second, time.Millisecond, "%+v", srv.Slaves())
	require.Equal(t, end, srv.Slaves()[0].SentOffset)

	// A real slave is served throughout.
	startClient(t, s, clientConfig(2), addr)
	fill(t, m.st, 20, 10)
	requireSame(t, m, s, 0)
	require.False(t, watch.Tripped())
}

// A slave that sends nothing for HousekeepingInterval is dropped.
func TestServerHousekeeping(t *testing.T) {
	m := newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	cfg := serverConfig(1)
	cfg.HousekeepingInterval = 200 * time.Millisecond
	srv := startServer(t, m, cfg)
	r := dialRaw(t, srv.Addr().String())
	r.handshake(t, 2, false)
	start := time.Now()
	r.requireClosed(t)
	require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
}

// fakeMaster accepts slave connections and runs script on each.
func fakeMaster(t *testing.T, script func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				var m SlaveMsg
				if NewSlaveReader(br).Next(&m) != nil || m.State != Handshake {
					return
				}
				script(c, br)
				// Hold the connection until the slave closes it.
				var b [512]byte
				for {
					if _, err := c.Read(b[:]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// Broken master input closes the slave's connection without touching its
// log or epoch file, and the slave retries.
func TestClientBadInput(t *testing.T) {
	hs := func(c net.Conn, es ...EpochEntry) {
		_, _ = c.Write(AppendMasterHandshake(nil, 0, 1, es))
	}
	frame := func(h MasterHeader, body []byte) []byte {
		h.BodySize = int32(len(body))
		return append(AppendTransferHeader(nil, h), body...)
	}
	for name, script := range map[string]func(c net.Conn, br *bufio.Reader){
		"transfer during handshake": func(c net.Conn, _ *bufio.Reader) {
			_, _ = c.Write(frame(MasterHeader{Offset: 0, Epoch: 1}, nil))
		},
		"garbage": func(c net.Conn, _ *bufio.Reader) {
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
		},
		"handshake of 2^31-12 bytes": func(c net.Conn, _ *bufio.Reader) {
			b := AppendMasterHandshake(nil, 0, 1, nil)
			b[4], b[5], b[6], b[7] = 0x7f, 0xff, 0xff, 0xf4
			_, _ = c.Write(b)
		},
		"oversized body": func(c net.Conn, br *bufio.Reader) {
			hs(c, EpochEntry{1, 0})
			b := AppendTransferHeader(nil, MasterHeader{BodySize: 1<<31 - 1, Offset: 0, Epoch: 1})
			_, _ = c.Write(append(b, make([]byte, 1000)...))
		},
		"handshake state in transfer": func(c net.Conn, br *bufio.Reader) {
			hs(c, EpochEntry{1, 0})
			hs(c, EpochEntry{1, 0})
		},
		"corrupt body": func(c net.Conn, br *bufio.Reader) {
			hs(c, EpochEntry{1, 0})
			_, _ = c.Write(frame(MasterHeader{Offset: 0, Epoch: 1}, make([]byte, 100)))
		},
		"epoch starting past the frame": func(c net.Conn, br *bufio.Reader) {
			hs(c, EpochEntry{1, 0})
			_, _ = c.Write(frame(MasterHeader{Offset: 0, Epoch: 1, EpochStartOffset: 1 << 20}, make([]byte, 100)))
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newNode(t, store.Slave)
			addr := fakeMaster(t, script)
			watch := transporttest.WatchHeap(t, 256<<20, nil)
			c := startClient(t, s, clientConfig(2), addr)
			require.Eventually(t, func() bool { return c.Disconnects() >= 2 }, 10*time.Second, time.Millisecond)
			require.NoError(t, c.Close())
			require.Zero(t, s.st.MaxPhyOffset())
			for _, e := range s.ep.Entries() {
				require.LessOrEqual(t, e.StartOffset, s.st.MaxPhyOffset(), "no epoch past the data")
			}
			require.False(t, watch.Tripped())
		})
	}
}

// A frame's epoch is appended to the epoch file when it follows the last
// entry and starts no later than the frame's end (Java's master labels the
// frame cut at an epoch's end with the next epoch); a heartbeat whose
// epoch cannot be adopted is ignored (Java's master sends its first epoch
// before a transfer starts); a data frame whose epoch contradicts the
// file is refused.
func TestAdoptEpoch(t *testing.T) {
	s := newNode(t, store.Slave)
	c := NewClient(clientConfig(2), s.st, s.ep)
	for i, step := range []struct {
		epoch      int32
		start, off int64
		n          int
		ok         bool
		conflict   bool
		want       []EpochEntry
	}{
		{epoch: 3, start: 0, off: 0, n: 0, ok: true, want: []EpochEntry{{3, 0}}},
		{epoch: 3, start: 0, off: 0, n: 10, ok: true, want: []EpochEntry{{3, 0}}},
		{epoch: 1, start: 0, off: 0, n: 0, want: []EpochEntry{{3, 0}}},
		{epoch: 1, start: 0, off: 0, n: 10, conflict: true, want: []EpochEntry{{3, 0}}},
		{epoch: 3, start: 5, off: 0, n: 0, want: []EpochEntry{{3, 0}}},
		{epoch: 3, start: 5, off: 0, n: 10, conflict: true, want: []EpochEntry{{3, 0}}},
		{epoch: 4, start: 0, off: 100, n: 10, conflict: true, want: []EpochEntry{{3, 0}}},
		{epoch: 4, start: 100, off: 100, n: 10, ok: true, want: []EpochEntry{{3, 0}, {4, 100}}},
		{epoch: 5, start: 200, off: 100, n: 50, conflict: true, want: []EpochEntry{{3, 0}, {4, 100}}},
		{epoch: 5, start: 150, off: 100, n: 50, ok: true, want: []EpochEntry{{3, 0}, {4, 100}, {5, 150}}},
	} {
		ok, err := c.adoptEpoch(MasterHeader{Offset: step.off, Epoch: step.epoch, EpochStartOffset: step.start}, step.n)
		if step.conflict {
			require.ErrorIs(t, err, ErrEpochConflict, "step %d", i)
		} else {
			require.NoError(t, err, "step %d", i)
		}
		require.Equal(t, step.ok, ok, "step %d", i)
		require.Equal(t, step.want, entries(s.ep.Entries()), "step %d", i)
	}

	// Java's cut frame: bytes of epoch 1 labelled with epoch 5 and its
	// start; the handshake's entry for the frame's offset comes first.
	s = newNode(t, store.Slave)
	c = NewClient(clientConfig(2), s.st, s.ep)
	c.masterEpochs = []epoch.Entry{{Epoch: 1, StartOffset: 0}, {Epoch: 5, StartOffset: 21560}}
	ok, err := c.adoptEpoch(MasterHeader{Offset: 0, Epoch: 5, EpochStartOffset: 21560}, 21560)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []EpochEntry{{1, 0}, {5, 21560}}, entries(s.ep.Entries()))
}

// A master silent for HousekeepingInterval is dropped, and the slave
// reconnects.
func TestClientHousekeeping(t *testing.T) {
	s := newNode(t, store.Slave)
	addr := fakeMaster(t, func(c net.Conn, _ *bufio.Reader) {
		_, _ = c.Write(AppendMasterHandshake(nil, 0, 1, []EpochEntry{{1, 0}}))
	})
	cfg := clientConfig(2)
	cfg.HousekeepingInterval = 200 * time.Millisecond
	start := time.Now()
	c := startClient(t, s, cfg, addr)
	require.Eventually(t, func() bool { return c.Disconnects() >= 2 }, 10*time.Second, time.Millisecond)
	require.GreaterOrEqual(t, time.Since(start), 2*150*time.Millisecond)
	require.GreaterOrEqual(t, c.Handshakes(), 2, "each connection handshook, then went silent")
}
