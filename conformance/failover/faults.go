package failover

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Fault injects one failure, calls mark the moment it is in effect, and
// undoes it (restart, SIGCONT, link up) before returning. Hold is how
// long a stop or a partition lasts.
type Fault struct {
	Name string
	// NewMaster: the master is expected to change.
	NewMaster bool
	Inject    func(ctx context.Context, s *Set, master *Node, hold time.Duration, logf func(string, ...any), mark func()) (time.Time, error)
}

// Faults are every fault the suite knows, in table order.
var Faults = []Fault{
	{Name: "kill9-master", NewMaster: true, Inject: func(ctx context.Context, s *Set, m *Node, _ time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
		t0 := time.Now()
		m.Kill9()
		mark()
		// The killed master comes back once a new one is elected and
		// rejoins as a slave (truncating what it had beyond the new epoch).
		if _, _, err := s.WaitMaster(ctx, m.Addr, 60*time.Second); err != nil {
			return t0, err
		}
		return t0, m.Start()
	}},
	{Name: "sigstop-master", NewMaster: true, Inject: func(ctx context.Context, s *Set, m *Node, hold time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
		t0 := time.Now()
		m.Stop()
		mark()
		waitFor(ctx, hold) // the fault's duration
		m.Cont()
		return t0, nil
	}},
	{Name: "partition-master-controllers", NewMaster: true, Inject: func(ctx context.Context, s *Set, m *Node, hold time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
		t0 := time.Now()
		if err := s.Topo.SetLink(m.Name, NetCtl, false); err != nil {
			return t0, err
		}
		mark()
		waitFor(ctx, hold)
		return t0, s.Topo.SetLink(m.Name, NetCtl, true)
	}},
	{Name: "partition-master-slaves", NewMaster: false, Inject: func(ctx context.Context, s *Set, m *Node, hold time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
		t0 := time.Now()
		if err := s.Topo.SetLink(m.Name, NetHA, false); err != nil {
			return t0, err
		}
		mark()
		waitFor(ctx, hold)
		return t0, s.Topo.SetLink(m.Name, NetHA, true)
	}},
	{Name: "kill9-controller-leader", NewMaster: false, Inject: func(ctx context.Context, s *Set, m *Node, hold time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
		l := s.LeaderController(ctx)
		if l == nil {
			return time.Now(), fmt.Errorf("no controller leader")
		}
		logf("killing controller leader %s", l.Name)
		t0 := time.Now()
		l.Kill9()
		mark()
		waitFor(ctx, hold)
		return t0, l.Start()
	}},
	{Name: "restart-random-node", NewMaster: false, Inject: func(ctx context.Context, s *Set, m *Node, hold time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
		all := s.All()
		n := all[rand.IntN(len(all))]
		logf("restarting %s (master %s)", n.Name, m.Name)
		t0 := time.Now()
		n.Kill9()
		mark()
		waitFor(ctx, 2*time.Second) // down time
		return t0, n.Start()
	}},
	// Five kill -9 + restart rounds of random nodes (faults_restartloop.go).
	{Name: "restart-loop", NewMaster: false, Inject: restartLoop},
	// The old master killed again while it truncates on rejoin
	// (faults_truncation.go). Each round kills the master of the moment,
	// so the first master may be master again at the end: NewMaster
	// false (no old-master window check; epochs and offsets still are).
	{Name: "kill-during-truncation", NewMaster: false, Inject: killDuringTruncation},
}

// FaultByName finds a fault.
func FaultByName(name string) (Fault, bool) {
	for _, f := range Faults {
		if f.Name == name {
			return f, true
		}
	}
	return Fault{}, false
}

// waitFor lasts d unless ctx ends: the length of a fault, not a wait for
// a condition.
func waitFor(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Options of one run.
type Options struct {
	Hold     time.Duration // stop / partition length
	Before   int           // acks before the fault
	After    int           // acks on the (new) master after the fault
	Count    int           // send bound
	Threads  int
	Pace     time.Duration
	Queues   int
	MaxPhase time.Duration // bound of each waiting phase
	// Ready bounds the wait for a master every broker follows, before the
	// fault and after it (FAILOVER_READY_TIMEOUT: a set's first start on
	// a loaded machine takes longer).
	Ready time.Duration
}

// DefaultOptions fit the short version.
func DefaultOptions() Options {
	return Options{Hold: 10 * time.Second, Before: 150, After: 150, Count: 20000, Threads: 4,
		Pace: 20 * time.Millisecond, Queues: 4, MaxPhase: 45 * time.Second, Ready: 90 * time.Second}
}

// poll calls cond every 100 ms until it holds or d passes.
func poll(ctx context.Context, d time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Ready restarts dead nodes and waits for a master that every broker
// has caught up with.
func (s *Set) Ready(ctx context.Context, d time.Duration) (*Node, error) {
	for _, n := range s.All() {
		if !n.Running() {
			if err := n.Start(); err != nil {
				return nil, err
			}
		}
	}
	m, _, err := s.WaitMaster(ctx, "", d)
	if err != nil {
		return nil, err
	}
	mc, err := GetEpochCache(ctx, m.Addr)
	if err != nil {
		return nil, err
	}
	ok := poll(ctx, d, func() bool {
		for _, b := range s.Brokers {
			c, err := GetEpochCache(ctx, b.Addr)
			if err != nil || c.MaxOffset < mc.MaxOffset {
				return false
			}
		}
		return true
	})
	if !ok {
		return m, fmt.Errorf("brokers did not catch up with master %s at %d", m.Name, mc.MaxOffset)
	}
	return m, nil
}

// RunFault runs one fault under load and checks the outcome.
func RunFault(ctx context.Context, s *Set, f Fault, run int, o Options, logf func(string, ...any)) Result {
	r := Result{Set: s.Kind, Fault: f.Name, Run: run}
	m, err := s.Ready(ctx, o.Ready)
	if err != nil {
		r.Err = "not ready: " + err.Error()
		return r
	}
	r.OldMaster = m.Name
	id := fmt.Sprintf("fo%d_%s_%s_%d", time.Now().UnixMilli()%1000000, s.Kind, shortName(f.Name), run)
	topic := id + "_t"
	if err := s.CreateTopic(ctx, m, topic, o.Queues); err != nil {
		r.Err = err.Error()
		return r
	}
	l, err := StartLoad(s.NamesrvAddr(), topic, id, o.Count, o.Threads, o.Pace, s.GRPCEndpoint())
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer l.Close()
	if !poll(ctx, o.MaxPhase, func() bool { return l.AckedSince(time.Time{}) >= o.Before }) {
		r.Err = fmt.Sprintf("only %d acks before the fault", l.AckedSince(time.Time{}))
	}
	// Raw probes beside the client: one to whichever broker the
	// controller names master (the server-side failover time, without the
	// Go client's 30 s route refresh) and one to the old master while the
	// fault lasts (a stale master must refuse them).
	pre := time.Now()
	probeCtx, stopProbes := context.WithCancel(ctx)
	var probes sync.WaitGroup
	var serverFirst, faultAt atomic.Int64
	probes.Add(2)
	go func() {
		defer probes.Done()
		for i := 0; probeCtx.Err() == nil && time.Since(pre) < o.MaxPhase; i++ {
			if ri, ok := s.Replica(probeCtx); ok && (!f.NewMaster || ri.MasterAddr != m.Addr) {
				a := ProbeSend(probeCtx, ri.MasterAddr, topic, fmt.Sprintf("%s-probe-%d", id, i), i%o.Queues)
				l.Add(a)
				if at := faultAt.Load(); at > 0 && a.OK && a.Start.UnixNano() > at && (!f.NewMaster || a.Host == ri.MasterAddr) {
					serverFirst.Store(int64(a.End.Sub(time.Unix(0, at))))
					return
				}
			}
			waitFor(probeCtx, 50*time.Millisecond) // probe rate
		}
	}()
	staleUntil := make(chan struct{})
	go func() {
		defer probes.Done()
		for i := 0; probeCtx.Err() == nil; i++ {
			select {
			case <-staleUntil:
				return
			default:
			}
			l.Add(ProbeSend(probeCtx, m.Addr, topic, fmt.Sprintf("%s-old-%d", id, i), i%o.Queues))
			waitFor(probeCtx, 200*time.Millisecond) // probe rate
		}
	}()
	_, ferr := f.Inject(ctx, s, m, o.Hold, logf, func() { faultAt.Store(time.Now().UnixNano()) })
	t0 := pre
	if at := faultAt.Load(); at > 0 {
		t0 = time.Unix(0, at)
	}
	go func() { waitFor(ctx, 2*time.Second); close(staleUntil) }()
	if ferr != nil {
		r.Err += " inject: " + ferr.Error()
	}
	not := ""
	if f.NewMaster {
		not = m.Addr
	}
	nm, _, err := s.WaitMaster(ctx, not, o.MaxPhase)
	if err != nil && f.NewMaster {
		// The fault did not move the master (e.g. a short stop): take the one there is.
		nm, _, err = s.WaitMaster(ctx, "", o.MaxPhase)
	}
	if err != nil {
		r.Err += " after fault: " + err.Error()
		stopProbes()
		probes.Wait()
		l.StopSending()
		return r
	}
	r.NewMaster = nm.Name
	newHost := nm.Addr
	// Every client (Go, and Java when it runs) must have recovered.
	if !poll(ctx, o.MaxPhase, func() bool { return l.AckedOnEach(newHost, t0) >= o.After }) {
		r.Err += fmt.Sprintf(" fewer than %d acks on %s after the fault", o.After, nm.Name)
	}
	probes.Wait()
	stopProbes()
	if v := serverFirst.Load(); v > 0 {
		r.ServerRecovery = time.Duration(v)
	}
	l.StopSending()
	// The final master: every broker back and caught up.
	fm, err := s.Ready(ctx, o.Ready)
	if err != nil {
		r.Err += " final: " + err.Error()
		if fm == nil {
			return r
		}
	}
	if fm != nm {
		r.NewMaster += "→" + fm.Name
	}
	acks := l.Acks()
	// Give the consumer time to get everything stored (bounded).
	okKeys := map[string]bool{}
	for _, a := range acks {
		if a.OK {
			okKeys[a.Key] = true
		}
	}
	poll(ctx, 30*time.Second, func() bool { return l.DeliveredEach(okKeys) })
	stored, err := ReadAll(ctx, fm.Addr, topic, id+"_check", o.Queues)
	if err != nil {
		r.Err += " read: " + err.Error()
	}
	cache, err := GetEpochCache(ctx, fm.Addr)
	if err != nil {
		r.Err += " epochs: " + err.Error()
	}
	host := ""
	if f.NewMaster {
		host = newHost
	}
	Check(&r, acks, l.Deliveries(), stored, cache, t0, m.Addr, host)
	if e := l.Err(); e != "" {
		r.Err += " " + e
	}
	return r
}

func shortName(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i])
		}
	}
	if len(out) > 12 {
		out = out[:12]
	}
	return string(out)
}
