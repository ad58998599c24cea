package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// scaleTopicName is topic i of a scale run: prefix + six digits.
func scaleTopicName(prefix string, i int) string { return fmt.Sprintf("%s%06d", prefix, i) }

// TopicsJSONResult describes the file topicsjson wrote.
type TopicsJSONResult struct {
	Path   string `json:"path"`
	Topics int    `json:"topics"`
	Bytes  int    `json:"bytes"`
}

// scaleTopicsJSON writes DIR/config/topics.json (Java's format, which both
// brokers load at start) with -topics topics of -queues queues.
func scaleTopicsJSON(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale topicsjson", flag.ContinueOnError)
	fs.SetOutput(out)
	path := fs.String("out", "", "file to write (e.g. STORE/config/topics.json)")
	n := fs.Int("topics", 1000, "topics")
	queues := fs.Int("queues", 8, "read and write queues of each")
	prefix := fs.String("prefix", "ScaleT", "topic name prefix (then six digits)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *path == "" {
		return nil, fmt.Errorf("-out is required")
	}
	topics := make([]body.TopicConfig, *n)
	for i := range topics {
		tc := body.NewTopicConfig(scaleTopicName(*prefix, i))
		tc.ReadQueueNums, tc.WriteQueueNums = int32(*queues), int32(*queues)
		topics[i] = tc
	}
	b := body.AppendTopicConfigFile(nil, body.TopicVersion{Counter: int64(*n), Timestamp: time.Now().UnixMilli()}, topics)
	if err := os.MkdirAll(filepath.Dir(*path), 0o755); err != nil {
		return nil, fmt.Errorf("topics.json: %w", err)
	}
	if err := os.WriteFile(*path, b, 0o644); err != nil {
		return nil, fmt.Errorf("topics.json: %w", err)
	}
	return TopicsJSONResult{Path: *path, Topics: *n, Bytes: len(b)}, nil
}

// RegRecord is one REGISTER_BROKER the relay saw.
type RegRecord struct {
	At       int64   `json:"atUnixMs"` // when the request's last byte arrived
	Bytes    int     `json:"bytes"`    // the request frame, length prefix included
	BodyLen  int     `json:"bodyBytes"`
	ReplyMs  float64 `json:"replyMs"` // last request byte → first reply byte read
	Code     int32   `json:"code"`
	Compress string  `json:"compressed"`
}

// RegProxyResult sums the registrations the relay saw.
type RegProxyResult struct {
	Registrations []RegRecord `json:"registrations"`
	Conns         int         `json:"conns"`
}

// scaleRegProxy relays -listen to -target (the broker is configured with
// -listen as its name server) and logs every REGISTER_BROKER as a JSON line
// to -log as it is answered; it ends after -duration or when -stop exists.
func scaleRegProxy(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale regproxy", flag.ContinueOnError)
	fs.SetOutput(out)
	listen := fs.String("listen", "127.0.0.1:0", "address to accept the broker on")
	target := fs.String("target", "", "name server ip:port")
	logPath := fs.String("log", "", "JSON lines, one per registration (appended)")
	duration := fs.Duration("duration", 10*time.Minute, "run length")
	stop := fs.String("stop", "", "end when this file exists")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *target == "" {
		return nil, fmt.Errorf("-target is required")
	}
	var logw io.Writer
	if *logPath != "" {
		logf, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("log: %w", err)
		}
		defer logf.Close()
		logw = logf
	}
	r, err := startRegRelay(*listen, *target, logw)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(*duration)
	for time.Now().Before(deadline) {
		if *stop != "" {
			if _, err := os.Stat(*stop); err == nil {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.close()
	return r.result(), nil
}

// startRegRelay listens on listen and relays every connection to target,
// noting registrations (and writing each to log, when not nil).
func startRegRelay(listen, target string, log io.Writer) (*regRelay, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	r := &regRelay{target: target, log: log, ln: ln, pending: map[int32]RegRecord{}, sent: map[int32]time.Time{}}
	go r.accept(ln)
	return r, nil
}

func (r *regRelay) addr() string { return r.ln.Addr().String() }

func (r *regRelay) close() {
	r.ln.Close()
	r.closeAll()
}

func (r *regRelay) result() RegProxyResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RegProxyResult{Registrations: append([]RegRecord(nil), r.done...), Conns: r.conns}
}

type regRelay struct {
	target string
	log    io.Writer // nil: none
	ln     net.Listener

	mu      sync.Mutex
	pending map[int32]RegRecord // by opaque (one broker per relay)
	sent    map[int32]time.Time
	done    []RegRecord
	conns   int
	open    []net.Conn
}

func (r *regRelay) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", r.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns++
		r.open = append(r.open, c, up)
		r.mu.Unlock()
		go r.pump(c, up, true)
		go r.pump(up, c, false)
	}
}

func (r *regRelay) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.open {
		c.Close()
	}
}

// pump copies src to dst frame by frame, noting registrations (requests
// from the broker) and their replies.
func (r *regRelay) pump(src, dst net.Conn, fromBroker bool) {
	defer dst.Close()
	defer src.Close()
	var f codec.Frame
	_ = readFrames(src, 64<<10, 64<<20, false, func(frame, payload []byte, at time.Time) error {
		// Decode unescapes in place: decode a copy, forward the original.
		tmp := append([]byte(nil), payload...)
		f.Reset()
		if codec.Decode(tmp, &f) == nil {
			r.note(&f, len(frame), at, fromBroker)
		}
		_, err := dst.Write(frame)
		return err
	}) // the relay ends with either side: the error is the end
}

func (r *regRelay) note(f *codec.Frame, frameLen int, at time.Time, fromBroker bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fromBroker {
		if f.IsResponse() || f.Code != int32(codec.ReqRegisterBroker) {
			return
		}
		r.pending[f.Opaque] = RegRecord{At: time.Now().UnixMilli(), Bytes: frameLen, BodyLen: len(f.Body), Compress: f.Value("compressed")}
		r.sent[f.Opaque] = time.Now()
		return
	}
	if !f.IsResponse() {
		return
	}
	rec, ok := r.pending[f.Opaque]
	if !ok {
		return
	}
	rec.ReplyMs = ms(at.Sub(r.sent[f.Opaque]))
	rec.Code = f.Code
	delete(r.pending, f.Opaque)
	delete(r.sent, f.Opaque)
	r.done = append(r.done, rec)
	if r.log != nil {
		fmt.Fprintf(r.log, `{"atUnixMs":%d,"bytes":%d,"bodyBytes":%d,"replyMs":%.3f,"code":%d,"compressed":%q}`+"\n",
			rec.At, rec.Bytes, rec.BodyLen, rec.ReplyMs, rec.Code, rec.Compress)
	}
}

// RoutesResult is the route-query latency.
type RoutesResult struct {
	Queries   int            `json:"queries"`
	Missing   int            `json:"missing"` // TOPIC_NOT_EXIST
	Failed    int            `json:"failed"`
	BodyBytes int            `json:"bodyBytes"` // of the last route
	Latency   LatencySummary `json:"latencyMs"`
}

// scaleRoutes asks the name server for -count routes of random topics
// among the first -topics of -prefix, one at a time on one connection.
func scaleRoutes(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale routes", flag.ContinueOnError)
	fs.SetOutput(out)
	ns := fs.String("n", "", "name server ip:port")
	n := fs.Int("topics", 1000, "topics to pick from")
	prefix := fs.String("prefix", "ScaleT", "topic name prefix")
	count := fs.Int("count", 2000, "queries")
	duration := fs.Duration("duration", 60*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c, err := dialMux(*ns)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var res RoutesResult
	var lat latencies
	rng := rand.New(rand.NewPCG(1, 2))
	deadline := time.Now().Add(*duration)
	for i := 0; i < *count && time.Now().Before(deadline); i++ {
		req := newRequest(codec.ReqGetRouteinfoByTopic, "topic", scaleTopicName(*prefix, rng.IntN(max(1, *n))))
		t0 := time.Now()
		r, err := c.call(req, ctlTimeout, false)
		res.Queries++
		if err != nil {
			res.Failed++
			if c.failure() != nil {
				return nil, err
			}
			continue
		}
		switch r.Code {
		case int32(codec.RespSuccess):
			lat.add(r.At.Sub(t0))
			res.BodyBytes = r.BodyLen
		case int32(codec.RespTopicNotExist):
			res.Missing++
		default:
			res.Failed++
		}
	}
	res.Latency = lat.summary()
	return res, nil
}

// MkTopicsResult is the topic-creation latency.
type MkTopicsResult struct {
	Created int            `json:"created"`
	Failed  int            `json:"failed"`
	Latency LatencySummary `json:"latencyMs"`
}

// scaleMkTopics creates -count topics (-prefix, numbered from -start) one
// at a time: each UPDATE_AND_CREATE_TOPIC rewrites topics.json before it is
// answered, on both brokers.
func scaleMkTopics(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale mktopics", flag.ContinueOnError)
	fs.SetOutput(out)
	broker := fs.String("b", "", "broker ip:port")
	prefix := fs.String("prefix", "ScaleNew", "topic name prefix")
	start := fs.Int("start", 0, "first topic number")
	count := fs.Int("count", 20, "topics to create")
	queues := fs.Int("queues", 8, "queues of each")
	duration := fs.Duration("duration", 120*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c, err := dialMux(*broker)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var res MkTopicsResult
	var lat latencies
	q := strconv.Itoa(*queues)
	deadline := time.Now().Add(*duration)
	for i := 0; i < *count && time.Now().Before(deadline); i++ {
		req := newRequest(codec.ReqUpdateAndCreateTopic,
			"topic", scaleTopicName(*prefix, *start+i), "defaultTopic", "TBW102", "readQueueNums", q, "writeQueueNums", q,
			"perm", "6", "topicFilterType", "SINGLE_TAG", "topicSysFlag", "0", "order", "false")
		t0 := time.Now()
		r, err := c.call(req, 30*time.Second, false)
		if err != nil || r.Code != int32(codec.RespSuccess) {
			res.Failed++
			if err != nil && c.failure() != nil {
				return nil, err
			}
			continue
		}
		res.Created++
		lat.add(r.At.Sub(t0))
	}
	res.Latency = lat.summary()
	return res, nil
}
