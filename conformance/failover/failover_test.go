package failover

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFailover runs the fault-injection suite (make test-failover sets
// CONFORMANCE_FAILOVER=1). FAILOVER_FAULTS (comma list, default the
// short version: kill9-master,partition-master-controllers,kill-during-truncation or "all"),
// FAILOVER_RUNS (default 1), FAILOVER_HOLD (default 10s), FAILOVER_KIND
// (comma list of Kinds, the groups java-5.3.3 and java-5.4.0, or "all";
// default ours), FAILOVER_MD (write the table there), FAILOVER_DIR (keep
// logs and stores under it), FAILOVER_PROXY_PORT (mqproxy's gRPC port,
// its remoting port one above; default free ports),
// FAILOVER_READY_TIMEOUT (default 90s: the wait for a master before and
// after each fault).
func TestFailover(t *testing.T) {
	if os.Getenv("CONFORMANCE_FAILOVER") == "" {
		t.Skip("set CONFORMANCE_FAILOVER=1 (make -C conformance test-failover): it starts real processes in network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("failover suite: needs root for ip netns")
	}
	if why := Available(); why != "" {
		t.Skip("failover suite: " + why)
	}
	names := strings.Split(envOr("FAILOVER_FAULTS", "kill9-master,partition-master-controllers,kill-during-truncation"), ",")
	if names[0] == "all" {
		names = nil
		for _, f := range Faults {
			names = append(names, f.Name)
		}
	}
	var faults []Fault
	for _, n := range names {
		f, ok := FaultByName(strings.TrimSpace(n))
		require.True(t, ok, "unknown fault %q", n)
		faults = append(faults, f)
	}
	runs, err := strconv.Atoi(envOr("FAILOVER_RUNS", "1"))
	require.NoError(t, err)
	o := DefaultOptions()
	if h := os.Getenv("FAILOVER_HOLD"); h != "" {
		o.Hold, err = time.ParseDuration(h)
		require.NoError(t, err)
	}
	if d := os.Getenv("FAILOVER_READY_TIMEOUT"); d != "" {
		o.Ready, err = time.ParseDuration(d)
		require.NoError(t, err, "FAILOVER_READY_TIMEOUT")
	}

	wd, err := os.Getwd()
	require.NoError(t, err)
	dir := t.TempDir()
	if d := os.Getenv("FAILOVER_DIR"); d != "" { // keep the logs and stores
		dir = filepath.Join(d, time.Now().UTC().Format("20060102T150405"))
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	bins, err := BuildBins(filepath.Join(wd, "..", ".."), dir)
	require.NoError(t, err)
	// The gRPC client load (mqproxy + the Java gRPC SDK); FAILOVER_GRPC=0 turns it off.
	noGRPC := "FAILOVER_GRPC=0"
	if os.Getenv("FAILOVER_GRPC") != "0" {
		noGRPC, err = PrepareGRPCLoad(context.Background())
		require.NoError(t, err)
	}
	if noGRPC != "" {
		t.Logf("no gRPC client load: %s", noGRPC)
		bins.Proxy = ""
	}
	if p := os.Getenv("FAILOVER_PROXY_PORT"); p != "" { // the proxy's ports: p (gRPC) and p+1
		bins.ProxyPort, err = strconv.Atoi(p)
		require.NoError(t, err, "FAILOVER_PROXY_PORT")
	}
	kinds, err := parseKinds(envOr("FAILOVER_KIND", KindOurs))
	require.NoError(t, err)
	for _, k := range kinds {
		if r, _ := RolesOf(k); r.AnyJava() {
			lib, fetch := filepath.Join(wd, "..", ".cache", "java-server", "lib"), "conformance/scripts/javaserver.sh fetch"
			if r.Java54 {
				lib, fetch = filepath.Join(wd, "..", ".cache", "java-server", "lib-5.4.0"), "make -C conformance java-server-5.4"
			}
			if _, err := os.Stat(lib); err != nil {
				t.Skipf("no Java %s server jars (%s)", r.JavaVersion(), fetch)
			}
			if _, err := exec.LookPath("java"); err != nil {
				t.Skip("no java")
			}
			if r.Java54 {
				bins.JavaLib54 = lib
			} else {
				bins.JavaLib = lib
			}
		}
	}
	// Bound of the whole test: 8 minutes per fault run per set.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(kinds)*runs*len(faults)*2)*4*time.Minute)
	defer cancel()
	var rs []Result
	for _, kind := range kinds {
		rs = append(rs, runSet(t, ctx, filepath.Join(dir, kind), bins, kind, faults, runs, o)...)
	}
	table := Table(rs)
	t.Log("\n" + table)
	if md := os.Getenv("FAILOVER_MD"); md != "" {
		require.NoError(t, os.WriteFile(md, []byte(mdDoc(table, kinds, runs, o)), 0o644))
	}
	for _, r := range rs {
		require.Zero(t, r.Lost, "%s %s run %d: acknowledged then lost: %v", r.Set, r.Fault, r.Run, r.LostExamples)
		require.False(t, r.SplitBrain(), "%s %s run %d: two brokers wrote in one epoch: %v, stale acks %d", r.Set, r.Fault, r.Run, r.SplitEpochs, r.StaleAcks)
		require.Empty(t, r.Err, "%s %s run %d", r.Set, r.Fault, r.Run)
	}
}

// runSet starts one topology of kind and runs every fault runs times.
func runSet(t *testing.T, ctx context.Context, dir string, bins Bins, kind string, faults []Fault, runs int, o Options) []Result {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	s, err := StartSet(ctx, dir, bins, kind)
	require.NoError(t, err)
	defer s.Close()
	defer func() {
		if t.Failed() {
			for _, n := range s.All() {
				t.Logf("--- %s/%s log tail:\n%s", kind, n.Name, n.Tail(3000))
			}
		}
	}()
	var rs []Result
	for run := range runs {
		for _, f := range faults {
			start := time.Now()
			r := RunFault(ctx, s, f, run, o, t.Logf)
			r.OldMaster, r.NewMaster = s.Label(r.OldMaster), s.Label(r.NewMaster)
			t.Logf("%s %s run %d (%v): acked %d lost %d dup stored %d dup delivered %d failover raw %v client %v split %v %s→%s epochs %s err %q",
				kind, f.Name, run, time.Since(start).Round(time.Second), r.Acked, r.Lost, r.DupStore, r.DupDeliv,
				r.ServerRecovery.Round(time.Millisecond), r.Recovery.Round(time.Millisecond), r.SplitBrain(), r.OldMaster, r.NewMaster, r.Epochs, r.Err)
			rs = append(rs, r)
		}
	}
	return rs
}

// parseKinds reads FAILOVER_KIND: a comma list of Kinds, of the groups
// java-5.3.3 (Kinds533) and java-5.4.0 (Kinds54), or "all".
func parseKinds(v string) ([]string, error) {
	if strings.TrimSpace(v) == "all" {
		return Kinds, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		group := []string{k}
		switch k {
		case "java-5.3.3":
			group = Kinds533
		case "java-5.4.0":
			group = Kinds54
		}
		for _, k := range group {
			if k == "" || seen[k] {
				continue
			}
			if _, ok := RolesOf(k); !ok {
				return nil, fmt.Errorf("FAILOVER_KIND: unknown kind %q (one of %s, java-5.3.3, java-5.4.0, or all)", k, strings.Join(Kinds, ", "))
			}
			seen[k] = true
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("FAILOVER_KIND: no kind in %q", v)
	}
	return out, nil
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// kindsDoc lists what runs each role of every kind, one markdown item
// per kind.
func kindsDoc(kinds []string) string {
	var sb strings.Builder
	for _, k := range kinds {
		r, _ := RolesOf(k)
		fmt.Fprintf(&sb, "- set %s: %s\n", k, r)
	}
	return sb.String()
}

// javaReleases names the Java releases kinds run: "Java 5.3.3", or with
// a 5.4.0 kind "Java 5.3.3 or 5.4.0 (one release per set, named in the
// set list)".
func javaReleases(kinds []string) string {
	var has533, has54 bool
	for _, k := range kinds {
		if r, _ := RolesOf(k); r.AnyJava() {
			has54 = has54 || r.Java54
			has533 = has533 || !r.Java54
		}
	}
	switch {
	case has54 && has533:
		return "Java 5.3.3 or Java 5.4.0 (one release per set, named in the set list)"
	case has54:
		return "Java 5.4.0"
	}
	return "Java 5.3.3"
}

func mdDoc(table string, kinds []string, runs int, o Options) string {
	return fmt.Sprintf(`# Failover suite (issue #15)

Written by `+"`make -C conformance test-failover`"+` (conformance/failover, see its doc.go):
three controllers (ctl), a name server (ns) and three brokers b0..b2 of one broker set, each
in its own network namespace, every role run by our binary or by %s (Java's
controllers: ControllerStartup with DLedger; the name server goes with the controllers):

%s
All sets run in one session with the same options and faults: Go client load (%d sender goroutines, one send per %v each, keyed,
SendSync) and a push consumer, and beside it the same load of the Java client 5.3.3 (one JVM
in the root namespace, as many sender threads at the same pace, sync sends, its own consumer
group) and of the Java gRPC client 5.0.8 through our mqproxy (cluster mode, root namespace,
127.0.0.1, one per set; the SDK's defaults: 3 s request timeout, 3 attempts) with a
SimpleConsumer of its own group; brokers with allAckInSyncStateSet=true,
controllerHeartBeatTimeoutMills=3000, brokerHeartbeatInterval=500,
haMaxTimeSlaveNotCatchup=4000; stops and partitions last %v. %d run(s) per fault.
Generated %s.

Columns: acked = SEND_OK, split go/java/grpc/raw (Go client, Java client, gRPC client, raw
probes; failed sends likewise); lost = SEND_OK keys absent from the final master's log (must
be 0); dup stored = keys stored twice (client retry after a timeout); dup delivered = keys
one consumer got twice (at-least-once; go/java/grpc: each client's consumer group, undelivered
likewise); failover = fault to the first acknowledged send
started after the fault (on the new master when the master changes); split brain = an
epoch of the final master's epoch file whose records carry two store hosts, an
acknowledged offset that holds another broker's record, or an acknowledged write of the old
master that started after the new master's first acknowledged write. Beside the Go client
load, raw SEND_MESSAGE probes go every 50 ms to the broker the controller names master
(failover (raw send): fault to the first ack there) and every 200 ms to the old master
while the fault lasts (a fenced master must refuse them). The Go client refreshes its
route only every 30 s (rocketmq-client-go's fixed _PullNameServerInterval), which is most
of its failover time; the Java client keeps its default pollNameServerInterval (30 s) and does
not fetch the route again when a send fails either (failover (Java client)). The gRPC client
goes through mqproxy, whose route watch and re-resolve on a failed write follow the new master
(failover (gRPC client); its acks are placed on a broker by their key's record in the final
log, as a gRPC receipt names none). Old → new master names the brokers (in the mixed sets with
their implementation; the set list above says what runs each role). For kill9-controller-leader the raw probe column is the time until a
controller leader answers GET_REPLICA_INFO again (the probe asks it for the master), while
the Go client column shows that broker writes went on.

%s`, javaReleases(kinds), kindsDoc(kinds), o.Threads, o.Pace, o.Hold, runs, time.Now().UTC().Format(time.RFC3339), table)
}

// FAILOVER_KIND parsing and the role table: "all" is every kind, names
// are checked, and each mixed kind really mixes.
func TestKinds(t *testing.T) {
	all, err := parseKinds("all")
	require.NoError(t, err)
	require.Equal(t, Kinds, all)
	ks, err := parseKinds("ours, javabrokers-oursctl,ours")
	require.NoError(t, err)
	require.Equal(t, []string{KindOurs, KindJavaBrokersOursCtl}, ks)
	_, err = parseKinds("ours,javactl")
	require.ErrorContains(t, err, `"javactl"`)
	_, err = parseKinds(",")
	require.Error(t, err)

	for _, k := range Kinds {
		_, ok := RolesOf(k)
		require.True(t, ok, k)
	}
	r, _ := RolesOf(KindOurs)
	require.False(t, r.AnyJava())
	r, _ = RolesOf(KindJavaBrokersOursCtl)
	require.Equal(t, Roles{Brokers: [3]bool{true, true, true}}, r)
	r, _ = RolesOf(KindOursBrokersJavaCtl)
	require.Equal(t, Roles{Controllers: true, Namesrv: true}, r)
	for _, k := range []string{KindMixedOursCtl, KindMixedJavaCtl} {
		r, _ = RolesOf(k)
		require.Contains(t, r.Brokers[:], true, k)
		require.Contains(t, r.Brokers[:], false, k)
	}
	r, _ = RolesOf(KindMixedJavaCtl)
	require.Equal(t, "ctl Java, ns Java, b0 ours, b1 Java, b2 Java", r.String())
	require.True(t, r.MixedBrokers())
	mixed := &Set{Roles: r, Brokers: []*Node{{Name: "b0"}, {Name: "b1", Java: true}}}
	require.Equal(t, "b0 (ours)→b1 (Java)", mixed.Label("b0→b1"))
	require.Equal(t, "", mixed.Label(""))
	r, _ = RolesOf(KindJava)
	require.False(t, r.MixedBrokers())
	require.Equal(t, "b0→b1", (&Set{Roles: r, Brokers: mixed.Brokers}).Label("b0→b1"))

	// The 5.4.0 kinds are the 5.3.3 ones, role for role, with the other release.
	require.Len(t, Kinds54, len(Kinds533))
	for i, k := range Kinds54 {
		r54, ok := RolesOf(k)
		require.True(t, ok, k)
		r533, _ := RolesOf(Kinds533[i])
		require.True(t, r54.Java54, k)
		require.False(t, r533.Java54, Kinds533[i])
		r54.Java54 = false
		require.Equal(t, r533, r54, k)
	}
	r, _ = RolesOf(KindMixedJava54Ctl)
	require.Equal(t, "ctl Java 5.4.0, ns Java 5.4.0, b0 ours, b1 Java 5.4.0, b2 Java 5.4.0", r.String())
	require.Equal(t, "b0 (ours)→b1 (Java 5.4.0)", (&Set{Roles: r, Brokers: mixed.Brokers}).Label("b0→b1"))
	ks, err = parseKinds("ours,java-5.4.0,java54")
	require.NoError(t, err)
	require.Equal(t, append([]string{KindOurs}, Kinds54...), ks)
	ks, err = parseKinds("java-5.3.3")
	require.NoError(t, err)
	require.Equal(t, Kinds533, ks)
	require.Equal(t, "Java 5.4.0", javaReleases(Kinds54))
	require.Equal(t, "Java 5.3.3", javaReleases([]string{KindOurs, KindJava}))
	require.Contains(t, javaReleases(Kinds), "5.3.3 or Java 5.4.0")

	// Refused before any namespace is made.
	_, err = StartSet(context.Background(), t.TempDir(), Bins{}, "bogus")
	require.ErrorContains(t, err, "unknown set kind")
	_, err = StartSet(context.Background(), t.TempDir(), Bins{}, KindMixedOursCtl)
	require.ErrorContains(t, err, "no Java 5.3.3 jars")
	_, err = StartSet(context.Background(), t.TempDir(), Bins{JavaLib: "lib"}, KindJava54BrokersOursCtl)
	require.ErrorContains(t, err, "no Java 5.4.0 jars")
}
