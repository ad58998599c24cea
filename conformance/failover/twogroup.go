package failover

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The two-group scenario (issue #23 item 4, the cost curves' last row):
// two broker sets of GroupSize replicas (broker-a b0..b2, broker-b
// b3..b5) under the three controllers and the name server of one
// topology, a Go client load sending to a topic on each set, and a kill -9
// of set A's master while set B serves. Each set's send TPS, latency and
// errors are taken in three windows: before the kill, during A's failover
// (the kill to the first acknowledged send of A's load started after it),
// and after. B's figures during A's failover are the point. TestTwoGroup
// runs it (CONFORMANCE_TWOGROUP=1), scripts/bench-scale.sh's twogroup
// curve writes the table.

// TwoGroupOptions shapes the load and the windows.
type TwoGroupOptions struct {
	Threads   int           // sender goroutines per set
	Count     int           // bound of the sends per set
	Pace      time.Duration // pause after each send of a goroutine
	Queues    int           // queues of each set's topic
	Warm      time.Duration // load before the first window (JIT, consumers caught up)
	Before    time.Duration // window before the kill
	After     time.Duration // window after A's load is acknowledged again
	MaxDuring time.Duration // bound of the during window
}

// DefaultTwoGroupOptions: 4 senders per set, unpaced, 60 s of warm-up
// (Java's JIT on a loaded machine), 20 s windows; the Go client finds A's
// new master on its 30 s route refresh, so the during window lasts up to
// ~30 s.
func DefaultTwoGroupOptions() TwoGroupOptions {
	return TwoGroupOptions{Threads: 4, Count: 2_000_000, Queues: 4, Warm: 60 * time.Second,
		Before: 20 * time.Second, After: 20 * time.Second, MaxDuring: 60 * time.Second}
}

// Window names.
var windowNames = [3]string{"before", "during", "after"}

// Window is one set's figures in one window; sends count by the time
// their answer came.
type Window struct {
	Name     string
	From, To time.Time
	OK       int
	Failed   int
	TPS      float64       // SEND_OK per second
	P50, P99 time.Duration // send latency of the SEND_OK sends
	Max      time.Duration
	// CPU of the set's broker processes, of the controllers and of this
	// test process (the clients), in % of one core over the window.
	BrokerCPU, CtlCPU, ClientCPU float64
}

// TwoGroupResult is one run of the scenario on one kind of topology.
type TwoGroupResult struct {
	Kind    string
	Windows [2][3]Window // set A, set B × before, during, after
	// ServerFailover is the kill to a new master of A named by the
	// controller and answering as master; ClientRecovery the kill to the
	// first SEND_OK of A's load started after it (the end of during).
	ServerFailover, ClientRecovery time.Duration
	OldMaster, NewMaster           string
	Err                            string
	// Timeline is one line per second from the load's start: second
	// (from the kill), set, SEND_OK, failed, p99 ms.
	Timeline []string
}

// RunTwoGroup starts the two-set topology of kind under dir, runs the
// load and the kill, and stops everything before it returns.
func RunTwoGroup(ctx context.Context, dir string, bins Bins, kind string, o TwoGroupOptions, logf func(string, ...any)) (TwoGroupResult, error) {
	r := TwoGroupResult{Kind: kind}
	s, err := StartGroups(ctx, dir, bins, kind, 2)
	if err != nil {
		return r, err
	}
	defer s.Close()
	var masters [2]*Node
	topics := [2]string{"TwoGroupA", "TwoGroupB"}
	for g := range 2 {
		m, _, err := s.WaitMasterOf(ctx, GroupName(g), "", 12*time.Minute)
		if err != nil {
			return r, fmt.Errorf("%s %s: %w", kind, GroupName(g), err)
		}
		masters[g] = m
		// Retried (the create is idempotent): a Java broker at load 60+
		// can miss the call's read deadline.
		var cerr error
		if !poll(ctx, 3*time.Minute, func() bool { cerr = s.CreateTopic(ctx, m, topics[g], o.Queues); return cerr == nil }) {
			return r, fmt.Errorf("%s %s: %w", kind, topics[g], cerr)
		}
	}
	logf("%s: masters %s %s, topics created", kind, masters[0].Name, masters[1].Name)
	run := fmt.Sprintf("tg%d", time.Now().UnixNano()%1_000_000)
	var loads [2]*Load
	for g := range 2 {
		loads[g], err = StartGoLoad(s.NamesrvAddr(), topics[g], run+string(rune('a'+g)), o.Count, o.Threads, o.Pace)
		if err != nil {
			for _, l := range loads[:g] {
				l.Close()
			}
			return r, fmt.Errorf("%s load %s: %w", kind, topics[g], err)
		}
	}
	defer func() {
		for _, l := range loads {
			l.Close()
		}
	}()
	// Warm: both loads acknowledged (slaves caught up, routes loaded).
	loadStart := time.Now()
	if !poll(ctx, 2*time.Minute, func() bool {
		return loads[0].AckedOnEach("", loadStart) >= 200 && loads[1].AckedOnEach("", loadStart) >= 200
	}) {
		return r, fmt.Errorf("%s: loads not acknowledged 200 times each within 2m", kind)
	}
	if waitFor(ctx, o.Warm); ctx.Err() != nil {
		return r, ctx.Err()
	}
	cpu := newCPUMeter(s)
	t0 := time.Now()
	cpu.mark()
	if waitFor(ctx, o.Before); ctx.Err() != nil {
		return r, ctx.Err()
	}
	old := masters[0]
	r.OldMaster = old.Name
	cpu.mark() // while the old master still runs: its CPU of the before window
	old.Kill9()
	// After the process is gone: a send started between the signal and the
	// exit could still be acknowledged by the old master.
	tKill := time.Now()
	logf("%s: killed %s (master of %s)", kind, old.Name, GroupName(0))
	nm, _, err := s.WaitMasterOf(ctx, GroupName(0), old.Addr, o.MaxDuring)
	if err != nil {
		r.Err = "no new master: " + err.Error()
	} else {
		r.ServerFailover, r.NewMaster = time.Since(tKill), nm.Name
	}
	// During ends at the first SEND_OK of A's load started after the kill.
	poll(ctx, max(o.MaxDuring-time.Since(tKill), 0), func() bool { return loads[0].AckedOnEach("", tKill) > 0 })
	tRec := tKill.Add(o.MaxDuring)
	for _, a := range loads[0].Acks() {
		if a.OK && a.Start.After(tKill) && a.End.Before(tRec) && a.Host != old.Addr {
			tRec = a.End
		}
	}
	if tRec.Equal(tKill.Add(o.MaxDuring)) {
		r.Err = strings.TrimPrefix(r.Err+"; ", "; ") + fmt.Sprintf("A's load not acknowledged within %v of the kill", o.MaxDuring)
	} else {
		r.ClientRecovery = tRec.Sub(tKill)
	}
	cpu.mark()
	if waitFor(ctx, time.Until(tRec.Add(o.After))); ctx.Err() != nil {
		return r, ctx.Err()
	}
	tEnd := tRec.Add(o.After)
	cpu.mark()
	for _, l := range loads {
		l.StopSending()
	}
	bounds := [4]time.Time{t0, tKill, tRec, tEnd}
	for g := range 2 {
		acks := loads[g].Acks()
		for w := range 3 {
			win := windowOf(acks, windowNames[w], bounds[w], bounds[w+1])
			win.BrokerCPU = cpu.pct(w, s.Group(g))
			win.CtlCPU = cpu.pct(w, s.Controllers)
			win.ClientCPU = cpu.selfPct(w)
			r.Windows[g][w] = win
		}
		r.Timeline = append(r.Timeline, timeline(acks, GroupName(g), loadStart, tKill, tEnd)...)
	}
	return r, nil
}

// windowOf sums the acks answered in [from, to).
func windowOf(acks []Ack, name string, from, to time.Time) Window {
	w := Window{Name: name, From: from, To: to}
	var lat []time.Duration
	for _, a := range acks {
		if a.End.Before(from) || !a.End.Before(to) {
			continue
		}
		if a.OK {
			w.OK++
			lat = append(lat, a.End.Sub(a.Start))
		} else {
			w.Failed++
		}
	}
	if d := to.Sub(from).Seconds(); d > 0 {
		w.TPS = float64(w.OK) / d
	}
	w.P50, w.P99, w.Max = quantile(lat, 0.50), quantile(lat, 0.99), quantile(lat, 1)
	return w
}

// quantile of d (sorted in place); 0 when empty.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	i := int(q*float64(len(d))+0.5) - 1
	return d[max(0, min(i, len(d)-1))]
}

// timeline: one line per second from start to end, seconds counted from
// kill: "sec\tset\tok\tfailed\tp99ms".
func timeline(acks []Ack, set string, start, kill, end time.Time) []string {
	var out []string
	for t := start.Truncate(time.Second); t.Before(end); t = t.Add(time.Second) {
		w := windowOf(acks, "", t, t.Add(time.Second))
		out = append(out, fmt.Sprintf("%.0f\t%s\t%d\t%d\t%.1f", t.Sub(kill).Seconds(), set, w.OK, w.Failed, ms(w.P99)))
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuMeter samples the CPU time of every node and of this process at
// window bounds.
type cpuMeter struct {
	s     *Set
	at    []time.Time
	nodes []map[*Node]time.Duration
	self  []time.Duration
}

func newCPUMeter(s *Set) *cpuMeter { return &cpuMeter{s: s} }

// mark samples now.
func (c *cpuMeter) mark() {
	t := time.Now()
	m := map[*Node]time.Duration{}
	for _, n := range c.s.All() {
		m[n] = n.cpuTime()
	}
	c.at, c.nodes, c.self = append(c.at, t), append(c.nodes, m), append(c.self, procCPU(os.Getpid()))
}

// pct is the CPU of nodes over window w in % of one core (a node killed
// in the window counts up to its last sample).
func (c *cpuMeter) pct(w int, nodes []*Node) float64 {
	if w+1 >= len(c.at) {
		return 0
	}
	var used time.Duration
	for _, n := range nodes {
		if d := c.nodes[w+1][n] - c.nodes[w][n]; d > 0 {
			used += d
		}
	}
	return 100 * used.Seconds() / c.at[w+1].Sub(c.at[w]).Seconds()
}

func (c *cpuMeter) selfPct(w int) float64 {
	if w+1 >= len(c.at) {
		return 0
	}
	return 100 * (c.self[w+1] - c.self[w]).Seconds() / c.at[w+1].Sub(c.at[w]).Seconds()
}

// cpuTime is the node's process user+system time (0 when not running).
// `ip netns exec` execs the binary, so the started pid is the server's.
func (n *Node) cpuTime() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return procCPU(n.cmd.Process.Pid)
}

// procCPU reads utime+stime of pid from /proc (clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// Fields after the command name, which ends at the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// Metrics are the result as bench-scale.sh's metrics.tsv lines: curve
// twogroup, x the window (1 before, 2 during, 3 after), side the kind
// (ours, java), key, value.
func (r TwoGroupResult) Metrics() []string {
	var out []string
	add := func(w int, key string, v float64) {
		out = append(out, fmt.Sprintf("twogroup\t%d\t%s\t%s\t%s", w+1, r.Kind, key, strconv.FormatFloat(v, 'f', -1, 64)))
	}
	round := func(v float64, p int) float64 {
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', p, 64), 64)
		return f
	}
	for g, set := range []string{"a", "b"} {
		for w, win := range r.Windows[g] {
			add(w, set+"_tps", round(win.TPS, 0))
			add(w, set+"_p50_ms", round(ms(win.P50), 2))
			add(w, set+"_p99_ms", round(ms(win.P99), 2))
			add(w, set+"_max_ms", round(ms(win.Max), 1))
			add(w, set+"_failed", float64(win.Failed))
			add(w, set+"_cpu_pct", round(win.BrokerCPU, 1))
			if before := r.Windows[g][0]; g == 1 && w > 0 && before.TPS > 0 && before.P99 > 0 {
				add(w, set+"_tps_vs_before", round(win.TPS/before.TPS, 2))
				add(w, set+"_p99_vs_before", round(float64(win.P99)/float64(before.P99), 2))
			}
			if g == 0 {
				add(w, "ctl_cpu_pct", round(win.CtlCPU, 1))
				add(w, "client_cpu_pct", round(win.ClientCPU, 1))
				add(w, "window_s", round(win.To.Sub(win.From).Seconds(), 1))
			}
		}
	}
	if r.ServerFailover > 0 {
		add(1, "a_server_failover_ms", float64(r.ServerFailover.Milliseconds()))
	}
	if r.ClientRecovery > 0 {
		add(1, "a_client_recovery_ms", float64(r.ClientRecovery.Milliseconds()))
	}
	return out
}

// Summary is one line per set and window for the test log.
func (r TwoGroupResult) Summary() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s killed, new master %s, server failover %v, A's client back after %v %s\n", r.Kind, r.OldMaster,
		r.NewMaster, r.ServerFailover.Round(time.Millisecond), r.ClientRecovery.Round(time.Millisecond), r.Err)
	for g := range 2 {
		for _, w := range r.Windows[g] {
			fmt.Fprintf(&sb, "  %s %-6s %5.1fs ok %7d failed %6d  %7.0f/s  p50 %6.2f p99 %7.2f max %8.1f ms  cpu brokers %5.1f%% ctl %5.1f%% client %5.1f%%\n",
				GroupName(g), w.Name, w.To.Sub(w.From).Seconds(), w.OK, w.Failed, w.TPS, ms(w.P50), ms(w.P99), ms(w.Max), w.BrokerCPU, w.CtlCPU, w.ClientCPU)
		}
	}
	return sb.String()
}
