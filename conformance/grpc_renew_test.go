package conformance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/grpcsdk"
	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// renewInvisible is the short defaultInvisibleTimeMills the auto-renew
// servers run with; the driver's listener holds a message three times it.
const renewInvisible = 3 * time.Second

// renewCase is one server of TestGRPCAutoRenewJava and the scenario its
// auto-renew switch calls for.
type renewCase struct {
	name     string
	kind     string // grpcNative or grpcJava
	renew    bool   // enableProxyAutoRenew
	scenario string
}

// TestGRPCAutoRenewJava drives the proxy's receipt-handle auto-renew
// (proxy/grpcsvc renew.go) with the real SDK: rocketmq-client-java 5.0.8's
// PushConsumer, whose receives ask auto_renew. With enableProxyAutoRenew
// (and defaultInvisibleTimeMills 3 s) a listener holding a message 9 s
// gets it once; with it off the PushConsumer's receives (no invisible
// duration) are refused and it gets nothing, the message staying for a
// SimpleConsumer. The native endpoint runs both; Apache's proxy 5.3.3 on
// the Java broker is the reference when its jars are fetched
// (CONFORMANCE_GRPC_RENEW_JAVA=0 leaves it out).
func TestGRPCAutoRenewJava(t *testing.T) {
	if os.Getenv("CONFORMANCE_MATRIX") == "1" || os.Getenv("CONFORMANCE_GOLDEN") == "1" {
		t.Skip("matrix/golden run selected")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	var d *grpcsdk.Driver
	for _, x := range grpcsdk.NewDrivers(filepath.Join(env.Root, "conformance")) {
		if x.SDK == grpcsdk.Java {
			d = x
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := d.Prepare(ctx); err != nil {
		if errors.Is(err, grpcsdk.ErrNoToolchain) {
			t.Skip(err)
		}
		require.NoError(t, err)
	}
	cases := []renewCase{
		{name: "native", kind: grpcNative, renew: true, scenario: "push_auto_renew"},
		{name: "native-renew-off", kind: grpcNative, renew: false, scenario: "push_no_auto_renew"},
	}
	if os.Getenv("CONFORMANCE_GRPC_RENEW_JAVA") != "0" {
		cases = append(cases,
			renewCase{name: "java", kind: grpcJava, renew: true, scenario: "push_auto_renew"},
			renewCase{name: "java-renew-off", kind: grpcJava, renew: false, scenario: "push_no_auto_renew"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := startRenewServer(ctx, t, env, c)
			if err != nil {
				var ny notYetError
				if errors.As(err, &ny) || errors.Is(err, harness.ErrNoJava) || errors.Is(err, harness.ErrNotBuilt) {
					t.Skipf("%s: %v", c.name, err)
				}
				require.NoError(t, err)
			}
			defer srv.close()
			s := grpcsdk.Scenario{Name: c.scenario, TopicType: "NORMAL", RetryMax: 16, Timeout: 90 * time.Second}
			prefix := "R" + strconv.FormatInt(time.Now().UnixMilli()%100000, 10)
			require.NoError(t, grpcsdk.Setup(ctx, srv.cluster, prefix, []grpcsdk.Scenario{s}))
			logDir := t.TempDir()
			rs := d.Run(ctx, c.name, []grpcsdk.Scenario{s}, grpcsdk.Options{Endpoint: srv.endpoint, Prefix: prefix,
				LogPath:  filepath.Join(logDir, "java.log"),
				JVMProps: []string{"-DinvisibleMs=" + strconv.FormatInt(renewInvisible.Milliseconds(), 10)}})
			require.Len(t, rs, 1)
			r := rs[0]
			t.Logf("%-8s %-20s %-18s %5.1fs %s", r.Status, r.Scenario, c.name, r.Elapsed.Seconds(), r.Detail)
			if r.Status != scenario.Pass {
				log, _ := os.ReadFile(filepath.Join(logDir, "java.log"))
				t.Fatalf("%s × %s: %s %s\n--- driver log\n%s\n%s", r.Scenario, c.name, r.Status, r.Detail, tailString(string(log), 3000), srv.logs())
			}
		})
	}
}

// startRenewServer starts the case's server with the short invisible time
// and its auto-renew switch: the native endpoint reads the proxy keys from
// broker.conf, Apache's proxy from rmq-proxy.json.
func startRenewServer(ctx context.Context, t *testing.T, env harness.Env, c renewCase) (*grpcServer, error) {
	dir := t.TempDir()
	ms := strconv.FormatInt(renewInvisible.Milliseconds(), 10)
	keys := [][2]string{{"enableProxyAutoRenew", strconv.FormatBool(c.renew)}, {"defaultInvisibleTimeMills", ms},
		{"renewAheadTimeMillis", "1000"}, {"renewSchedulePeriodMillis", "500"}, {"minInvisibleTimeMillsForRecv", "1000"}}
	switch c.kind {
	case grpcNative:
		flag, err := grpcFlag(env.Bin("rocketgo"))
		if err != nil {
			return nil, err
		}
		port, err := harness.FreePort()
		if err != nil {
			return nil, err
		}
		val := "127.0.0.1:" + strconv.Itoa(port)
		if strings.Contains(strings.ToLower(flag), "port") {
			val = strconv.Itoa(port)
		}
		var conf []string
		for _, kv := range keys {
			conf = append(conf, kv[0]+"="+kv[1])
		}
		cl, err := harness.Start(ctx, env, harness.Ours, harness.Options{Dir: dir, OursArgs: []string{"-" + flag, val}, BrokerExtraConf: conf})
		if err != nil {
			return nil, err
		}
		if err := waitTCP(ctx, "127.0.0.1:"+strconv.Itoa(port), 30*time.Second); err != nil {
			cl.Close()
			return nil, err
		}
		return &grpcServer{cluster: cl, endpoint: "127.0.0.1:" + strconv.Itoa(port)}, nil
	case grpcJava:
		if !env.HaveJavaProxy() {
			return nil, harness.ErrNoJava
		}
		cl, err := harness.Start(ctx, env, harness.Java, harness.Options{Dir: dir})
		if err != nil {
			return nil, err
		}
		var conf []string
		for _, kv := range keys {
			if kv[0] == "minInvisibleTimeMillsForRecv" {
				continue // javaserver.sh start-proxy sets it
			}
			conf = append(conf, strconv.Quote(kv[0])+": "+kv[1])
		}
		px, err := harness.StartJavaProxy(ctx, env, cl.NamesrvAddr, filepath.Join(dir, "java-proxy"), conf)
		if err != nil {
			cl.Close()
			return nil, err
		}
		return &grpcServer{cluster: cl, proxy: px, endpoint: px.GRPCAddr}, nil
	}
	return nil, errors.New("unknown renew server kind " + c.kind)
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
