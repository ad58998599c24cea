package conformance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// codeGetBrokerClusterInfo is GET_BROKER_CLUSTER_INFO.
const codeGetBrokerClusterInfo = 106

// TestTLS runs the TLS scenarios of issue #20 with the Java 5.3.3 client
// (-Dtls.enable=true), Java's mqadmin over TLS and the Go client
// (WithTls): Java's tls.server.mode permissive (the default: TLS and
// plaintext on one port), enforcing (plaintext refused) and disabled (TLS
// refused), against our server; CONFORMANCE_TLS_SERVERS=ours,java adds
// the Java 5.3.3 reference in its default permissive mode.
func TestTLS(t *testing.T) {
	if os.Getenv("CONFORMANCE_MATRIX") == "1" || os.Getenv("CONFORMANCE_GOLDEN") == "1" {
		t.Skip("matrix/golden run selected")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	if !javadriver.Available() {
		t.Skip("java/mvn not installed")
	}
	servers := map[harness.Kind]bool{harness.Ours: true}
	if s := os.Getenv("CONFORMANCE_TLS_SERVERS"); s != "" {
		servers = map[harness.Kind]bool{}
		for _, k := range strings.Split(s, ",") {
			servers[harness.Kind(k)] = true
		}
	}
	drv := javadriver.New(filepath.Join(env.Root, "conformance", "java"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, drv.Build(ctx, javadriver.Profiles[scenario.Java5]))

	modes := []struct {
		name      string
		kind      harness.Kind
		conf      []string
		plain, tl bool // which clients the port serves
	}{
		{"ours_permissive", harness.Ours, nil, true, true},
		{"ours_enforcing", harness.Ours, []string{"tls.server.mode=enforcing", "tls.enable=true"}, false, true},
		{"ours_disabled", harness.Ours, []string{"tls.server.mode=disabled"}, true, false},
		{"java_permissive", harness.Java, nil, true, true},
	}
	for _, m := range modes {
		if !servers[m.kind] {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			c, err := harness.Start(ctx, env, m.kind, harness.Options{Dir: t.TempDir(), BrokerExtraConf: m.conf, TLS: !m.plain})
			if errors.Is(err, harness.ErrNoJava) || errors.Is(err, harness.ErrNotBuilt) {
				t.Skip(err.Error())
			}
			require.NoError(t, err)
			defer c.Close()
			for _, addr := range []string{c.NamesrvAddr, c.BrokerAddr} {
				_, perr := harness.Call(ctx, addr, codeGetBrokerClusterInfo, nil, nil)
				_, terr := harness.CallTLS(ctx, addr, codeGetBrokerClusterInfo, nil, nil)
				require.Equal(t, m.plain, perr == nil, "plaintext to %s: %v", addr, perr)
				require.Equal(t, m.tl, terr == nil, "TLS to %s: %v", addr, terr)
			}
			if m.tl {
				lines := authJava(ctx, t, drv, "-Dtls.enable=true", "send", "--namesrv", c.NamesrvAddr, "--topic", "TLST", "--count", "2")
				require.Contains(t, lines, "DONE sent=2 failed=0", "Java client over TLS: %v", lines)
				require.NoError(t, goSendTLS(c.NamesrvAddr, "TLST", "", "", true), "Go client WithTls")
				out := strings.Join(authJava(ctx, t, drv, "-Dtls.enable=true", "admin", "--", "clusterList", "-n", c.NamesrvAddr), "\n")
				require.Contains(t, out, c.BrokerAddr, "Java mqadmin clusterList over TLS:\n%s", out)
			}
			if m.plain {
				lines := authJava(ctx, t, drv, "send", "--namesrv", c.NamesrvAddr, "--topic", "TLST", "--count", "1")
				require.Contains(t, lines, "DONE sent=1 failed=0", "Java client in plaintext: %v", lines)
				require.NoError(t, goSendTLS(c.NamesrvAddr, "TLST", "", "", false), "Go client in plaintext")
			}
		})
	}
}
