package failover

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Who sent an Ack or received a Delivery.
const (
	ClientGo   = "go"   // rocketmq-client-go/v2
	ClientJava = "java" // the Java client 5.3.3 (FailoverTool, load_java.go)
	ClientRaw  = "raw"  // ProbeSend
)

// Ack is the outcome of one send.
type Ack struct {
	Key        string
	Client     string // ClientGo, ClientJava or ClientRaw ("" counts as go)
	Start, End time.Time
	OK         bool   // SEND_OK
	Status     string // SEND_OK, FLUSH_SLAVE_TIMEOUT…, or the error
	Host       string // store host of offsetMsgId
	PhyOffset  int64  // commit log offset of offsetMsgId
}

// Delivery is one message a push consumer received.
type Delivery struct {
	Key       string
	Client    string // the consumer: ClientGo or ClientJava ("" counts as go)
	Host      string
	PhyOffset int64
}

// Load runs the Go client's producer and push consumer and, when java is
// installed, the Java client's (load_java.go) until Close.
type Load struct {
	Topic   string
	mu      sync.Mutex
	acks    []Ack
	got     []Delivery
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	errs    []error
	sentMax int
	stopFns []func()
	java    *javaLoad // nil without a Java load
	noJava  string    // why there is none
	grpc    *javaLoad // nil without a gRPC load (load_grpc.go)
}

// decodeOffsetMsgID splits a 32-hex-digit IPv4 offsetMsgId.
func decodeOffsetMsgID(id string) (string, int64, bool) {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != 16 {
		return "", 0, false
	}
	port := int(b[4])<<24 | int(b[5])<<16 | int(b[6])<<8 | int(b[7])
	var off int64
	for _, x := range b[8:] {
		off = off<<8 | int64(x)
	}
	return net.IP(b[:4]).String() + ":" + strconv.Itoa(port), off, true
}

// StartLoad starts threads senders (at most count messages, each sender
// paced to one send per pace) and the consumer of the Go client and, when
// java is installed, the same of the Java client (a JVM in the root
// namespace, startJavaLoad) and, when grpcEndpoint is set, of the Java gRPC
// client through that endpoint (startGRPCLoad). Keys are run-go-<i>,
// run-java-<i> and run-grpc-<i>. It returns once each JVM's producer has
// had a SEND_OK back (the JVMs are the slower to start), so a fault never
// comes before their loads run.
func StartLoad(ns, topic, run string, count, threads int, pace time.Duration, grpcEndpoint string) (*Load, error) {
	goclient.Quiet()
	l := &Load{Topic: topic, sentMax: count}
	// The JVMs first: they start while the Go client does.
	var jerr error
	l.java, l.noJava, jerr = startJavaLoad(javaProjectDir(), ns, topic, run+"-"+ClientJava, count, threads, pace, l.Add, l.addDelivery)
	if jerr != nil {
		return nil, jerr
	}
	l.stopFns = append(l.stopFns, l.closeJava)
	if grpcEndpoint != "" {
		if l.grpc, jerr = startGRPCLoad(grpcEndpoint, topic, run+"-"+ClientGRPC, count, threads, pace, l.Add, l.addDelivery); jerr != nil {
			l.closeJava()
			return nil, jerr
		}
	}
	if err := l.startGo(ns, topic, run, count, threads, pace); err != nil {
		l.closeJava()
		return nil, err
	}
	for _, j := range []*javaLoad{l.java, l.grpc} {
		if j != nil {
			if err := j.awaitFirstOK(60 * time.Second); err != nil {
				l.Close()
				return nil, err
			}
		}
	}
	return l, nil
}

// StartGoLoad is StartLoad with the Go client only (no JVM): threads
// senders of at most count messages, each paced to one send per pace, and
// a push consumer; keys run-go-<i>.
func StartGoLoad(ns, topic, run string, count, threads int, pace time.Duration) (*Load, error) {
	goclient.Quiet()
	l := &Load{Topic: topic, sentMax: count, noJava: "Go client only (StartGoLoad)"}
	if err := l.startGo(ns, topic, run, count, threads, pace); err != nil {
		return nil, err
	}
	return l, nil
}

// startGo starts the Go client's producer goroutines and push consumer.
func (l *Load) startGo(ns, topic, run string, count, threads int, pace time.Duration) error {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	p, err := rocketmq.NewProducer(producer.WithNameServer(primitive.NamesrvAddr{ns}),
		producer.WithGroupName(run+"_p"), producer.WithInstanceName(run+"_p"),
		producer.WithRetry(2), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		cancel()
		return fmt.Errorf("new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		cancel()
		return fmt.Errorf("start producer: %w", err)
	}
	c, err := rocketmq.NewPushConsumer(consumer.WithNameServer(primitive.NamesrvAddr{ns}),
		consumer.WithGroupName(run+"_c"), consumer.WithInstance(run+"_c"),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		_ = p.Shutdown()
		cancel()
		return fmt.Errorf("new consumer: %w", err)
	}
	if err := c.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		l.mu.Lock()
		for _, m := range msgs {
			l.got = append(l.got, Delivery{Key: m.GetKeys(), Client: ClientGo, Host: m.StoreHost, PhyOffset: m.CommitLogOffset})
		}
		l.mu.Unlock()
		return consumer.ConsumeSuccess, nil
	}); err != nil {
		_ = p.Shutdown()
		cancel()
		return fmt.Errorf("subscribe: %w", err)
	}
	if err := c.Start(); err != nil {
		_ = p.Shutdown()
		cancel()
		return fmt.Errorf("start consumer: %w", err)
	}
	var next atomic.Int64
	for range threads {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(count) {
					return
				}
				key := run + "-" + ClientGo + "-" + strconv.FormatInt(i, 10)
				m := primitive.NewMessage(topic, []byte("failover "+key))
				m.WithKeys([]string{key})
				a := Ack{Key: key, Client: ClientGo, Start: time.Now()}
				// Not ctx: StopSending lets a send in flight finish (a cancelled
				// one would count as failed though the broker may store it).
				sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
				r, err := p.SendSync(sctx, m)
				scancel()
				a.End = time.Now()
				if err != nil {
					a.Status = err.Error()
				} else {
					a.OK = r.Status == primitive.SendOK
					a.Status = strconv.Itoa(int(r.Status))
					if a.OK {
						a.Status = "SEND_OK"
					}
					a.Host, a.PhyOffset, _ = decodeOffsetMsgID(r.OffsetMsgID)
				}
				l.mu.Lock()
				l.acks = append(l.acks, a)
				l.mu.Unlock()
				select { // pacing of the load, not synchronization
				case <-ctx.Done():
				case <-time.After(pace):
				}
			}
		}()
	}
	l.stopFns = append([]func(){func() { _ = c.Shutdown() }, func() { _ = p.Shutdown() }}, l.stopFns...)
	return nil
}

// StopSending stops the producers of both clients and waits for sends in
// flight (the Java client's bounded by stopJavaWait).
func (l *Load) StopSending() {
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
	if l.java != nil {
		l.java.stopSending()
	}
	if l.grpc != nil {
		l.grpc.stopSending()
	}
}

// Close shuts the clients down.
func (l *Load) Close() {
	l.StopSending()
	for _, f := range l.stopFns {
		f()
	}
}

// Acks and Deliveries return copies.
func (l *Load) Acks() []Ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Ack(nil), l.acks...)
}

func (l *Load) Deliveries() []Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Delivery(nil), l.got...)
}

// AckedSince counts SEND_OK acks that started after t.
func (l *Load) AckedSince(t time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.acks {
		if a.OK && a.Start.After(t) {
			n++
		}
	}
	return n
}

// Stored is one record of the final master's log.
type Stored struct {
	Key       string
	Host      string
	PhyOffset int64
}

// ReadAll reads every queue of topic on addr from 0 to its max offset
// with raw PULL_MESSAGE (group run_check, no commit).
func ReadAll(ctx context.Context, addr, topic, group string, queues int) ([]Stored, error) {
	var out []Stored
	for q := range queues {
		end, err := MaxOffset(ctx, addr, topic, q)
		if err != nil {
			return nil, err
		}
		for off, tries := int64(0), 0; off < end; {
			f, err := harness.Call(ctx, addr, codePullMessage, map[string]string{
				"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(q),
				"queueOffset": strconv.FormatInt(off, 10), "maxMsgNums": "64", "sysFlag": "4", "expressionType": "TAG",
				"commitOffset": "0", "suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0",
			}, nil)
			if err == nil && f.Code == 0 {
				msgs := primitive.DecodeMessage(f.Body)
				for _, m := range msgs {
					out = append(out, Stored{Key: m.GetKeys(), Host: m.StoreHost, PhyOffset: m.CommitLogOffset})
				}
				next, _ := strconv.ParseInt(f.Ext["nextBeginOffset"], 10, 64)
				if next > off {
					off, tries = next, 0
					continue
				}
			}
			if tries++; tries > 50 {
				code := int32(-1)
				if f != nil {
					code = f.Code
				}
				return nil, fmt.Errorf("pull %s q%d @%d (end %d): code %d err %v", topic, q, off, end, code, err)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return out, nil
}

// ProbeSend sends one keyed message with raw SEND_MESSAGE straight to
// addr (no client route cache), queue q.
func ProbeSend(ctx context.Context, addr, topic, key string, q int) Ack {
	a := Ack{Key: key, Client: ClientRaw, Start: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	f, err := harness.Call(ctx, addr, codeSendMessage, map[string]string{
		"producerGroup": "failover_probe", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(q), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
		"flag": "0", "properties": "KEYS\x01" + key + "\x02UNIQ_KEY\x01" + key + "\x02", "reconsumeTimes": "0",
		"unitMode": "false", "batch": "false",
	}, []byte("probe "+key))
	a.End = time.Now()
	switch {
	case err != nil:
		a.Status = err.Error()
	case f.Code != 0:
		a.Status = fmt.Sprintf("code %d %s", f.Code, f.Remark)
	default:
		a.OK, a.Status = true, "SEND_OK"
		a.Host, a.PhyOffset, _ = decodeOffsetMsgID(f.Ext["msgId"])
	}
	return a
}

// Add records an ack of a probe (or of the Java client).
func (l *Load) Add(a Ack) {
	l.mu.Lock()
	l.acks = append(l.acks, a)
	l.mu.Unlock()
}

func (l *Load) addDelivery(d Delivery) {
	l.mu.Lock()
	l.got = append(l.got, d)
	l.mu.Unlock()
}

// Senders are the clients whose producers run: go, java when the Java
// load started, grpc when the gRPC load did.
func (l *Load) Senders() []string {
	out := []string{ClientGo}
	if l.java != nil {
		out = append(out, ClientJava)
	}
	if l.grpc != nil {
		out = append(out, ClientGRPC)
	}
	return out
}

// NoJava says why the load has no Java client ("" when it has one).
func (l *Load) NoJava() string { return l.noJava }

// AckedOnEach is the smallest, over Senders, count of SEND_OK acks of that
// client that started after since on host ("" any host; a gRPC ack has no
// host until Check places it, and counts on any): a phase that waits for
// it waits until every client has recovered.
func (l *Load) AckedOnEach(host string, since time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]int{}
	for _, a := range l.acks {
		if a.OK && a.Start.After(since) && (host == "" || a.Host == host || (a.Client == ClientGRPC && a.Host == "")) {
			n[clientOf(a.Client)]++
		}
	}
	low := -1
	for _, c := range l.Senders() {
		if low < 0 || n[c] < low {
			low = n[c]
		}
	}
	return low
}

// DeliveredEach says whether every consumer (one per Senders client) has
// received every key of keys.
func (l *Load) DeliveredEach(keys map[string]bool) bool {
	l.mu.Lock()
	seen := map[string]map[string]bool{}
	for _, g := range l.got {
		c := clientOf(g.Client)
		if seen[c] == nil {
			seen[c] = map[string]bool{}
		}
		seen[c][g.Key] = true
	}
	l.mu.Unlock()
	for _, c := range l.Senders() {
		for k := range keys {
			if !seen[c][k] {
				return false
			}
		}
	}
	return true
}

// Err is what went wrong with a client during the run (the JVM of the Java
// load ended early), "" when nothing did.
func (l *Load) Err() string {
	var errs []string
	for _, j := range []*javaLoad{l.java, l.grpc} {
		if j != nil {
			if f := j.failure(); f != "" {
				errs = append(errs, f)
			}
		}
	}
	return strings.Join(errs, "; ")
}

// closeJava ends the JVMs (Java and gRPC loads).
func (l *Load) closeJava() {
	for _, j := range []*javaLoad{l.java, l.grpc} {
		if j != nil {
			j.close()
		}
	}
}

// clientOf maps an Ack's or Delivery's Client to its client ("" is go).
func clientOf(c string) string {
	if c == "" {
		return ClientGo
	}
	return c
}
