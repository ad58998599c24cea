package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/restart"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// Runner runs scenarios against server kinds.
type Runner struct {
	Env       harness.Env
	Java      *javadriver.Driver
	Dir       string // scratch root
	Clients   []scenario.Client
	Only      map[string]bool // scenario filter; empty = all
	RunNotYet bool            // run NotYetTable scenarios against ours too
	Logf      func(format string, args ...any)
}

// NewRunner finds the repository and prepares a runner writing under dir.
func NewRunner(dir string, logf func(string, ...any)) (*Runner, error) {
	env, err := harness.FindEnv()
	if err != nil {
		return nil, err
	}
	// CONFORMANCE_JAVA_DIR points at another copy of the Maven project (to
	// iterate on the driver while a matrix run uses the tree's target/).
	javaDir := filepath.Join(env.Root, "conformance", "java")
	if d := os.Getenv("CONFORMANCE_JAVA_DIR"); d != "" {
		javaDir = d
	}
	r := &Runner{Env: env, Dir: dir, Clients: scenario.Clients, Logf: logf,
		Java:      javadriver.New(javaDir),
		RunNotYet: os.Getenv("CONFORMANCE_RUN_NOTYET") == "1"}
	if only := os.Getenv("CONFORMANCE_SCENARIOS"); only != "" {
		r.Only = map[string]bool{}
		for _, s := range strings.Split(only, ",") {
			r.Only[strings.TrimSpace(s)] = true
		}
	}
	if cl := os.Getenv("CONFORMANCE_CLIENTS"); cl != "" {
		r.Clients = nil
		for _, c := range strings.Split(cl, ",") {
			r.Clients = append(r.Clients, scenario.Client(strings.TrimSpace(c)))
		}
	}
	return r, nil
}

// Server starts one server kind, runs every selected scenario with every
// selected client against it, stops it and returns the cells.
func (r *Runner) Server(ctx context.Context, kind harness.Kind) []scenario.Result {
	var results []scenario.Result
	add := func(res scenario.Result) {
		r.Logf("%s", res.Line())
		results = append(results, res)
	}
	// Decide every cell that needs no server first.
	var todo []cell
	for _, s := range scenario.Table {
		if len(r.Only) > 0 && !r.Only[s.Name] {
			continue
		}
		for _, c := range r.Clients {
			base := scenario.Result{Scenario: s.Name, Client: c, Server: string(kind)}
			switch reason, notYet := scenario.NotYetFor(s.Name, c, kind.OurBroker(), kind.OurNamesrv()); {
			case !s.Supports(c):
				base.Status = scenario.NA
				results = append(results, base)
			case notYet && !r.RunNotYet:
				base.Status, base.Detail = scenario.NotYet, reason
				add(base)
			default:
				todo = append(todo, cell{s, c})
			}
		}
	}
	if len(todo) == 0 {
		return results
	}
	dir := filepath.Join(r.Dir, string(kind))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		for _, x := range todo {
			add(scenario.Result{Scenario: x.s.Name, Client: x.c, Server: string(kind), Status: scenario.Fail, Detail: err.Error()})
		}
		return results
	}
	start := time.Now()
	var cl *harness.Cluster
	var err error
	if kind == harness.External {
		cl = harness.Attach(kind, os.Getenv("CONFORMANCE_NAMESRV"), os.Getenv("CONFORMANCE_BROKER"))
	} else {
		cl, err = harness.Start(ctx, r.Env, kind, harness.Options{Dir: dir})
	}
	if err != nil {
		st := scenario.Fail
		switch {
		case errors.Is(err, harness.ErrNotBuilt):
			st = scenario.NotYet
		case errors.Is(err, harness.ErrNoJava):
			st = scenario.Skip
		}
		for _, x := range todo {
			add(scenario.Result{Scenario: x.s.Name, Client: x.c, Server: string(kind), Status: st, Detail: err.Error()})
		}
		return results
	}
	defer cl.Close()
	r.Logf("server %s up in %.1fs: namesrv %s broker %s", kind, time.Since(start).Seconds(), cl.NamesrvAddr, cl.BrokerAddr)

	var plain, restarting []cell
	for _, x := range todo {
		if x.s.Restart {
			restarting = append(restarting, x)
		} else {
			plain = append(plain, x)
		}
	}
	stamp := time.Now().Format("150405")
	results = append(results, r.runCells(ctx, cl, kind, dir, stamp, plain, nil)...)
	if len(restarting) > 0 {
		// Every restart scenario of every client runs side by side and they
		// share one broker restart, after everything else has finished.
		var who []string
		for _, x := range restarting {
			who = append(who, participant(x.s, x.c))
		}
		mode := RestartMode(kind)
		gate := restart.NewGate(ctx, who, RestartLead, RestartMaxWait,
			func(ctx context.Context, killAt time.Time, topics []string) (restart.Window, error) {
				select {
				case <-ctx.Done():
					return restart.Window{}, ctx.Err()
				case <-time.After(time.Until(killAt)):
				}
				r.Logf("restarting the %s broker (%s, down >= %v)", kind, mode, RestartDownFor)
				rs, err := cl.RestartBroker(ctx, harness.RestartOptions{Mode: mode, DownFor: RestartDownFor, Topics: topics})
				if err == nil {
					r.Logf("%s broker back: down %.1fs, ready %.1fs after its start", kind,
						rs.Ready.Sub(rs.Stopped).Seconds(), rs.Ready.Sub(rs.Started).Seconds())
				}
				return restart.Window{Down: rs.Stopped, Up: rs.Ready}, err
			})
		results = append(results, r.runCells(ctx, cl, kind, dir, stamp, restarting, gate)...)
		gate.Close()
	}
	if failed(results) {
		r.Logf("server logs for %s:\n%s", kind, cl.Logs(1500))
	}
	return results
}

type cell struct {
	s scenario.Scenario
	c scenario.Client
}

// Restart settings of the restart scenarios (scenario.Scenario.Restart).
const (
	RestartLead    = 3 * time.Second  // announcement → kill: time to send the pending work
	RestartDownFor = 4 * time.Second  // the broker stays down at least this long
	RestartMaxWait = 60 * time.Second // first arrival waits this long for the other clients
)

// RestartMode is how the restart scenarios stop the broker of kind:
// CONFORMANCE_RESTART_MODE=kill|term overrides the default, kill -9.
func RestartMode(kind harness.Kind) harness.StopMode {
	if m := os.Getenv("CONFORMANCE_RESTART_MODE"); m != "" {
		return harness.StopMode(m)
	}
	return harness.Kill
}

func participant(s scenario.Scenario, c scenario.Client) string { return s.Name + "@" + string(c) }

// runCells runs cells with every client side by side (their topics and
// groups are disjoint, and most scenario time is spent waiting on broker
// timers). Without a gate each client runs its scenarios one after the
// other; with one (restart scenarios) all of them at once.
func (r *Runner) runCells(ctx context.Context, cl *harness.Cluster, kind harness.Kind, dir, stamp string, cells []cell, gate *restart.Gate) []scenario.Result {
	if len(cells) == 0 {
		return nil
	}
	byClient := map[scenario.Client][]scenario.Scenario{}
	for _, x := range cells {
		byClient[x.c] = append(byClient[x.c], x.s)
	}
	perClient := make([][]scenario.Result, len(r.Clients))
	var wg sync.WaitGroup
	for i, c := range r.Clients {
		list := byClient[c]
		if len(list) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c == scenario.GoV2 {
				perClient[i] = r.runGoList(ctx, cl, kind, list, stamp, gate)
				return
			}
			opt := javadriver.Options{
				Namesrv: cl.NamesrvAddr, Broker: cl.BrokerAddr,
				Prefix:    strings.NewReplacer(".", "", "-", "").Replace(string(c)) + "_" + stamp,
				Scenarios: list, LogPath: filepath.Join(dir, string(c)+".log"),
			}
			if gate != nil {
				opt.Parallel, opt.Restart = true, gate
				opt.LogPath = filepath.Join(dir, string(c)+"-restart.log")
			}
			res := r.Java.Run(ctx, c, string(kind), opt)
			for _, x := range res {
				r.Logf("%s", x.Line())
				if gate != nil {
					// A driver that never started never reached its restart point.
					gate.Leave(participant(scenario.Scenario{Name: x.Scenario}, c))
				}
			}
			perClient[i] = res
		}()
	}
	wg.Wait()
	var results []scenario.Result
	for _, rs := range perClient {
		results = append(results, rs...)
	}
	return results
}

// runGoList runs the Go scenarios: in sequence, or all at once with a gate.
func (r *Runner) runGoList(ctx context.Context, cl *harness.Cluster, kind harness.Kind, list []scenario.Scenario, stamp string, gate *restart.Gate) []scenario.Result {
	out := make([]scenario.Result, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		run := func() {
			var point *restart.Point
			if gate != nil {
				who := participant(s, scenario.GoV2)
				point = gate.Bind(who)
				defer gate.Leave(who)
			}
			out[i] = r.runGo(ctx, cl, kind, s, stamp, point)
			r.Logf("%s", out[i].Line())
		}
		if gate == nil {
			run()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	wg.Wait()
	return out
}

func failed(rs []scenario.Result) bool {
	for _, r := range rs {
		if r.Status == scenario.Fail {
			return true
		}
	}
	return false
}

func (r *Runner) runGo(ctx context.Context, cl *harness.Cluster, kind harness.Kind, s scenario.Scenario, stamp string, point *restart.Point) scenario.Result {
	res := scenario.Result{Scenario: s.Name, Client: scenario.GoV2, Server: string(kind)}
	fn, ok := goclient.Scenarios[s.Name]
	if !ok {
		res.Status, res.Detail = scenario.Fail, "scenario marked Go but goclient has no implementation"
		return res
	}
	goclient.Quiet()
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	t := goclient.Target{Namesrv: cl.NamesrvAddr, Broker: cl.BrokerAddr, Prefix: "go_" + stamp, BrokerRelease: kind.BrokerRelease(),
		CreateTopic: func(ctx context.Context, topic string, queues int) error {
			return cl.CreateTopic(ctx, topic, queues, nil)
		}}
	if point != nil {
		t.Restart = point
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		done <- fn(ctx, t)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(s.Timeout + 15*time.Second):
		// A client call ignoring its context: report, leave the goroutine.
		err = fmt.Errorf("scenario did not return %v after its deadline", 15*time.Second)
	}
	res.Elapsed = time.Since(start)
	var note goclient.Note
	if errors.As(err, &note) {
		res.Status, res.Detail = scenario.Pass, string(note)
	} else if err != nil {
		res.Status, res.Detail = scenario.Fail, err.Error()
	} else {
		res.Status = scenario.Pass
	}
	return res
}
