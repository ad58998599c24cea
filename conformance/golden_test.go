package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/capture"
	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// Source labels of golden fixtures.
const (
	srcNamesrv = "java-5.3 namesrv"
	srcBroker  = "java-5.3 broker"
)

// TestGolden re-records codec/testdata/golden (make golden): the Java
// reference server runs behind capture proxies while the Go client and both
// Java clients (JSON and ROCKETMQ header serialization) run a few scenarios.
//
//	clients ──► proxy ──► namesrv 127.0.0.1:ns
//	clients ──► proxy 127.0.0.1:P ──► broker bound to 127.0.0.2:P (advertises 127.0.0.1:P)
//	broker  ──► proxy ──► namesrv               (REGISTER_BROKER & co.)
func TestGolden(t *testing.T) {
	if os.Getenv("CONFORMANCE_GOLDEN") != "1" {
		t.Skip("set CONFORMANCE_GOLDEN=1 (make golden)")
	}
	r, err := NewRunner(t.TempDir(), printf(t))
	require.NoError(t, err)
	if !r.Env.HaveJavaServer() {
		t.Skip("java reference server not fetched (scripts/javaserver.sh fetch)")
	}
	out := filepath.Join(r.Env.Root, "codec", "testdata", "golden")
	old, _ := filepath.Glob(filepath.Join(out, "*.frame"))
	olds, _ := filepath.Glob(filepath.Join(out, "*.json"))
	for _, f := range append(old, olds...) {
		require.NoError(t, os.Remove(f))
	}
	rec, err := capture.NewRecorder(out, 2, 24<<10)
	require.NoError(t, err)

	nsPort, err := harness.FreePort()
	require.NoError(t, err)
	brPort, err := harness.FreeBrokerPort()
	require.NoError(t, err)
	nsAddr := "127.0.0.1:" + strconv.Itoa(nsPort)
	brokerAddr := "127.0.0.1:" + strconv.Itoa(brPort)

	mk := func(listen, target, server string) *capture.Proxy {
		p, err := capture.NewProxy(capture.ProxyConfig{Listen: listen, Target: target, ServerSource: server, Sink: rec})
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	nsForBroker := mk("127.0.0.1:0", nsAddr, srcNamesrv)
	nsForBroker.SetClientSource(srcBroker)
	nsForClients := mk("127.0.0.1:0", nsAddr, srcNamesrv)
	brokerProxy := mk(brokerAddr, "127.0.0.2:"+strconv.Itoa(brPort), srcBroker)
	label := func(s string) {
		nsForClients.SetClientSource(s)
		brokerProxy.SetClientSource(s)
	}
	label("") // harness set-up traffic is not recorded

	ctx := context.Background()
	cl, err := harness.Start(ctx, r.Env, harness.Java, harness.Options{
		Dir: filepath.Join(r.Dir, "golden"), NamesrvPort: nsPort, BrokerPort: brPort,
		BrokerNamesrv: nsForBroker.Addr(), BrokerExtraConf: []string{"bindAddress=127.0.0.2"},
	})
	require.NoError(t, err)
	defer cl.Close()

	pick := func(names ...string) []scenario.Scenario {
		var out []scenario.Scenario
		for _, n := range names {
			s, ok := scenario.Lookup(n)
			require.True(t, ok, n)
			out = append(out, s)
		}
		return out
	}
	stamp := time.Now().Format("150405")

	label("go client")
	goclient.Quiet()
	for _, s := range pick("admin_route", "send_push", "pull") {
		sctx, cancel := context.WithTimeout(ctx, s.Timeout)
		err := goclient.Scenarios[s.Name](sctx, goclient.Target{
			Namesrv: nsForClients.Addr(), Broker: brokerAddr, Prefix: "gold_go_" + stamp,
			CreateTopic: func(ctx context.Context, topic string, q int) error {
				return cl.CreateTopic(ctx, topic, q, nil)
			}})
		cancel()
		require.NoError(t, err, "go %s", s.Name)
	}

	if javadriver.Available() {
		for _, jc := range []struct {
			client scenario.Client
			source string
		}{{scenario.Java49, "java-4.9.8 client"}, {scenario.Java5, "java-5.x client"}} {
			for _, ser := range []string{"JSON", "ROCKETMQ"} {
				label(jc.source)
				res := r.Java.Run(ctx, jc.client, "golden", javadriver.Options{
					Namesrv: nsForClients.Addr(), Broker: brokerAddr,
					Prefix:    fmt.Sprintf("gold_%s_%s_%s", strings.NewReplacer(".", "", "-", "").Replace(string(jc.client)), strings.ToLower(ser), stamp),
					Scenarios: pick("admin_route", "send_push", "pull"),
					JVMProps:  []string{"-Drocketmq.serialize.type=" + ser},
					LogPath:   filepath.Join(r.Dir, string(jc.client)+"-"+ser+".log"),
				})
				for _, x := range res {
					require.Equal(t, scenario.Pass, x.Status, "%s %s %s: %s", jc.client, ser, x.Scenario, x.Detail)
				}
			}
		}
	} else {
		t.Log("java/mvn missing: recorded the Go client only")
	}
	label("")
	require.NoError(t, rec.Err())
	names := rec.Names()
	sort.Strings(names)
	var total int64
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(out, n+".frame"))
		require.NoError(t, err)
		total += fi.Size()
	}
	t.Logf("recorded %d frames (%d bytes) into %s", len(names), total, out)
	require.Less(t, total, int64(2<<20), "fixtures must stay under 2 MiB")
}
