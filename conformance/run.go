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
	type cell struct {
		s scenario.Scenario
		c scenario.Client
	}
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

	byClient := map[scenario.Client][]scenario.Scenario{}
	for _, x := range todo {
		byClient[x.c] = append(byClient[x.c], x.s)
	}
	// The clients run side by side: their topics and groups are disjoint,
	// and most scenario time is spent waiting on broker timers.
	stamp := time.Now().Format("150405")
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
				for _, s := range list {
					res := r.runGo(ctx, cl, kind, s, stamp)
					r.Logf("%s", res.Line())
					perClient[i] = append(perClient[i], res)
				}
				return
			}
			res := r.Java.Run(ctx, c, string(kind), javadriver.Options{
				Namesrv: cl.NamesrvAddr, Broker: cl.BrokerAddr,
				Prefix:    strings.NewReplacer(".", "", "-", "").Replace(string(c)) + "_" + stamp,
				Scenarios: list, LogPath: filepath.Join(dir, string(c)+".log"),
			})
			for _, x := range res {
				r.Logf("%s", x.Line())
			}
			perClient[i] = res
		}()
	}
	wg.Wait()
	for _, rs := range perClient {
		results = append(results, rs...)
	}
	if failed(results) {
		r.Logf("server logs for %s:\n%s", kind, cl.Logs(1500))
	}
	return results
}

func failed(rs []scenario.Result) bool {
	for _, r := range rs {
		if r.Status == scenario.Fail {
			return true
		}
	}
	return false
}

func (r *Runner) runGo(ctx context.Context, cl *harness.Cluster, kind harness.Kind, s scenario.Scenario, stamp string) scenario.Result {
	res := scenario.Result{Scenario: s.Name, Client: scenario.GoV2, Server: string(kind)}
	fn, ok := goclient.Scenarios[s.Name]
	if !ok {
		res.Status, res.Detail = scenario.Fail, "scenario marked Go but goclient has no implementation"
		return res
	}
	goclient.Quiet()
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	t := goclient.Target{Namesrv: cl.NamesrvAddr, Broker: cl.BrokerAddr, Prefix: "go_" + stamp,
		CreateTopic: func(ctx context.Context, topic string, queues int) error {
			return cl.CreateTopic(ctx, topic, queues, nil)
		}}
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
