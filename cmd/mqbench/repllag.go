package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// `mqbench repllag` measures master → slave replication lag.
//
// It sends paced SEND_MESSAGE_V2 requests to one queue of the master and,
// at the same time, polls GET_MAX_OFFSET of that queue on the slave. The
// lag of the message stored at queue offset k is
//
//	(arrival of the first slave GET_MAX_OFFSET reply with offset > k)
//	− (arrival of the master's SEND_OK carrying queueOffset k)
//
// both read from one monotonic clock in this process. It measures the
// replication path (master write → HA transfer → slave append → slave
// consume-queue dispatch) and nothing of a consumer's long-polling: no
// pull is held, and GET_MAX_OFFSET only reads the consume queue. Its
// resolution is one poll interval plus one poll round trip. A message the
// slave shows before its SEND_OK arrives has lag 0 (counted in BeforeAck).

// replLagConfig is everything `mqbench repllag` takes.
type replLagConfig struct {
	Master   string // master broker ip:port (sends)
	Slave    string // slave broker ip:port (GET_MAX_OFFSET polls)
	Topic    string
	Group    string
	QueueID  int
	Rate     float64       // messages per second over all senders
	Senders  int           // paced sending goroutines, one request in flight each
	Conns    int           // connections to the master, shared by the senders
	Size     int           // body bytes
	Duration time.Duration // sending time
	Poll     time.Duration // interval between slave polls
	Grace    time.Duration // after the last send: how long to wait for the slave
	Sync     time.Duration // before sending: how long to wait for the slave to match the master
	Timeout  time.Duration // per request
	Progress io.Writer
}

func (c *replLagConfig) validate() error {
	switch {
	case c.Master == "" || c.Slave == "":
		return errors.New("repllag: need -m (master) and -s (slave)")
	case c.Topic == "":
		return errors.New("repllag: need -t")
	case c.Rate <= 0 || c.Rate > 1e6:
		return errors.New("repllag: -rate must be in (0, 1e6]")
	case c.Senders < 1 || c.Senders > 256 || c.Conns < 1 || c.Conns > c.Senders:
		return errors.New("repllag: -senders must be 1..256 and -conns 1..senders")
	case c.Size < 0 || c.Size > 4<<20:
		return errors.New("repllag: -size must be 0..4 MiB")
	case c.Duration <= 0 || c.Duration > time.Hour:
		return errors.New("repllag: -duration must be in (0, 1h]")
	case c.Poll <= 0:
		return errors.New("repllag: -poll must be > 0")
	case c.Grace <= 0 || c.Sync <= 0 || c.Timeout <= 0:
		return errors.New("repllag: -grace, -sync and -timeout must be > 0")
	case float64(c.Duration)/float64(time.Second)*c.Rate > 50e6:
		return errors.New("repllag: -rate × -duration above 50,000,000 messages")
	}
	return nil
}

// ReplLagSummary is the end-of-run report of `mqbench repllag`.
type ReplLagSummary struct {
	Role       string            `json:"role"` // repllag
	Topic      string            `json:"topic"`
	QueueID    int               `json:"queueId"`
	Rate       float64           `json:"rate"`
	Size       int               `json:"size"`
	Seconds    float64           `json:"seconds"`
	Sent       uint64            `json:"sent"`       // requests written
	Acked      uint64            `json:"acked"`      // SEND_OK replies
	Replicated uint64            `json:"replicated"` // acked messages the slave showed
	Missing    uint64            `json:"missing"`    // acked but not on the slave by the end of the grace period
	BeforeAck  uint64            `json:"beforeAck"`  // shown by the slave before their SEND_OK arrived (lag 0)
	Polls      uint64            `json:"polls"`
	PollUs     float64           `json:"pollUs"` // mean time between poll replies, µs
	Errors     map[string]uint64 `json:"errors"`
	ErrTotal   uint64            `json:"errorTotal"`
	Lag        Latency           `json:"lagMs"` // replication lag (see above)
	Ack        Latency           `json:"ackMs"` // master send latency, from the scheduled time
}

func (s *ReplLagSummary) writeText(w io.Writer) {
	fmt.Fprintf(w, "=== mqbench repllag topic=%s queue=%d rate=%.0f/s size=%d\n", s.Topic, s.QueueID, s.Rate, s.Size)
	fmt.Fprintf(w, "messages  sent %d  acked %d  replicated %d  missing %d  before-ack %d  in %.2fs\n",
		s.Sent, s.Acked, s.Replicated, s.Missing, s.BeforeAck, s.Seconds)
	fmt.Fprintf(w, "polls     %d (one every %.0f µs)\n", s.Polls, s.PollUs)
	for _, l := range []struct {
		name string
		l    Latency
	}{{"lag", s.Lag}, {"ack", s.Ack}} {
		fmt.Fprintf(w, "%-9s p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  mean %.3f ms (%d samples)\n",
			l.name, l.l.P50, l.l.P90, l.l.P99, l.l.P999, l.l.Max, l.l.Mean, l.l.Samples)
	}
	fmt.Fprintf(w, "errors    %d %v\n", s.ErrTotal, s.Errors)
}

func (s *ReplLagSummary) writeJSON(w io.Writer) error { return json.NewEncoder(w).Encode(s) }

// maxOffsetOf asks addr's GET_MAX_OFFSET for topic/queue on c.
func maxOffsetOf(c *rpcConn, cl *call, req *codec.Frame, timeout time.Duration, cancel <-chan struct{}) (int64, error) {
	if err := c.invokeCancel(req, cl, timeout, cancel); err != nil {
		return 0, err
	}
	if cl.resp.Code != int32(codec.RespSuccess) {
		return 0, respError("max offset", &cl.resp)
	}
	v, err := strconv.ParseInt(cl.resp.Value("offset"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("max offset: %w", err)
	}
	return v, nil
}

// lagSender is one paced sending goroutine.
type lagSender struct {
	conn  *rpcConn
	req   *codec.Frame
	ack   Histogram // send latency, µs
	errs  map[int32]uint64
	sent  uint64
	acked uint64
}

func runReplLag(cfg replLagConfig) (ReplLagSummary, error) {
	if err := cfg.validate(); err != nil {
		return ReplLagSummary{}, err
	}
	qs := strconv.Itoa(cfg.QueueID)
	slave, err := dialRPC(cfg.Slave)
	if err != nil {
		return ReplLagSummary{}, err
	}
	defer slave.close()
	master, err := dialRPC(cfg.Master)
	if err != nil {
		return ReplLagSummary{}, err
	}
	defer master.close()

	// The slave must show everything the master has before the run, or
	// old messages would count as lag of new ones.
	pollReq := newRequest(codec.ReqGetMaxOffset, "topic", cfg.Topic, "queueId", qs)
	pcl := newCall()
	base, err := maxOffsetOf(master, pcl, pollReq, cfg.Timeout, nil)
	if err != nil {
		return ReplLagSummary{}, fmt.Errorf("repllag: master %s: %w", cfg.Master, err)
	}
	syncUntil := time.Now().Add(cfg.Sync)
	for {
		s, err := maxOffsetOf(slave, pcl, pollReq, cfg.Timeout, nil)
		if err == nil && s >= base {
			break
		}
		if time.Now().After(syncUntil) {
			return ReplLagSummary{}, fmt.Errorf("repllag: slave %s at offset %d (err %v), master at %d after %v",
				cfg.Slave, s, err, base, cfg.Sync)
		}
		time.Sleep(10 * time.Millisecond) // polling the slave, bounded by -sync
	}

	n := int(float64(cfg.Duration)/float64(time.Second)*cfg.Rate) + cfg.Senders + 1
	ackAt := make([]int64, n) // by queue offset − base: SEND_OK arrival (mono ns); 0 = none
	visAt := make([]int64, n) // first slave reply showing it (mono ns); 0 = none
	conns := make([]*rpcConn, 0, cfg.Conns)
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for range cfg.Conns {
		c, err := dialRPC(cfg.Master)
		if err != nil {
			return ReplLagSummary{}, err
		}
		conns = append(conns, c)
	}
	senders := make([]*lagSender, cfg.Senders)
	for i := range senders {
		props := appendProps(nil, &sendSpec{UniqPrefix: fmt.Sprintf("%016X", i)})
		req := newRequest(codec.ReqSendMessageV2,
			"a", cfg.Group, "b", cfg.Topic, "c", "TBW102", "d", "4", "e", qs, "f", "0", "g", "0",
			"h", "0", "i", string(props), "j", "0", "k", "false", "m", "false")
		req.Body = appendBody(nil, cfg.Size)
		senders[i] = &lagSender{conn: conns[i%len(conns)], req: req, errs: map[int32]uint64{}}
	}

	clk := newClock()
	deadline := int64(cfg.Duration)
	stopSend := make(chan struct{})
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(func() { close(stopSend) }) }
	timer := time.AfterFunc(cfg.Duration, stop)
	defer timer.Stop()
	interval := int64(float64(time.Second) * float64(cfg.Senders) / cfg.Rate)
	var wg sync.WaitGroup
	for i, s := range senders {
		pace, err := newPacer()
		if err != nil {
			stop()
			wg.Wait()
			return ReplLagSummary{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pace.close()
			s.run(&cfg, clk, pace, interval*int64(i)/int64(cfg.Senders), interval, deadline, base, ackAt, stopSend)
		}()
	}
	sendersDone := make(chan struct{})
	go func() { wg.Wait(); close(sendersDone) }()

	pl := &lagPoller{conn: slave, cl: pcl, req: pollReq, clk: clk, base: base, visAt: visAt}
	pollErr := pl.run(&cfg, ackAt, sendersDone)
	if pollErr != nil {
		stop()
	}
	<-sendersDone
	elapsed := time.Duration(clk.mono())
	if pollErr != nil {
		return ReplLagSummary{}, fmt.Errorf("repllag: poll slave %s: %w", cfg.Slave, pollErr)
	}

	sum := ReplLagSummary{Role: "repllag", Topic: cfg.Topic, QueueID: cfg.QueueID, Rate: cfg.Rate, Size: cfg.Size,
		Seconds: elapsed.Seconds(), Polls: pl.polls, Errors: map[string]uint64{}}
	if pl.polls > 1 {
		sum.PollUs = float64(pl.last-pl.first) / float64(pl.polls-1) / 1e3
	}
	var ack, lag Histogram
	for _, s := range senders {
		ack.Merge(&s.ack)
		sum.Sent += s.sent
		sum.Acked += s.acked
		for code, c := range s.errs {
			sum.Errors[codeName(code)] += c
			sum.ErrTotal += c
		}
	}
	for i := range ackAt {
		if ackAt[i] == 0 {
			continue
		}
		if visAt[i] == 0 {
			sum.Missing++
			continue
		}
		sum.Replicated++
		d := visAt[i] - ackAt[i]
		if d < 0 {
			sum.BeforeAck++
			d = 0
		}
		lag.Record(uint64(d / 1000))
	}
	sum.Lag, sum.Ack = latencyOf(&lag), latencyOf(&ack)
	return sum, nil
}

// allSeen reports whether every acked message below upto was seen and no
// acked message lies at or beyond it.
func allSeen(ackAt []int64, upto int64) bool {
	for i := max(upto, 0); i < int64(len(ackAt)); i++ {
		if ackAt[i] != 0 {
			return false
		}
	}
	return true
}

// lagPoller polls the slave's max offset of the queue and notes when each
// queue offset first showed.
type lagPoller struct {
	conn        *rpcConn
	cl          *call
	req         *codec.Frame
	clk         *clock
	base        int64
	visAt       []int64
	polls       uint64
	first, last int64 // arrival of the first and last poll reply (mono ns)
}

// run polls every cfg.Poll until sendersDone is closed and then either
// every acked message has shown or cfg.Grace has passed.
func (p *lagPoller) run(cfg *replLagConfig, ackAt []int64, sendersDone <-chan struct{}) error {
	pace, err := newPacer()
	if err != nil {
		return err
	}
	defer pace.close()
	poll := int64(cfg.Poll)
	seen := p.base
	var graceEnd <-chan time.Time
	for k := int64(0); ; k++ {
		select {
		case <-sendersDone:
			sendersDone = nil
			gt := time.NewTimer(cfg.Grace)
			defer gt.Stop()
			graceEnd = gt.C
		case <-graceEnd:
			return nil
		default:
		}
		// ackAt is read only once every sender has returned.
		if sendersDone == nil && allSeen(ackAt, seen-p.base) {
			return nil
		}
		sched := k * poll
		if now := p.clk.mono(); sched < now-poll {
			k = now / poll // behind: skip the missed polls rather than burst
			sched = k * poll
		}
		pace.wait(p.clk, sched, nil)
		m, err := maxOffsetOf(p.conn, p.cl, p.req, cfg.Timeout, nil)
		if err != nil {
			return err
		}
		at := p.cl.at.Sub(p.clk.base).Nanoseconds()
		if p.polls == 0 {
			p.first = at
		}
		p.last = at
		p.polls++
		for ; seen < m; seen++ {
			if i := seen - p.base; i >= 0 && i < int64(len(p.visAt)) {
				p.visAt[i] = at
			}
		}
	}
}

// run sends at sched = phase + k·interval until the deadline, one request
// at a time (sync): at 10,000 msg/s over a few senders each has hundreds of
// microseconds per send.
func (s *lagSender) run(cfg *replLagConfig, clk *clock, pace *pacer, phase, interval, deadline, base int64, ackAt []int64, stop <-chan struct{}) {
	cl := newCall()
	for k := int64(0); ; k++ {
		sched := phase + k*interval
		if sched >= deadline || !pace.wait(clk, sched, stop) {
			return
		}
		s.req.Set("g", strconv.FormatInt(clk.wall(sched)/1e6, 10))
		s.req.Flag = 0
		s.sent++
		// Not canceled at the deadline: a sent message is always waited for.
		if err := s.conn.invoke(s.req, cl, cfg.Timeout); err != nil {
			s.errs[errTimeout]++
			if s.conn.broken() {
				s.errs[errLost]++
				return
			}
			continue
		}
		if cl.resp.Code != int32(codec.RespSuccess) {
			s.errs[cl.resp.Code]++
			continue
		}
		at := cl.at.Sub(clk.base).Nanoseconds()
		s.ack.Record(uint64(max(at-sched, 0) / 1000))
		off, err := strconv.ParseInt(cl.resp.Value("queueOffset"), 10, 64)
		if err != nil {
			s.errs[int32(codec.RespSystemError)]++
			continue
		}
		s.acked++
		if i := off - base; i >= 0 && i < int64(len(ackAt)) {
			ackAt[i] = at
		}
	}
}

func replLagFlags(cfg *replLagConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("repllag", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Master, "m", "", "master broker ip:port (sends)")
	fs.StringVar(&cfg.Slave, "s", "", "slave broker ip:port (GET_MAX_OFFSET polls)")
	fs.StringVar(&cfg.Topic, "t", "BenchLag", "topic (must exist on the master)")
	fs.StringVar(&cfg.Group, "g", "mqbench_producer", "producer group")
	fs.IntVar(&cfg.QueueID, "queue", 0, "queue id sent to and polled")
	fs.Float64Var(&cfg.Rate, "rate", 10000, "messages/s over all senders")
	fs.IntVar(&cfg.Senders, "senders", 32, "paced senders (one request in flight each)")
	fs.IntVar(&cfg.Conns, "conns", 4, "connections to the master, shared by the senders")
	fs.IntVar(&cfg.Size, "size", 1024, "message body bytes")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "sending time")
	fs.DurationVar(&cfg.Poll, "poll", 200*time.Microsecond, "interval between slave polls (the lag's resolution)")
	fs.DurationVar(&cfg.Grace, "grace", 5*time.Second, "after the last send, how long to wait for the slave")
	fs.DurationVar(&cfg.Sync, "sync", 30*time.Second, "before sending, how long to wait for the slave to match the master")
	fs.DurationVar(&cfg.Timeout, "timeout", 3*time.Second, "per-request timeout")
	return fs
}
