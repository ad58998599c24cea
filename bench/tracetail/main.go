package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

func main() {
	top := flag.Int("top", 15, "how many of the longest waits to list")
	minWait := flag.Duration("min", time.Millisecond, "list waits at least this long")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: tracetail [-top N] [-min D] TRACE")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	a, err := analyze(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a.report(os.Stdout, *top, *minWait)
}

// wait is one interval a goroutine spent runnable or in a system call.
type wait struct {
	g     trace.GoID
	start trace.Time
	d     time.Duration
	site  string // who readied it (scheduling) or the call site (syscall)
}

// hist is a log2 histogram of durations from 1 µs.
type hist struct {
	n    int
	sum  time.Duration
	max  time.Duration
	buck [24]int // bucket i: [2^i µs, 2^(i+1) µs)
}

func (h *hist) add(d time.Duration) {
	h.n++
	h.sum += d
	h.max = max(h.max, d)
	us := d.Microseconds()
	i := 0
	for us > 1 && i < len(h.buck)-1 {
		us >>= 1
		i++
	}
	h.buck[i]++
}

// quantile returns the upper edge of the bucket holding quantile q.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	want := int(q*float64(h.n) + 0.5)
	seen := 0
	for i, c := range h.buck {
		seen += c
		if seen >= want {
			return time.Duration(1<<(i+1)) * time.Microsecond
		}
	}
	return h.max
}

type analysis struct {
	names    map[trace.GoID]string
	runnable map[trace.GoID]wait // since when each goroutine is runnable, and who readied it
	insys    map[trace.GoID]wait // since when each goroutine is in a syscall
	sched    map[string]*hist    // scheduling wait by goroutine entry function
	sys      map[string]*hist    // syscall time by call site
	long     []wait              // scheduling waits, for the top list
	longSys  []wait
	running  map[trace.GoID]wait // since when each goroutine runs
	runs     []wait              // running intervals of 1 ms or more (site: the thread)
	first    trace.Time
	last     trace.Time
}

func analyze(r io.Reader) (*analysis, error) {
	rd, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("tracetail: open trace: %w", err)
	}
	a := &analysis{
		names: map[trace.GoID]string{}, runnable: map[trace.GoID]wait{}, insys: map[trace.GoID]wait{}, running: map[trace.GoID]wait{},
		sched: map[string]*hist{}, sys: map[string]*hist{},
	}
	for {
		ev, err := rd.ReadEvent()
		if errors.Is(err, io.EOF) {
			return a, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tracetail: read trace: %w", err)
		}
		if a.first == 0 {
			a.first = ev.Time()
		}
		a.last = ev.Time()
		if ev.Kind() != trace.EventStateTransition {
			if g := ev.Goroutine(); g != trace.NoGoroutine {
				a.learn(g, ev.Stack())
			}
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		g := st.Resource.Goroutine()
		from, to := st.Goroutine()
		if from == trace.GoNotExist || from == trace.GoUndetermined {
			a.learn(g, st.Stack)
		}
		if to == trace.GoRunning || from == trace.GoRunning {
			a.learn(g, ev.Stack()) // a goroutine leaving Running records where it stopped
		}
		now := ev.Time()
		if to == trace.GoRunning && from != trace.GoRunning {
			a.running[g] = wait{g: g, start: now, site: fmt.Sprintf("thread %d", ev.Thread())}
		} else if from == trace.GoRunning && to != trace.GoRunning {
			if w, ok := a.running[g]; ok {
				w.d = time.Duration(now - w.start)
				if w.d >= time.Millisecond {
					a.runs = append(a.runs, w)
				}
				delete(a.running, g)
			}
		}
		switch {
		case to == trace.GoRunnable && from != trace.GoRunnable:
			a.runnable[g] = wait{g: g, start: now, site: a.who(ev)}
		case from == trace.GoRunnable && to == trace.GoRunning:
			if w, ok := a.runnable[g]; ok {
				w.d = time.Duration(now - w.start)
				a.bucket(a.sched, a.name(g)).add(w.d)
				a.long = append(a.long, w)
				delete(a.runnable, g)
			}
		}
		if to == trace.GoSyscall && from != trace.GoSyscall {
			a.insys[g] = wait{g: g, start: now, site: site(ev.Stack())}
		} else if from == trace.GoSyscall && to != trace.GoSyscall {
			if w, ok := a.insys[g]; ok {
				w.d = time.Duration(now - w.start)
				a.bucket(a.sys, w.site).add(w.d)
				a.longSys = append(a.longSys, w)
				delete(a.insys, g)
			}
			if to == trace.GoRunnable { // lost its P in the syscall: waits for one
				a.runnable[g] = wait{g: g, start: now, site: "syscall exit (no P)"}
			}
		}
	}
}

func (a *analysis) bucket(m map[string]*hist, k string) *hist {
	h := m[k]
	if h == nil {
		h = &hist{}
		m[k] = h
	}
	return h
}

// learn names g after the outermost non-runtime function of stk.
func (a *analysis) learn(g trace.GoID, stk trace.Stack) {
	if _, ok := a.names[g]; ok || stk == trace.NoStack {
		return
	}
	name := ""
	for f := range stk.Frames() {
		if !strings.HasPrefix(f.Func, "runtime.") && f.Func != "" {
			name = f.Func // keep going: the last one is the entry
		}
	}
	if name != "" {
		a.names[g] = short(name)
	}
}

func (a *analysis) name(g trace.GoID) string {
	if n, ok := a.names[g]; ok {
		return n
	}
	return "?"
}

// who describes what made a goroutine runnable: the acting goroutine's
// innermost non-runtime frame, or the scheduler itself.
func (a *analysis) who(ev trace.Event) string {
	if s := site(ev.Stack()); s != "" {
		return "readied by " + s
	}
	if ev.Goroutine() == trace.NoGoroutine {
		return "readied by the runtime (netpoll/timer/sysmon)"
	}
	return "readied by g" + fmt.Sprint(ev.Goroutine())
}

// site is the innermost frame outside the runtime and syscall packages.
func site(stk trace.Stack) string {
	if stk == trace.NoStack {
		return ""
	}
	first := ""
	for f := range stk.Frames() {
		if first == "" {
			first = f.Func
		}
		if strings.HasPrefix(f.Func, "runtime.") || strings.HasPrefix(f.Func, "syscall.") ||
			strings.HasPrefix(f.Func, "internal/") || strings.HasPrefix(f.Func, "golang.org/x/sys/") || strings.HasPrefix(f.Func, "sync.") {
			continue
		}
		return short(f.Func) + " (" + short(first) + ")"
	}
	return short(first)
}

func short(fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

func (a *analysis) report(w io.Writer, top int, minWait time.Duration) {
	span := time.Duration(a.last - a.first)
	fmt.Fprintf(w, "trace span %v\n\n", span.Round(time.Millisecond))
	table := func(title string, m map[string]*hist) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(m[y].sum, m[x].sum) })
		fmt.Fprintf(w, "%s\n%-70s %8s %10s %9s %9s %9s %9s\n", title, "", "count", "total", "p50", "p99", "p99.9", "max")
		for _, k := range keys[:min(len(keys), 25)] {
			h := m[k]
			fmt.Fprintf(w, "%-70.70s %8d %10v %9v %9v %9v %9v\n", k, h.n, h.sum.Round(time.Microsecond),
				h.quantile(0.5), h.quantile(0.99), h.quantile(0.999), h.max.Round(time.Microsecond))
		}
		fmt.Fprintln(w)
	}
	table("scheduling wait (runnable -> running) by goroutine", a.sched)
	table("system calls by call site", a.sys)
	list := func(title string, ws []wait) {
		slices.SortFunc(ws, func(x, y wait) int { return cmp.Compare(y.d, x.d) })
		fmt.Fprintf(w, "%s\n", title)
		for _, x := range ws[:min(len(ws), top)] {
			if x.d < minWait {
				break
			}
			fmt.Fprintf(w, "  %9v at +%-12v g%-6d %-40.40s %s\n", x.d.Round(time.Microsecond),
				time.Duration(x.start-a.first).Round(time.Microsecond), x.g, a.name(x.g), x.site)
		}
		fmt.Fprintln(w)
	}
	list("longest scheduling waits", a.long)
	list("longest system calls", a.longSys)
	// What held the Ps during the longest stalls: system calls and long
	// runs of goroutines that overlap each.
	for _, x := range a.long[:min(len(a.long), 3)] {
		if x.d < minWait {
			break
		}
		end := x.start + trace.Time(x.d)
		fmt.Fprintf(w, "during the %v wait at +%v:\n", x.d.Round(time.Microsecond), time.Duration(x.start-a.first).Round(time.Microsecond))
		for _, y := range a.longSys {
			if y.start < end && y.start+trace.Time(y.d) > x.start && y.d >= 100*time.Microsecond {
				fmt.Fprintf(w, "  syscall %9v from +%-12v g%-6d %s\n", y.d.Round(time.Microsecond), time.Duration(y.start-a.first).Round(time.Microsecond), y.g, y.site)
			}
		}
		for _, y := range a.runs {
			if y.start < end && y.start+trace.Time(y.d) > x.start {
				fmt.Fprintf(w, "  running %9v from +%-12v g%-6d %-40.40s %s\n", y.d.Round(time.Microsecond), time.Duration(y.start-a.first).Round(time.Microsecond), y.g, a.name(y.g), y.site)
			}
		}
		fmt.Fprintln(w)
	}
}
