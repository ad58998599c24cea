package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// hostileConfig drives `mqbench hostile`: clients that misbehave on purpose
// against one broker, while a well-behaved probe measures send latency and
// the broker's anonymous memory is sampled from /proc.
type hostileConfig struct {
	Broker   string
	Topic    string
	PID      int           // the broker's process, for RSS sampling and the watchdog; 0 = none
	Baseline time.Duration // probe-only phase before the attack
	Duration time.Duration // attack phase
	Backlog  int           // messages stored first, so the non-reading puller gets full replies

	HalfFrames   int // connections that announce a big frame and send part of it
	HalfAnnounce int // announced frame length
	HalfSend     int // bytes of it actually sent
	Trickle      int // 1 byte/second senders

	ProbeEvery time.Duration
	MaxAnon    int64 // watchdog: SIGKILL PID past this anonymous RSS (bytes)
	Progress   io.Writer

	modeConfig // -mode and the single-attack modes' knobs (hostile_modes.go)
}

func hostileFlags(cfg *hostileConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Broker, "b", "127.0.0.1:10911", "broker ip:port")
	fs.StringVar(&cfg.Topic, "t", "HostileTopic", "topic (created with 1 queue)")
	fs.IntVar(&cfg.PID, "pid", 0, "broker process id: sample its anonymous RSS and kill it past -maxAnon")
	fs.DurationVar(&cfg.Baseline, "baseline", 5*time.Second, "probe-only phase before the attack")
	fs.DurationVar(&cfg.Duration, "duration", 20*time.Second, "attack phase")
	fs.IntVar(&cfg.Backlog, "backlog", 2000, "messages stored before the attack (pull backlog)")
	fs.IntVar(&cfg.HalfFrames, "halfFrames", 500, "connections holding an incomplete frame")
	fs.IntVar(&cfg.HalfAnnounce, "halfAnnounce", 16<<20-4, "frame length those connections announce")
	fs.IntVar(&cfg.HalfSend, "halfSend", 1<<20, "bytes of that frame they send")
	fs.IntVar(&cfg.Trickle, "trickle", 1, "connections sending one byte per second")
	fs.DurationVar(&cfg.ProbeEvery, "probeEvery", 5*time.Millisecond, "interval of the well-behaved probe's sync sends")
	fs.Int64Var(&cfg.MaxAnon, "maxAnon", 4<<30, "watchdog bound on the broker's anonymous RSS, bytes")
	modeFlags(fs, &cfg.modeConfig)
	return fs
}

// HostileSummary is the outcome of one hostile run.
type HostileSummary struct {
	IdleAnonMiB    float64 `json:"idleAnonMiB"`
	PeakAnonMiB    float64 `json:"peakAnonMiB"`
	AboveIdleMiB   float64 `json:"aboveIdleMiB"`
	EndAnonMiB     float64 `json:"endAnonMiB"`
	WatchdogKilled bool    `json:"watchdogKilled"`
	IdleProbe      Latency `json:"idleProbe"`
	AttackProbe    Latency `json:"attackProbe"`
	OnsetProbe     Latency `json:"onsetProbe"`  // the attack's first 2 s: 500 connections open and send 1 MiB each
	SteadyProbe    Latency `json:"steadyProbe"` // the rest of the attack
	SteadyP99Ratio float64 `json:"steadyP99Ratio"`
	ProbeErrors    uint64  `json:"probeErrors"`
	// ProbeBusy: probe sends answered SYSTEM_BUSY (not in ProbeErrors).
	ProbeBusy uint64 `json:"probeBusy"`
	// ProbeErrorSamples: what the first failed probe sends of each phase were.
	ProbeErrorSamples []string          `json:"probeErrorSamples,omitempty"`
	ProbeP99Ratio     float64           `json:"probeP99Ratio"`
	Attackers         []AttackerOutcome `json:"attackers"`
	HalfFramesClosed  int               `json:"halfFramesClosed"`
	HalfFramesOpen    int               `json:"halfFramesOpen"`

	Mode string `json:"mode"`
	// SettleAnonMiB: the broker's anonymous RSS -settle after the attack.
	SettleAnonMiB float64           `json:"settleAnonMiB,omitempty"`
	Storm         *StormOutcome     `json:"storm,omitempty"`
	BigHeader     *BigHeaderOutcome `json:"bigHeader,omitempty"`
	Stuck         []StuckOutcome    `json:"stuck,omitempty"`
}

// AttackerOutcome says what one misbehaving connection achieved.
type AttackerOutcome struct {
	Kind         string  `json:"kind"`
	BytesWritten int64   `json:"bytesWritten"`
	ClosedAfterS float64 `json:"closedAfterS"` // -1: still open at the end
}

func runHostile(cfg hostileConfig) (HostileSummary, error) {
	var sum HostileSummary
	logf := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	if err := createTopic(cfg.Broker, cfg.Topic, 1, 6); err != nil {
		return sum, err
	}
	if err := preload(cfg.Broker, cfg.Topic, cfg.Backlog); err != nil {
		return sum, err
	}

	mon := newRSSMonitor(cfg.PID, cfg.MaxAnon)
	mon.start()
	defer mon.stop()

	probe, err := dialRPC(cfg.Broker)
	if err != nil {
		return sum, err
	}
	defer probe.close()
	logf("hostile: baseline %v", cfg.Baseline)
	idle, idleErrs, why := runProbe(probe, cfg.Topic, cfg.Baseline, cfg.ProbeEvery, &sum.ProbeBusy)
	sum.ProbeErrorSamples = append(sum.ProbeErrorSamples, why...)
	sum.IdleProbe = latencyOf(idle)
	sum.IdleAnonMiB = mib(mon.current())
	mon.resetPeak()

	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var finish func(*HostileSummary)
	sum.Mode = cfg.Mode
	if cfg.Mode == "" || cfg.Mode == modeMix {
		sum.Mode = modeMix
		finish = startMix(cfg, start, deadline, logf)
	} else {
		logf("hostile: attack %v (%s)", cfg.Duration, cfg.Mode)
		if finish, err = startMode(cfg, start, deadline); err != nil {
			return sum, err
		}
	}
	onset, onsetErrs, why := runProbe(probe, cfg.Topic, min(onsetWindow, time.Until(deadline)), cfg.ProbeEvery, &sum.ProbeBusy)
	sum.ProbeErrorSamples = append(sum.ProbeErrorSamples, why...)
	steady, steadyErrs, why := runProbe(probe, cfg.Topic, time.Until(deadline), cfg.ProbeEvery, &sum.ProbeBusy)
	sum.ProbeErrorSamples = append(sum.ProbeErrorSamples, why...)
	attack := &Histogram{}
	attack.Merge(onset)
	attack.Merge(steady)
	attackErrs := onsetErrs + steadyErrs
	sum.OnsetProbe, sum.SteadyProbe = latencyOf(onset), latencyOf(steady)
	finish(&sum)

	sum.AttackProbe = latencyOf(attack)
	sum.ProbeErrors = idleErrs + attackErrs
	if sum.IdleProbe.P99 > 0 {
		sum.ProbeP99Ratio = sum.AttackProbe.P99 / sum.IdleProbe.P99
		sum.SteadyP99Ratio = sum.SteadyProbe.P99 / sum.IdleProbe.P99
	}
	sum.PeakAnonMiB = mib(mon.peakValue())
	sum.AboveIdleMiB = sum.PeakAnonMiB - sum.IdleAnonMiB
	sum.EndAnonMiB = mib(mon.current())
	if cfg.Settle > 0 && cfg.PID > 0 {
		logf("hostile: settle %v", cfg.Settle)
		time.Sleep(cfg.Settle) // the measurement: what the broker still holds after a quiet while
		if v, err := anonRSS(cfg.PID); err == nil {
			sum.SettleAnonMiB = mib(v)
		}
	}
	sum.WatchdogKilled = mon.killed.Load()
	if sum.WatchdogKilled {
		return sum, fmt.Errorf("hostile: the broker passed %d MiB of anonymous memory and was killed", cfg.MaxAnon>>20)
	}
	return sum, nil
}

// startMix starts the mixed attack: non-reading pull, send and heartbeat
// clients, half frames and tricklers. The returned function waits for
// them and records their outcome.
func startMix(cfg hostileConfig, start, deadline time.Time, logf func(string, ...any)) func(*HostileSummary) {
	logf("hostile: attack %v (non-reading pull, send, heartbeat; %d half frames; %d trickle)", cfg.Duration, cfg.HalfFrames, cfg.Trickle)
	var wg sync.WaitGroup
	outcomes := make([]AttackerOutcome, 0, 3+cfg.Trickle)
	var omu sync.Mutex
	record := func(o AttackerOutcome) {
		omu.Lock()
		outcomes = append(outcomes, o)
		omu.Unlock()
	}
	for _, a := range []struct {
		kind  string
		frame []byte
	}{
		{"pull-no-read", pullFrame(cfg.Topic)},
		{"send-no-read", sendFrameBytes(cfg.Topic, 1024)},
		{"heartbeat-no-read", heartbeatFrame()},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			record(nonReader(cfg.Broker, a.kind, a.frame, start, deadline))
		}()
	}
	for i := 0; i < cfg.Trickle; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			record(trickler(cfg.Broker, start, deadline))
		}()
	}
	halves := newHalfFrames(cfg.Broker, cfg.HalfFrames, cfg.HalfAnnounce, cfg.HalfSend, deadline)
	return func(sum *HostileSummary) {
		wg.Wait()
		sum.HalfFramesClosed, sum.HalfFramesOpen = halves.close()
		sum.Attackers = outcomes
	}
}

// onsetWindow is the start of the attack, reported apart: the attackers
// open their connections and push ~500 MiB through loopback then, on the
// same two cores as the broker.
const onsetWindow = 2 * time.Second

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// preload stores n 1 KiB messages in queue 0 so a puller always finds 32.
func preload(addr, topic string, n int) error {
	c, err := dialRPC(addr)
	if err != nil {
		return err
	}
	defer c.close()
	cl := newCall()
	req := sendFrame(topic, 1024)
	for i := 0; i < n; i++ {
		if err := c.invoke(req, cl, ctlTimeout); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
		if cl.resp.Code != 0 {
			return respError("preload", &cl.resp)
		}
	}
	return nil
}

// runProbe sends one sync message every `every` for d and returns the
// round-trip histogram (µs) and the failures.
// runProbe sends one message every every for d; it returns the latencies,
// the failed sends and what the first few of them were, and adds the
// SYSTEM_BUSY answers to busy.
func runProbe(c *rpcConn, topic string, d, every time.Duration, busy *uint64) (*Histogram, uint64, []string) {
	h := &Histogram{}
	var errs uint64
	var why []string
	cl := newCall()
	req := sendFrame(topic, 128)
	t := time.NewTicker(every)
	defer t.Stop()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		<-t.C
		t0 := time.Now()
		err := c.invoke(req, cl, 5*time.Second)
		if err == nil && cl.resp.Code == int32(codec.RespSystemBusy) {
			// Java's overload answer (a send that waited past
			// waitTimeMillsInSendQueue): clients retry it. Counted apart.
			*busy++
			continue
		}
		if err != nil || cl.resp.Code != 0 {
			errs++
			if len(why) < 5 {
				if err != nil {
					why = append(why, err.Error())
				} else {
					why = append(why, fmt.Sprintf("code %d %q after %v", cl.resp.Code, cl.resp.Remark, time.Since(t0).Round(time.Millisecond)))
				}
			}
			if c.broken() {
				return h, errs, why
			}
			continue
		}
		h.Record(uint64(time.Since(t0).Microseconds()))
	}
	return h, errs, why
}

func sendFrame(topic string, size int) *codec.Frame {
	f := newRequest(codec.ReqSendMessageV2,
		"a", "hostile_producer", "b", topic, "c", "TBW102", "d", "1", "e", "0", "f", "0",
		"g", strconv.FormatInt(time.Now().UnixMilli(), 10), "h", "0", "i", "WAIT\x01true\x02", "j", "0", "k", "false", "m", "false")
	f.Body = make([]byte, size)
	return f
}

func sendFrameBytes(topic string, size int) []byte { return sendFrame(topic, size).AppendTo(nil) }

func pullFrame(topic string) []byte {
	f := newRequest(codec.ReqPullMessage,
		"consumerGroup", "hostile_group", "topic", topic, "queueId", "0", "queueOffset", "0",
		"maxMsgNums", "32", "sysFlag", strconv.Itoa(pullFlagSubscription), "commitOffset", "0",
		"suspendTimeoutMillis", "0", "subscription", "*", "subVersion", "0", "expressionType", "TAG")
	return f.AppendTo(nil)
}

func heartbeatFrame() []byte {
	f := newRequest(codec.ReqHeartBeat)
	f.Body = []byte(`{"clientID":"127.0.0.1@hostile","consumerDataSet":[],"producerDataSet":[{"groupName":"hostile_producer"}]}`)
	return f.AppendTo(nil)
}

// nonReader writes frame over and over on one connection and never reads
// a reply, until the deadline or until the server closes the connection.
func nonReader(addr, kind string, frame []byte, start, deadline time.Time) AttackerOutcome {
	out := AttackerOutcome{Kind: kind, ClosedAfterS: -1}
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		out.ClosedAfterS = 0
		return out
	}
	defer nc.Close()
	// 64 frames per write: a burst of pipelined requests.
	burst := make([]byte, 0, 64*len(frame))
	for i := 0; i < 64; i++ {
		burst = append(burst, frame...)
	}
	for time.Now().Before(deadline) {
		_ = nc.SetWriteDeadline(deadline)
		n, err := nc.Write(burst)
		out.BytesWritten += int64(n)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				out.ClosedAfterS = time.Since(start).Seconds()
			}
			break
		}
	}
	return out
}

// trickler announces a small frame and sends it one byte per second.
func trickler(addr string, start, deadline time.Time) AttackerOutcome {
	out := AttackerOutcome{Kind: "trickle-1B/s", ClosedAfterS: -1}
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		out.ClosedAfterS = 0
		return out
	}
	defer nc.Close()
	closed := make(chan struct{})
	go func() { // the server closing shows up as EOF on read
		_, _ = io.Copy(io.Discard, nc)
		close(closed)
	}()
	frame := newRequest(codec.ReqGetBrokerConfig).AppendTo(nil)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 0; time.Now().Before(deadline); i++ {
		if _, err := nc.Write(frame[i%len(frame) : i%len(frame)+1]); err != nil {
			out.ClosedAfterS = time.Since(start).Seconds()
			return out
		}
		out.BytesWritten++
		select {
		case <-closed:
			out.ClosedAfterS = time.Since(start).Seconds()
			return out
		case <-t.C:
		}
	}
	return out
}

// halfFrames is a set of connections that each announce a big frame, send
// part of it and then wait.
type halfFrames struct {
	conns  []net.Conn
	closed atomic.Int32
	wg     sync.WaitGroup
}

func newHalfFrames(addr string, n, announce, send int, deadline time.Time) *halfFrames {
	h := &halfFrames{}
	chunk := make([]byte, 4+send)
	binary.BigEndian.PutUint32(chunk, uint32(announce))
	// A small JSON header and a big body: the frame is plausible until its
	// last byte, so only a bound on incomplete frames can refuse it.
	binary.BigEndian.PutUint32(chunk[4:], 256)
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			h.closed.Add(1)
			continue
		}
		h.conns = append(h.conns, nc)
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			_ = nc.SetWriteDeadline(deadline)
			if _, err := nc.Write(chunk); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				h.closed.Add(1)
				return
			}
			_ = nc.SetReadDeadline(deadline)
			if _, err := nc.Read(chunk[:1]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				h.closed.Add(1) // the server closed it
			}
		}()
	}
	return h
}

// close waits for the connections' goroutines (they end at the deadline),
// closes every connection and returns how many the server closed and how
// many were still open.
func (h *halfFrames) close() (closed, open int) {
	h.wg.Wait()
	for _, c := range h.conns {
		_ = c.Close()
	}
	closed = int(h.closed.Load())
	return closed, len(h.conns) - min(closed, len(h.conns))
}

// rssMonitor samples a process's anonymous RSS every 50 ms and kills it
// past a bound, so a memory bug cannot exhaust the machine.
type rssMonitor struct {
	pid    int
	max    int64
	cur    atomic.Int64
	peak   atomic.Int64
	killed atomic.Bool
	stopC  chan struct{}
	done   chan struct{}
}

func newRSSMonitor(pid int, max int64) *rssMonitor {
	return &rssMonitor{pid: pid, max: max, stopC: make(chan struct{}), done: make(chan struct{})}
}

func (m *rssMonitor) start() {
	if m.pid <= 0 {
		close(m.done)
		return
	}
	m.sample()
	go func() {
		defer close(m.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stopC:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
}

func (m *rssMonitor) sample() {
	v, err := anonRSS(m.pid)
	if err != nil {
		return
	}
	m.cur.Store(v)
	for {
		p := m.peak.Load()
		if v <= p || m.peak.CompareAndSwap(p, v) {
			break
		}
	}
	if m.max > 0 && v > m.max && !m.killed.Swap(true) {
		_ = syscall.Kill(m.pid, syscall.SIGKILL)
	}
}

func (m *rssMonitor) current() int64   { return m.cur.Load() }
func (m *rssMonitor) peakValue() int64 { return m.peak.Load() }
func (m *rssMonitor) resetPeak()       { m.peak.Store(m.cur.Load()) }

func (m *rssMonitor) stop() {
	select {
	case <-m.stopC:
	default:
		close(m.stopC)
	}
	<-m.done
}

// anonRSS reads RssAnon from /proc/<pid>/status, in bytes.
func anonRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("RssAnon of %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no RssAnon in /proc/%d/status", pid)
}

func (s *HostileSummary) writeText(w io.Writer) {
	fmt.Fprintf(w, "anonymous RSS: idle %.1f MiB, peak %.1f MiB (%.1f above idle), at end %.1f MiB\n",
		s.IdleAnonMiB, s.PeakAnonMiB, s.AboveIdleMiB, s.EndAnonMiB)
	fmt.Fprintf(w, "probe send latency: idle p50 %.2f ms p99 %.2f ms; under attack p50 %.2f ms p99 %.2f ms (p99 ratio %.2f); errors %d, SYSTEM_BUSY %d %q\n",
		s.IdleProbe.P50, s.IdleProbe.P99, s.AttackProbe.P50, s.AttackProbe.P99, s.ProbeP99Ratio, s.ProbeErrors, s.ProbeBusy, s.ProbeErrorSamples)
	fmt.Fprintf(w, "  attack onset (first %v) p50 %.2f ms p99 %.2f ms; steady p50 %.2f ms p99 %.2f ms (p99 ratio %.2f)\n",
		onsetWindow, s.OnsetProbe.P50, s.OnsetProbe.P99, s.SteadyProbe.P50, s.SteadyProbe.P99, s.SteadyP99Ratio)
	for _, a := range s.Attackers {
		state := "open at the end"
		if a.ClosedAfterS >= 0 {
			state = fmt.Sprintf("closed by the server after %.1f s", a.ClosedAfterS)
		}
		fmt.Fprintf(w, "  %-18s wrote %d bytes, %s\n", a.Kind, a.BytesWritten, state)
	}
	if s.Mode == modeMix {
		fmt.Fprintf(w, "  half frames: %d closed by the server, %d open\n", s.HalfFramesClosed, s.HalfFramesOpen)
	}
	if s.SettleAnonMiB > 0 {
		fmt.Fprintf(w, "  anonymous RSS after settling: %.1f MiB (%.1f above idle)\n", s.SettleAnonMiB, s.SettleAnonMiB-s.IdleAnonMiB)
	}
	if o := s.Storm; o != nil {
		fmt.Fprintf(w, "  storm %s: %d connections, %d frames (%d MiB) written; %d cut by the server, after %.0f ms on average (max %.0f ms)\n",
			o.Code, o.Conns, o.Frames, o.Bytes>>20, o.Cuts, o.MeanLifeMs, o.MaxLifeMs)
	}
	if o := s.BigHeader; o != nil {
		fmt.Fprintf(w, "  big headers: %d sent, %d answered, %d connections closed by the server, %.1f s\n", o.Sent, o.Answered, o.Closed, o.Seconds)
	}
	for _, o := range s.Stuck {
		state := "still open at the end"
		if o.CutAfterQuiet >= 0 {
			state = fmt.Sprintf("cut %.1f s after it went quiet", o.CutAfterQuiet)
		}
		fmt.Fprintf(w, "  stuck puller: %d pulls, quiet after %.1f s, %s\n", o.Pulls, o.QuietAfterS, state)
	}
	if s.WatchdogKilled {
		fmt.Fprintln(w, "WATCHDOG: the broker was killed for passing the memory bound")
	}
}
