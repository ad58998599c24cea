package conformance

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/harness"
)

// The load of TestMqadminTPS: Java's clusterList InTPS/OutTPS and
// brokerStatus putTps/getTransferredTps are the first figure of
// StoreStatsService's putTps / getTransferredTps, the rate over the last
// 10 s of its once-a-second samples; so 15 s of steady load fills that
// window before the first reading.
const (
	tpsRate     = 400 // messages per second sent
	tpsWarmUp   = 15 * time.Second
	tpsMaxTotal = 240 * time.Second // the load stops by then whatever happens
	tpsTopic    = "MqaTpsTopic"
	tpsGroup    = "MqaTpsGroup"
	tpsWindow   = 10 * time.Second // the broker's window; measured rates over as long
	tpsTolerant = 0.10
)

// tpsLog records when events happened (bounded: the load's own bound).
type tpsLog struct {
	mu sync.Mutex
	at []time.Time
}

func (l *tpsLog) add(t time.Time) {
	l.mu.Lock()
	l.at = append(l.at, t)
	l.mu.Unlock()
}

// rate is the events per second in (end-d, end].
func (l *tpsLog) rate(end time.Time, d time.Duration) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, t := range l.at {
		if t.After(end.Add(-d)) && !t.After(end) {
			n++
		}
	}
	return float64(n) / d.Seconds()
}

// TestMqadminTPS sends tpsRate msg/s to a topic a push consumer drains
// and requires Java 5.3.3's `mqadmin clusterList` InTPS/OutTPS and
// `mqadmin brokerStatus` putTps/getTransferredTps within 10 % of the
// produced and consumed rates the clients measured. Ours always; with
// CONFORMANCE_MQADMIN_TPS_JAVA=1 the Java reference too (the same check
// holding there shows the method is sound). ~1 minute per server;
// CONFORMANCE_MQADMIN=1 (make -C conformance mqadmin-table).
func TestMqadminTPS(t *testing.T) {
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
	servers := []string{"ours"}
	if os.Getenv("CONFORMANCE_MQADMIN_TPS_JAVA") == "1" {
		servers = append(servers, "java")
	}
	for _, name := range servers {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			var s *mqaServer
			if name == "ours" {
				s = startOursSplit(ctx, t, env, t.TempDir())
			} else {
				s = startJavaRef(ctx, t, env, t.TempDir())
			}
			defer s.stop()
			checkAdminTPS(ctx, t, env, s)
		})
	}
}

func checkAdminTPS(ctx context.Context, t *testing.T, env harness.Env, s *mqaServer) {
	goclient.Quiet()
	c := harness.Attach(harness.Ours, s.namesrv, s.broker)
	require.NoError(t, c.CreateTopic(ctx, tpsTopic, 4, nil))

	var sent, consumed tpsLog
	pc, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer(primitive.NamesrvAddr{s.namesrv}),
		consumer.WithGroupName(tpsGroup),
		consumer.WithInstance("mqa-tps-consumer-"+s.name),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(tpsTopic, consumer.MessageSelector{},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			now := time.Now()
			for range msgs {
				consumed.add(now)
			}
			return consumer.ConsumeSuccess, nil
		}))
	require.NoError(t, pc.Start())
	defer func() { _ = pc.Shutdown() }()
	p, err := rocketmq.NewProducer(
		producer.WithNameServer(primitive.NamesrvAddr{s.namesrv}),
		producer.WithGroupName("MqaTpsProducer"),
		producer.WithInstanceName("mqa-tps-producer-"+s.name),
		producer.WithRetry(2))
	require.NoError(t, err)
	require.NoError(t, p.Start())
	defer func() { _ = p.Shutdown() }()

	// The load: a ticker hands out tpsRate tokens a second to 4 senders;
	// bounded by tpsMaxTotal and by stop.
	loadCtx, stopLoad := context.WithTimeout(ctx, tpsMaxTotal)
	defer stopLoad()
	tokens := make(chan struct{}, tpsRate)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(tokens)
		tick := time.NewTicker(time.Second / tpsRate)
		defer tick.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
				select {
				case tokens <- struct{}{}:
				default: // senders behind: the measured rate says so
				}
			}
		}
	}()
	var sendErrs sync.Map
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := []byte(strings.Repeat("x", 256))
			for range tokens {
				r, err := p.SendSync(loadCtx, primitive.NewMessage(tpsTopic, body))
				if err == nil && r.Status == primitive.SendOK {
					sent.add(time.Now())
				} else if err != nil && loadCtx.Err() == nil {
					sendErrs.Store(err.Error(), true)
				}
			}
		}()
	}
	defer wg.Wait()
	defer stopLoad()

	select {
	case <-time.After(tpsWarmUp): // the load's warm-up: fills the 10 s window
	case <-loadCtx.Done():
		t.Fatal("load ended before its warm-up")
	}
	home := t.TempDir()
	// read runs mqadmin until its output holds want: on a loaded machine
	// its 3 s RPC timeout can run out (bounded: 3 tries).
	read := func(want string, args ...string) (string, span) {
		var out []byte
		var at span
		for range 3 {
			at.from = time.Now()
			cctx, cancel := context.WithTimeout(ctx, 40*time.Second)
			var err error
			out, err = mqadminCmd(cctx, env, home, append(args, "-n", s.namesrv)...).CombinedOutput()
			cancel()
			at.to = time.Now()
			require.NoError(t, err, "mqadmin %v:\n%s", args, out)
			if strings.Contains(string(out), want) {
				break
			}
			t.Logf("%s: mqadmin %v printed no %q, again", s.name, args, want)
		}
		return string(out), at
	}
	cl, clAt := read(s.broker, "clusterList")
	bs, bsAt := read("getTransferredTps", "brokerStatus", "-b", s.broker)
	stopLoad()
	sendErrs.Range(func(k, _ any) bool { t.Logf("%s: send error: %v", s.name, k); return true })

	in, out := clusterListTPS(t, cl, s.broker)
	put := firstFigure(t, bs, "putTps")
	transferred := firstFigure(t, bs, "getTransferredTps")
	require.Greater(t, sent.rate(clAt.to, tpsWindow), tpsRate*0.25, "%s: the load did not reach a quarter of its rate", s.name)
	// The broker computed its figure at some moment while mqadmin ran:
	// it must be within 10 % of the clients' rate over the 10 s ending
	// at one of those moments.
	within := func(what string, got float64, l *tpsLog, at span) {
		best, bestAt := -1.0, at.from
		for e := at.from; !e.After(at.to); e = e.Add(250 * time.Millisecond) {
			r := l.rate(e, tpsWindow)
			if best < 0 || math.Abs(r-got) < math.Abs(best-got) {
				best, bestAt = r, e
			}
		}
		t.Logf("%s: %s %.1f, clients %.1f msg/s over the 10 s to %s (mqadmin ran %s–%s)", s.name, what, got, best,
			bestAt.Format("15:04:05.00"), at.from.Format("15:04:05.00"), at.to.Format("15:04:05.00"))
		require.InDelta(t, best, got, best*tpsTolerant, "%s: %s %.1f against %.1f msg/s measured", s.name, what, got, best)
	}
	within("clusterList InTPS", in, &sent, clAt)
	within("clusterList OutTPS", out, &consumed, clAt)
	within("brokerStatus putTps", put, &sent, bsAt)
	within("brokerStatus getTransferredTps", transferred, &consumed, bsAt)
}

// span is when one mqadmin run started and returned.
type span struct{ from, to time.Time }

var tpsFigureRe = regexp.MustCompile(`(\d+\.\d+)\(`)

// clusterListTPS reads #InTPS(LOAD) and #OutTPS(LOAD) of broker's row.
func clusterListTPS(t *testing.T, out, broker string) (float64, float64) {
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, broker) {
			continue
		}
		m := tpsFigureRe.FindAllStringSubmatch(l, 2)
		require.Len(t, m, 2, "clusterList row: %s", l)
		in, err := strconv.ParseFloat(m[0][1], 64)
		require.NoError(t, err)
		o, err := strconv.ParseFloat(m[1][1], 64)
		require.NoError(t, err)
		return in, o
	}
	t.Fatalf("clusterList lists no %s:\n%s", broker, out)
	return 0, 0
}

// firstFigure is the first number of brokerStatus's key line ("putTps : 10s 60s 600s").
func firstFigure(t *testing.T, out, key string) float64 {
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(key) + `\s*:\s*([0-9.]+)`)
	m := re.FindStringSubmatch(out)
	require.NotNil(t, m, "brokerStatus has no %s:\n%s", key, out)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err, fmt.Sprintf("%s %q", key, m[1]))
	return v
}
