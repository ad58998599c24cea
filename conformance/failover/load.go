package failover

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
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

// Ack is the outcome of one send.
type Ack struct {
	Key        string
	Start, End time.Time
	OK         bool   // SEND_OK
	Status     string // SEND_OK, FLUSH_SLAVE_TIMEOUT…, or the error
	Host       string // store host of offsetMsgId
	PhyOffset  int64  // commit log offset of offsetMsgId
}

// Delivery is one message the push consumer received.
type Delivery struct {
	Key       string
	Host      string
	PhyOffset int64
}

// Load runs a Go producer and a push consumer until Stop.
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
// paced to one send per pace) and the consumer.
func StartLoad(ns, topic, run string, count, threads int, pace time.Duration) (*Load, error) {
	goclient.Quiet()
	l := &Load{Topic: topic, sentMax: count}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	p, err := rocketmq.NewProducer(producer.WithNameServer(primitive.NamesrvAddr{ns}),
		producer.WithGroupName(run+"_p"), producer.WithInstanceName(run+"_p"),
		producer.WithRetry(2), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start producer: %w", err)
	}
	c, err := rocketmq.NewPushConsumer(consumer.WithNameServer(primitive.NamesrvAddr{ns}),
		consumer.WithGroupName(run+"_c"), consumer.WithInstance(run+"_c"),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		_ = p.Shutdown()
		cancel()
		return nil, fmt.Errorf("new consumer: %w", err)
	}
	if err := c.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		l.mu.Lock()
		for _, m := range msgs {
			l.got = append(l.got, Delivery{Key: m.GetKeys(), Host: m.StoreHost, PhyOffset: m.CommitLogOffset})
		}
		l.mu.Unlock()
		return consumer.ConsumeSuccess, nil
	}); err != nil {
		_ = p.Shutdown()
		cancel()
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	if err := c.Start(); err != nil {
		_ = p.Shutdown()
		cancel()
		return nil, fmt.Errorf("start consumer: %w", err)
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
				key := run + "-" + strconv.FormatInt(i, 10)
				m := primitive.NewMessage(topic, []byte("failover "+key))
				m.WithKeys([]string{key})
				a := Ack{Key: key, Start: time.Now()}
				sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
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
	l.stopFns = []func(){func() { _ = c.Shutdown() }, func() { _ = p.Shutdown() }}
	return l, nil
}

// StopSending stops the producers and waits for sends in flight.
func (l *Load) StopSending() {
	l.cancel()
	l.wg.Wait()
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
	a := Ack{Key: key, Start: time.Now()}
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

// Add records an ack of a probe.
func (l *Load) Add(a Ack) {
	l.mu.Lock()
	l.acks = append(l.acks, a)
	l.mu.Unlock()
}
