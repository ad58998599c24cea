package grpcsdk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// SDK names a gRPC SDK column of the matrix.
type SDK string

// The SDK columns.
const (
	Java   SDK = "java-5.0.8"
	Python SDK = "python-5.1.2"
	Node   SDK = "nodejs-1.0.8"
	Go     SDK = "go"
)

// SDKs is every column in matrix order.
var SDKs = []SDK{Java, Python, Node, Go}

// Result is one scenario × SDK × server cell.
type Result struct {
	Scenario string
	SDK      SDK
	Server   string
	Status   scenario.Status
	Detail   string
	Elapsed  time.Duration
}

// ErrNoToolchain means the SDK's toolchain or package is not installed.
var ErrNoToolchain = errors.New("grpcsdk: toolchain not installed")

// Driver runs scenarios with one SDK.
type Driver struct {
	SDK  SDK
	Root string // the conformance directory

	once    sync.Once
	prepErr error
}

// NewDrivers returns one driver per SDK under the conformance directory.
func NewDrivers(confDir string) []*Driver {
	var out []*Driver
	for _, s := range SDKs {
		out = append(out, &Driver{SDK: s, Root: confDir})
	}
	return out
}

// Prepare builds or checks the SDK once: nil, or an error wrapping
// ErrNoToolchain (a skip), or a build failure.
func (d *Driver) Prepare(ctx context.Context) error {
	d.once.Do(func() { d.prepErr = d.prepare(ctx) })
	return d.prepErr
}

func (d *Driver) prepare(ctx context.Context) error {
	switch d.SDK {
	case Java:
		if !have("java") || !have("mvn") {
			return fmt.Errorf("%w: java or mvn not on PATH", ErrNoToolchain)
		}
		dir := filepath.Join(d.Root, "javagrpc")
		var err error
		for _, offline := range []bool{true, false} {
			args := []string{"-q", "-B", "package"}
			if offline {
				args = append([]string{"-o"}, args...)
			}
			cmd := exec.CommandContext(ctx, "mvn", args...)
			cmd.Dir = dir
			out, e := cmd.CombinedOutput()
			if e == nil {
				return nil
			}
			err = fmt.Errorf("grpcsdk: mvn %s in %s: %w\n%s", strings.Join(args, " "), dir, e, tail(out, 2000))
		}
		return err
	case Python:
		if _, err := os.Stat(d.pythonBin()); err != nil {
			return fmt.Errorf("%w: no venv at %s (scripts/grpcsdk.sh install-python)", ErrNoToolchain, d.pythonBin())
		}
		out, err := exec.CommandContext(ctx, d.pythonBin(), "-c", "import rocketmq.v5.client").CombinedOutput()
		if err != nil {
			return fmt.Errorf("grpcsdk: rocketmq-python-client does not import: %w\n%s", err, tail(out, 1500))
		}
		return nil
	case Node:
		if !have("node") {
			return fmt.Errorf("%w: node not on PATH", ErrNoToolchain)
		}
		mod := filepath.Join(d.nodeDir(), "node_modules", "rocketmq-client-nodejs")
		if _, err := os.Stat(mod); err != nil {
			return fmt.Errorf("%w: no %s (scripts/grpcsdk.sh install-node)", ErrNoToolchain, mod)
		}
		return nil
	case Go:
		return fmt.Errorf("%w: the Go gRPC SDK (github.com/apache/rocketmq-clients/golang) is not served by this machine's Go module proxy", ErrNoToolchain)
	}
	return fmt.Errorf("grpcsdk: unknown SDK %q", d.SDK)
}

func (d *Driver) pythonBin() string {
	return filepath.Join(d.Root, ".cache", "grpc-sdk", "py", "bin", "python")
}
func (d *Driver) nodeDir() string { return filepath.Join(d.Root, ".cache", "grpc-sdk", "node") }

func have(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// Options of one driver run.
type Options struct {
	Endpoint string // the gRPC ip:port
	Prefix   string // topic/group prefix Setup used
	LogPath  string // the driver's stdout+stderr
	JVMProps []string
}

// Run executes the scenarios in one driver process and returns one result
// per scenario; a driver that cannot start fails (or skips) them all.
func (d *Driver) Run(ctx context.Context, server string, scs []Scenario, opt Options) []Result {
	var na []Result
	var run []Scenario
	for _, s := range scs {
		if s.Supports(d.SDK) {
			run = append(run, s)
		} else {
			na = append(na, Result{Scenario: s.Name, SDK: d.SDK, Server: server, Status: scenario.NA, Detail: "not in this SDK's driver"})
		}
	}
	if len(run) == 0 {
		return na
	}
	return append(na, d.run(ctx, server, run, opt)...)
}

func (d *Driver) run(ctx context.Context, server string, scs []Scenario, opt Options) []Result {
	all := func(st scenario.Status, why string) []Result {
		var out []Result
		for _, s := range scs {
			out = append(out, Result{Scenario: s.Name, SDK: d.SDK, Server: server, Status: st, Detail: why})
		}
		return out
	}
	if err := d.Prepare(ctx); err != nil {
		if errors.Is(err, ErrNoToolchain) {
			return all(scenario.Skip, err.Error())
		}
		return all(scenario.Fail, err.Error())
	}
	var budget time.Duration
	var args []string
	for _, s := range scs {
		args = append(args, fmt.Sprintf("%s:%d", s.Name, int(s.Timeout.Seconds())))
		if s.Timeout > budget {
			budget = s.Timeout // scenarios run at once
		}
	}
	var argv []string
	switch d.SDK {
	case Java:
		dir := filepath.Join(d.Root, "javagrpc", "target")
		argv = append([]string{"java", "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dendpoint=" + opt.Endpoint, "-Dprefix=" + opt.Prefix,
			"-Duser.home=" + filepath.Join(os.TempDir(), "rocketgo-grpcsdk-java")}, opt.JVMProps...)
		argv = append(argv, "-cp", filepath.Join(dir, "classes")+":"+filepath.Join(dir, "lib", "*"),
			"io.rocketgo.conformance.grpc.Driver")
	case Python:
		argv = []string{d.pythonBin(), filepath.Join(d.Root, "grpcsdk", "py", "driver.py"), opt.Endpoint, opt.Prefix}
	case Node:
		argv = []string{"node", filepath.Join(d.Root, "grpcsdk", "node", "driver.js"), opt.Endpoint, opt.Prefix}
	}
	argv = append(argv, args...)
	ctx, cancel := context.WithTimeout(ctx, budget+60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// The SDKs log under $HOME/logs: keep that out of the real home.
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(os.TempDir(), "rocketgo-grpcsdk-"+string(d.SDK)))
	if d.SDK == Node {
		cmd.Env = append(cmd.Env, "NODE_PATH="+filepath.Join(d.nodeDir(), "node_modules"))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return all(scenario.Fail, err.Error())
	}
	var logf *os.File
	if opt.LogPath != "" {
		if logf, err = os.Create(opt.LogPath); err == nil {
			defer logf.Close()
			cmd.Stderr = logf
		}
	}
	if err := cmd.Start(); err != nil {
		return all(scenario.Fail, fmt.Sprintf("grpcsdk: start %s: %v", argv[0], err))
	}
	got := map[string]Result{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if logf != nil {
			fmt.Fprintln(logf, line)
		}
		if r, ok := ParseLine(line); ok {
			r.SDK, r.Server = d.SDK, server
			got[r.Scenario] = r
		}
	}
	waitErr := cmd.Wait()
	var out []Result
	for _, s := range scs {
		r, ok := got[s.Name]
		if !ok {
			r = Result{Scenario: s.Name, SDK: d.SDK, Server: server, Status: scenario.Fail,
				Detail: fmt.Sprintf("no result from the %s driver (exit: %v; log %s)", d.SDK, waitErr, opt.LogPath)}
		}
		out = append(out, r)
	}
	return out
}

// ParseLine reads "PASS name secs[: detail]", "FAIL name secs: reason" or
// "SKIP name: reason".
func ParseLine(line string) (Result, bool) {
	var st scenario.Status
	switch {
	case strings.HasPrefix(line, "PASS "):
		st = scenario.Pass
	case strings.HasPrefix(line, "FAIL "):
		st = scenario.Fail
	case strings.HasPrefix(line, "SKIP "):
		st = scenario.Skip
	default:
		return Result{}, false
	}
	rest, detail := line[5:], ""
	if i := strings.Index(rest, ": "); i >= 0 {
		rest, detail = rest[:i], rest[i+2:]
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return Result{}, false
	}
	r := Result{Scenario: f[0], Status: st, Detail: detail}
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
