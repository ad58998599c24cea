package javadriver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/conformance/restart"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// Profiles maps a Java client column to its Maven profile.
var Profiles = map[scenario.Client]string{
	scenario.Java49:  "client-4.9",
	scenario.Java493: "client-4.9.3",
	scenario.Java5:   "client-5",
	scenario.Java54:  "client-5.4",
}

// ErrNoTools means java or mvn is not installed.
var ErrNoTools = errors.New("javadriver: java or mvn not found")

// Driver builds and runs the Java driver project in Dir (conformance/java).
type Driver struct {
	Dir string

	mu    sync.Mutex
	built map[string]error // guarded by mu; profile -> build result
}

// New returns a driver for the Maven project in dir.
func New(dir string) *Driver { return &Driver{Dir: dir, built: map[string]error{}} }

// Available reports whether java and mvn are on PATH.
func Available() bool {
	_, e1 := exec.LookPath("java")
	_, e2 := exec.LookPath("mvn")
	return e1 == nil && e2 == nil
}

// Build compiles the profile once per process: offline first (a warm
// ~/.m2 needs no network), online if that fails.
func (d *Driver) Build(ctx context.Context, profile string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err, ok := d.built[profile]; ok {
		return err
	}
	if !Available() {
		d.built[profile] = ErrNoTools
		return ErrNoTools
	}
	var err error
	for _, offline := range []bool{true, false} {
		args := []string{"-q", "-B", "-P", profile, "package"}
		if offline {
			args = append([]string{"-o"}, args...)
		}
		cmd := exec.CommandContext(ctx, "mvn", args...)
		cmd.Dir = d.Dir
		out, e := cmd.CombinedOutput()
		if e == nil {
			err = nil
			break
		}
		err = fmt.Errorf("javadriver: mvn %s: %w\n%s", strings.Join(args, " "), e, tail(out, 3000))
	}
	d.built[profile] = err
	return err
}

// Options for one JVM run.
type Options struct {
	Namesrv, Broker string
	Prefix          string // unique per run: topics and groups
	Scenarios       []scenario.Scenario
	JVMProps        []string // extra -D flags, e.g. -Drocketmq.serialize.type=ROCKETMQ
	LogPath         string   // driver stdout+stderr copy
	// Parallel runs every scenario at once instead of one after the other.
	Parallel bool
	// Restart answers the driver's restart requests (restart scenarios):
	//
	//	driver: RESTART-PLAN <scenario> [topic,topic...]   → PLAN <scenario> <killAtMs>
	//	driver: RESTART-WAIT <scenario>                    → RESTARTED <scenario> <killAtMs> <downMs> <upMs>
	//	either answer may be RESTART-ERROR <scenario> <reason>
	//
	// on the driver's stdin. A scenario that ends is told to Leave.
	Restart Coordinator
}

// Coordinator is the shared broker restart (restart.Gate).
type Coordinator interface {
	Plan(ctx context.Context, who string, topics []string) (time.Time, error)
	Wait(ctx context.Context, who string) (restart.Window, error)
	Leave(who string)
}

// Run executes the scenarios in one JVM and returns one result per scenario.
func (d *Driver) Run(ctx context.Context, client scenario.Client, server string, opt Options) []scenario.Result {
	profile := Profiles[client]
	fail := func(status scenario.Status, err error) []scenario.Result {
		var out []scenario.Result
		for _, s := range opt.Scenarios {
			out = append(out, scenario.Result{Scenario: s.Name, Client: client, Server: server, Status: status, Detail: err.Error()})
		}
		return out
	}
	if err := d.Build(ctx, profile); err != nil {
		if errors.Is(err, ErrNoTools) {
			return fail(scenario.Skip, err)
		}
		return fail(scenario.Fail, err)
	}
	var budget time.Duration
	args := []string{"-Xms128m", "-Xmx512m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1",
		"-Dnamesrv=" + opt.Namesrv, "-Dbroker=" + opt.Broker, "-Dprefix=" + opt.Prefix,
		"-Drocketmq.client.logUseSlf4j=false", "-Drocketmq.client.logLevel=ERROR",
		"-Drocketmq.client.logRoot=" + filepath.Join(os.TempDir(), "rocketgo-conformance-java-logs")}
	args = append(args, opt.JVMProps...)
	if opt.Parallel {
		args = append(args, "-Dparallel=true")
	}
	target := filepath.Join(d.Dir, "target", profile)
	args = append(args, "-cp", filepath.Join(target, "classes")+":"+filepath.Join(target, "lib", "*"),
		"io.rocketgo.conformance.Driver")
	for _, s := range opt.Scenarios {
		args = append(args, fmt.Sprintf("%s:%d", s.Name, int(s.Timeout.Seconds())))
		budget += s.Timeout + 10*time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, budget+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail(scenario.Fail, err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail(scenario.Fail, err)
	}
	answers := &answerer{w: stdin, co: opt.Restart, client: client}
	var logf *os.File
	if opt.LogPath != "" {
		if logf, err = os.Create(opt.LogPath); err == nil {
			defer logf.Close()
			cmd.Stderr = logf
		}
	}
	if err := cmd.Start(); err != nil {
		return fail(scenario.Fail, fmt.Errorf("javadriver: start java: %w", err))
	}
	got := map[string]scenario.Result{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if logf != nil {
			fmt.Fprintln(logf, line)
		}
		if r, ok := parseLine(line); ok {
			r.Client, r.Server = client, server
			got[r.Scenario] = r
			answers.leave(r.Scenario)
			continue
		}
		answers.handle(ctx, line)
	}
	waitErr := cmd.Wait()
	answers.wg.Wait()
	for _, s := range opt.Scenarios {
		answers.leave(s.Name)
	}
	var out []scenario.Result
	for _, s := range opt.Scenarios {
		r, ok := got[s.Name]
		if !ok {
			r = scenario.Result{Scenario: s.Name, Client: client, Server: server, Status: scenario.Fail,
				Detail: fmt.Sprintf("no result from the Java driver (exit: %v)", waitErr)}
		}
		out = append(out, r)
	}
	return out
}

// answerer serves the driver's restart requests, each on its own goroutine
// (a plan blocks until every participant arrived).
type answerer struct {
	co     Coordinator
	client scenario.Client
	wg     sync.WaitGroup
	mu     sync.Mutex // serialises writes to w
	w      io.Writer
}

func (a *answerer) who(name string) string { return name + "@" + string(a.client) }

func (a *answerer) leave(name string) {
	if a.co != nil {
		a.co.Leave(a.who(name))
	}
}

func (a *answerer) reply(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = fmt.Fprintf(a.w, format+"\n", args...) // a dead driver reports itself by exiting
}

// handle answers one RESTART-* line; other lines are ignored.
func (a *answerer) handle(ctx context.Context, line string) {
	f := strings.Fields(line)
	if len(f) < 2 || (f[0] != "RESTART-PLAN" && f[0] != "RESTART-WAIT") {
		return
	}
	name := f[1]
	if a.co == nil {
		a.reply("RESTART-ERROR %s no restart coordinator in this run", name)
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		switch f[0] {
		case "RESTART-PLAN":
			var topics []string
			if len(f) > 2 {
				topics = strings.Split(f[2], ",")
			}
			killAt, err := a.co.Plan(ctx, a.who(name), topics)
			if err != nil {
				a.reply("RESTART-ERROR %s %s", name, oneLine(err.Error()))
				return
			}
			a.reply("PLAN %s %d", name, killAt.UnixMilli())
		case "RESTART-WAIT":
			w, err := a.co.Wait(ctx, a.who(name))
			if err != nil {
				a.reply("RESTART-ERROR %s %s", name, oneLine(err.Error()))
				return
			}
			a.reply("RESTARTED %s %d %d %d", name, w.KillAt.UnixMilli(), w.Down.UnixMilli(), w.Up.UnixMilli())
		}
	}()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// parseLine reads "PASS name secs" / "FAIL name secs: reason".
func parseLine(line string) (scenario.Result, bool) {
	var st scenario.Status
	switch {
	case strings.HasPrefix(line, "PASS "):
		st = scenario.Pass
	case strings.HasPrefix(line, "FAIL "):
		st = scenario.Fail
	default:
		return scenario.Result{}, false
	}
	rest := line[5:]
	detail := ""
	if i := strings.Index(rest, ": "); i >= 0 {
		rest, detail = rest[:i], rest[i+2:]
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return scenario.Result{}, false
	}
	r := scenario.Result{Scenario: f[0], Status: st, Detail: detail}
	if len(f) > 1 {
		if secs, err := strconv.ParseFloat(f[1], 64); err == nil {
			r.Elapsed = time.Duration(secs * float64(time.Second))
		}
	}
	return r, true
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
