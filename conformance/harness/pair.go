package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PairKind names a master/slave server combination (issue #14).
type PairKind string

// The master/slave combinations of the replication matrix. The name server
// is of the master's kind.
const (
	PairOurs     PairKind = "pair-ours"      // our name server, master and slave
	PairJava     PairKind = "pair-java"      // Java 5.3.3 name server, master and slave (reference)
	PairOursJava PairKind = "pair-ours-java" // our name server and master, Java slave
	PairJavaOurs PairKind = "pair-java-ours" // Java name server and master, our slave
	// The second reference, Apache RocketMQ 5.4.0 (jars of
	// `make java-server-5.4`): its pair, and ours mixed with it both ways.
	PairJava54     PairKind = "pair-java-5.4.0"      // Java 5.4.0 name server, master and slave
	PairOursJava54 PairKind = "pair-ours-java-5.4.0" // our name server and master, Java 5.4.0 slave
	PairJava54Ours PairKind = "pair-java-5.4.0-ours" // Java 5.4.0 name server and master, our slave
)

// PairKinds is every pair combination in matrix order.
var PairKinds = []PairKind{PairOurs, PairJava, PairOursJava, PairJavaOurs, PairJava54, PairOursJava54, PairJava54Ours}

// OurMaster and OurSlave report which halves are ours.
func (k PairKind) OurMaster() bool { return k == PairOurs || k == PairOursJava || k == PairOursJava54 }
func (k PairKind) OurSlave() bool  { return k == PairOurs || k == PairJavaOurs || k == PairJava54Ours }

// Reference reports whether k is all Java (a reference pair: a failure
// there means the scenario is wrong).
func (k PairKind) Reference() bool { return k == PairJava || k == PairJava54 }

// JavaVersion is the version of k's Java halves ("" = 5.3.3).
func (k PairKind) JavaVersion() string {
	switch k {
	case PairJava54, PairOursJava54, PairJava54Ours:
		return "5.4.0"
	}
	return ""
}

// javaEnv is the javaserver.sh environment for k's Java processes.
func (k PairKind) javaEnv() []string {
	if v := k.JavaVersion(); v != "" {
		return []string{"ROCKETMQ_SERVER_VERSION=" + v}
	}
	return nil
}

// PairOptions tunes a pair.
type PairOptions struct {
	Dir string // scratch directory
	// Both lines go to both brokers' configs, then Master / Slave lines to
	// one of them (later lines win, for Java and for ours).
	Both, Master, Slave []string
	// SegmentSize is mappedFileSizeCommitLog of both brokers (0: 16 MiB;
	// Java's 1 GiB default would take many minutes to roll).
	SegmentSize int64
	// NoSlave starts only the name server and the master; start the slave
	// later with Pair.Slave.Start.
	NoSlave      bool
	ReadyTimeout time.Duration // 0 = 180 s
}

// Node is one broker of a pair.
type Node struct {
	Role     string // "master" or "slave"
	BrokerID int
	Ours     bool
	Addr     string // remoting address, 127.0.0.1:port
	HAAddr   string // HA listener, 127.0.0.1:port+1
	// StoreDir holds commitlog/, consumequeue/ and index/ (both kinds).
	StoreDir string

	pair   *Pair
	mu     sync.Mutex
	proc   *Process // guarded by mu; nil while down
	launch func() (*Process, error)
	starts int // guarded by mu
}

// Pair is a running name server with a master and a slave of one broker
// group (brokerName broker-a in DefaultCluster).
type Pair struct {
	Kind          PairKind
	NamesrvAddr   string
	Master, Slave *Node
	Dir           string
	ready         time.Duration

	mu sync.Mutex
	ns *Process // guarded by mu
}

// StartPair launches a name server, the master and (unless opt.NoSlave) the
// slave, and waits until the name server lists each broker under its id.
// On error everything started is stopped.
func StartPair(ctx context.Context, env Env, kind PairKind, opt PairOptions) (*Pair, error) {
	if opt.ReadyTimeout == 0 {
		opt.ReadyTimeout = 180 * time.Second
		// CONFORMANCE_READY_TIMEOUT (a Go duration) for a busier machine, as for clusters.
		if d, err := time.ParseDuration(os.Getenv("CONFORMANCE_READY_TIMEOUT")); err == nil && d > 0 {
			opt.ReadyTimeout = d
		}
	}
	if opt.SegmentSize == 0 {
		opt.SegmentSize = 16 << 20
	}
	switch kind {
	case PairOurs, PairJava, PairOursJava, PairJavaOurs, PairJava54, PairOursJava54, PairJava54Ours:
	default:
		return nil, fmt.Errorf("harness: unknown pair kind %q", kind)
	}
	for _, b := range []string{"mqnamesrv", "mqbroker"} {
		if !kind.Reference() {
			if _, err := os.Stat(env.Bin(b)); err != nil {
				return nil, fmt.Errorf("%w: %s", ErrNotBuilt, env.Bin(b))
			}
		}
	}
	if kind != PairOurs && !env.haveJavaServer(kind.JavaVersion()) {
		return nil, ErrNoJava
	}
	p := &Pair{Kind: kind, Dir: opt.Dir, ready: opt.ReadyTimeout}
	nsPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	p.NamesrvAddr = "127.0.0.1:" + strconv.Itoa(nsPort)
	if err := p.startNamesrv(env, kind.OurMaster(), nsPort); err != nil {
		return nil, err
	}
	p.Master, err = p.newNode(env, "master", kind.OurMaster(), opt, opt.Master)
	if err == nil {
		p.Slave, err = p.newNode(env, "slave", kind.OurSlave(), opt, opt.Slave)
	}
	if err == nil {
		err = p.Master.Start(ctx)
	}
	if err == nil && !opt.NoSlave {
		err = p.Slave.Start(ctx)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Pair) startNamesrv(env Env, ours bool, port int) error {
	dir := filepath.Join(p.Dir, "namesrv")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("harness: mkdir: %w", err)
	}
	var proc *Process
	var err error
	if ours {
		conf := filepath.Join(dir, "namesrv.conf")
		if err = os.WriteFile(conf, []byte("listenPort="+strconv.Itoa(port)+"\n"), 0o644); err != nil {
			return fmt.Errorf("harness: write %s: %w", conf, err)
		}
		proc, err = StartProcess("mqnamesrv", dir, nil, env.Bin("mqnamesrv"), "-c", conf)
	} else {
		proc, err = StartProcess("namesrv", dir, append([]string{"FOREGROUND=1"}, p.Kind.javaEnv()...),
			env.Script, "start-namesrv", strconv.Itoa(port), dir)
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ns = proc
	p.mu.Unlock()
	return nil
}

// newNode writes the node's config and prepares its launcher.
func (p *Pair) newNode(env Env, role string, ours bool, opt PairOptions, own []string) (*Node, error) {
	port, err := FreeBrokerPort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.Dir, role)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: mkdir: %w", err)
	}
	n := &Node{Role: role, Ours: ours, pair: p,
		Addr: "127.0.0.1:" + strconv.Itoa(port), HAAddr: "127.0.0.1:" + strconv.Itoa(port+1)}
	lines := []string{"mappedFileSizeCommitLog=" + strconv.FormatInt(opt.SegmentSize, 10)}
	if role == "slave" {
		n.BrokerID = 1
		lines = append(lines, "brokerId=1", "brokerRole=SLAVE")
	}
	// Java advertises a non-loopback HA address unless told.
	lines = append(lines, "brokerIP2=127.0.0.1")
	lines = append(lines, opt.Both...)
	lines = append(lines, own...)
	if ours {
		n.StoreDir = filepath.Join(dir, "store")
		base := []string{
			"brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=0", "brokerRole=ASYNC_MASTER",
			"listenPort=" + strconv.Itoa(port), "brokerIP1=127.0.0.1",
			"storePathRootDir=" + n.StoreDir, "namesrvAddr=" + p.NamesrvAddr,
			"autoCreateTopicEnable=true", "autoCreateSubscriptionGroup=true", "enablePropertyFilter=true",
			"transactionTimeOut=2000", "transactionCheckInterval=3000",
		}
		conf := filepath.Join(dir, "broker.conf")
		text := strings.Join(append(base, lines...), "\n") + "\n"
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("harness: write %s: %w", conf, err)
		}
		n.launch = func() (*Process, error) {
			return StartProcess("mqbroker", dir, nil, env.Bin("mqbroker"), "-c", conf)
		}
	} else {
		n.StoreDir = filepath.Join(dir, "store") // javaserver.sh: storePathRootDir=$dir/store
		extra := strings.Join(lines, "\n")
		n.launch = func() (*Process, error) {
			return StartProcess("broker", dir, append([]string{"FOREGROUND=1", "BROKER_EXTRA_CONF=" + extra}, p.Kind.javaEnv()...),
				env.Script, "start-broker", p.NamesrvAddr, strconv.Itoa(port), dir)
		}
	}
	return n, nil
}

// Start launches the node (again, with the same store and ports) and waits
// until it answers and the name server lists it under its broker id. The
// previous log is kept as <name>.log.<n>.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	if n.proc != nil {
		n.mu.Unlock()
		return fmt.Errorf("harness: %s already running", n.Role)
	}
	n.starts++
	if n.starts > 1 {
		n.keepLog(n.starts - 1)
	}
	proc, err := n.launch()
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("harness: start %s: %w", n.Role, err)
	}
	n.proc = proc
	n.mu.Unlock()
	return n.waitListed(ctx, n.pair.ready)
}

// keepLog renames the last run's log; mu held.
func (n *Node) keepLog(run int) {
	for _, name := range []string{"mqbroker.log", "broker.log"} {
		log := filepath.Join(n.pair.Dir, n.Role, name)
		if _, err := os.Stat(log); err == nil {
			_ = os.Rename(log, log+"."+strconv.Itoa(run))
		}
	}
}

// Kill SIGKILLs the node's process group (a crash) and waits for it.
func (n *Node) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		n.proc.Kill()
		n.proc = nil
	}
}

// Stop shuts the node down gracefully (SIGKILL after GracefulTimeout).
func (n *Node) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		n.proc.Stop(GracefulTimeout)
		n.proc = nil
	}
}

// Running reports whether the node's process is up.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return false
	}
	done, _ := n.proc.Exited()
	return !done
}

// Tail returns the end of the node's current log.
func (n *Node) Tail(size int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return ""
	}
	return n.proc.Tail(size)
}

// waitListed polls until the node answers on its own port and the name
// server's cluster info has its address under its broker id.
func (n *Node) waitListed(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if !n.Running() {
			return fmt.Errorf("harness: %s exited early: %s", n.Role, n.Tail(2000))
		}
		last = n.listed(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: %s not ready after %v: %w\n%s", n.Role, timeout, last, n.Tail(1500))
		case <-tick.C:
		}
	}
}

func (n *Node) listed(ctx context.Context) error {
	if _, err := Call(ctx, n.Addr, codeGetBrokerRuntimeInfo, nil, nil); err != nil {
		return fmt.Errorf("%s does not answer: %w", n.Role, err)
	}
	f, err := Call(ctx, n.pair.NamesrvAddr, codeGetBrokerClusterInfo, nil, nil)
	if err != nil {
		return err
	}
	if f.Code != 0 {
		return fmt.Errorf("cluster info code %d %q", f.Code, f.Remark)
	}
	var info struct {
		BrokerAddrTable map[string]struct {
			BrokerAddrs map[string]string `json:"brokerAddrs"`
		} `json:"brokerAddrTable"`
	}
	if err := json.Unmarshal(fastjsonIntKeys(f.Body), &info); err != nil {
		return fmt.Errorf("cluster info body: %w", err)
	}
	if got := info.BrokerAddrTable["broker-a"].BrokerAddrs[strconv.Itoa(n.BrokerID)]; got != n.Addr {
		return fmt.Errorf("%s not listed as broker-a/%d (have %q)", n.Role, n.BrokerID, got)
	}
	return nil
}

// fastjsonIntKeys quotes the integer map keys fastjson writes
// ({0:"a"} → {"0":"a"}) so encoding/json reads them.
func fastjsonIntKeys(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case (c == '{' || c == ',') && i+1 < len(b) && (b[i+1] == '-' || b[i+1] >= '0' && b[i+1] <= '9'):
			j := i + 1
			for j < len(b) && (b[j] == '-' || b[j] >= '0' && b[j] <= '9') {
				j++
			}
			if j < len(b) && b[j] == ':' {
				out = append(out, c, '"')
				out = append(out, b[i+1:j]...)
				out = append(out, '"')
				i = j - 1
			} else {
				out = append(out, c)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

// RuntimeInfo returns the node's GET_BROKER_RUNTIME_INFO table.
func (n *Node) RuntimeInfo(ctx context.Context) (map[string]string, error) {
	f, err := Call(ctx, n.Addr, codeGetBrokerRuntimeInfo, nil, nil)
	if err != nil {
		return nil, err
	}
	if f.Code != 0 {
		return nil, fmt.Errorf("harness: %s runtime info: code %d %q", n.Role, f.Code, f.Remark)
	}
	var kv struct {
		Table map[string]string `json:"table"`
	}
	if err := json.Unmarshal(f.Body, &kv); err != nil {
		return nil, fmt.Errorf("harness: %s runtime info body: %w", n.Role, err)
	}
	return kv.Table, nil
}

// MaxPhyOffset is the node's commit-log max offset (runtime info
// commitLogMaxOffset).
func (n *Node) MaxPhyOffset(ctx context.Context) (int64, error) {
	t, err := n.RuntimeInfo(ctx)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(t["commitLogMaxOffset"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("harness: %s commitLogMaxOffset %q: %w", n.Role, t["commitLogMaxOffset"], err)
	}
	return v, nil
}

// WaitCaughtUp polls until the slave's commit-log max offset equals the
// master's (read after the slave's, so a master still growing is waited
// for) and returns that offset.
func (p *Pair) WaitCaughtUp(ctx context.Context, timeout time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		s, err := p.Slave.MaxPhyOffset(ctx)
		if err == nil {
			var m int64
			if m, err = p.Master.MaxPhyOffset(ctx); err == nil {
				if s == m {
					return m, nil
				}
				err = fmt.Errorf("slave at %d, master at %d", s, m)
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("harness: slave not caught up after %v: %w", timeout, last)
		case <-tick.C:
		}
	}
}

// Logs returns the tails of the three logs, for failure reports.
func (p *Pair) Logs(size int) string {
	var b strings.Builder
	p.mu.Lock()
	if p.ns != nil {
		fmt.Fprintf(&b, "--- namesrv (%s)\n%s\n", p.ns.Log, p.ns.Tail(size))
	}
	p.mu.Unlock()
	for _, n := range []*Node{p.Master, p.Slave} {
		if n != nil {
			fmt.Fprintf(&b, "--- %s\n%s\n", n.Role, n.Tail(size))
		}
	}
	return b.String()
}

// Close stops the brokers (slave first) and the name server.
func (p *Pair) Close() {
	for _, n := range []*Node{p.Slave, p.Master} {
		if n != nil {
			n.Stop()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ns != nil {
		p.ns.Stop(10 * time.Second)
		p.ns = nil
	}
}

// CreateTopicOn creates topic on this broker with UPDATE_AND_CREATE_TOPIC
// (no route wait: a slave refuses it; use it on the master).
func (n *Node) CreateTopicOn(ctx context.Context, topic string, queues int) error {
	ext := map[string]string{
		"topic": topic, "defaultTopic": "TBW102",
		"readQueueNums": strconv.Itoa(queues), "writeQueueNums": strconv.Itoa(queues),
		"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	}
	f, err := Call(ctx, n.Addr, codeUpdateAndCreateTopic, ext, nil)
	if err != nil {
		return fmt.Errorf("harness: create topic %s on %s: %w", topic, n.Role, err)
	}
	if f.Code != 0 {
		return fmt.Errorf("harness: create topic %s on %s: code %d %q", topic, n.Role, f.Code, f.Remark)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// codeSendMessage is SEND_MESSAGE (v1 header; Apache RocketMQ RequestCode).
const codeSendMessage = 10

// Send stores one message with SEND_MESSAGE on this broker and returns the
// response code and remark (0 = SEND_OK; 12 = FLUSH_SLAVE_TIMEOUT, …).
func (n *Node) Send(ctx context.Context, topic string, queueID int, keys string, body []byte) (int32, string, error) {
	props := "KEYS\x01" + keys + "\x02WAIT\x01true\x02"
	ext := map[string]string{
		"producerGroup": "harness_p", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(queueID), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
		"flag": "0", "properties": props, "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
	}
	f, err := Call(ctx, n.Addr, codeSendMessage, ext, body)
	if err != nil {
		return 0, "", err
	}
	return f.Code, f.Remark, nil
}
