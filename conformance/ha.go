package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// HarnessOnly is the column of replication scenarios the harness drives by
// itself (raw requests, file comparisons, Java's mqadmin).
const HarnessOnly scenario.Client = "harness"

// HAScenario is one replication behaviour (issue #14) checked against a
// fresh master/slave pair of each harness.PairKind.
type HAScenario struct {
	Name string
	Desc string
	// Clients it runs with, one fresh pair per client; empty means one
	// HarnessOnly cell.
	Clients []scenario.Client
	// Options configures the pair for kind (Dir is filled in by the runner).
	Options func(kind harness.PairKind) harness.PairOptions
	Run     func(ctx context.Context, h *HARun) error
	Timeout time.Duration
	// Long scenarios run in the matrix (make conformance) and with
	// CONFORMANCE_HA_LONG=1, not in make test.
	Long bool
}

// HARun is what a replication scenario gets.
type HARun struct {
	Kind   harness.PairKind
	Pair   *harness.Pair
	Client scenario.Client
	Runner *Runner // Env, Java driver, Logf
	Prefix string  // unique per cell: topics, groups
	Dir    string  // the cell's scratch directory (the pair's is under it)

	mu    sync.Mutex
	notes []string
}

// Note adds a line to the cell's matrix note (figures, timings).
func (h *HARun) Note(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, fmt.Sprintf(format, args...))
}

// Name is a topic or group name unique to the cell.
func (h *HARun) Name(s string) string { return h.Prefix + "_" + s }

// HAScenarios is every replication scenario in matrix order: those driven
// by the harness and the Go client on data (ha_data.go), then the kill
// scenarios (ha_kill.go).
func HAScenarios() []HAScenario {
	return append(append([]HAScenario{}, haDataScenarios...), haKillScenarios...)
}

func (s HAScenario) cells() []scenario.Client {
	if len(s.Clients) == 0 {
		return []scenario.Client{HarnessOnly}
	}
	return s.Clients
}

// Replication runs every selected replication scenario against kind, one
// fresh pair per cell, and returns the cells in matrix order. Cells run
// side by side, at most haParallel(kind) at a time: most of their time is
// spent waiting on broker schedules (the slave's 60 s offset sync).
func (r *Runner) Replication(ctx context.Context, kind harness.PairKind, long bool) []scenario.Result {
	type job struct {
		s HAScenario
		c scenario.Client
	}
	var out []scenario.Result
	var jobs []job
	var slots []int // index in out of each job's result
	stamp := time.Now().Format("150405")
	for _, s := range HAScenarios() {
		if len(r.Only) > 0 && !r.Only[s.Name] {
			continue
		}
		for _, c := range s.cells() {
			if c != HarnessOnly && !r.wantClient(c) {
				continue
			}
			res := scenario.Result{Scenario: s.Name, Client: c, Server: string(kind)}
			if s.Long && !long {
				res.Status, res.Detail = scenario.Skip, "long scenario (make conformance or CONFORMANCE_HA_LONG=1)"
				out = append(out, res)
				continue
			}
			slots = append(slots, len(out))
			out = append(out, res)
			jobs = append(jobs, job{s, c})
		}
	}
	sem := make(chan struct{}, haParallel(kind))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res := r.haCell(ctx, kind, j.s, j.c, stamp)
			r.Logf("%s", res.Line())
			out[slots[i]] = res
		}()
	}
	wg.Wait()
	return out
}

// haParallel is how many cells of kind run at once: CONFORMANCE_HA_PARALLEL,
// else 4 for our own pair (light processes) and 2 when Java brokers are in
// the pair (each cell starts up to two broker JVMs and a name server).
func haParallel(kind harness.PairKind) int {
	if v, err := strconv.Atoi(os.Getenv("CONFORMANCE_HA_PARALLEL")); err == nil && v > 0 {
		return v
	}
	if kind == harness.PairOurs {
		return 4
	}
	return 2
}

func (r *Runner) wantClient(c scenario.Client) bool {
	for _, x := range r.Clients {
		if x == c {
			return true
		}
	}
	return false
}

func (r *Runner) haCell(ctx context.Context, kind harness.PairKind, s HAScenario, c scenario.Client, stamp string) scenario.Result {
	res := scenario.Result{Scenario: s.Name, Client: c, Server: string(kind)}
	tag := strings.NewReplacer(".", "", "-", "").Replace(string(c))
	dir := filepath.Join(r.Dir, string(kind), s.Name+"-"+tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Status, res.Detail = scenario.Fail, err.Error()
		return res
	}
	var opt harness.PairOptions
	if s.Options != nil {
		opt = s.Options(kind)
	}
	opt.Dir = filepath.Join(dir, "pair")
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.Timeout+180*time.Second) // + Java start-ups
	defer cancel()
	p, err := harness.StartPair(ctx, r.Env, kind, opt)
	if err != nil {
		res.Status, res.Detail = scenario.Fail, err.Error()
		switch {
		case errors.Is(err, harness.ErrNotBuilt):
			res.Status = scenario.NotYet
		case errors.Is(err, harness.ErrNoJava):
			res.Status = scenario.Skip
		}
		return res
	}
	defer p.Close()
	h := &HARun{Kind: kind, Pair: p, Client: c, Runner: r, Dir: dir,
		Prefix: "ha" + tag + "_" + stamp + "_" + s.Name}
	runCtx, runCancel := context.WithTimeout(ctx, s.Timeout)
	defer runCancel()
	err = s.Run(runCtx, h)
	res.Elapsed = time.Since(start)
	h.mu.Lock()
	res.Detail = strings.Join(h.notes, "; ")
	h.mu.Unlock()
	if err != nil {
		res.Status = scenario.Fail
		res.Detail = strings.TrimPrefix(res.Detail+"; "+err.Error(), "; ")
		r.Logf("pair logs for %s/%s/%s:\n%s", kind, s.Name, c, p.Logs(2000))
	} else {
		res.Status = scenario.Pass
	}
	return res
}

// HAMarkdown renders replication results: one table per pair kind,
// scenarios as rows, harness and clients as columns, then the notes.
func HAMarkdown(results []scenario.Result, kinds []harness.PairKind) string {
	cols := append([]scenario.Client{HarnessOnly}, scenario.ReplicationClients...)
	cell := map[[3]string]scenario.Result{}
	for _, r := range results {
		cell[[3]string{r.Server, r.Scenario, string(r.Client)}] = r
	}
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, "\n### pair: %s\n\n| scenario |", k)
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", c)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
		for _, s := range HAScenarios() {
			fmt.Fprintf(&b, "| %s |", s.Name)
			for _, c := range cols {
				if r, ok := cell[[3]string{string(k), s.Name, string(c)}]; ok {
					fmt.Fprintf(&b, " %s |", r.Status)
				} else {
					b.WriteString(" |")
				}
			}
			b.WriteString("\n")
		}
	}
	var notes []string
	for _, r := range results {
		if r.Detail != "" {
			notes = append(notes, fmt.Sprintf("- %s / %s / %s (%s): %s", r.Server, r.Scenario, r.Client, r.Status, strings.Join(strings.Fields(r.Detail), " ")))
		}
	}
	sort.Strings(notes)
	if len(notes) > 0 {
		b.WriteString("\n### notes\n\n" + strings.Join(notes, "\n") + "\n")
	}
	b.WriteString("\n### scenarios\n\n")
	for _, s := range HAScenarios() {
		fmt.Fprintf(&b, "- **%s**: %s\n", s.Name, s.Desc)
	}
	return b.String()
}
