package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/storecompat"
)

// Request and response codes of the replication scenarios (Apache
// RocketMQ RequestCode / ResponseCode values).
const (
	codeSendMessage               = 10
	codePullMessage               = 11
	codeGetAllConsumerOffset      = 43
	codeGetAllDelayOffset         = 45
	respSystemBusy                = 2
	respFlushSlaveTimeout         = 12
	pullFlagSubscription          = 1 << 2 // PullSysFlag: the subscription travels in the request
	transOpHalfTopic              = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	propSep, propKV               = "\x02", "\x01"
	haPollEvery                   = 200 * time.Millisecond
	haDefaultQueueNums            = 4
	haRawProducerGroup            = "ha_raw_p"
	haPullGroupWhenNoSubscription = "ha_raw_c"
)

// createTopic creates topic on the pair's master and waits for its route.
func createTopic(ctx context.Context, p *harness.Pair, topic string, queues int) error {
	return harness.Attach(harness.Ours, p.NamesrvAddr, p.Master.Addr).CreateTopic(ctx, topic, queues, nil)
}

// sendRaw stores one message with SEND_MESSAGE and the given user
// properties (name → value), returning the response.
func sendRaw(ctx context.Context, addr, topic string, queueID int, props map[string]string, body []byte) (code int32, remark string, ext map[string]string, err error) {
	var b strings.Builder
	for k, v := range props {
		b.WriteString(k + propKV + v + propSep)
	}
	b.WriteString("WAIT" + propKV + "true" + propSep)
	req := map[string]string{
		"producerGroup": haRawProducerGroup, "topic": topic, "defaultTopic": "TBW102",
		"defaultTopicQueueNums": strconv.Itoa(haDefaultQueueNums), "queueId": strconv.Itoa(queueID),
		"sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": b.String(), "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
	}
	f, err := harness.Call(ctx, addr, codeSendMessage, req, body)
	if err != nil {
		return 0, "", nil, err
	}
	return f.Code, f.Remark, f.Ext, nil
}

// fillBytes sends bodies of size bodySize to topic (queues round robin)
// with workers connections' worth of concurrency until the master's commit
// log grew by at least total bytes; it returns the messages sent.
func fillBytes(ctx context.Context, addr, topic string, queues, workers, bodySize int, total int64) (int, error) {
	start, err := maxPhy(ctx, addr)
	if err != nil {
		return 0, err
	}
	pattern := make([]byte, bodySize)
	for i := range pattern {
		pattern[i] = byte('a' + i%23)
	}
	perMsg := int64(bodySize) + 200
	want := int((total + perMsg - 1) / perMsg)
	var next, sent atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := append([]byte(nil), pattern...)
			for {
				i := next.Add(1) - 1
				copy(body, fmt.Sprintf("%016d", i)) // each body differs
				if i >= int64(want) || ctx.Err() != nil {
					return
				}
				err := sendRetryBusy(ctx, addr, topic, int(i)%queues, map[string]string{"KEYS": "fill" + strconv.FormatInt(i, 10)}, body)
				if err != nil {
					errc <- fmt.Errorf("fill %s message %d: %w", topic, i, err)
					return
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return int(sent.Load()), err
	}
	end, err := maxPhy(ctx, addr)
	if err != nil {
		return int(sent.Load()), err
	}
	if end-start < total {
		return int(sent.Load()), fmt.Errorf("fill %s: the commit log grew %d bytes, want ≥ %d", topic, end-start, total)
	}
	return int(sent.Load()), nil
}

// sendRetryBusy is sendRaw expecting SEND_OK; a busy broker (SYSTEM_BUSY,
// Java's flow control when a send waited past waitTimeMillsInSendQueue) is
// asked again a bounded number of times.
func sendRetryBusy(ctx context.Context, addr, topic string, queueID int, props map[string]string, body []byte) error {
	for try := 0; ; try++ {
		code, remark, _, err := sendRaw(ctx, addr, topic, queueID, props, body)
		switch {
		case err != nil:
			return err
		case code == 0:
			return nil
		case code != respSystemBusy || try == 20:
			return fmt.Errorf("code %d %q (try %d)", code, remark, try+1)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(try+1) * 50 * time.Millisecond): // back off
		}
	}
}

// runtimeInfo is GET_BROKER_RUNTIME_INFO of any broker address.
func runtimeInfo(ctx context.Context, addr string) (map[string]string, error) {
	return (&harness.Node{Addr: addr, Role: addr}).RuntimeInfo(ctx)
}

// maxPhy is commitLogMaxOffset of a broker address.
func maxPhy(ctx context.Context, addr string) (int64, error) {
	return (&harness.Node{Addr: addr, Role: addr}).MaxPhyOffset(ctx)
}

// pullOnce is one raw PULL_MESSAGE (subscription "*" in the request) and
// its response code, ext fields and records.
func pullOnce(ctx context.Context, addr, group, topic string, qid int, off int64, max int) (int32, map[string]string, [][]byte, error) {
	f, err := harness.Call(ctx, addr, codePullMessage, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(qid),
		"queueOffset": strconv.FormatInt(off, 10), "maxMsgNums": strconv.Itoa(max),
		"sysFlag": strconv.Itoa(pullFlagSubscription), "commitOffset": "0",
		"suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0", "expressionType": "TAG",
	}, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	var recs [][]byte
	if f.Code == 0 {
		if recs, err = storecompat.SplitRecords(f.Body); err != nil {
			return f.Code, f.Ext, nil, err
		}
	}
	return f.Code, f.Ext, recs, nil
}

// queueTotal sums GET_MAX_OFFSET over queues [0, queues) of topic.
func queueTotal(ctx context.Context, addr, topic string, queues int) (int64, error) {
	var n int64
	for q := range queues {
		v, err := storecompat.MaxOffset(ctx, addr, topic, q)
		if err != nil {
			return 0, err
		}
		n += v
	}
	return n, nil
}

// poll calls check every haPollEvery until it reports done, fails, or
// timeout passes; the error then names what check last said.
func poll(ctx context.Context, timeout time.Duration, what string, check func() (done bool, state string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(haPollEvery)
	defer t.Stop()
	var state string
	for {
		done, s, err := check()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if done {
			return nil
		}
		state = s
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not within %v (last: %s)", what, timeout, state)
		case <-t.C:
		}
	}
}

// callJSON sends a header-less request and returns a success body with
// fastjson's integer map keys quoted.
func callJSON(ctx context.Context, addr string, code int32) ([]byte, error) {
	f, err := harness.Call(ctx, addr, code, nil, nil)
	if err != nil {
		return nil, err
	}
	if f.Code != 0 {
		return nil, fmt.Errorf("request %d to %s: code %d %q", code, addr, f.Code, f.Remark)
	}
	return storecompat.LenientJSON(f.Body), nil
}

// consumerOffsets is GET_ALL_CONSUMER_OFFSET: "topic@group" → queue → offset.
func consumerOffsets(ctx context.Context, addr string) (map[string]map[string]int64, error) {
	b, err := callJSON(ctx, addr, codeGetAllConsumerOffset)
	if err != nil {
		return nil, err
	}
	var w struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("GET_ALL_CONSUMER_OFFSET body %.200q: %w", b, err)
	}
	return w.OffsetTable, nil
}

// delayOffsets is GET_ALL_DELAY_OFFSET: delay level → offset.
func delayOffsets(ctx context.Context, addr string) (map[string]int64, error) {
	b, err := callJSON(ctx, addr, codeGetAllDelayOffset)
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, nil
	}
	var w struct {
		OffsetTable map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("GET_ALL_DELAY_OFFSET body %.200q: %w", b, err)
	}
	return w.OffsetTable, nil
}

// bodyOf is the body of one stored record ("?" when it does not decode).
func bodyOf(rec []byte) string {
	ms := primitive.DecodeMessage(rec)
	if len(ms) != 1 {
		return "?"
	}
	return string(ms[0].Body)
}
