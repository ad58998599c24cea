package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind names a server combination.
type Kind string

// The server combinations of the matrix.
const (
	Ours       Kind = "ours"
	Java       Kind = "java"
	JavaNSOurs Kind = "javans-ours" // Java name server + our broker
	OursNSJava Kind = "oursns-java" // our name server + Java broker
	// Java54 is the second reference: Apache RocketMQ 5.4.0's name server
	// and broker (jars in .cache/java-server/lib-5.4.0, `make java-server-5.4`).
	Java54 Kind = "java-5.4.0"
	// OursSplit is our mqnamesrv + mqbroker as two processes (the gRPC
	// conformance puts Apache's proxy in front of them); not in Kinds.
	OursSplit Kind = "ours-split"
)

// Kinds is every combination in matrix order.
var Kinds = []Kind{Ours, Java, JavaNSOurs, OursNSJava, Java54}

// BrokerRelease is the Apache release whose broker behaviour kind serves:
// "5.3.3" for the kinds with Java's 5.3.3 broker, "5.4.0" for the 5.4.0
// reference and for ours, which follows the newer release where they
// differ (JAVA-5.4-CHANGES.md). A scenario whose expectation changed
// between the releases expects the answer of this one.
func (k Kind) BrokerRelease() string {
	switch k {
	case Java, OursNSJava:
		return "5.3.3"
	}
	return "5.4.0"
}

// javaVersion is the reference-server version kind runs ("" = 5.3.3).
func (k Kind) javaVersion() string {
	if k == Java54 {
		return "5.4.0"
	}
	return ""
}

// OurBroker reports whether the broker is ours.
func (k Kind) OurBroker() bool { return k == Ours || k == JavaNSOurs || k == OursSplit }

// OurNamesrv reports whether the name server is ours.
func (k Kind) OurNamesrv() bool { return k == Ours || k == OursNSJava || k == OursSplit }

// ErrNotBuilt means a binary of ours is missing (run `make build`).
var ErrNotBuilt = errors.New("harness: rocketgo binary not built")

// ErrNoJava means java or the reference-server jars are unavailable.
var ErrNoJava = errors.New("harness: java reference server unavailable")

// Env locates the tools the harness needs.
type Env struct {
	Root   string // repository root (holds bin/ and conformance/)
	Script string // conformance/scripts/javaserver.sh
}

// FindEnv walks up from the working directory to the repository root.
func FindEnv() (Env, error) {
	dir, err := os.Getwd()
	if err != nil {
		return Env{}, fmt.Errorf("harness: getwd: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "conformance", "go.mod")); err == nil {
			return Env{Root: d, Script: filepath.Join(d, "conformance", "scripts", "javaserver.sh")}, nil
		}
		if filepath.Dir(d) == d {
			return Env{}, fmt.Errorf("harness: no conformance/go.mod above %s", dir)
		}
	}
}

// Bin is the path of one of our binaries.
func (e Env) Bin(name string) string { return filepath.Join(e.Root, "bin", name) }

// HaveJavaServer reports whether the reference server can be started.
func (e Env) HaveJavaServer() bool { return e.haveJavaServer("") }

// haveJavaServer is HaveJavaServer for one version ("" = 5.3.3).
func (e Env) haveJavaServer(version string) bool {
	lib := "lib"
	if version != "" {
		lib += "-" + version
	}
	if _, err := os.Stat(filepath.Join(e.Root, "conformance", ".cache", "java-server", lib)); err != nil {
		return false
	}
	_, err := execLookPath("java")
	return err == nil
}

// Options tunes a cluster.
type Options struct {
	Dir string // scratch directory (a test's TempDir)
	// BrokerExtraConf lines are appended to the broker's config file (the
	// Java broker.conf, or ours).
	BrokerExtraConf []string
	// BrokerNamesrv overrides the name-server address the broker registers
	// with (a capture proxy), and BrokerListenAddr is where the broker binds
	// when it differs from its advertised 127.0.0.1:port (capture).
	BrokerNamesrv string
	ReadyTimeout  time.Duration
	// NamesrvPort / BrokerPort fix the ports (0 = pick free ones), so a
	// capture proxy can be set up before the servers start.
	NamesrvPort, BrokerPort int
	// TLS makes the harness's own readiness calls TLS (an enforcing
	// server refuses plaintext).
	TLS bool
	// OursArgs are appended to bin/rocketgo's arguments (kind Ours), e.g.
	// the gRPC endpoint's listen flag.
	OursArgs []string
}

// Cluster is a running name server + broker pair.
type Cluster struct {
	Kind        Kind
	NamesrvAddr string // 127.0.0.1:port
	BrokerAddr  string // advertised 127.0.0.1:port
	Dir         string
	tls         bool // readiness calls over TLS

	mu    sync.Mutex
	procs []*Process // guarded by mu; brokers last
	// broker is the process RestartBroker stops (for ours the combined
	// rocketgo process, name server included); startBroker launches it
	// again with the same arguments, store and ports. Both guarded by mu.
	broker      *Process
	startBroker func() (*Process, error)
	restarts    int // guarded by mu
}

// External is a server started by someone else (CONFORMANCE_NAMESRV and
// CONFORMANCE_BROKER): handy to iterate on scenarios against a running server.
const External Kind = "external"

// Attach wraps an already running name server + broker; Close stops nothing.
func Attach(kind Kind, namesrv, broker string) *Cluster {
	return &Cluster{Kind: kind, NamesrvAddr: namesrv, BrokerAddr: broker}
}

// Start launches the processes of kind and waits until the broker is
// listed by the name server. On error everything started is stopped.
func Start(ctx context.Context, env Env, kind Kind, opt Options) (*Cluster, error) {
	if opt.ReadyTimeout == 0 {
		opt.ReadyTimeout = 180 * time.Second // Java start-up on a loaded 2-core box
		// CONFORMANCE_READY_TIMEOUT (a Go duration) for a busier one.
		if d, err := time.ParseDuration(os.Getenv("CONFORMANCE_READY_TIMEOUT")); err == nil && d > 0 {
			opt.ReadyTimeout = d
		}
	}
	nsPort, brPort := opt.NamesrvPort, opt.BrokerPort
	var err error
	if nsPort == 0 {
		if nsPort, err = FreePort(); err != nil {
			return nil, err
		}
	}
	if brPort == 0 {
		if brPort, err = FreeBrokerPort(); err != nil {
			return nil, err
		}
	}
	c := &Cluster{Kind: kind, Dir: opt.Dir, tls: opt.TLS,
		NamesrvAddr: "127.0.0.1:" + strconv.Itoa(nsPort),
		BrokerAddr:  "127.0.0.1:" + strconv.Itoa(brPort)}
	brokerNS := c.NamesrvAddr
	if opt.BrokerNamesrv != "" {
		brokerNS = opt.BrokerNamesrv
	}
	needOurs := map[Kind][]string{Ours: {"rocketgo"}, JavaNSOurs: {"mqbroker"}, OursNSJava: {"mqnamesrv"},
		OursSplit: {"mqnamesrv", "mqbroker"}}[kind]
	for _, b := range needOurs {
		if _, err := os.Stat(env.Bin(b)); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrNotBuilt, env.Bin(b))
		}
	}
	if kind != Ours && kind != OursSplit && !env.haveJavaServer(kind.javaVersion()) {
		return nil, ErrNoJava
	}
	var javaEnv []string // the script's version for both Java processes
	if v := kind.javaVersion(); v != "" {
		javaEnv = []string{"ROCKETMQ_SERVER_VERSION=" + v}
	}
	startJavaNS := func() error {
		dir := filepath.Join(opt.Dir, "java-namesrv")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("harness: mkdir: %w", err)
		}
		p, err := StartProcess("namesrv", dir, append([]string{"FOREGROUND=1"}, javaEnv...),
			env.Script, "start-namesrv", strconv.Itoa(nsPort), dir)
		if err == nil {
			c.procs = append(c.procs, p)
		}
		return err
	}
	startJavaBroker := func() error {
		dir := filepath.Join(opt.Dir, "java-broker")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("harness: mkdir: %w", err)
		}
		// Rerunning the script rewrites the same broker.conf and keeps the store.
		launch := func() (*Process, error) {
			return StartProcess("broker", dir,
				append([]string{"FOREGROUND=1", "BROKER_EXTRA_CONF=" + strings.Join(opt.BrokerExtraConf, "\n")}, javaEnv...),
				env.Script, "start-broker", brokerNS, strconv.Itoa(brPort), dir)
		}
		p, err := launch()
		if err == nil {
			c.procs = append(c.procs, p)
			c.broker, c.startBroker = p, launch
		}
		return err
	}
	// startOurs starts bin/name; isBroker marks the process RestartBroker restarts.
	startOurs := func(isBroker bool, name string, args ...string) error {
		dir := filepath.Join(opt.Dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("harness: mkdir: %w", err)
		}
		launch := func() (*Process, error) {
			return StartProcess(name, dir, nil, append([]string{env.Bin(name)}, args...)...)
		}
		p, err := launch()
		if err == nil {
			c.procs = append(c.procs, p)
			if isBroker {
				c.broker, c.startBroker = p, launch
			}
		}
		return err
	}
	oursBrokerConf := func(dir string) (string, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("harness: mkdir: %w", err)
		}
		conf := filepath.Join(dir, "broker.conf")
		text := strings.Join([]string{
			"brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=0",
			"listenPort=" + strconv.Itoa(brPort), "brokerIP1=127.0.0.1",
			"storePathRootDir=" + filepath.Join(dir, "store"), "namesrvAddr=" + brokerNS,
			"autoCreateTopicEnable=true", "enablePropertyFilter=true",
			"transactionTimeOut=2000", "transactionCheckInterval=3000",
			"recallMessageEnable=true",
		}, "\n") + "\n" + extraConf(opt.BrokerExtraConf)
		return conf, os.WriteFile(conf, []byte(text), 0o644)
	}

	var startErr error
	switch kind {
	case Ours:
		// The same broker settings the Java reference broker gets.
		dir := filepath.Join(opt.Dir, "rocketgo")
		conf := filepath.Join(dir, "broker.conf")
		if startErr = os.MkdirAll(dir, 0o755); startErr == nil {
			startErr = os.WriteFile(conf, []byte("enablePropertyFilter=true\ntransactionTimeOut=2000\ntransactionCheckInterval=3000\nrecallMessageEnable=true\n"+extraConf(opt.BrokerExtraConf)), 0o644)
		}
		if startErr == nil {
			startErr = startOurs(true, "rocketgo", append([]string{"-dataDir", filepath.Join(dir, "data"),
				"-namesrvListen", c.NamesrvAddr, "-brokerListen", c.BrokerAddr, "-c", conf}, opt.OursArgs...)...)
		}
	case Java, Java54:
		if startErr = startJavaNS(); startErr == nil {
			startErr = startJavaBroker()
		}
	case JavaNSOurs:
		if startErr = startJavaNS(); startErr == nil {
			var conf string
			if conf, startErr = oursBrokerConf(filepath.Join(opt.Dir, "mqbroker")); startErr == nil {
				startErr = startOurs(true, "mqbroker", "-c", conf, "-n", brokerNS)
			}
		}
	case OursNSJava:
		dir := filepath.Join(opt.Dir, "mqnamesrv")
		if startErr = os.MkdirAll(dir, 0o755); startErr == nil {
			conf := filepath.Join(dir, "namesrv.conf")
			if startErr = os.WriteFile(conf, []byte("listenPort="+strconv.Itoa(nsPort)+"\n"), 0o644); startErr == nil {
				if startErr = startOurs(false, "mqnamesrv", "-c", conf); startErr == nil {
					startErr = startJavaBroker()
				}
			}
		}
	case OursSplit:
		dir := filepath.Join(opt.Dir, "mqnamesrv")
		if startErr = os.MkdirAll(dir, 0o755); startErr == nil {
			conf := filepath.Join(dir, "namesrv.conf")
			if startErr = os.WriteFile(conf, []byte("listenPort="+strconv.Itoa(nsPort)+"\n"), 0o644); startErr == nil {
				if startErr = startOurs(false, "mqnamesrv", "-c", conf); startErr == nil {
					var bconf string
					if bconf, startErr = oursBrokerConf(filepath.Join(opt.Dir, "mqbroker")); startErr == nil {
						startErr = startOurs(true, "mqbroker", "-c", bconf, "-n", brokerNS)
					}
				}
			}
		}
	default:
		startErr = fmt.Errorf("harness: unknown kind %q", kind)
	}
	if startErr == nil {
		startErr = c.waitReady(ctx, opt.ReadyTimeout)
	}
	if startErr != nil {
		c.Close()
		return nil, startErr
	}
	return c, nil
}

// extraConf is BrokerExtraConf as config-file lines.
func extraConf(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// waitReady polls the name server's cluster info until it lists the broker.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := c.exitedEarly(); err != nil {
			return err
		}
		call := Call
		if c.tls {
			call = CallTLS
		}
		f, err := call(ctx, c.NamesrvAddr, codeGetBrokerClusterInfo, nil, nil)
		switch {
		case err != nil:
			last = err
		case f.Code != 0:
			last = fmt.Errorf("harness: cluster info code %d %q", f.Code, f.Remark)
		case !strings.Contains(string(f.Body), c.BrokerAddr):
			last = fmt.Errorf("harness: broker %s not registered yet", c.BrokerAddr)
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: %s not ready after %v: %w\n%s", c.Kind, timeout, last, c.Logs(1500))
		case <-tick.C:
		}
	}
}

// exitedEarly reports a process that has ended although nobody stopped it.
func (c *Cluster) exitedEarly() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("harness: %s exited early (%v): %s", p.Name, err, p.Tail(2000))
		}
	}
	return nil
}

// Logs returns the tails of every process log, for failure reports.
func (c *Cluster) Logs(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", p.Name, p.Log, p.Tail(n))
	}
	return b.String()
}

// Close stops every process (brokers first).
func (c *Cluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop(10 * time.Second)
	}
	c.procs = nil
}

// CreateTopic creates topic on the broker with UPDATE_AND_CREATE_TOPIC and
// waits until the name server routes it.
func (c *Cluster) CreateTopic(ctx context.Context, topic string, queues int, extra map[string]string) error {
	ext := map[string]string{
		"topic": topic, "defaultTopic": "TBW102",
		"readQueueNums": strconv.Itoa(queues), "writeQueueNums": strconv.Itoa(queues),
		"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	}
	for k, v := range extra {
		ext[k] = v
	}
	f, err := Call(ctx, c.BrokerAddr, codeUpdateAndCreateTopic, ext, nil)
	if err != nil {
		return fmt.Errorf("harness: create topic %s: %w", topic, err)
	}
	if f.Code != 0 {
		return fmt.Errorf("harness: create topic %s: code %d %q", topic, f.Code, f.Remark)
	}
	return c.WaitRoute(ctx, topic, 20*time.Second)
}

// WaitRoute polls GET_ROUTEINFO_BY_TOPIC until the name server answers 0.
func (c *Cluster) WaitRoute(ctx context.Context, topic string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		f, err := Call(ctx, c.NamesrvAddr, codeGetRouteinfoByTopic, map[string]string{"topic": topic}, nil)
		if err == nil && f.Code == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: no route for %s within %v (last: %v)", topic, timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
