package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// produceConfig is everything `mqbench produce` takes.
type produceConfig struct {
	NameSrv   string
	Broker    string
	Topic     string
	Group     string
	Threads   int
	Conns     int // per broker
	Inflight  int // per thread, async and batch modes
	Size      int
	Tags      string
	Keys      bool
	Mode      string // sync | async | oneway | batch
	Batch     int
	Rate      float64 // messages per second over all threads; 0 = closed loop
	Duration  time.Duration
	Count     int64 // stop after this many messages (0 = no limit)
	Queues    int   // with -b or -create
	Create    bool
	Serialize codec.SerializeType
	Timeout   time.Duration // per request
	Progress  io.Writer     // progress lines; nil = none
	TLS       bool          // send connections over TLS
	// AccessKey/SecretKey sign every send as Java's AclClientRPCHook.
	AccessKey, SecretKey string
}

func (c *produceConfig) validate() error {
	switch {
	case c.NameSrv == "" && c.Broker == "":
		return errors.New("produce: need -n or -b")
	case c.Topic == "":
		return errors.New("produce: need -t")
	case c.Threads < 1 || c.Conns < 1:
		return errors.New("produce: -threads and -conns must be >= 1")
	case c.Size < 0 || c.Size > 4<<20:
		return errors.New("produce: -size must be 0..4 MiB")
	case c.Duration <= 0 && c.Count <= 0:
		return errors.New("produce: need -duration or -count so the run ends")
	case c.Queues < 1:
		return errors.New("produce: -queues must be >= 1")
	case c.Timeout <= 0:
		return errors.New("produce: -timeout must be > 0")
	}
	switch c.Mode {
	case "sync", "async", "oneway":
	case "batch":
		if c.Batch < 1 {
			return errors.New("produce: -batch must be >= 1 in batch mode")
		}
	default:
		return fmt.Errorf("produce: unknown -mode %q (sync|async|oneway|batch)", c.Mode)
	}
	if c.Mode != "sync" && c.Mode != "oneway" && c.Inflight < 1 {
		return errors.New("produce: -inflight must be >= 1")
	}
	return nil
}

// producer is one sending goroutine bound to one connection.
type producer struct {
	conn     *sendConn
	tpls     []*sendTemplate // one per target queue
	cr       *credits        // nil for oneway
	rec      *recorder       // oneway accounting
	interval int64           // open loop: nanoseconds between sends; 0 = closed loop
	pace     *pacer          // open loop
	phase    int64
	seq      uint64
}

func runProduce(cfg produceConfig) (Summary, error) {
	if err := cfg.validate(); err != nil {
		return Summary{}, err
	}
	if cfg.Create {
		if err := ensureTopic(cfg.NameSrv, cfg.Broker, cfg.Topic, cfg.Queues); err != nil {
			return Summary{}, err
		}
	}
	brokers, err := resolveQueues(cfg.NameSrv, cfg.Broker, cfg.Topic, cfg.Queues, true)
	if err != nil {
		return Summary{}, err
	}
	inflight := cfg.Inflight
	if cfg.Mode == "sync" {
		inflight = 1
	}
	perConn := (cfg.Threads + len(brokers)*cfg.Conns - 1) / (len(brokers) * cfg.Conns)

	clk := newClock()
	var conns [][]*sendConn
	var recs []*recorder
	closeAll := func() {
		for _, cs := range conns {
			for _, c := range cs {
				c.close()
			}
		}
	}
	for _, b := range brokers {
		var cs []*sendConn
		for i := 0; i < cfg.Conns; i++ {
			rec := newRecorder()
			c, err := dialSend(b.Addr, clk, rec, perConn*inflight, cfg.Timeout, cfg.TLS)
			if err != nil {
				closeAll()
				return Summary{}, err
			}
			cs = append(cs, c)
			recs = append(recs, rec)
		}
		conns = append(conns, cs)
	}
	defer closeAll()

	batch := 0
	if cfg.Mode == "batch" {
		batch = cfg.Batch
	}
	msgsPerReq := max(batch, 1)
	prefix := rand.Uint32()
	producers := make([]*producer, cfg.Threads)
	for i := range producers {
		bi := i % len(brokers)
		b := brokers[bi]
		c := conns[bi][(i/len(brokers))%cfg.Conns]
		p := &producer{conn: c, rec: c.rec}
		if cfg.Mode != "oneway" {
			p.cr = newCredits(inflight)
		}
		for k := range b.Queues {
			q := b.Queues[(k+i/len(brokers))%len(b.Queues)]
			t, err := buildSendTemplate(&sendSpec{
				Group: cfg.Group, Topic: cfg.Topic, BrokerName: b.Name, QueueID: q, Size: cfg.Size,
				Tags: cfg.Tags, Keys: cfg.Keys, Batch: batch, Oneway: cfg.Mode == "oneway",
				Serialize: cfg.Serialize, UniqPrefix: fmt.Sprintf("%08X%04X%04X", prefix, os.Getpid()&0xFFFF, i&0xFFFF),
				AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey,
			})
			if err != nil {
				return Summary{}, err
			}
			p.tpls = append(p.tpls, t)
		}
		if cfg.Rate > 0 {
			// Each thread sends every interval; threads are spread evenly in phase.
			p.interval = int64(float64(time.Second) * float64(cfg.Threads*msgsPerReq) / cfg.Rate)
			p.phase = p.interval * int64(i) / int64(cfg.Threads)
			pace, err := newPacer()
			if err != nil {
				return Summary{}, err
			}
			defer pace.close()
			p.pace = pace
		}
		producers[i] = p
	}

	var remaining *atomic.Int64
	if cfg.Count > 0 {
		remaining = new(atomic.Int64)
		remaining.Store(cfg.Count)
	}
	done := make(chan struct{})
	deadline := int64(1<<63 - 1)
	if cfg.Duration > 0 {
		deadline = clk.mono() + int64(cfg.Duration)
		timer := time.AfterFunc(cfg.Duration, func() { close(done) })
		defer timer.Stop()
	}
	label := "send"
	rep := &reporter{out: cfg.Progress, recs: func() []*recorder { return recs }, label: label, start: time.Now()}
	repStop, repDone := make(chan struct{}), make(chan struct{})
	go rep.run(repStop, repDone)

	var wg sync.WaitGroup
	for _, p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.run(clk, done, deadline, remaining, msgsPerReq)
		}()
	}
	wg.Wait()
	// Drain: wait for the replies still in flight, bounded by the timeout.
	drainUntil := time.Now().Add(cfg.Timeout + 200*time.Millisecond)
	for time.Now().Before(drainUntil) {
		busy := false
		for _, cs := range conns {
			for _, c := range cs {
				if c.outstanding() > 0 || !c.flushed() {
					busy = true
				}
			}
		}
		if !busy {
			break
		}
		time.Sleep(2 * time.Millisecond) // polling replies with a deadline
	}
	elapsed := time.Duration(clk.mono())
	close(repStop)
	<-repDone
	closeAll()
	conns = nil
	sum := summarize(recs, elapsed)
	sum.Role, sum.Mode, sum.Topic = "produce", cfg.Mode, cfg.Topic
	sum.Threads, sum.Conns, sum.Size, sum.Rate = cfg.Threads, cfg.Conns, cfg.Size, cfg.Rate
	return sum, nil
}

// run sends until done, the deadline (open loop), the shared count, or a
// connection failure.
func (p *producer) run(clk *clock, done <-chan struct{}, deadline int64, remaining *atomic.Int64, msgsPerReq int) {
	start := clk.mono()
	for k := int64(0); ; k++ {
		select {
		case <-done:
			return
		default:
		}
		var sched int64
		if p.interval > 0 {
			// Open loop: latency counts from the scheduled time, so a slow
			// reply delays no later measurement (no coordinated omission).
			sched = start + p.phase + k*p.interval
			if sched >= deadline {
				return
			}
			if !p.pace.wait(clk, sched, done) {
				return
			}
		}
		if p.cr != nil {
			select {
			case p.cr.ch <- struct{}{}:
			case <-done:
				return
			}
		}
		if remaining != nil && remaining.Add(-int64(msgsPerReq)) < 0 {
			p.cr.release()
			return
		}
		if p.interval == 0 {
			sched = clk.mono()
		}
		t := p.tpls[int(p.seq%uint64(len(p.tpls)))]
		if err := p.conn.send(t, sched, clk.wall(sched), p.seq, p.cr); err != nil {
			p.cr.release()
			p.conn.rec.fail(errLost)
			return
		}
		p.seq++
		if p.cr == nil { // oneway: counted when written
			p.rec.ok(t.msgs, t.bodyBytes, -1)
		}
	}
}
