package conformance

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

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// authBrokerConf configures ACL 2.0 metadata without turning the checks
// on, so that mqadmin may manage users and ACLs unauthenticated (Java
// needs both metadata providers set for the AUTH_* admin codes).
var authBrokerConf = []string{
	"authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider",
	"authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider",
}

// authSteps are mqadmin command lines (-b is added) and, for ours, a
// line each printout must contain ("" = print nothing but noise).
var authSteps = []struct {
	args []string
	want string
}{
	{[]string{"createUser", "-u", "alice", "-p", "alice-pw"}, "create user to <broker> success."},
	{[]string{"createUser", "-u", "admin", "-p", "admin-pw", "-t", "Super"}, "create user to <broker> success."},
	{[]string{"getUser", "-u", "alice"}, "alice             alice-pw                Normal                  enable"},
	{[]string{"listUser"}, "admin             admin-pw                Super                   enable"},
	{[]string{"listUser", "-f", "lic"}, "alice             alice-pw                Normal                  enable"},
	{[]string{"createAcl", "-s", "User:alice", "-r", "Topic:orders,Group:g*", "-a", "Pub,Sub", "-i", "10.0.0.0/8", "-d", "Allow"}, "create acl to <broker> success."},
	{[]string{"createAcl", "-s", "User:alice", "-r", "Topic:orders", "-a", "Pub", "-d", "Deny"}, "create acl to <broker> success."},
	{[]string{"getAcl", "-s", "User:alice"}, "User:alice        Custom      Topic:orders            [Pub]                 null                      Deny"},
	{[]string{"listAcl", "-s", "alice", "-r", "Group"}, "User:alice        Custom      Group:g*                [Pub, Sub]            [10.0.0.0/8]              Allow"},
	{[]string{"deleteAcl", "-s", "User:alice", "-r", "Group:g*"}, "delete acl to <broker> success."},
	{[]string{"getAcl", "-s", "User:alice"}, "User:alice        Custom      Topic:orders"},
	{[]string{"createAcl", "-s", "User:ghost", "-r", "Topic:t", "-a", "Pub", "-d", "Allow"}, "The subject of User:ghost is not exist."},
	{[]string{"deleteUser", "-u", "alice"}, "delete user to <broker> success."},
	{[]string{"getUser", "-u", "alice"}, ""},
	{[]string{"listAcl"}, ""},
	{[]string{"listUser"}, "admin             admin-pw                Super                   enable"},
}

// TestAuthMqadmin drives Java 5.3.3's mqadmin user and ACL commands
// (createUser getUser listUser createAcl getAcl listAcl deleteAcl
// deleteUser) against bin/mqbroker. With CONFORMANCE_AUTH_JAVA=1 it runs
// them against Java's 5.3.3 broker too and requires the same printouts.
// Needs `make build` and the reference jars (scripts/javaserver.sh fetch).
func TestAuthMqadmin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM per command")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	if !env.HaveJavaServer() {
		t.Skip("java or conformance/.cache/java-server/lib missing (scripts/javaserver.sh fetch)")
	}
	if _, err := os.Stat(env.Bin("mqbroker")); err != nil {
		t.Skip("bin/mqbroker missing: run make build")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	addr := startOurAuthBroker(ctx, t, env)
	ours := runAuthSteps(ctx, t, env, addr)
	for i, s := range authSteps {
		if s.want == "" {
			require.Empty(t, strings.TrimSpace(ours[i]), "%v", s.args)
			continue
		}
		require.Contains(t, ours[i], s.want, "%v", s.args)
	}
	// Merged, not duplicated: one Topic:orders entry, now Deny, its sources
	// replaced by none (Java prints the null list).
	require.Equal(t, 1, strings.Count(ours[7], "Topic:orders"), ours[7])

	if os.Getenv("CONFORMANCE_AUTH_JAVA") != "1" {
		return
	}
	c, err := harness.Start(ctx, env, harness.Java, harness.Options{Dir: t.TempDir(), BrokerExtraConf: authBrokerConf})
	require.NoError(t, err)
	defer c.Close()
	java := runAuthSteps(ctx, t, env, c.BrokerAddr)
	for i, s := range authSteps {
		require.Equal(t, java[i], ours[i], "mqadmin %v: Java's broker vs ours", s.args)
	}
}

func startOurAuthBroker(ctx context.Context, t *testing.T, env harness.Env) string {
	port, err := harness.FreeBrokerPort()
	require.NoError(t, err)
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	conf := filepath.Join(dir, "broker.conf")
	text := strings.Join(append([]string{
		"brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=0",
		"listenPort=" + strconv.Itoa(port), "brokerIP1=127.0.0.1", "listenIP=127.0.0.1", "enableFastChannel=false",
		"storePathRootDir=" + filepath.Join(dir, "store"),
	}, authBrokerConf...), "\n") + "\n"
	require.NoError(t, os.WriteFile(conf, []byte(text), 0o644))
	p, err := harness.StartProcess("mqbroker", dir, nil, env.Bin("mqbroker"), "-c", conf)
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(5 * time.Second) })

	// Ready when AUTH_LIST_USER (3005) answers SUCCESS.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		f, err := harness.Call(ctx, addr, 3005, nil, nil)
		if err == nil && f.Code == 0 {
			return addr
		}
		if done, werr := p.Exited(); done {
			t.Fatalf("mqbroker exited: %v\n%s", werr, p.Tail(2000))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("mqbroker not ready: %v, %v", err, ctx.Err())
		case <-tick.C:
		}
	}
}

// runAuthSteps runs every step against addr and returns the printouts,
// with log noise dropped and addr replaced by <broker>.
func runAuthSteps(ctx context.Context, t *testing.T, env harness.Env, addr string) []string {
	lib := filepath.Join(env.Root, "conformance", ".cache", "java-server", "lib")
	home := t.TempDir()
	out := make([]string, len(authSteps))
	for i, s := range authSteps {
		argv := append([]string{"-Xms64m", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Duser.home=" + home,
			"-cp", filepath.Join(lib, "*"), "org.apache.rocketmq.tools.command.MQAdminStartup"}, s.args...)
		argv = append(argv, "-b", addr)
		cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		b, err := exec.CommandContext(cctx, "java", argv...).CombinedOutput()
		cancel()
		require.NoError(t, err, "mqadmin %v:\n%s", s.args, b)
		out[i] = cleanAdminOutput(string(b), addr)
		fmt.Printf("mqadmin %s @%s:\n%s\n", strings.Join(s.args, " "), addr, out[i])
	}
	return out
}

// cleanAdminOutput drops logback's start-up lines and blank lines, trims
// the column padding at line ends and names the broker <broker>.
func cleanAdminOutput(s, addr string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, " \r")
		if l == "" || strings.Contains(l, "|-INFO") || strings.Contains(l, "|-WARN") {
			continue
		}
		keep = append(keep, strings.ReplaceAll(l, addr, "<broker>"))
	}
	return strings.Join(keep, "\n")
}
