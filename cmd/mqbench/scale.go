package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// The scale subcommands measure how a broker's and a name server's costs
// grow with the number of topics, clients, held pulls and consumer groups
// (scripts/bench-scale.sh runs them against ours and Java's):
//
//	topicsjson  write a topics.json with N topics (a store to start from)
//	regproxy    a TCP relay between broker and name server that logs every
//	            REGISTER_BROKER: body bytes and request→reply time
//	routes      GET_ROUTEINFO_BY_TOPIC latency over random topics
//	mktopics    UPDATE_AND_CREATE_TOPIC latency (each rewrites topics.json)
//	idle        N idle clients, one connection each, heartbeating
//	hold        N long-polling pulls held, then woken by one message a queue
//	offsets     G groups committing offsets of Q queues
//	fill        zero-body messages until the commit log grew by B bytes
//	watch       config-file persist times seen with inotify
//
// Every mode ends by itself (-duration, -count or a deadline). The modes
// that take -pid read the server's CPU time and RSS from /proc.
const scaleUsage = `usage: mqbench scale topicsjson|regproxy|routes|mktopics|idle|hold|offsets|fill|watch [flags]`

func runScale(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(scaleUsage)
	}
	var (
		res any
		err error
	)
	switch args[0] {
	case "topicsjson":
		res, err = scaleTopicsJSON(args[1:], stderr)
	case "regproxy":
		res, err = scaleRegProxy(args[1:], stderr)
	case "routes":
		res, err = scaleRoutes(args[1:], stderr)
	case "mktopics":
		res, err = scaleMkTopics(args[1:], stderr)
	case "idle":
		res, err = scaleIdle(args[1:], stderr)
	case "hold":
		res, err = scaleHold(args[1:], stderr)
	case "offsets":
		res, err = scaleOffsets(args[1:], stderr)
	case "fill":
		res, err = scaleFill(args[1:], stderr)
	case "watch":
		res, err = scaleWatch(args[1:], stderr)
	default:
		return fmt.Errorf("unknown scale mode %q; %s", args[0], scaleUsage)
	}
	if err != nil {
		return fmt.Errorf("scale %s: %w", args[0], err)
	}
	return json.NewEncoder(stdout).Encode(res)
}

// ---- /proc ------------------------------------------------------------------

// procSample is a process's CPU time and resident memory.
type procSample struct {
	CPU     time.Duration // user + system
	RSSKB   int64
	AnonKB  int64
	Threads int64
}

// clockTick is USER_HZ, 100 on every Linux mqbench runs on.
const clockTick = 100

func sampleProc(pid int) (procSample, error) {
	var s procSample
	if pid <= 0 {
		return s, nil
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("proc: %w", err)
	}
	// The command name may hold spaces: fields count from after ')'.
	rest := string(stat)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return s, fmt.Errorf("proc: short stat of %d", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	s.CPU = time.Duration(ut+st) * time.Second / clockTick
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("proc: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			s.RSSKB = n
		case "RssAnon":
			s.AnonKB = n
		case "Threads":
			s.Threads = n
		}
	}
	return s, nil
}

// ---- latency lists ------------------------------------------------------------

// latencies collects durations (bounded by the modes' counts) and
// summarizes them in milliseconds.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// LatencySummary is a latency distribution in milliseconds.
type LatencySummary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func (l *latencies) summary() LatencySummary {
	l.mu.Lock()
	d := append([]time.Duration(nil), l.d...)
	l.mu.Unlock()
	s := LatencySummary{N: len(d)}
	if len(d) == 0 {
		return s
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	var sum time.Duration
	for _, v := range d {
		sum += v
	}
	q := func(p float64) float64 {
		i := int(p*float64(len(d))+0.5) - 1
		i = max(0, min(i, len(d)-1))
		return ms(d[i])
	}
	s.Mean = ms(sum / time.Duration(len(d)))
	s.P50, s.P90, s.P99, s.Max = q(0.50), q(0.90), q(0.99), ms(d[len(d)-1])
	return s
}

// ---- a lean multiplexed connection -------------------------------------------

// muxConn is a connection with any number of requests in flight whose
// replies run a callback; it starts with a 4 KiB read buffer, so that
// ten thousand of them stay small (rpcConn starts at 512 KiB).
type muxConn struct {
	nc     net.Conn
	wmu    sync.Mutex // guards wbuf and writes
	wbuf   []byte
	opaque atomic.Int32
	mu     sync.Mutex // guards pending, err
	pend   map[int32]replyFunc
	err    error
	done   chan struct{}
}

// replyFunc gets a reply (its strings and body alias the read buffer: copy
// what outlives the call) and when it was read; f is nil when the
// connection failed first.
type replyFunc func(f *codec.Frame, at time.Time)

func dialMux(addr string) (*muxConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := &muxConn{nc: nc, pend: make(map[int32]replyFunc), done: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

// send writes req (its Opaque is set here) and runs fn on its reply.
func (c *muxConn) send(req *codec.Frame, fn replyFunc) error {
	op := c.opaque.Add(1)
	req.Opaque = op
	req.Flag &^= codec.FlagResponse
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.pend[op] = fn
	c.mu.Unlock()
	c.wmu.Lock()
	c.wbuf = req.AppendTo(c.wbuf[:0])
	_, err := c.nc.Write(c.wbuf)
	if cap(c.wbuf) > 64<<10 {
		c.wbuf = nil // fill frames: do not keep megabytes per connection
	}
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// muxReply is what call keeps of a reply.
type muxReply struct {
	Code    int32
	Remark  string
	Ext     map[string]string
	BodyLen int
	Body    []byte // only with keepBody
	At      time.Time
}

// call sends req and waits up to timeout for its reply.
func (c *muxConn) call(req *codec.Frame, timeout time.Duration, keepBody bool) (muxReply, error) {
	ch := make(chan muxReply, 1)
	err := c.send(req, func(f *codec.Frame, at time.Time) {
		if f == nil {
			ch <- muxReply{Code: -1}
			return
		}
		r := muxReply{Code: f.Code, Remark: strings.Clone(f.Remark), BodyLen: len(f.Body), At: at,
			Ext: make(map[string]string, len(f.Ext))}
		for _, kv := range f.Ext {
			r.Ext[strings.Clone(kv.Key)] = strings.Clone(kv.Value)
		}
		if keepBody {
			r.Body = append([]byte(nil), f.Body...)
		}
		ch <- r
	})
	if err != nil {
		return muxReply{}, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.Code == -1 {
			return r, fmt.Errorf("%s: connection failed: %w", codec.RequestCode(req.Code), c.failure())
		}
		return r, nil
	case <-t.C:
		return muxReply{}, fmt.Errorf("%s: no reply in %v", codec.RequestCode(req.Code), timeout)
	}
}

func (c *muxConn) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *muxConn) readLoop() {
	defer close(c.done)
	var f codec.Frame
	c.fail(readFrames(c.nc, 4<<10, codec.DefaultMaxFrameLength, true, func(_, payload []byte, at time.Time) error {
		f.Reset()
		if codec.Decode(payload, &f) == nil {
			c.dispatch(&f, at)
		}
		return nil
	}))
}

func (c *muxConn) dispatch(f *codec.Frame, at time.Time) {
	if !f.IsResponse() {
		// A broker's request (NOTIFY_CONSUMER_IDS_CHANGED is oneway).
		if !f.IsOneway() {
			resp := codec.NewResponse(f, int32(codec.RespRequestCodeNotSupported), fmt.Sprintf(" request type %d not supported", f.Code))
			c.wmu.Lock()
			_, _ = c.nc.Write(resp.AppendTo(nil))
			c.wmu.Unlock()
		}
		return
	}
	c.mu.Lock()
	fn := c.pend[f.Opaque]
	delete(c.pend, f.Opaque)
	c.mu.Unlock()
	if fn != nil {
		fn(f, at)
	}
}

func (c *muxConn) fail(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = errConnClosed
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	pend := c.pend
	c.pend = make(map[int32]replyFunc)
	c.mu.Unlock()
	for _, fn := range pend {
		fn(nil, time.Time{})
	}
	c.nc.Close()
}

func (c *muxConn) close() {
	c.fail(errConnClosed)
	<-c.done
}

// dialMany opens n connections, conc at a time.
func dialMany(addr string, n, conc int) ([]*muxConn, error) {
	conns := make([]*muxConn, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, max(1, conc))
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dialMux(addr)
			if err != nil {
				errs <- err
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		for _, c := range conns {
			if c != nil {
				c.close()
			}
		}
		return nil, err
	}
	return conns, nil
}

func closeAll(conns []*muxConn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.close() }()
	}
	wg.Wait()
}

// codeCounts counts reply codes by name.
type codeCounts struct {
	mu sync.Mutex
	m  map[string]int64
}

func (c *codeCounts) add(code int32) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]int64{}
	}
	c.m[codec.ResponseCode(code).String()]++
	c.mu.Unlock()
}

func (c *codeCounts) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

// cpuPer returns CPU microseconds per operation between two samples.
func cpuPer(a, b procSample, ops int64) float64 {
	if ops <= 0 {
		return 0
	}
	return float64((b.CPU - a.CPU).Microseconds()) / float64(ops)
}
