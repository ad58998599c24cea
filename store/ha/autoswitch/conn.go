package autoswitch

import (
	"bufio"
	"errors"
	"github.com/rocketgo/rocketgo/store/ha"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store"
)

// conn is one slave connection.
type conn struct {
	s       *Server
	c       net.Conn
	addr    string
	hs      chan struct{} // a handshake to answer
	started chan struct{} // closed by the first report
	quit    chan struct{}
	once    sync.Once

	id            atomic.Int64
	learner       atomic.Bool
	lastFile      atomic.Bool
	state         atomic.Int32
	from          atomic.Int64 // transfer start, -1 before the first report
	sent          atomic.Int64 // end of the bytes written to the socket
	acked         atomic.Int64 // clamped acknowledgement, -1 before a report
	lastMasterMax atomic.Int64 // master's max offset at the last data frame
	lastTransfer  atomic.Int64 // unix nanos of the last data frame
	rate          ha.Rate
}

func (c *conn) shut(why string, args ...any) {
	c.once.Do(func() {
		close(c.quit)
		_ = c.c.Close()
		c.state.Store(int32(Shutdown))
		c.s.removed(c)
		c.s.log.Info("autoswitch: slave connection closed", append([]any{"addr", c.addr, "slave", c.id.Load(), "why", why}, args...)...)
	})
}

// read takes the slave's handshake and reports.
func (c *conn) read() {
	defer c.s.wg.Done()
	s := c.s
	r := NewSlaveReader(bufio.NewReaderSize(c.c, 4<<10))
	var m SlaveMsg
	for {
		_ = c.c.SetReadDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
		if err := r.Next(&m); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.shut("housekeeping: nothing read", "interval", s.cfg.HousekeepingInterval)
			} else {
				c.shut("read", "err", err)
			}
			return
		}
		cur := State(c.state.Load())
		switch {
		case m.State == Handshake && cur == Handshake && c.id.Load() < 0:
			if m.Handshake.BrokerID < 0 || m.Handshake.BrokerID == s.cfg.LocalBrokerID {
				c.shut("handshake with an invalid broker id", "id", m.Handshake.BrokerID)
				return
			}
			c.id.Store(m.Handshake.BrokerID)
			c.learner.Store(m.Handshake.AsyncLearner)
			c.lastFile.Store(m.Handshake.SyncFromLastFile)
			s.log.Info("autoswitch: slave handshake", "addr", c.addr, "slave", m.Handshake.BrokerID,
				"syncFromLastFile", m.Handshake.SyncFromLastFile, "asyncLearner", m.Handshake.AsyncLearner)
			c.hs <- struct{}{}
		case m.State == Transfer && c.id.Load() >= 0:
			if cur == Handshake {
				if !c.begin(m.Offset) {
					return
				}
				continue
			}
			if !c.report(m.Offset) {
				return
			}
		default:
			// Strict where Java switches the connection to whatever state
			// the slave sent: a Java slave opens a new connection for each
			// handshake, so anything else is broken input.
			c.shut("state not matched", "slave", m.State, "connection", cur)
			return
		}
	}
}

// begin decides the transfer start from the first report.
func (c *conn) begin(off int64) bool {
	s := c.s
	maxOff := s.st.MaxPhyOffset()
	from := off
	if off == 0 {
		if c.lastFile.Load() {
			from = maxOff - maxOff%s.cfg.SegmentSize
		} else {
			from = s.st.MinPhyOffset()
		}
	}
	if off < 0 || from > maxOff || from < s.st.MinPhyOffset() {
		c.shut("first report outside the master's log", "report", off, "min", s.st.MinPhyOffset(), "max", maxOff)
		return false
	}
	c.sent.Store(from)
	c.from.Store(from)
	c.lastMasterMax.Store(maxOff)
	if off > 0 {
		c.acked.Store(off)
	}
	c.state.Store(int32(Transfer))
	s.log.Info("autoswitch: transfer starts", "addr", c.addr, "slave", c.id.Load(), "report", off, "from", from)
	close(c.started)
	if off > 0 {
		s.onReport(c, off)
	}
	return true
}

// report takes a TRANSFER report after the first.
func (c *conn) report(off int64) bool {
	s := c.s
	prev := c.acked.Load()
	if off < prev {
		c.shut("report went backwards", "report", off, "acked", prev)
		return false
	}
	if sent := c.sent.Load(); off > sent {
		// apache/rocketmq#3015: a slave cannot have more than it was sent.
		s.log.Warn("autoswitch: slave reports past what it was sent; clamped", "addr", c.addr, "report", off, "sent", sent)
		off = sent
	}
	c.acked.Store(max(off, prev))
	s.onReport(c, off)
	return true
}

// write answers the handshake and streams TRANSFER frames.
func (c *conn) write() {
	defer c.s.wg.Done()
	s := c.s
	var buf []byte
	select {
	case <-c.hs:
	case <-c.quit:
		return
	}
	es := s.ep.Entries()
	if len(es) > MaxEpochEntries {
		es = es[len(es)-MaxEpochEntries:]
	}
	wire := make([]EpochEntry, len(es))
	for i, e := range es {
		wire[i] = EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	buf = AppendMasterHandshake(buf[:0], s.st.MaxPhyOffset(), s.ep.LastEpoch(), wire)
	_ = c.c.SetWriteDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
	if _, err := c.c.Write(buf); err != nil {
		c.shut("write handshake", "err", err)
		return
	}
	select {
	case <-c.started:
	case <-c.quit:
		return
	}
	c.transfer()
}

// transfer streams frames from the transfer start: never across a
// segment (ReadRaw) nor across an epoch (cut at the epoch's end).
func (c *conn) transfer() {
	s := c.s
	next := c.from.Load()
	es := s.ep.Entries()
	cur := -1
	for i, e := range es {
		if e.StartOffset <= next && next < e.EndOffset {
			cur = i
		}
	}
	if cur < 0 {
		// Java logs "Failed to find an epochEntry to match
		// nextTransferFromWhere" and heartbeats forever; the slave cannot
		// label these bytes, so the connection closes instead.
		c.shut("no epoch holds the transfer start", "from", next)
		return
	}
	s.log.Info("autoswitch: transfer epoch", "addr", c.addr, "from", next, "epoch", es[cur].Epoch, "start", es[cur].StartOffset)
	endOf := func(i int) int64 {
		if i == len(es)-1 {
			return math.MaxInt64 // compat: the last epoch is unbounded (Java's -1)
		}
		return es[i].EndOffset
	}
	wake := make(chan struct{}, 1)
	stop := s.st.WatchRaw(wake)
	defer stop()
	var (
		v     store.RawView
		hdr   [MasterTransferHeader]byte
		iov   = make([][]byte, 2)
		timer = time.NewTimer(s.cfg.HeartbeatInterval)
	)
	defer timer.Stop()
	defer v.Release()
	lastWrite := time.Now()
	send := func(body []byte) bool {
		AppendTransferHeader(hdr[:0], MasterHeader{BodySize: int32(len(body)), Offset: next, Epoch: es[cur].Epoch,
			EpochStartOffset: es[cur].StartOffset, ConfirmOffset: s.st.ConfirmOffset()})
		iov[0], iov[1] = hdr[:], body
		bufs := net.Buffers(iov)
		_ = c.c.SetWriteDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
		_, err := bufs.WriteTo(c.c)
		iov[1] = nil
		if err != nil {
			c.shut("write", "err", err)
			return false
		}
		lastWrite = time.Now()
		c.rate.Add(int64(len(body)), lastWrite)
		return true
	}
	for {
		if cur == len(es)-1 && s.ep.LastEpoch() != es[cur].Epoch {
			// A new epoch while connected (the master re-elected without a
			// role change; Java keeps labelling with the old one): bound
			// the current epoch by it.
			es = s.ep.Entries()
			cur = -1
			for i, e := range es {
				if e.StartOffset <= next && next < e.EndOffset {
					cur = i
				}
			}
			if cur < 0 {
				c.shut("the epoch file changed under the transfer", "next", next)
				return
			}
		}
		if next >= endOf(cur) && cur+1 < len(es) {
			cur++
			continue
		}
		var err error
		if next <= s.st.RawEnd() {
			err = s.st.ReadRaw(next, s.cfg.TransferBatchSize, &v)
		}
		if err != nil {
			c.shut("read commit log", "offset", next, "err", err)
			return
		}
		if n := int64(len(v.Data)); n > 0 {
			n = min(n, endOf(cur)-next)
			c.lastMasterMax.Store(s.st.MaxPhyOffset())
			c.lastTransfer.Store(time.Now().UnixNano())
			// Published before the write: the slave's ack may beat it.
			c.sent.Store(next + n)
			ok := send(v.Data[:n])
			v.Release()
			if !ok {
				return
			}
			next += n
			continue
		}
		// Nothing to send, everything sent acknowledged: caught up. Java's
		// size == 0 path counts it without the acknowledgement, keeping a
		// slave that stopped writing in the set while its socket buffers
		// take the bytes.
		if id := c.id.Load(); !c.learner.Load() && c.acked.Load() >= c.sent.Load() {
			s.mu.Lock()
			s.caughtUpLocked(id, time.Now())
			s.mu.Unlock()
		}
		idle := time.Since(lastWrite)
		if idle >= s.cfg.HeartbeatInterval {
			if !send(nil) {
				return
			}
			idle = 0
		}
		timer.Reset(s.cfg.HeartbeatInterval - idle)
		select {
		case <-wake:
		case <-timer.C:
		case <-c.quit:
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}
