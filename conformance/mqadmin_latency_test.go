package conformance

import (
	"context"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/harness"
)

// StoreStatsService prints the put-latency distribution of the last
// ended minute (printTPSInterval, 60 s): "null" before the first one
// ends. latencyWait bounds the wait for it.
const (
	latencySends = 20
	latencyWait  = 150 * time.Second
	latencyTopic = "MqaLatencyTopic"
)

// exporterPutRanges are the range names rocketmq-exporter's
// RMQMetricsCollector reads from putMessageDistributeTime.
var exporterPutRanges = []string{"<=0ms", "0~10ms", "10~50ms", "50~100ms", "100~200ms", "200~500ms", "500ms~1s",
	"1~2s", "2~3s", "3~4s", "4~5s", "5~10s", "10s~"}

var brokerStatusLineRe = regexp.MustCompile(`^(\S+)\s*: (.*)$`)

// brokerStatusTable reads `mqadmin brokerStatus` lines ("%-32s: %s").
func brokerStatusTable(out string) map[string]string {
	kv := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if m := brokerStatusLineRe.FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			kv[m[1]] = m[2]
		}
	}
	return kv
}

// TestMqadminBrokerStatusLatency sends latencySends messages, then reads
// Java 5.3.3's `mqadmin brokerStatus` until putMessageDistributeTime is
// printed, from ours and from Java 5.3.3's broker: both print "null"
// first, then the minute's puts in the 13 ranges (parsed as the exporter
// parses them, counting the sends), putLatency99/999 as "%.2f" and the
// maxima as longs; and ours prints every key Java's does. ~2 minutes per
// server; CONFORMANCE_MQADMIN=1 (make -C conformance mqadmin-table).
func TestMqadminBrokerStatusLatency(t *testing.T) {
	if os.Getenv("CONFORMANCE_MQADMIN") != "1" {
		t.Skip("CONFORMANCE_MQADMIN=1 runs the mqadmin checks (make -C conformance mqadmin-table)")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	if !env.HaveJavaServer() {
		t.Skip("java or conformance/.cache/java-server/lib missing (scripts/javaserver.sh fetch)")
	}
	if _, err := os.Stat(env.Bin("mqbroker")); err != nil {
		t.Skip("bin/mqbroker missing: run make build")
	}
	tables := map[string]map[string]string{}
	for _, name := range []string{"ours", "java"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			var s *mqaServer
			if name == "ours" {
				s = startOursSplit(ctx, t, env, t.TempDir())
			} else {
				s = startJavaRef(ctx, t, env, t.TempDir())
			}
			defer s.stop()
			tables[name] = checkBrokerStatusLatency(ctx, t, env, s)
		})
	}
	ours, java := tables["ours"], tables["java"]
	if ours == nil || java == nil {
		return
	}
	// The keys Java prints that ours does not (a store path's disk ratio
	// is named after the path: compared by its prefix).
	norm := func(k string) string {
		if strings.HasPrefix(k, "commitLogDiskRatio_") {
			return "commitLogDiskRatio_<path>"
		}
		return k
	}
	have := map[string]bool{}
	for k := range ours {
		have[norm(k)] = true
	}
	var missing, extra []string
	for k := range java {
		if !have[norm(k)] {
			missing = append(missing, k)
		}
		delete(have, norm(k))
	}
	for k := range have {
		extra = append(extra, k)
	}
	sort.Strings(missing)
	sort.Strings(extra)
	t.Logf("brokerStatus keys: java %d, ours %d; only java: %v; only ours: %v", len(java), len(ours), missing, extra)
	require.Empty(t, missing, "keys Java's brokerStatus prints and ours does not")
}

func checkBrokerStatusLatency(ctx context.Context, t *testing.T, env harness.Env, s *mqaServer) map[string]string {
	goclient.Quiet()
	c := harness.Attach(harness.Ours, s.namesrv, s.broker)
	// On a loaded machine a broker's first answers can time out: 3 tries.
	var err error
	for try := 0; try < 3; try++ {
		if err = c.CreateTopic(ctx, latencyTopic, 4, nil); err == nil {
			break
		}
		t.Logf("%s: create topic: %v; again", s.name, err)
	}
	require.NoError(t, err)
	p, err := rocketmq.NewProducer(
		producer.WithNameServer(primitive.NamesrvAddr{s.namesrv}),
		producer.WithGroupName("MqaLatencyProducer"),
		producer.WithInstanceName("mqa-latency-producer-"+s.name),
		producer.WithRetry(2))
	require.NoError(t, err)
	require.NoError(t, p.Start())
	defer func() { _ = p.Shutdown() }()
	for i := 0; i < latencySends; i++ {
		// A loaded Java broker may answer SYSTEM_BUSY (its flow control):
		// that send is tried again, up to 5 times.
		var r *primitive.SendResult
		for try := 0; try < 5; try++ {
			if r, err = p.SendSync(ctx, primitive.NewMessage(latencyTopic, []byte("latency-"+strconv.Itoa(i)))); err == nil {
				break
			}
			t.Logf("%s: send %d: %v; again", s.name, i, err)
			time.Sleep(time.Second) // back off from the broker's flow control
		}
		require.NoError(t, err)
		require.Equal(t, primitive.SendOK, r.Status)
	}
	sent := time.Now()

	home := t.TempDir()
	status := func() map[string]string {
		cctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		defer cancel()
		out, err := mqadminCmd(cctx, env, home, "brokerStatus", "-b", s.broker, "-n", s.namesrv).CombinedOutput()
		require.NoError(t, err, "%s", out)
		kv := brokerStatusTable(string(out))
		require.Contains(t, kv, "putMessageDistributeTime", "%s: brokerStatus printed:\n%s", s.name, out)
		return kv
	}
	kv := status()
	first := kv["putMessageDistributeTime"]
	deadline := time.Now().Add(latencyWait)
	for kv["putMessageDistributeTime"] == "null" {
		require.True(t, time.Now().Before(deadline), "%s: putMessageDistributeTime still null %v after the sends", s.name, time.Since(sent))
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(3 * time.Second): // the next reading; the interval ends once a minute
		}
		kv = status()
	}
	t.Logf("%s: first reading %q; %v after the sends: putMessageDistributeTime %q putLatency99 %s putLatency999 %s putMessageEntireTimeMax %s getMessageEntireTimeMax %s",
		s.name, first, time.Since(sent).Round(time.Second), kv["putMessageDistributeTime"], kv["putLatency99"], kv["putLatency999"],
		kv["putMessageEntireTimeMax"], kv["getMessageEntireTimeMax"])

	// rocketmq-exporter's BrokerRuntimeStats: split on ' ', then ':',
	// brackets stripped, Integer.parseInt each count.
	dist := map[string]int{}
	for _, part := range strings.Split(kv["putMessageDistributeTime"], " ") {
		f := strings.Split(part, ":")
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 32)
		require.NoError(t, err, part)
		dist[strings.NewReplacer("[", "", "]", "").Replace(f[0])] = int(n)
	}
	total := 0
	for _, name := range exporterPutRanges {
		n, ok := dist[name]
		require.True(t, ok, "%s: no %s in %q", s.name, name, kv["putMessageDistributeTime"])
		total += n
	}
	require.Len(t, dist, len(exporterPutRanges))
	// The first ended minute holds the sends (and any put of the broker's own).
	require.GreaterOrEqual(t, total, latencySends, "%s: %q", s.name, kv["putMessageDistributeTime"])
	for _, k := range []string{"putLatency99", "putLatency999"} {
		require.Regexp(t, `^\d+\.\d\d$`, kv[k], "%s: %s", s.name, k)
	}
	for _, k := range []string{"putMessageEntireTimeMax", "getMessageEntireTimeMax"} {
		_, err := strconv.ParseInt(kv[k], 10, 64)
		require.NoError(t, err, "%s: %s %q", s.name, k, kv[k])
	}
	return kv
}
