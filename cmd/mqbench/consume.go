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
	pullFlagCommitOffset = 0x1
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
	From     string // group | last | first
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
	case c.From != "group" && c.From != "last" && c.From != "first":
		return fmt.Errorf("consume: -from must be group, last or first, got %q", c.From)
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
		conn  *rpcConn
		qid   int
		slave bool
		rec   *recorder
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
			jobs = append(jobs, qjob{conn: c, qid: q, slave: b.Slave, rec: rec})
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
			if err := pullQueue(&cfg, j.conn, j.qid, j.slave, j.rec, done, &consumed, stop); err != nil {
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
// With -from group it reads and keeps the group's offset as a Java
// consumer does: committed with each pull to a master and stored at the end.
func pullQueue(cfg *consumeConfig, c *rpcConn, qid int, slave bool, rec *recorder, done <-chan struct{}, consumed *atomic.Int64, stop func()) (err error) {
	qs := strconv.Itoa(qid)
	cl := newCall()
	offset, ok, err := startOffset(cfg, c, qs, cl, done)
	if err != nil || !ok {
		return err
	}
	if cfg.From == "group" {
		defer func() {
			if err == nil {
				err = storeOffset(cfg, c, qs, offset, cl)
			}
		}()
	}
	sysFlag := pullFlagSuspend | pullFlagSubscription
	req := newRequest(codec.ReqPullMessage,
		"consumerGroup", cfg.Group, "topic", cfg.Topic, "queueId", qs, "queueOffset", "0",
		"maxMsgNums", strconv.Itoa(cfg.MaxMsgs), "sysFlag", strconv.Itoa(sysFlag),
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
		// Like the Java client: commit the consumed offset with the pull,
		// to a master only (a slave's offsets come from its master).
		if cfg.From == "group" && !slave && offset > 0 {
			req.Set("sysFlag", strconv.Itoa(sysFlag|pullFlagCommitOffset))
			req.Set("commitOffset", strconv.FormatInt(offset, 10))
		}
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

// startOffset is where pulling queue qs begins: 0 (first), the max offset
// (last), or the group's offset (group). ok is false when done closed first.
//
// compat: -from group is Java's CONSUME_FROM_LAST_OFFSET: the broker
// answers the group's stored offset, or 0 for a new group on a queue whose
// first message is still in memory (QUERY_CONSUMER_OFFSET), else
// QUERY_NOT_FOUND, and the consumer starts at the max offset.
func startOffset(cfg *consumeConfig, c *rpcConn, qs string, cl *call, done <-chan struct{}) (offset int64, ok bool, err error) {
	if cfg.From == "first" {
		return 0, true, nil
	}
	if cfg.From == "group" {
		req := newRequest(codec.ReqQueryConsumerOffset, "consumerGroup", cfg.Group, "topic", cfg.Topic, "queueId", qs)
		off, code, ok, err := queryOffset(c, req, cl, done, "offset of group "+cfg.Group+" on queue "+qs)
		if err != nil || !ok || code == int32(codec.RespSuccess) {
			return off, ok, err
		}
		if code != int32(codec.RespQueryNotFound) {
			return 0, false, respError("offset of group "+cfg.Group+" on queue "+qs, &cl.resp)
		}
	}
	req := newRequest(codec.ReqGetMaxOffset, "topic", cfg.Topic, "queueId", qs)
	off, code, ok, err := queryOffset(c, req, cl, done, "max offset of queue "+qs)
	if err == nil && ok && code != int32(codec.RespSuccess) {
		err = respError("max offset of queue "+qs, &cl.resp)
	}
	return off, ok, err
}

// queryOffset sends req and reads the reply's "offset" when it is SUCCESS;
// ok is false (and err nil) when done closed first.
func queryOffset(c *rpcConn, req *codec.Frame, cl *call, done <-chan struct{}, what string) (int64, int32, bool, error) {
	if err := c.invokeCancel(req, cl, ctlTimeout, done); err != nil {
		if errors.Is(err, errCanceled) {
			return 0, 0, false, nil
		}
		return 0, 0, false, fmt.Errorf("%s: %w", what, err)
	}
	if cl.resp.Code != int32(codec.RespSuccess) {
		return 0, cl.resp.Code, true, nil
	}
	v, err := strconv.ParseInt(cl.resp.Value("offset"), 10, 64)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%s: %w", what, err)
	}
	return v, cl.resp.Code, true, nil
}

// storeOffset sends UPDATE_CONSUMER_OFFSET for the group at the end of the
// run (as a Java consumer persists its offsets when it shuts down), so the
// next run with the group goes on from there.
func storeOffset(cfg *consumeConfig, c *rpcConn, qs string, offset int64, cl *call) error {
	req := newRequest(codec.ReqUpdateConsumerOffset, "consumerGroup", cfg.Group, "topic", cfg.Topic,
		"queueId", qs, "commitOffset", strconv.FormatInt(offset, 10))
	if err := c.invoke(req, cl, ctlTimeout); err != nil {
		return fmt.Errorf("store offset of group %s on queue %s: %w", cfg.Group, qs, err)
	}
	if cl.resp.Code != int32(codec.RespSuccess) {
		return respError("store offset of group "+cfg.Group+" on queue "+qs, &cl.resp)
	}
	return nil
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
