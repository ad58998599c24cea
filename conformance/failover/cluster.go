package failover

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Request codes (Apache RocketMQ RequestCode).
const (
	codeSendMessage          = 10
	codePullMessage          = 11
	codeGetMaxOffset         = 30
	codeCtlGetReplicaInfo    = 1004
	codeCtlGetMetadataInfo   = 1005
	codeGetBrokerEpochCache  = 1007
	codeUpdateAndCreateTopic = 17
)

// Ports inside every namespace.
const (
	ctlPort    = 9878 // Raft on 9879
	nsPort     = 9876
	brokerPort = 10911
	haPort     = 10912
	BrokerName = "broker-a" // the broker set of a one-set topology (GroupName(0))
	Cluster    = "FailoverCluster"
)

// GroupSize is the number of replicas of every broker set.
const GroupSize = 3

// GroupName is the brokerName of broker set g: broker-a, broker-b…
func GroupName(g int) string { return "broker-" + string(rune('a'+g)) }

// Node is one process in its own namespace.
type Node struct {
	Name string // c0, ns, b1…
	Kind string // controller, namesrv, broker
	Java bool   // Java runs it (else our binary), the set's release (Roles.Java54)
	Addr string // address the others use (ctl net for controllers)
	argv []string
	dir  string
	log  string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	stopped bool // SIGSTOPped
	starts  int
}

// Start runs the node's binary inside its namespace.
func (n *Node) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.starts++
	lf, err := os.OpenFile(n.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("log %s: %w", n.log, err)
	}
	fmt.Fprintf(lf, "\n=== start %d at %s ===\n", n.starts, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command("ip", append([]string{"netns", "exec", NS(n.Name)}, n.argv...)...)
	cmd.Dir = n.dir
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("start %s: %w", n.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); lf.Close(); close(done) }()
	n.cmd, n.done, n.stopped = cmd, done, false
	return nil
}

// Running reports whether the process is alive (stopped counts).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// signal sends sig to the node's process group while it runs.
func (n *Node) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	select {
	case <-n.done:
		return
	default:
	}
	_ = syscall.Kill(-n.cmd.Process.Pid, sig)
}

// Kill9 kills the node with SIGKILL and waits for it to exit.
func (n *Node) Kill9() {
	n.signal(syscall.SIGKILL)
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}
}

// Stop freezes the node (SIGSTOP); Cont resumes it.
func (n *Node) Stop() { n.signal(syscall.SIGSTOP); n.mu.Lock(); n.stopped = true; n.mu.Unlock() }
func (n *Node) Cont() { n.signal(syscall.SIGCONT); n.mu.Lock(); n.stopped = false; n.mu.Unlock() }

// Tail returns the last size bytes of the node's log.
func (n *Node) Tail(size int) string {
	b, _ := os.ReadFile(n.log)
	if len(b) > size {
		b = b[len(b)-size:]
	}
	return string(b)
}

// Set is the whole topology with its processes.
type Set struct {
	Kind        string
	Roles       Roles // which roles run Java
	Topo        *Topology
	Dir         string
	Controllers []*Node
	Namesrv     *Node
	// Brokers are b0..b2 of broker-a, then b3..b5 of broker-b… (GroupSize
	// per set, StartGroups).
	Brokers []*Node
	Proxy   *Proxy // nil without a gRPC load
}

// Group is the brokers of broker set g (GroupName(g)).
func (s *Set) Group(g int) []*Node { return s.Brokers[g*GroupSize : (g+1)*GroupSize] }

// GRPCEndpoint is the set's mqproxy gRPC endpoint, "" without one.
func (s *Set) GRPCEndpoint() string {
	if s.Proxy == nil {
		return ""
	}
	return s.Proxy.Endpoint
}

// Namesrv address as clients in the root namespace see it.
func (s *Set) NamesrvAddr() string { return s.Namesrv.Addr }

// Bins are the paths of our binaries; JavaLib, when set, is the
// directory of the Java 5.3.3 jars (conformance/.cache/java-server/lib),
// JavaLib54 that of the 5.4.0 jars (lib-5.4.0, `make java-server-5.4`).
type Bins struct {
	Controller, Namesrv, Broker string
	// Proxy, when set, is cmd/mqproxy: StartSet runs it in front of the
	// set for the gRPC client load (load_grpc.go).
	Proxy string
	// ProxyPort is the proxy's gRPC port (remoting: ProxyPort+1); 0: free
	// ports.
	ProxyPort int
	JavaLib   string
	JavaLib54 string
}

// Kinds of broker sets. Each kind says, per role, whether our binary or
// Java 5.3.3's runs it (Roles). The name server always goes with the
// controllers: a user who swaps one tier keeps the other tier's name
// server.
const (
	KindOurs = "ours" // our controllers, name server and brokers
	KindJava = "java" // Java 5.3.3 controllers (DLedger), name server and brokers
	// Java brokers (enableControllerMode=true) under our controllers and
	// our name server.
	KindJavaBrokersOursCtl = "javabrokers-oursctl"
	// Our brokers under Java's controllers and Java's name server (a user
	// who replaced only the broker tier).
	KindOursBrokersJavaCtl = "oursbrokers-javactl"
	// One broker set of b0 ours, b1 and b2 Java, under our controllers and
	// name server / under Java's.
	KindMixedOursCtl = "mixed-oursctl"
	KindMixedJavaCtl = "mixed-javactl"

	// The same five with Java 5.4.0, the second reference, in every Java
	// role.
	KindJava54               = "java54"
	KindJava54BrokersOursCtl = "java54brokers-oursctl"
	KindOursBrokersJava54Ctl = "oursbrokers-java54ctl"
	KindMixed54OursCtl       = "mixed54-oursctl"
	KindMixedJava54Ctl       = "mixed-java54ctl"
)

// Kinds lists every kind, in table order (FAILOVER_KIND=all).
var Kinds = append(append([]string{KindOurs}, Kinds533...), Kinds54...)

// Kinds533 are the kinds with a Java 5.3.3 role, Kinds54 those with
// Java 5.4.0 (FAILOVER_KIND=java-5.3.3 / java-5.4.0 name each group).
var (
	Kinds533 = []string{KindJava, KindJavaBrokersOursCtl, KindOursBrokersJavaCtl, KindMixedOursCtl, KindMixedJavaCtl}
	Kinds54  = []string{KindJava54, KindJava54BrokersOursCtl, KindOursBrokersJava54Ctl, KindMixed54OursCtl, KindMixedJava54Ctl}
)

// Roles says which roles of a set run Java (false: ours), and which
// release: 5.3.3, or 5.4.0 when Java54 is set (one release per set).
type Roles struct {
	Controllers bool
	Namesrv     bool
	Brokers     [3]bool // b0..b2
	Java54      bool
}

// JavaVersion is the Java release of the set's Java roles.
func (r Roles) JavaVersion() string {
	if r.Java54 {
		return "5.4.0"
	}
	return "5.3.3"
}

// mixedBrokers is the broker mix of the mixed kinds: b0 ours, b1 and b2
// Java. Our broker starts first, so it is usually the first master and
// the first master change hands the set to a Java broker that our broker
// then follows: both directions of the HA link get exercised.
var mixedBrokers = [3]bool{false, true, true}

// RolesOf maps a kind to its roles.
func RolesOf(kind string) (Roles, bool) {
	all := [3]bool{true, true, true}
	switch kind {
	case KindOurs:
		return Roles{}, true
	case KindJava:
		return Roles{Controllers: true, Namesrv: true, Brokers: all}, true
	case KindJavaBrokersOursCtl:
		return Roles{Brokers: all}, true
	case KindOursBrokersJavaCtl:
		return Roles{Controllers: true, Namesrv: true}, true
	case KindMixedOursCtl:
		return Roles{Brokers: mixedBrokers}, true
	case KindMixedJavaCtl:
		return Roles{Controllers: true, Namesrv: true, Brokers: mixedBrokers}, true
	}
	for i, k := range Kinds54 {
		if k == kind {
			r, _ := RolesOf(Kinds533[i])
			r.Java54 = true
			return r, true
		}
	}
	return Roles{}, false
}

// AnyJava says whether some role runs Java.
func (r Roles) AnyJava() bool {
	return r.Controllers || r.Namesrv || r.Brokers != [3]bool{}
}

// MixedBrokers says whether the broker set has brokers of both
// implementations.
func (r Roles) MixedBrokers() bool {
	return r.Brokers != [3]bool{} && r.Brokers != [3]bool{true, true, true}
}

// String names the implementation of every role: "ctl ours, ns ours,
// b0 ours, b1 Java, b2 Java" (with 5.4.0: "b1 Java 5.4.0").
func (r Roles) String() string {
	impl := func(java bool) string {
		if java {
			return r.javaName()
		}
		return "ours"
	}
	parts := []string{"ctl " + impl(r.Controllers), "ns " + impl(r.Namesrv)}
	for i, j := range r.Brokers {
		parts = append(parts, fmt.Sprintf("b%d %s", i, impl(j)))
	}
	return strings.Join(parts, ", ")
}

// javaName is "Java", or "Java 5.4.0" for the second reference.
func (r Roles) javaName() string {
	if r.Java54 {
		return "Java 5.4.0"
	}
	return "Java"
}

// javaArgv runs a Java main class with small heaps (seven JVMs share the
// machine) and its home under dir.
func javaArgv(lib, dir, main, conf string) []string {
	return []string{"java", "-server", "-Xms128m", "-Xmx256m", "-XX:+UseG1GC", "-XX:MaxDirectMemorySize=256m",
		"-XX:-OmitStackTraceInFastThrow", "-Djava.net.preferIPv4Stack=true",
		"-Duser.home=" + dir, "-Drocketmq.home.dir=" + filepath.Join(dir, "home"),
		"-cp", filepath.Join(lib, "*"), main, "-c", conf}
}

// BuildBins builds cmd/mqcontroller, mqnamesrv, mqbroker and mqproxy into dir.
func BuildBins(root, dir string) (Bins, error) {
	b := Bins{Controller: filepath.Join(dir, "mqcontroller"), Namesrv: filepath.Join(dir, "mqnamesrv"), Broker: filepath.Join(dir, "mqbroker"),
		Proxy: filepath.Join(dir, "mqproxy")}
	for _, name := range []string{"mqcontroller", "mqnamesrv", "mqbroker", "mqproxy"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %w: %s", name, err, out)
		}
	}
	return b, nil
}

func writeConf(path string, kv ...string) error {
	var sb strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		sb.WriteString(kv[i] + "=" + kv[i+1] + "\n")
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// BrokerHost is broker i's host part on every net.
func BrokerHost(i int) int { return 30 + i }

// StartSet creates the namespaces and starts every process, each role
// with the implementation kind names for it (RolesOf): one broker set.
func StartSet(ctx context.Context, dir string, bins Bins, kind string) (*Set, error) {
	return StartGroups(ctx, dir, bins, kind, 1)
}

// StartGroups is StartSet with groups broker sets of GroupSize brokers
// each under the same controllers and name server (broker i is replica
// i%GroupSize of GroupName(i/GroupSize), run by Roles.Brokers[i%GroupSize]).
func StartGroups(ctx context.Context, dir string, bins Bins, kind string, groups int) (*Set, error) {
	if groups < 1 || groups > 6 {
		return nil, fmt.Errorf("broker sets: %d (1..6)", groups)
	}
	roles, ok := RolesOf(kind)
	if !ok {
		return nil, fmt.Errorf("unknown set kind %q (one of %s)", kind, strings.Join(Kinds, ", "))
	}
	if roles.AnyJava() && bins.javaLib(roles) == "" {
		return nil, fmt.Errorf("set kind %s runs Java %s but no Java %s jars were given", kind, roles.JavaVersion(), roles.JavaVersion())
	}
	topo, err := NewTopology()
	if err != nil {
		return nil, err
	}
	s := &Set{Kind: kind, Roles: roles, Topo: topo, Dir: dir}
	if err := s.addNodes(bins, groups); err != nil {
		s.Close()
		return nil, err
	}
	for _, n := range s.All() {
		if err := n.Start(); err != nil {
			s.Close()
			return nil, err
		}
	}
	if bins.Proxy != "" {
		if s.Proxy, err = StartProxy(bins.Proxy, dir, s.Namesrv.Addr, bins.ProxyPort); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// addNodes creates every node's namespace, directory and config file.
func (s *Set) addNodes(bins Bins, groups int) error {
	// The root namespace also reaches the controllers (admin queries).
	if err := ipcmd("addr", "add", Addr(NetCtl, 1)+"/24", "dev", bridge(NetCtl)); err != nil {
		return err
	}
	for i := range 3 {
		c, err := s.addController(bins, i)
		if err != nil {
			return err
		}
		s.Controllers = append(s.Controllers, c)
	}
	ns, err := s.addNamesrv(bins)
	if err != nil {
		return err
	}
	s.Namesrv = ns
	for i := range groups * GroupSize {
		b, err := s.addBroker(bins, i)
		if err != nil {
			return err
		}
		s.Brokers = append(s.Brokers, b)
	}
	return nil
}

// nodeDir creates node's directory (with a home/ for Java's
// rocketmq.home.dir) under the set's.
func (s *Set) nodeDir(name string) string {
	d := filepath.Join(s.Dir, name)
	_ = os.MkdirAll(filepath.Join(d, "home"), 0o755)
	return d
}

// javaLib is the jar directory of roles' Java release.
func (b Bins) javaLib(r Roles) string {
	if r.Java54 {
		return b.JavaLib54
	}
	return b.JavaLib
}

// argv runs our binary, or Java's main class (of the set's release) when
// java is set; both read the same .properties file (-c).
func (s *Set) argv(bins Bins, ours string, java bool, javaMain, dir, conf string) []string {
	if java {
		return javaArgv(bins.javaLib(s.Roles), dir, javaMain, conf)
	}
	return []string{ours, "-c", conf}
}

// addController is controller c<i>: one of a three-node Raft group
// (DLedger for Java), remoting on ctlPort of the ctl net.
func (s *Set) addController(bins Bins, i int) (*Node, error) {
	name := fmt.Sprintf("c%d", i)
	if err := s.Topo.AddNode(name, 10+i, NetCtl); err != nil {
		return nil, err
	}
	var peers []string
	for j := range 3 {
		peers = append(peers, fmt.Sprintf("n%d-%s:%d", j, Addr(NetCtl, 10+j), ctlPort))
	}
	nd := s.nodeDir(name)
	conf := filepath.Join(nd, "controller.conf")
	if err := writeConf(conf,
		"controllerDLegerGroup", "fo",
		"controllerDLegerPeers", strings.Join(peers, ";"),
		"controllerDLegerSelfId", fmt.Sprintf("n%d", i),
		"controllerStorePath", filepath.Join(nd, "store"),
		"scanNotActiveBrokerInterval", "1000",
		"notifyBrokerRoleChanged", "true",
		"rocketmqHome", filepath.Join(nd, "home"),
	); err != nil {
		return nil, err
	}
	return &Node{Name: name, Kind: "controller", Java: s.Roles.Controllers, Addr: fmt.Sprintf("%s:%d", Addr(NetCtl, 10+i), ctlPort),
		argv: s.argv(bins, bins.Controller, s.Roles.Controllers, "org.apache.rocketmq.controller.ControllerStartup", nd, conf),
		dir:  nd, log: filepath.Join(nd, "out.log")}, nil
}

// addNamesrv is the name server on the data net.
func (s *Set) addNamesrv(bins Bins) (*Node, error) {
	if err := s.Topo.AddNode("ns", 20, NetData); err != nil {
		return nil, err
	}
	nd := s.nodeDir("ns")
	conf := filepath.Join(nd, "namesrv.conf")
	if err := writeConf(conf, "listenPort", strconv.Itoa(nsPort), "bindAddress", Addr(NetData, 20),
		"kvConfigPath", filepath.Join(nd, "kv.json"), "configStorePath", filepath.Join(nd, "ns.properties"),
		"rocketmqHome", filepath.Join(nd, "home")); err != nil {
		return nil, err
	}
	return &Node{Name: "ns", Kind: "namesrv", Java: s.Roles.Namesrv, Addr: fmt.Sprintf("%s:%d", Addr(NetData, 20), nsPort),
		argv: s.argv(bins, bins.Namesrv, s.Roles.Namesrv, "org.apache.rocketmq.namesrv.NamesrvStartup", nd, conf),
		dir:  nd, log: filepath.Join(nd, "out.log")}, nil
}

// addBroker is broker b<i> of GroupName(i/GroupSize) in controller mode;
// the keys are Java's BrokerConfig/MessageStoreConfig names, read alike
// by both.
func (s *Set) addBroker(bins Bins, i int) (*Node, error) {
	name := fmt.Sprintf("b%d", i)
	h := BrokerHost(i)
	if err := s.Topo.AddNode(name, h, NetData, NetCtl, NetHA); err != nil {
		return nil, err
	}
	var ctlAddrs []string
	for _, c := range s.Controllers {
		ctlAddrs = append(ctlAddrs, c.Addr)
	}
	bd := s.nodeDir(name)
	conf := filepath.Join(bd, "broker.conf")
	if err := writeConf(conf,
		"brokerClusterName", Cluster,
		"brokerName", GroupName(i/GroupSize),
		"brokerId", "-1",
		"brokerRole", "SLAVE",
		"enableControllerMode", "true",
		"controllerAddr", strings.Join(ctlAddrs, ";"),
		"namesrvAddr", s.Namesrv.Addr,
		"brokerIP1", Addr(NetData, h),
		"brokerIP2", Addr(NetHA, h),
		"listenPort", strconv.Itoa(brokerPort),
		"haListenPort", strconv.Itoa(haPort),
		"storePathRootDir", filepath.Join(bd, "store"),
		"mappedFileSizeCommitLog", strconv.Itoa(16<<20),
		"maxMessageSize", strconv.Itoa(1<<20),
		"autoCreateTopicEnable", "true",
		"allAckInSyncStateSet", "true",
		"inSyncReplicas", "2",
		"minInSyncReplicas", "1",
		"haMaxTimeSlaveNotCatchup", "4000",
		"brokerHeartbeatInterval", "500",
		"controllerHeartBeatTimeoutMills", "3000",
		"sendHeartbeatTimeoutMillis", "1000",
		"syncBrokerMetadataPeriod", "500",
		"checkSyncStateSetPeriod", "1000",
		"syncControllerMetadataPeriod", "1000",
		"registerNameServerPeriod", "1000",
		"rocketmqHome", filepath.Join(bd, "home"),
		"haSendHeartbeatInterval", "1000",
	); err != nil {
		return nil, err
	}
	java := s.Roles.Brokers[i%GroupSize]
	return &Node{Name: name, Kind: "broker", Java: java, Addr: fmt.Sprintf("%s:%d", Addr(NetData, h), brokerPort),
		argv: s.argv(bins, bins.Broker, java, "org.apache.rocketmq.broker.BrokerStartup", bd, conf),
		dir:  bd, log: filepath.Join(bd, "out.log")}, nil
}

// Label names a broker for the result table: in a set whose brokers mix
// both implementations "b1 (Java)" / "b1 (Java 5.4.0)" / "b0 (ours)", else
// the bare name.
// names may chain several brokers with "→" (a master that changed again).
func (s *Set) Label(names string) string {
	if !s.Roles.MixedBrokers() {
		return names
	}
	parts := strings.Split(names, "→")
	for i, p := range parts {
		for _, b := range s.Brokers {
			if b.Name == p {
				impl := "ours"
				if b.Java {
					impl = s.Roles.javaName()
				}
				parts[i] = p + " (" + impl + ")"
			}
		}
	}
	return strings.Join(parts, "→")
}

// All nodes.
func (s *Set) All() []*Node {
	return append(append(append([]*Node{}, s.Controllers...), s.Namesrv), s.Brokers...)
}

// Close kills every process and removes the namespaces.
func (s *Set) Close() {
	s.Proxy.Close()
	for _, n := range s.All() {
		if n != nil {
			n.signal(syscall.SIGCONT)
			n.Kill9()
		}
	}
	s.Topo.Close()
}

// BrokerByAddr finds a broker by its data address ("ip:port").
func (s *Set) BrokerByAddr(addr string) *Node {
	for _, b := range s.Brokers {
		if b.Addr == addr {
			return b
		}
	}
	return nil
}

// LeaderController asks the controllers which one leads.
func (s *Set) LeaderController(ctx context.Context) *Node {
	for _, c := range s.Controllers {
		if !c.Running() {
			continue
		}
		f, err := harness.Call(ctx, c.Addr, codeCtlGetMetadataInfo, nil, nil)
		if err != nil || f.Code != 0 {
			continue
		}
		if f.Ext["isLeader"] == "true" {
			return c
		}
	}
	return nil
}

// ReplicaInfo is the controller's view of the broker set.
type ReplicaInfo struct {
	MasterAddr  string
	MasterEpoch int
}

// Replica asks the leading controller for the master of BrokerName.
func (s *Set) Replica(ctx context.Context) (ReplicaInfo, bool) { return s.ReplicaOf(ctx, BrokerName) }

// ReplicaOf asks the leading controller for the master of broker set name.
func (s *Set) ReplicaOf(ctx context.Context, name string) (ReplicaInfo, bool) {
	l := s.LeaderController(ctx)
	if l == nil {
		return ReplicaInfo{}, false
	}
	f, err := harness.Call(ctx, l.Addr, codeCtlGetReplicaInfo, map[string]string{"brokerName": name}, nil)
	if err != nil || f.Code != 0 {
		return ReplicaInfo{}, false
	}
	ep, _ := strconv.Atoi(f.Ext["masterEpoch"])
	return ReplicaInfo{MasterAddr: f.Ext["masterAddress"], MasterEpoch: ep}, f.Ext["masterAddress"] != ""
}

// EpochEntry is one epoch file range.
type EpochEntry struct {
	Epoch       int   `json:"epoch"`
	StartOffset int64 `json:"startOffset"`
	EndOffset   int64 `json:"endOffset"`
}

// EpochCache is GET_BROKER_EPOCH_CACHE's body.
type EpochCache struct {
	BrokerID  int64        `json:"brokerId"`
	EpochList []EpochEntry `json:"epochList"`
	MaxOffset int64        `json:"maxOffset"`
}

// GetEpochCache asks one broker.
func GetEpochCache(ctx context.Context, addr string) (EpochCache, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	f, err := harness.Call(ctx, addr, codeGetBrokerEpochCache, nil, nil)
	if err != nil {
		return EpochCache{}, err
	}
	if f.Code != 0 {
		return EpochCache{}, fmt.Errorf("GET_BROKER_EPOCH_CACHE %s: code %d %s", addr, f.Code, f.Remark)
	}
	var c EpochCache
	if err := json.Unmarshal(f.Body, &c); err != nil {
		return c, fmt.Errorf("epoch cache of %s: %w", addr, err)
	}
	return c, nil
}

// WaitMaster polls until the controller names a master of BrokerName
// other than not whose broker answers as master (brokerId 0) with that
// epoch last.
func (s *Set) WaitMaster(ctx context.Context, not string, timeout time.Duration) (*Node, ReplicaInfo, error) {
	return s.WaitMasterOf(ctx, BrokerName, not, timeout)
}

// WaitMasterOf is WaitMaster for broker set name.
func (s *Set) WaitMasterOf(ctx context.Context, name, not string, timeout time.Duration) (*Node, ReplicaInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		if r, ok := s.ReplicaOf(ctx, name); ok && r.MasterAddr != not {
			if b := s.BrokerByAddr(r.MasterAddr); b != nil {
				if c, err := GetEpochCache(ctx, b.Addr); err == nil && c.BrokerID == 0 && len(c.EpochList) > 0 &&
					epochCurrent(c.EpochList[len(c.EpochList)-1], c.MaxOffset, r.MasterEpoch) {
					return b, r, nil
				} else {
					last = fmt.Sprintf("master %s epoch %d: cache %+v %v", r.MasterAddr, r.MasterEpoch, c, err)
				}
			}
		} else {
			last = fmt.Sprintf("replica info %+v ok=%v", r, ok)
		}
		select {
		case <-ctx.Done():
			return nil, ReplicaInfo{}, fmt.Errorf("no master within %v: %s", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// epochCurrent says whether a master's last epoch entry stands for epoch:
// it is that epoch, or an older one that starts at the log's end. Java's
// EpochFileCache.appendEntry refuses an entry whose start offset is not
// past the last one's, so a Java broker elected again before anything was
// written keeps the older entry (seen at load 50+: broker-b's master lost
// and regained its role at epoch 5 with an empty log, its cache still
// [epoch 1 from 0]).
func epochCurrent(last EpochEntry, maxOffset int64, epoch int) bool {
	return last.Epoch == epoch || (last.Epoch < epoch && last.StartOffset == maxOffset)
}

// CreateTopic creates topic on the master and waits for the route.
func (s *Set) CreateTopic(ctx context.Context, master *Node, topic string, queues int) error {
	return harness.Attach(harness.Ours, s.Namesrv.Addr, master.Addr).CreateTopic(ctx, topic, queues, nil)
}

// MaxOffset is GET_MAX_OFFSET of one queue on addr.
func MaxOffset(ctx context.Context, addr, topic string, q int) (int64, error) {
	f, err := harness.Call(ctx, addr, codeGetMaxOffset, map[string]string{"topic": topic, "queueId": strconv.Itoa(q)}, nil)
	if err != nil {
		return 0, err
	}
	if f.Code != 0 {
		return 0, fmt.Errorf("GET_MAX_OFFSET %s q%d: code %d %s", topic, q, f.Code, f.Remark)
	}
	return strconv.ParseInt(f.Ext["offset"], 10, 64)
}
