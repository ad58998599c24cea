package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// IdleResult is what N idle clients cost the broker.
type IdleResult struct {
	Clients      int              `json:"clients"`
	Groups       int              `json:"groups"`
	RampMs       float64          `json:"rampMs"` // dial + first heartbeat of every client
	Heartbeats   int64            `json:"heartbeats"`
	Failed       int64            `json:"failed"`
	Codes        map[string]int64 `json:"codes,omitempty"`
	WindowS      float64          `json:"windowS"`
	CPUUsPerHB   float64          `json:"cpuUsPerHeartbeat"`    // broker CPU in the window / heartbeats
	IdleCPUPct   float64          `json:"idleCpuPct"`           // broker CPU before any client, % of a core
	NetUsPerHB   float64          `json:"netCpuUsPerHeartbeat"` // minus the idle rate
	RSSBeforeKB  int64            `json:"rssBeforeKB"`
	RSSAfterKB   int64            `json:"rssAfterKB"`
	RSSPerClient float64          `json:"rssPerClientKB"`
	Threads      int64            `json:"threads"`
	HBLatency    LatencySummary   `json:"heartbeatMs"`
}

func heartbeatBody(clientID, producer, consumer, topic string) []byte {
	b := []byte(`{"clientID":"` + clientID + `","producerDataSet":[{"groupName":"` + producer + `"}],"consumerDataSet":[`)
	if consumer != "" {
		b = append(b, `{"groupName":"`+consumer+`","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",`+
			`"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","unitMode":false,"subscriptionDataSet":[{"classFilterMode":false,`+
			`"topic":"`+topic+`","subString":"*","tagsSet":[],"codeSet":[],"subVersion":0,"expressionType":"TAG"}]}`...)
	}
	return append(b, "]}"...)
}

// scaleIdle connects -clients clients, one connection each (as a Java
// client instance keeps one per broker), each a producer and, with
// -groupSize > 0, a member of a consumer group of that size; every client
// heartbeats every -interval. After the ramp (all connected and answered
// once) it measures -window: the broker's CPU per heartbeat and RSS per
// client against the samples taken before the first connection.
func scaleIdle(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale idle", flag.ContinueOnError)
	fs.SetOutput(out)
	broker := fs.String("b", "", "broker ip:port")
	pid := fs.Int("pid", 0, "broker pid (CPU, RSS)")
	clients := fs.Int("clients", 1000, "clients")
	groupSize := fs.Int("groupSize", 10, "clients per consumer group (0: producers only)")
	topic := fs.String("t", "IdleTopic", "topic the consumers subscribe to")
	interval := fs.Duration("interval", 5*time.Second, "heartbeat interval of each client")
	window := fs.Duration("window", 20*time.Second, "measured window after the ramp")
	idle := fs.Duration("idle", 5*time.Second, "broker idle CPU sampled this long before connecting")
	rampMax := fs.Duration("ramp", 5*time.Minute, "give up when the ramp takes longer")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	res := IdleResult{Clients: *clients}
	s0, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	time.Sleep(*idle)
	s1, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	idleRate := float64((s1.CPU - s0.CPU).Microseconds()) / float64(idle.Microseconds()) // CPU µs per µs
	res.IdleCPUPct = idleRate * 100
	res.RSSBeforeKB = s1.RSSKB

	t0 := time.Now()
	conns, err := dialMany(*broker, *clients, 64)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	bodies := make([][]byte, *clients)
	for i := range bodies {
		cg := ""
		if *groupSize > 0 {
			cg = fmt.Sprintf("scale_idle_c%05d", i / *groupSize)
			res.Groups = i / *groupSize + 1
		}
		bodies[i] = heartbeatBody(fmt.Sprintf("127.0.0.1@scale-idle-%05d", i), "scale_idle_p", cg, *topic)
	}
	var codes codeCounts
	var lat latencies
	var ok, failed atomic.Int64
	var measuring atomic.Bool
	var inflight sync.WaitGroup
	beat := func(i int) {
		req := newRequest(codec.ReqHeartBeat)
		req.Body = bodies[i]
		t := time.Now()
		inflight.Add(1)
		err := conns[i].send(req, func(f *codec.Frame, at time.Time) {
			defer inflight.Done()
			if f == nil || f.Code != int32(codec.RespSuccess) {
				failed.Add(1)
				if f != nil {
					codes.add(f.Code)
				}
				return
			}
			if measuring.Load() {
				ok.Add(1)
				lat.add(at.Sub(t))
			}
		})
		if err != nil {
			failed.Add(1)
			inflight.Done()
		}
	}
	// Ramp: every client's first heartbeat, 256 outstanding at a time.
	sem := make(chan struct{}, 256)
	for i := range conns {
		sem <- struct{}{}
		req := newRequest(codec.ReqHeartBeat)
		req.Body = bodies[i]
		inflight.Add(1)
		err := conns[i].send(req, func(f *codec.Frame, _ time.Time) {
			defer inflight.Done()
			<-sem
			if f == nil || f.Code != int32(codec.RespSuccess) {
				failed.Add(1)
				if f != nil {
					codes.add(f.Code)
				}
			}
		})
		if err != nil {
			<-sem
			inflight.Done()
			failed.Add(1)
		}
		if time.Since(t0) > *rampMax {
			return nil, fmt.Errorf("ramp: more than %v for %d clients", *rampMax, i)
		}
	}
	inflight.Wait()
	res.RampMs = ms(time.Since(t0))

	// Window: heartbeats spread evenly over each interval.
	measuring.Store(true)
	a, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	wStart := time.Now()
	step := *interval / time.Duration(max(1, *clients))
	next := wStart
	for i := 0; time.Since(wStart) < *window; i = (i + 1) % len(conns) {
		next = next.Add(step)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		beat(i)
	}
	b, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	el := time.Since(wStart)
	measuring.Store(false)
	waitTimeout(&inflight, 10*time.Second)
	res.WindowS = el.Seconds()
	res.Heartbeats, res.Failed = ok.Load(), failed.Load()
	res.Codes = codes.snapshot()
	res.CPUUsPerHB = cpuPer(a, b, res.Heartbeats)
	if res.Heartbeats > 0 {
		res.NetUsPerHB = (float64((b.CPU - a.CPU).Microseconds()) - idleRate*float64(el.Microseconds())) / float64(res.Heartbeats)
	}
	res.RSSAfterKB, res.Threads = b.RSSKB, b.Threads
	if *clients > 0 {
		res.RSSPerClient = float64(b.RSSKB-res.RSSBeforeKB) / float64(*clients)
	}
	res.HBLatency = lat.summary()
	return res, nil
}

// waitTimeout waits for wg at most d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// sendRequest is a SEND_MESSAGE (code 10, the plain header names) of body
// to queue qid.
func sendRequest(topic string, qid int, body []byte) *codec.Frame {
	req := newRequest(codec.ReqSendMessage,
		"producerGroup", "scale_producer", "topic", topic, "defaultTopic", "TBW102", "defaultTopicQueueNums", "8",
		"queueId", strconv.Itoa(qid), "sysFlag", "0", "bornTimestamp", strconv.FormatInt(time.Now().UnixMilli(), 10),
		"flag", "0", "properties", "", "reconsumeTimes", "0", "unitMode", "false", "batch", "false")
	req.Body = body
	return req
}

// HoldResult is what N held pulls cost and how fast a message wakes them.
type HoldResult struct {
	Pulls        int              `json:"pulls"`
	Conns        int              `json:"conns"`
	Groups       int              `json:"groups"`
	Early        int64            `json:"early"` // answered before the wake (not held)
	EarlyCodes   map[string]int64 `json:"earlyCodes,omitempty"`
	Woken        int64            `json:"woken"`
	WakeCodes    map[string]int64 `json:"wakeCodes,omitempty"`
	NotWoken     int64            `json:"notWoken"` // no answer within -wakeWait of its queue's message
	RSSBeforeKB  int64            `json:"rssBeforeKB"`
	RSSHeldKB    int64            `json:"rssHeldKB"`
	RSSPerPullKB float64          `json:"rssPerPullKB"`
	SendMs       float64          `json:"sendMs"` // time to send every pull
	Wake         LatencySummary   `json:"wakeMs"` // the queue's send → the pull's reply
}

// scaleHold sends -pulls long-polling pulls (group i/queues, queue
// i%queues, from the queue's max offset, held -suspend), waits -settle,
// samples the broker's RSS, then sends one message to each queue in turn
// and measures, per held pull, the time from its queue's send to its reply.
func scaleHold(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale hold", flag.ContinueOnError)
	fs.SetOutput(out)
	broker := fs.String("b", "", "broker ip:port")
	pid := fs.Int("pid", 0, "broker pid (RSS)")
	topic := fs.String("t", "HoldTopic", "topic (must exist with -queues queues)")
	pulls := fs.Int("pulls", 1000, "held pulls")
	queues := fs.Int("queues", 8, "queues of the topic")
	nconns := fs.Int("conns", 16, "connections the pulls share")
	suspend := fs.Duration("suspend", 60*time.Second, "suspendTimeoutMillis")
	settle := fs.Duration("settle", 3*time.Second, "after the last pull is sent, wait this long before the RSS sample")
	wakeWait := fs.Duration("wakeWait", 10*time.Second, "wait for a queue's pulls after its message")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *suspend < *settle+time.Duration(*queues)*(*wakeWait) && *suspend < 5*time.Minute {
		*suspend = *settle + time.Duration(*queues)*(*wakeWait) + 10*time.Second
	}
	res := HoldResult{Pulls: *pulls, Conns: *nconns, Groups: (*pulls + *queues - 1) / *queues}
	s0, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	res.RSSBeforeKB = s0.RSSKB
	ctl, err := dialMux(*broker)
	if err != nil {
		return nil, err
	}
	defer ctl.close()
	maxOff := make([]string, *queues)
	for q := range maxOff {
		r, err := ctl.call(newRequest(codec.ReqGetMaxOffset, "topic", *topic, "queueId", strconv.Itoa(q)), ctlTimeout, false)
		if err != nil {
			return nil, err
		}
		if r.Code != int32(codec.RespSuccess) {
			return nil, fmt.Errorf("max offset of %s queue %d: code %d %s", *topic, q, r.Code, r.Remark)
		}
		maxOff[q] = r.Ext["offset"]
	}
	conns, err := dialMany(*broker, *nconns, 16)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)

	var phase atomic.Int32 // 0 holding, then queue+1 being woken
	sentAt := make([]atomic.Int64, *queues)
	var early, woken codeCounts
	var nEarly, nWoken atomic.Int64
	var lat latencies
	perQueue := make([]sync.WaitGroup, *queues)
	t0 := time.Now()
	for i := 0; i < *pulls; i++ {
		q := i % *queues
		req := newRequest(codec.ReqPullMessage,
			"consumerGroup", fmt.Sprintf("scale_hold_g%05d", i / *queues), "topic", *topic, "queueId", strconv.Itoa(q),
			"queueOffset", maxOff[q], "maxMsgNums", "32", "sysFlag", strconv.Itoa(pullFlagSuspend|pullFlagSubscription),
			"commitOffset", "0", "suspendTimeoutMillis", strconv.FormatInt(suspend.Milliseconds(), 10),
			"subscription", "*", "subVersion", "0", "expressionType", "TAG")
		perQueue[q].Add(1)
		err := conns[i%len(conns)].send(req, func(f *codec.Frame, at time.Time) {
			defer perQueue[q].Done()
			code := int32(-1)
			if f != nil {
				code = f.Code
			}
			if int(phase.Load()) != q+1 {
				nEarly.Add(1)
				early.add(code)
				return
			}
			nWoken.Add(1)
			woken.add(code)
			if code == int32(codec.RespSuccess) {
				lat.add(at.Sub(time.Unix(0, sentAt[q].Load())))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	res.SendMs = ms(time.Since(t0))
	time.Sleep(*settle)
	s1, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	res.RSSHeldKB = s1.RSSKB
	if *pulls > 0 {
		res.RSSPerPullKB = float64(s1.RSSKB-s0.RSSKB) / float64(*pulls)
	}
	body := appendBody(nil, 64)
	for q := 0; q < *queues; q++ {
		phase.Store(int32(q + 1))
		sentAt[q].Store(time.Now().UnixNano())
		r, err := ctl.call(sendRequest(*topic, q, body), ctlTimeout, false)
		if err != nil {
			return nil, err
		}
		if r.Code != int32(codec.RespSuccess) {
			return nil, fmt.Errorf("wake send to queue %d: code %d %s", q, r.Code, r.Remark)
		}
		if !waitTimeout(&perQueue[q], *wakeWait) {
			// counted below: pulls of this queue still unanswered
		}
	}
	phase.Store(-1)
	res.Early, res.EarlyCodes = nEarly.Load(), early.snapshot()
	res.Woken, res.WakeCodes = nWoken.Load(), woken.snapshot()
	res.NotWoken = int64(*pulls) - res.Early - res.Woken
	res.Wake = lat.summary()
	return res, nil
}

// OffsetsResult is what committing consumer offsets costs.
type OffsetsResult struct {
	Groups      int              `json:"groups"`
	Queues      int              `json:"queues"`
	CreateMs    float64          `json:"createGroupsMs"` // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP of every group
	Commits     int64            `json:"commits"`
	Failed      int64            `json:"failed"`
	Codes       map[string]int64 `json:"codes,omitempty"`
	WindowS     float64          `json:"windowS"`
	CPUUsPerOp  float64          `json:"cpuUsPerCommit"`
	IdleCPUPct  float64          `json:"idleCpuPct"`
	NetUsPerOp  float64          `json:"netCpuUsPerCommit"`
	RSSBeforeKB int64            `json:"rssBeforeKB"`
	RSSAfterKB  int64            `json:"rssAfterKB"`
	Latency     LatencySummary   `json:"commitMs"`
}

func subscriptionGroupBody(group string) []byte {
	return []byte(`{"groupName":"` + group + `","consumeEnable":true,"consumeFromMinEnable":true,"consumeBroadcastEnable":true,` +
		`"consumeMessageOrderly":false,"retryQueueNums":1,"retryMaxTimes":16,"brokerId":0,"whichBrokerWhenConsumeSlowly":1,` +
		`"notifyConsumerIdsChangedEnable":true,"groupSysFlag":0,"consumeTimeoutMinute":15,"attributes":{}}`)
}

// scaleOffsets creates -groups subscription groups, then for -window
// commits an advancing offset of each group on each of -queues queues
// every -interval (UPDATE_CONSUMER_OFFSET, as a Java consumer's
// persistConsumerOffset), and reports the broker's CPU per commit.
func scaleOffsets(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale offsets", flag.ContinueOnError)
	fs.SetOutput(out)
	broker := fs.String("b", "", "broker ip:port")
	pid := fs.Int("pid", 0, "broker pid (CPU, RSS)")
	topic := fs.String("t", "OffsetTopic", "topic (must exist with -queues queues)")
	groups := fs.Int("groups", 1000, "consumer groups")
	queues := fs.Int("queues", 8, "queues each group commits")
	nconns := fs.Int("conns", 8, "connections")
	interval := fs.Duration("interval", time.Second, "each group commits every queue this often")
	window := fs.Duration("window", 20*time.Second, "measured window")
	idle := fs.Duration("idle", 5*time.Second, "broker idle CPU sampled this long first")
	ready := fs.String("ready", "", "file created when the measured window starts")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	res := OffsetsResult{Groups: *groups, Queues: *queues}
	conns, err := dialMany(*broker, *nconns, 8)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	t0 := time.Now()
	for g := 0; g < *groups; g++ {
		req := newRequest(codec.ReqUpdateAndCreateSubscriptiongroup)
		req.Body = subscriptionGroupBody(fmt.Sprintf("scale_off_g%05d", g))
		r, err := conns[0].call(req, 30*time.Second, false)
		if err != nil {
			return nil, err
		}
		if r.Code != int32(codec.RespSuccess) {
			return nil, fmt.Errorf("create group %d: code %d %s", g, r.Code, r.Remark)
		}
	}
	res.CreateMs = ms(time.Since(t0))
	s0, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	time.Sleep(*idle)
	a, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	idleRate := float64((a.CPU - s0.CPU).Microseconds()) / float64(idle.Microseconds())
	res.IdleCPUPct = idleRate * 100
	res.RSSBeforeKB = a.RSSKB
	if *ready != "" {
		if err := os.WriteFile(*ready, nil, 0o644); err != nil {
			return nil, fmt.Errorf("ready file: %w", err)
		}
	}

	var ok, failed atomic.Int64
	var codes codeCounts
	var lat latencies
	var inflight sync.WaitGroup
	sem := make(chan struct{}, 64*len(conns))
	n := *groups * *queues
	step := *interval / time.Duration(max(1, n))
	wStart := time.Now()
	next := wStart
	var offset int64
	for i := 0; time.Since(wStart) < *window; i++ {
		if i%n == 0 {
			offset++
		}
		next = next.Add(step)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		g, q := (i%n) / *queues, i%*queues
		req := newRequest(codec.ReqUpdateConsumerOffset, "consumerGroup", fmt.Sprintf("scale_off_g%05d", g),
			"topic", *topic, "queueId", strconv.Itoa(q), "commitOffset", strconv.FormatInt(offset, 10))
		sem <- struct{}{}
		inflight.Add(1)
		t := time.Now()
		err := conns[i%len(conns)].send(req, func(f *codec.Frame, at time.Time) {
			defer inflight.Done()
			<-sem
			if f == nil || f.Code != int32(codec.RespSuccess) {
				failed.Add(1)
				if f != nil {
					codes.add(f.Code)
				}
				return
			}
			ok.Add(1)
			lat.add(at.Sub(t))
		})
		if err != nil {
			<-sem
			inflight.Done()
			return nil, err
		}
	}
	waitTimeout(&inflight, 10*time.Second)
	b, err := sampleProc(*pid)
	if err != nil {
		return nil, err
	}
	el := time.Since(wStart)
	res.WindowS = el.Seconds()
	res.Commits, res.Failed, res.Codes = ok.Load(), failed.Load(), codes.snapshot()
	res.CPUUsPerOp = cpuPer(a, b, res.Commits)
	if res.Commits > 0 {
		res.NetUsPerOp = (float64((b.CPU - a.CPU).Microseconds()) - idleRate*float64(el.Microseconds())) / float64(res.Commits)
	}
	res.RSSAfterKB = b.RSSKB
	res.Latency = lat.summary()
	return res, nil
}

// FillResult is what fill stored.
type FillResult struct {
	Messages int64            `json:"messages"`
	Bytes    int64            `json:"bytes"`
	Failed   int64            `json:"failed"`
	Codes    map[string]int64 `json:"codes,omitempty"`
	Seconds  float64          `json:"seconds"`
}

// scaleFill sends messages with all-zero bodies of -size bytes to the
// queues of -t, -inflight at a time, until -bytes of bodies are stored or
// -duration passes. Zero bodies let scripts/bench-scale.sh punch the
// finished commit-log segments into sparse files (fallocate --dig-holes)
// without changing a byte of their content.
func scaleFill(args []string, out io.Writer) (any, error) {
	fs := flag.NewFlagSet("scale fill", flag.ContinueOnError)
	fs.SetOutput(out)
	broker := fs.String("b", "", "broker ip:port")
	topic := fs.String("t", "FillTopic", "topic")
	queues := fs.Int("queues", 8, "queues to spread over")
	size := fs.Int("size", 3<<20, "body bytes")
	total := fs.Int64("bytes", 1<<30, "body bytes to store")
	inflight := fs.Int("inflight", 4, "sends in flight")
	duration := fs.Duration("duration", 30*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c, err := dialMux(*broker)
	if err != nil {
		return nil, err
	}
	defer c.close()
	body := make([]byte, *size)
	var res FillResult
	var ok, failed atomic.Int64
	var codes codeCounts
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, *inflight))
	t0 := time.Now()
	deadline := t0.Add(*duration)
	want := (*total + int64(*size) - 1) / int64(*size)
	var issued int64
	for ok.Load() < want && time.Now().Before(deadline) {
		if issued-failed.Load() >= want {
			wg.Wait() // every message is sent or in flight; resend what failed
			continue
		}
		if err := c.failure(); err != nil {
			return nil, err
		}
		sem <- struct{}{}
		wg.Add(1)
		err := c.send(sendRequest(*topic, int(issued%int64(*queues)), body), func(f *codec.Frame, _ time.Time) {
			defer wg.Done()
			defer func() { <-sem }()
			if f == nil || f.Code != int32(codec.RespSuccess) {
				failed.Add(1)
				if f != nil {
					codes.add(f.Code)
				}
				time.Sleep(50 * time.Millisecond) // SYSTEM_BUSY: slow down as a client would
				return
			}
			ok.Add(1)
		})
		if err != nil {
			wg.Done()
			<-sem
			return nil, err
		}
		issued++
	}
	waitTimeout(&wg, 30*time.Second)
	res.Messages, res.Failed, res.Codes = ok.Load(), failed.Load(), codes.snapshot()
	res.Bytes = res.Messages * int64(*size)
	res.Seconds = time.Since(t0).Seconds()
	return res, nil
}
