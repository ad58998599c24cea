package autoswitch

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

// A new slave replicates a master's history of three epochs and several
// segment rolls, then its live writes, byte for byte, and ends with the
// master's epoch file; a restarted slave continues where it stopped.
func TestReplicateAcrossEpochs(t *testing.T) {
	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	fill(t, m.st, 0, 40)
	m.becomeMaster(t, store.AsyncMaster, 2) // re-elected: a new epoch, same master
	fill(t, m.st, 40, 40)
	m.becomeMaster(t, store.AsyncMaster, 4)
	fill(t, m.st, 80, 10)
	require.Len(t, m.ep.Entries(), 3)
	require.Greater(t, m.st.MaxPhyOffset(), int64(3*segSize), "several rolls")

	srv := startServer(t, m, serverConfig(1))
	c := startClient(t, s, clientConfig(2), srv.Addr().String())
	fill(t, m.st, 90, 60)
	requireSame(t, m, s, 0)
	require.Equal(t, int64(-1), c.Status().ConsistentPoint, "an empty epoch file truncates nothing")

	require.NoError(t, c.Close())
	fill(t, m.st, 150, 30)
	c = startClient(t, s, clientConfig(2), srv.Addr().String())
	requireSame(t, m, s, 0)
	require.Positive(t, c.Status().ConsistentPoint, "a returning slave truncates to the consistent point (its own end)")
	require.Eventually(t, func() bool {
		sl := srv.Slaves()
		return len(sl) == 1 && sl[0].AckOffset == m.st.MaxPhyOffset() && sl[0].BrokerID == 2 && sl[0].State == Transfer
	}, 5*time.Second, time.Millisecond, "%+v", srv.Slaves())
}

// Every frame lies in one epoch and one segment, is labelled with the
// epoch holding its bytes, and carries a confirm offset no greater than
// the master's; heartbeats are empty TRANSFER frames. An empty slave
// without isSyncFromLastFile starts at the master's first segment, with
// it at the last one.
func TestFramesNeverSpanEpochOrSegment(t *testing.T) {
	m := newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	fill(t, m.st, 0, 25)
	m.becomeMaster(t, store.AsyncMaster, 3)
	fill(t, m.st, 25, 30)
	m.becomeMaster(t, store.AsyncMaster, 7)
	fill(t, m.st, 55, 20)
	cfg := serverConfig(1)
	cfg.TransferBatchSize = 20000 // not a divisor of the segment size
	srv := startServer(t, m, cfg)
	es := m.ep.Entries()
	end := m.st.MaxPhyOffset()

	for _, lastFile := range []bool{false, true} {
		r := dialRaw(t, srv.Addr().String())
		h, got := r.handshake(t, 2, lastFile)
		require.Equal(t, entries(es), got)
		require.Equal(t, end, h.Offset)
		require.Equal(t, int32(7), h.Epoch)
		r.send(t, AppendSlaveReport(nil, 0))
		want := int64(0)
		if lastFile {
			want = end - end%segSize
		}
		next, frames, cuts := want, 0, 0
		for next < end {
			fh, _, body, err := r.mr.Next(Transfer)
			require.NoError(t, err)
			if len(body) == 0 {
				continue
			}
			frames++
			require.Equal(t, next, fh.Offset)
			lo, hi := fh.Offset, fh.Offset+int64(len(body))
			require.Equal(t, lo/segSize, (hi-1)/segSize, "frame [%d,%d) spans a segment", lo, hi)
			var e epoch.Entry
			for _, x := range es {
				if x.StartOffset <= lo && lo < x.EndOffset {
					e = x
				}
			}
			require.Equal(t, e.Epoch, fh.Epoch, "frame at %d", lo)
			require.Equal(t, e.StartOffset, fh.EpochStartOffset)
			require.LessOrEqual(t, hi, e.EndOffset, "frame [%d,%d) spans epoch %d", lo, hi, e.Epoch)
			if hi == e.EndOffset && e.EndOffset != math.MaxInt64 {
				cuts++
			}
			require.LessOrEqual(t, fh.ConfirmOffset, m.st.ConfirmOffset())
			next = hi
		}
		require.Positive(t, frames)
		if !lastFile {
			require.Equal(t, 2, cuts, "cut at both epoch ends")
		}
		// Idle: heartbeats only.
		fh, _, body, err := r.mr.Next(Transfer)
		require.NoError(t, err)
		require.Empty(t, body)
		require.Equal(t, end, fh.Offset)
		require.Equal(t, int32(7), fh.Epoch)
	}
}

// A slave whose tail diverged in a later epoch (it was master of epoch 2
// and wrote records no one else has, while the other broker, master of
// epoch 3, went on from further in epoch 1) is truncated to the
// consistent point and then ends byte for byte equal to the master, with
// its epoch file.
func TestDivergedSlaveTruncated(t *testing.T) {
	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	fill(t, m.st, 0, 30)
	srv := startServer(t, m, serverConfig(1))
	c := startClient(t, s, clientConfig(2), srv.Addr().String())
	requireSame(t, m, s, 0)
	require.NoError(t, c.Close())
	require.NoError(t, srv.Close())

	// m writes on in epoch 1 alone; s becomes master of epoch 2 from a
	// shorter log and writes a tail.
	fill(t, m.st, 30, 10)
	cp := s.st.MaxPhyOffset()
	s.becomeMaster(t, store.AsyncMaster, 2)
	fill(t, s.st, 1000, 40)
	require.Greater(t, s.st.MaxPhyOffset(), m.st.MaxPhyOffset())
	// m is elected for epoch 3 and writes.
	m.becomeMaster(t, store.AsyncMaster, 3)
	fill(t, m.st, 40, 30)
	require.NoError(t, s.st.SetRole(store.Slave))
	require.NoError(t, CheckSlaveEpoch(s.ep, 3))
	require.ErrorIs(t, CheckSlaveEpoch(s.ep, 1), ErrStaleEpoch)

	srv = startServer(t, m, serverConfig(1))
	c = startClient(t, s, clientConfig(2), srv.Addr().String())
	require.Eventually(t, func() bool { return c.Handshakes() > 0 }, 10*time.Second, time.Millisecond)
	require.Equal(t, cp, c.Status().ConsistentPoint, "the end of the common epoch on the slave")
	requireSame(t, m, s, 0)
	require.Equal(t, []EpochEntry{{1, 0}, {3, m.ep.Entries()[1].StartOffset}}, entries(s.ep.Entries()))
	require.Equal(t, 1, c.Handshakes(), "one handshake, no reconnect")
}

// Epoch lists that share no epoch fail the handshake: the slave's log is
// left alone and the connection closes (and is retried).
func TestNoConsistentPoint(t *testing.T) {
	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 5)
	fill(t, m.st, 0, 10)
	s.becomeMaster(t, store.AsyncMaster, 4)
	fill(t, s.st, 100, 10)
	require.NoError(t, s.st.SetRole(store.Slave))
	end := s.st.MaxPhyOffset()
	srv := startServer(t, m, serverConfig(1))
	c := startClient(t, s, clientConfig(2), srv.Addr().String())
	require.Eventually(t, func() bool { return c.Disconnects() >= 2 }, 10*time.Second, time.Millisecond)
	require.Equal(t, 0, c.Handshakes())
	require.Equal(t, end, s.st.MaxPhyOffset())
	require.Equal(t, []EpochEntry{{4, 0}}, entries(s.ep.Entries()))
}

// With allAckInSyncStateSet, a put is answered only once the in-sync
// slave has it, the master's confirm offset never passes the slave's
// acknowledgement, and the slave's confirm offset never passes the
// master's.
func TestConfirmOffsetAllAck(t *testing.T) {
	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.SyncMaster, 1)
	fill(t, m.st, 0, 10)
	p := &proposals{accept: true}
	cfg := serverConfig(1)
	cfg.AllAckInSyncStateSet = true
	cfg.OnSyncStateSetChanged = p.on
	srv, err := NewServer(cfg, m.st, m.ep)
	require.NoError(t, err)
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	srv.Start()
	t.Cleanup(func() { _ = srv.Close() })
	startClient(t, s, clientConfig(2), srv.Addr().String())
	require.Eventually(t, func() bool { return len(srv.LocalSyncStateSet()) == 2 }, 10*time.Second, time.Millisecond)
	require.Equal(t, []int64{1, 2}, p.last())

	var stop atomic.Bool
	var wg sync.WaitGroup
	var violations atomic.Int64
	var samples atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			sc := s.st.ConfirmOffset()
			mc := m.st.ConfirmOffset()
			recv := s.st.ReceivedOffset()
			if sc > mc || mc > recv {
				violations.Add(1)
			}
			samples.Add(1)
			time.Sleep(50 * time.Microsecond) // sampling pace, not synchronization
		}
	}()
	for i := 10; i < 110; i++ {
		r := put(t, m.st, msg("C", int32(i%2), i, 200+i*31%3000))
		require.Equal(t, store.PutOK, r.Status, "%v", r.Err)
		require.GreaterOrEqual(t, s.st.MaxPhyOffset(), r.WroteOffset+int64(r.WroteBytes), "answered before the slave had it whole")
	}
	stop.Store(true)
	wg.Wait()
	require.Zero(t, violations.Load(), "of %d samples", samples.Load())
	require.Positive(t, samples.Load())
	require.Eventually(t, func() bool { return s.st.ConfirmOffset() == m.st.MaxPhyOffset() }, 10*time.Second, time.Millisecond)
	require.Equal(t, m.st.MaxPhyOffset(), srv.ConfirmOffset())
}

// The SyncStateSet grows when a slave catches up and shrinks when it
// falls behind for MaxTimeSlaveNotCatchup or disconnects; while a shrink
// is unconfirmed the master keeps waiting for the member (confirm offset
// held), and once the controller agrees the confirm offset is free.
func TestSyncStateSetExpandShrink(t *testing.T) {
	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.SyncMaster, 1)
	fill(t, m.st, 0, 10)
	p := &proposals{}
	cfg := serverConfig(1)
	cfg.AllAckInSyncStateSet = true
	cfg.MaxTimeSlaveNotCatchup = 300 * time.Millisecond
	cfg.OnSyncStateSetChanged = p.on
	srv := startServer(t, m, cfg)

	// A slave that catches up is proposed; the set changes only when the
	// controller's answer comes back.
	c := startClient(t, s, clientConfig(2), srv.Addr().String())
	require.Eventually(t, func() bool { return p.last() != nil }, 10*time.Second, time.Millisecond)
	require.Equal(t, []int64{1, 2}, p.last())
	require.Equal(t, []int64{1}, srv.LocalSyncStateSet())
	require.Equal(t, []int64{1, 2}, srv.SyncStateSet(), "the proposal joins the wait at once")
	require.Equal(t, 2, srv.InSyncReplicasNums())
	srv.SetSyncStateSet([]int64{1, 2})
	require.Equal(t, []int64{1, 2}, srv.LocalSyncStateSet())

	// Disconnected: proposed out at once.
	n := srv.Proposals()
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return srv.Proposals() > n }, 10*time.Second, time.Millisecond)
	require.Equal(t, []int64{1}, p.last())
	require.Equal(t, []int64{1, 2}, srv.SyncStateSet(), "still waited for until confirmed")
	held := m.st.ConfirmOffset()
	fill2 := func(from, k int) {
		for i := from; i < from+k; i++ {
			ch := make(chan store.PutResult, 1)
			m.st.Put(msg("S", 0, i, 300), func(r store.PutResult) { ch <- r })
			_ = ch // answered later (replicated or timed out)
		}
	}
	fill2(100, 5)
	require.Eventually(t, func() bool { return m.st.MaxPhyOffset() > held }, 5*time.Second, time.Millisecond)
	require.Equal(t, held, m.st.ConfirmOffset(), "an unconfirmed shrink holds the confirm offset")
	srv.SetSyncStateSet([]int64{1})
	require.Eventually(t, func() bool { return m.st.ConfirmOffset() == m.st.MaxPhyOffset() }, 5*time.Second, time.Millisecond)

	// Connected but not caught up: a raw slave that stops reporting while
	// the master writes is proposed out after MaxTimeSlaveNotCatchup.
	r := dialRaw(t, srv.Addr().String())
	r.handshake(t, 3, false)
	r.send(t, AppendSlaveReport(nil, m.st.MaxPhyOffset()))
	require.Eventually(t, func() bool { return equalIDs(p.last(), []int64{1, 3}) }, 10*time.Second, time.Millisecond)
	srv.SetSyncStateSet([]int64{1, 3})
	n = srv.Proposals()
	start := time.Now()
	fill2(200, 3)
	require.Eventually(t, func() bool { return srv.Proposals() > n }, 10*time.Second, time.Millisecond)
	require.Equal(t, []int64{1}, p.last())
	require.GreaterOrEqual(t, time.Since(start), cfg.MaxTimeSlaveNotCatchup/2, "not before the slave lagged")
	require.Len(t, srv.Slaves(), 1, "the lagging slave stays connected")
}

// Two slaves replicate at once; both join the set, and a put needs both.
func TestTwoSlaves(t *testing.T) {
	m, s1, s2 := newNode(t, store.Slave), newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.SyncMaster, 1)
	p := &proposals{accept: true}
	cfg := serverConfig(1)
	cfg.AllAckInSyncStateSet = true
	cfg.OnSyncStateSetChanged = p.on
	srv, err := NewServer(cfg, m.st, m.ep)
	require.NoError(t, err)
	p.srv = srv
	srv.Start()
	t.Cleanup(func() { _ = srv.Close() })
	startClient(t, s1, clientConfig(2), srv.Addr().String())
	startClient(t, s2, clientConfig(3), srv.Addr().String())
	require.Eventually(t, func() bool { return len(srv.LocalSyncStateSet()) == 3 }, 10*time.Second, time.Millisecond)
	for i := 0; i < 80; i++ {
		r := put(t, m.st, msg("T", int32(i%3), i, 100+i*397%6000))
		require.Equal(t, store.PutOK, r.Status)
		e := r.WroteOffset + int64(r.WroteBytes)
		require.GreaterOrEqual(t, s1.st.MaxPhyOffset(), e)
		require.GreaterOrEqual(t, s2.st.MaxPhyOffset(), e)
	}
	requireSame(t, m, s1, 0)
	requireSame(t, m, s2, 0)
}

// A new epoch appended while a slave is connected (the master re-elected
// without a role change) bounds the old one: the slave's frames carry the
// new epoch from its start, and its epoch file ends equal to the master's.
func TestNewEpochWhileConnected(t *testing.T) {
	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	fill(t, m.st, 0, 10)
	srv := startServer(t, m, serverConfig(1))
	c := startClient(t, s, clientConfig(2), srv.Addr().String())
	requireSame(t, m, s, 0)
	require.NoError(t, BeginMasterEpoch(m.ep, 2, m.st.MaxPhyOffset()))
	fill(t, m.st, 10, 10)
	requireSame(t, m, s, 0)
	require.NoError(t, BeginMasterEpoch(m.ep, 3, m.st.MaxPhyOffset()))
	fill(t, m.st, 20, 10)
	requireSame(t, m, s, 0)
	require.Len(t, s.ep.Entries(), 3)
	require.Equal(t, 1, c.Handshakes(), "one connection throughout")
}
