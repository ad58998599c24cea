package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// Pull sysFlag bits (Java PullSysFlag).
const (
	pullFlagSuspend      = 0x2
	pullFlagSubscription = 0x4
)

// consumeConfig is everything `mqbench consume` takes.
type consumeConfig struct {
	NameSrv  string
	Broker   string
	Topic    string
	Group    string
	Queues   int    // with -b
	From     string // last | first
	MaxMsgs  int
	Suspend  time.Duration
	Duration time.Duration
	Count    int64
	Timeout  time.Duration // added to Suspend for the pull's deadline
	Progress io.Writer
}

func (c *consumeConfig) validate() error {
	switch {
	case c.NameSrv == "" && c.Broker == "":
		return errors.New("consume: need -n or -b")
	case c.Topic == "" || c.Group == "":
		return errors.New("consume: need -t and -g")
	case c.Duration <= 0 && c.Count <= 0:
		return errors.New("consume: need -duration or -count so the run ends")
	case c.From != "last" && c.From != "first":
		return fmt.Errorf("consume: -from must be last or first, got %q", c.From)
	case c.MaxMsgs < 1 || c.Queues < 1:
		return errors.New("consume: -maxmsgs and -queues must be >= 1")
	}
	return nil
}

func runConsume(cfg consumeConfig) (Summary, error) {
	if err := cfg.validate(); err != nil {
		return Summary{}, err
	}
	brokers, err := resolveQueues(cfg.NameSrv, cfg.Broker, cfg.Topic, cfg.Queues, false)
	if err != nil {
		return Summary{}, err
	}
	done := make(chan struct{})
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(func() { close(done) }) }
	if cfg.Duration > 0 {
		t := time.AfterFunc(cfg.Duration, stop)
		defer t.Stop()
	}
	var consumed atomic.Int64

	type qjob struct {
		conn *rpcConn
		qid  int
		rec  *recorder
	}
	var conns []*rpcConn
	var jobs []qjob
	var recs []*recorder
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for _, b := range brokers {
		c, err := dialRPC(b.Addr)
		if err != nil {
			return Summary{}, err
		}
		conns = append(conns, c)
		rec := newRecorder()
		recs = append(recs, rec)
		for _, q := range b.Queues {
			jobs = append(jobs, qjob{conn: c, qid: q, rec: rec})
		}
	}
	start := time.Now()
	rep := &reporter{out: cfg.Progress, recs: func() []*recorder { return recs }, label: "recv", start: start}
	repStop, repDone := make(chan struct{}), make(chan struct{})
	go rep.run(repStop, repDone)

	errCh := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := pullQueue(&cfg, j.conn, j.qid, j.rec, done, &consumed, stop); err != nil {
				errCh <- err
				stop()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(repStop)
	<-repDone
	close(errCh)
	if err := <-errCh; err != nil {
		return Summary{}, err
	}
	sum := summarize(recs, elapsed)
	sum.Role, sum.Mode, sum.Topic = "consume", "pull", cfg.Topic
	return sum, nil
}

// pullQueue long-polls one queue until done or the shared count is reached.
func pullQueue(cfg *consumeConfig, c *rpcConn, qid int, rec *recorder, done <-chan struct{}, consumed *atomic.Int64, stop func()) error {
	qs := strconv.Itoa(qid)
	cl := newCall()
	var offset int64
	if cfg.From == "last" {
		req := newRequest(codec.ReqGetMaxOffset, "topic", cfg.Topic, "queueId", qs)
		if err := c.invokeCancel(req, cl, ctlTimeout, done); err != nil {
			if errors.Is(err, errCanceled) {
				return nil
			}
			return fmt.Errorf("max offset of queue %d: %w", qid, err)
		}
		if cl.resp.Code != 0 {
			return respError(fmt.Sprintf("max offset of queue %d", qid), &cl.resp)
		}
		v, err := strconv.ParseInt(cl.resp.Value("offset"), 10, 64)
		if err != nil {
			return fmt.Errorf("max offset of queue %d: %w", qid, err)
		}
		offset = v
	}
	req := newRequest(codec.ReqPullMessage,
		"consumerGroup", cfg.Group, "topic", cfg.Topic, "queueId", qs, "queueOffset", "0",
		"maxMsgNums", strconv.Itoa(cfg.MaxMsgs), "sysFlag", strconv.Itoa(pullFlagSuspend|pullFlagSubscription),
		"commitOffset", "0", "suspendTimeoutMillis", strconv.FormatInt(cfg.Suspend.Milliseconds(), 10),
		"subscription", "*", "subVersion", "0", "expressionType", "TAG")
	lats := make([]int64, 0, cfg.MaxMsgs)
	backoff := time.NewTimer(time.Hour)
	backoff.Stop()
	defer backoff.Stop()
	for {
		select {
		case <-done:
			return nil
		default:
		}
		req.Set("queueOffset", strconv.FormatInt(offset, 10))
		req.Flag = 0
		err := c.invokeCancel(req, cl, cfg.Suspend+cfg.Timeout, done)
		if errors.Is(err, errCanceled) {
			return nil
		}
		if err != nil {
			rec.fail(errTimeout)
			if c.broken() {
				return fmt.Errorf("pull queue %d: %w", qid, err)
			}
			continue
		}
		r := &cl.resp
		next, nerr := strconv.ParseInt(r.Value("nextBeginOffset"), 10, 64)
		switch r.Code {
		case int32(codec.RespSuccess):
			// Received when the reader took the reply off the socket, not
			// when this goroutine got to run.
			now := cl.at.UnixNano()
			n, bytes, l, perr := scanRecords(r.Body, now, lats[:0])
			lats = l
			if perr != nil {
				rec.fail(int32(codec.RespSystemError))
				return fmt.Errorf("pull queue %d at %d: %w", qid, offset, perr)
			}
			rec.ok(n, bytes, -1)
			rec.latencies(lats)
			if cfg.Count > 0 && consumed.Add(int64(n)) >= cfg.Count {
				stop()
			}
		case int32(codec.RespPullNotFound), int32(codec.RespPullRetryImmediately), int32(codec.RespPullOffsetMoved):
		default:
			rec.fail(r.Code)
			backoff.Reset(200 * time.Millisecond) // the broker refused: retry later, as clients do
			select {
			case <-backoff.C:
			case <-done:
				return nil
			}
			continue
		}
		if nerr == nil {
			offset = next
		}
	}
}

// scanRecords walks stored messages (the pull body) and appends one
// end-to-end latency in microseconds per message: from the send time
// mqbench stamped into the body, else from the record's born timestamp.
// It returns the message count and the user body bytes.
func scanRecords(b []byte, nowNanos int64, lats []int64) (int, int, []int64, error) {
	n, bytes := 0, 0
	for p := 0; p < len(b); {
		if len(b)-p < 4 {
			return n, bytes, lats, fmt.Errorf("record at %d: truncated size", p)
		}
		size := int(int32(binary.BigEndian.Uint32(b[p:])))
		if size < 84 || size > len(b)-p {
			return n, bytes, lats, fmt.Errorf("record at %d: bad size %d", p, size)
		}
		r := b[p : p+size]
		sysFlag := int32(binary.BigEndian.Uint32(r[36:]))
		born := int64(binary.BigEndian.Uint64(r[40:]))
		at := 48 + 8 // born host (IPv4: 4+4)
		if sysFlag&0x10 != 0 {
			at += 12 // IPv6: 16+4
		}
		at += 8 + 8 // store timestamp, store host
		if sysFlag&0x20 != 0 {
			at += 12
		}
		at += 4 + 8 // reconsume times, prepared transaction offset
		if at+4 > size {
			return n, bytes, lats, fmt.Errorf("record at %d: header beyond size", p)
		}
		bl := int(int32(binary.BigEndian.Uint32(r[at:])))
		at += 4
		if bl < 0 || at+bl > size {
			return n, bytes, lats, fmt.Errorf("record at %d: bad body length %d", p, bl)
		}
		body := r[at : at+bl]
		lat := nowNanos/1000 - born*1000
		if sysFlag&0x1 == 0 && len(body) >= bodyStamped && string(body[:len(bodyMagic)]) == bodyMagic {
			lat = (nowNanos - int64(binary.BigEndian.Uint64(body[bodyStampAt:]))) / 1000
		}
		lats = append(lats, lat)
		n++
		bytes += bl
		p += size
	}
	return n, bytes, lats, nil
}
