package failover

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTwoGroup runs the two-group scenario (twogroup.go) for every kind of
// TWOGROUP_KIND (default "java,ours": Java 5.3.3's controllers, name server
// and brokers, then ours) in one run; not part of make test
// (CONFORMANCE_TWOGROUP=1; scripts/bench-scale.sh's twogroup curve sets
// it). TWOGROUP_METRICS appends the figures as metrics.tsv lines there;
// TWOGROUP_WARM / TWOGROUP_BEFORE / TWOGROUP_AFTER (warm-up and window lengths), TWOGROUP_THREADS
// (senders per set), TWOGROUP_DIR (keep logs and stores under it).
func TestTwoGroup(t *testing.T) {
	if os.Getenv("CONFORMANCE_TWOGROUP") == "" {
		t.Skip("set CONFORMANCE_TWOGROUP=1 (scripts/bench-scale.sh, CURVES=twogroup): it starts real processes in network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("two-group scenario: needs root for ip netns")
	}
	if why := Available(); why != "" {
		t.Skip("two-group scenario: " + why)
	}
	o := DefaultTwoGroupOptions()
	var err error
	for env, d := range map[string]*time.Duration{"TWOGROUP_WARM": &o.Warm, "TWOGROUP_BEFORE": &o.Before, "TWOGROUP_AFTER": &o.After} {
		if v := os.Getenv(env); v != "" {
			*d, err = time.ParseDuration(v)
			require.NoError(t, err, env)
		}
	}
	if v := os.Getenv("TWOGROUP_THREADS"); v != "" {
		o.Threads, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	dir := t.TempDir()
	if d := os.Getenv("TWOGROUP_DIR"); d != "" {
		dir = filepath.Join(d, time.Now().UTC().Format("20060102T150405"))
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	bins, err := BuildBins(filepath.Join(wd, "..", ".."), dir)
	require.NoError(t, err)
	bins.Proxy = "" // no gRPC load here
	kinds, err := parseKinds(envOr("TWOGROUP_KIND", KindJava+","+KindOurs))
	require.NoError(t, err)
	for _, k := range kinds {
		if r, _ := RolesOf(k); r.AnyJava() {
			lib := filepath.Join(wd, "..", ".cache", "java-server", "lib")
			if _, err := os.Stat(lib); err != nil {
				t.Skip("no Java server jars (conformance/scripts/javaserver.sh fetch)")
			}
			if _, err := exec.LookPath("java"); err != nil {
				t.Skip("no java")
			}
			bins.JavaLib = lib
		}
	}
	// Ten JVMs start on a shared 2-core machine: minutes at a high load.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(kinds))*20*time.Minute)
	defer cancel()
	var rs []TwoGroupResult
	for _, kind := range kinds {
		kd := filepath.Join(dir, kind)
		require.NoError(t, os.MkdirAll(kd, 0o755))
		r, err := RunTwoGroup(ctx, kd, bins, kind, o, t.Logf)
		if err != nil { // the next kind still runs
			t.Errorf("%s: %v", kind, err)
			continue
		}
		t.Log("\n" + r.Summary())
		require.NoError(t, os.WriteFile(filepath.Join(kd, "timeline.tsv"), []byte(strings.Join(r.Timeline, "\n")+"\n"), 0o644))
		rs = append(rs, r)
	}
	if p := os.Getenv("TWOGROUP_METRICS"); p != "" {
		var metrics []string
		for _, r := range rs {
			metrics = append(metrics, r.Metrics()...)
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(strings.Join(metrics, "\n") + "\n")
		require.NoError(t, f.Close())
		require.NoError(t, err)
	}
	for _, r := range rs {
		require.Empty(t, r.Err, r.Kind)
		// B served through A's failover: it acknowledged sends in every window.
		for _, w := range r.Windows[1] {
			require.Positive(t, w.OK, "%s: %s acknowledged nothing %s A's failover", r.Kind, GroupName(1), w.Name)
		}
	}
}

// The windows of the scenario count by answer time, split SEND_OK from
// failures, and take latency quantiles of the acknowledged sends only.
func TestTwoGroupWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(startMs, endMs int, ok bool) Ack {
		return Ack{Start: t0.Add(time.Duration(startMs) * time.Millisecond), End: t0.Add(time.Duration(endMs) * time.Millisecond), OK: ok}
	}
	acks := []Ack{at(0, 10, true), at(5, 25, true), at(100, 2000, false), at(900, 1001, true), at(1500, 2500, true)}
	w := windowOf(acks, "before", t0, t0.Add(2*time.Second))
	require.Equal(t, 3, w.OK)
	require.Equal(t, 0, w.Failed) // answered at exactly 2 s: the next window's
	require.InDelta(t, 1.5, w.TPS, 1e-9)
	require.Equal(t, 20*time.Millisecond, w.P50)
	require.Equal(t, 101*time.Millisecond, w.P99)
	require.Equal(t, 101*time.Millisecond, w.Max)
	w = windowOf(acks, "after", t0.Add(2*time.Second), t0.Add(3*time.Second))
	require.Equal(t, 1, w.OK)
	require.Equal(t, 1, w.Failed)
	empty := windowOf(nil, "x", t0, t0.Add(time.Second))
	require.Zero(t, empty.P99)
	require.Zero(t, empty.TPS)

	r := TwoGroupResult{Kind: KindOurs, ServerFailover: 1500 * time.Millisecond}
	r.Windows[1][0] = Window{TPS: 10, P99: time.Millisecond}
	r.Windows[1][1] = Window{From: t0, To: t0.Add(2 * time.Second), OK: 10, TPS: 5, P99: 1234 * time.Microsecond}
	m := strings.Join(r.Metrics(), "\n")
	require.Contains(t, m, "twogroup\t2\tours\tb_tps\t5\n")
	require.Contains(t, m, "twogroup\t2\tours\tb_p99_ms\t1.23\n")
	require.Contains(t, m, "twogroup\t2\tours\ta_server_failover_ms\t1500")
	require.Contains(t, m, "twogroup\t2\tours\tb_tps_vs_before\t0.5\n")
	require.Contains(t, m, "twogroup\t2\tours\tb_p99_vs_before\t1.23\n")
	require.NotContains(t, m, "a_tps_vs_before")
	require.NotContains(t, m, "a_client_recovery_ms")
}

// procCPU reads this process's CPU time: positive once it has worked.
func TestProcCPU(t *testing.T) {
	x := 0
	for i := range 50_000_000 {
		x += i
	}
	require.NotZero(t, x)
	require.Positive(t, procCPU(os.Getpid()))
	require.Zero(t, procCPU(-1))
}

// A master's epoch cache stands for the controller's epoch when its last
// entry is that epoch, or an older one starting at the log's end (Java
// appends no entry for an epoch that wrote nothing).
func TestEpochCurrent(t *testing.T) {
	require.True(t, epochCurrent(EpochEntry{Epoch: 5, StartOffset: 100}, 300, 5))
	require.True(t, epochCurrent(EpochEntry{Epoch: 1, StartOffset: 0}, 0, 5))
	require.False(t, epochCurrent(EpochEntry{Epoch: 1, StartOffset: 0}, 300, 5)) // written since: must be 5
	require.False(t, epochCurrent(EpochEntry{Epoch: 6, StartOffset: 300}, 300, 5))
}
