package autoswitch

import (
	"bufio"
	"math"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store/epoch"
	"github.com/rocketgo/rocketgo/store/ha"
)

// conn is AutoSwitch's part of one slave connection of the replication
// core (ha.Conn): the handshake, the epoch-cut transfer and the
// SyncStateSet bookkeeping of its reports.
type conn struct {
	s  *Server
	c  *ha.Conn[*conn]
	hs chan struct{} // a handshake to answer

	id            atomic.Int64
	learner       atomic.Bool
	lastFile      atomic.Bool
	state         atomic.Int32
	lastMasterMax atomic.Int64 // master's max offset at the last data frame
	lastTransfer  atomic.Int64 // unix nanos of the last data frame

	// reader goroutine
	r *SlaveReader
	m SlaveMsg

	// writer goroutine: the epochs of the transfer and the current one
	es  []epoch.Entry
	cur int
}

func newConn(s *Server, hc *ha.Conn[*conn]) *conn {
	c := &conn{s: s, c: hc, hs: make(chan struct{}, 1)}
	c.id.Store(-1)
	c.state.Store(int32(Handshake))
	return c
}

func (c *conn) LogAttrs() []any { return []any{"slave", c.id.Load()} }

// ReadReport takes the slave's handshake and reports.
func (c *conn) ReadReport(br *bufio.Reader) (int64, bool, error) {
	if c.r == nil {
		c.r = NewSlaveReader(br)
	}
	m := &c.m
	if err := c.r.Next(m); err != nil {
		return 0, false, err
	}
	s := c.s
	cur := State(c.state.Load())
	switch {
	case m.State == Handshake && cur == Handshake && c.id.Load() < 0:
		if m.Handshake.BrokerID < 0 || m.Handshake.BrokerID == s.cfg.LocalBrokerID {
			c.c.Shut("handshake with an invalid broker id", "id", m.Handshake.BrokerID)
			return 0, false, nil
		}
		c.id.Store(m.Handshake.BrokerID)
		c.learner.Store(m.Handshake.AsyncLearner)
		c.lastFile.Store(m.Handshake.SyncFromLastFile)
		s.log.Info("autoswitch: slave handshake", "addr", c.c.Addr(), "slave", m.Handshake.BrokerID,
			"syncFromLastFile", m.Handshake.SyncFromLastFile, "asyncLearner", m.Handshake.AsyncLearner)
		c.hs <- struct{}{}
		return 0, false, nil
	case m.State == Transfer && c.id.Load() >= 0:
		return m.Offset, true, nil
	default:
		// Strict where Java switches the connection to whatever state
		// the slave sent: a Java slave opens a new connection for each
		// handshake, so anything else is broken input.
		c.c.Shut("state not matched", "slave", m.State, "connection", cur)
		return 0, false, nil
	}
}

// Start decides the transfer start from the first report: a report of 0
// starts at the master's last segment (isSyncFromLastFile) or its first.
func (c *conn) Start(off int64) (int64, bool) {
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
		c.c.Shut("first report outside the master's log", "report", off, "min", s.st.MinPhyOffset(), "max", maxOff)
		return 0, false
	}
	c.lastMasterMax.Store(maxOff)
	return from, true
}

func (c *conn) Started(off int64) {
	c.state.Store(int32(Transfer))
	if off > 0 {
		c.s.onReport(c, off)
	}
}

func (c *conn) Acked(off int64, _ bool) { c.s.onReport(c, off) }

func (c *conn) Closed() {
	c.state.Store(int32(Shutdown))
	c.s.removed(c)
}

// Prepare answers the handshake with the master's epochs and max offset.
func (c *conn) Prepare() bool {
	s := c.s
	select {
	case <-c.hs:
	case <-c.c.Done():
		return false
	}
	es := s.ep.Entries()
	if len(es) > MaxEpochEntries {
		es = es[len(es)-MaxEpochEntries:]
	}
	wire := make([]EpochEntry, len(es))
	for i, e := range es {
		wire[i] = EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	if err := c.c.Write(AppendMasterHandshake(nil, s.st.MaxPhyOffset(), s.ep.LastEpoch(), wire)); err != nil {
		c.c.Shut("write handshake", "err", err)
		return false
	}
	return true
}

// BeginTransfer finds the epoch holding the transfer start.
func (c *conn) BeginTransfer(next int64) bool {
	c.es = c.s.ep.Entries()
	if !c.find(next) {
		// Java logs "Failed to find an epochEntry to match
		// nextTransferFromWhere" and heartbeats forever; the slave cannot
		// label these bytes, so the connection closes instead.
		c.c.Shut("no epoch holds the transfer start", "from", next)
		return false
	}
	e := c.es[c.cur]
	c.s.log.Info("autoswitch: transfer epoch", "addr", c.c.Addr(), "from", next, "epoch", e.Epoch, "start", e.StartOffset)
	return true
}

// find sets cur to the epoch holding next.
func (c *conn) find(next int64) bool {
	c.cur = -1
	for i, e := range c.es {
		if e.StartOffset <= next && next < e.EndOffset {
			c.cur = i
		}
	}
	return c.cur >= 0
}

// endOf is where epoch i ends.
func (c *conn) endOf(i int) int64 {
	if i == len(c.es)-1 {
		return math.MaxInt64 // compat: the last epoch is unbounded (Java's -1)
	}
	return c.es[i].EndOffset
}

// Limit cuts a frame at its epoch's end: never across an epoch.
func (c *conn) Limit(next int64) (int64, bool) {
	s := c.s
	for {
		if c.cur == len(c.es)-1 && s.ep.LastEpoch() != c.es[c.cur].Epoch {
			// A new epoch while connected (the master re-elected without a
			// role change): bound the current epoch by it, as Java 5.4.0's
			// AutoSwitchHAConnection does (5.3.3 kept labelling with the
			// old one).
			c.es = s.ep.Entries()
			if !c.find(next) {
				c.c.Shut("the epoch file changed under the transfer", "next", next)
				return 0, false
			}
		}
		if next >= c.endOf(c.cur) && c.cur+1 < len(c.es) {
			c.cur++
			continue
		}
		if next > s.st.RawEnd() {
			return 0, true
		}
		return c.endOf(c.cur) - next, true
	}
}

func (c *conn) AppendHeader(dst []byte, next int64, n int) []byte {
	e := c.es[c.cur]
	return AppendTransferHeader(dst, MasterHeader{BodySize: int32(n), Offset: next, Epoch: e.Epoch,
		EpochStartOffset: e.StartOffset, ConfirmOffset: c.s.st.ConfirmOffset()})
}

func (c *conn) Sending() {
	c.lastMasterMax.Store(c.s.st.MaxPhyOffset())
	c.lastTransfer.Store(time.Now().UnixNano())
}

// CaughtUp: nothing to send, everything sent acknowledged. Java's size ==
// 0 path counts it without the acknowledgement, keeping a slave that
// stopped writing in the set while its socket buffers take the bytes.
func (c *conn) CaughtUp() {
	if id := c.id.Load(); !c.learner.Load() && c.c.Acked() >= c.c.Sent() {
		s := c.s
		s.hub.Mu.Lock()
		s.caughtUpLocked(id, time.Now())
		s.hub.Mu.Unlock()
	}
}
