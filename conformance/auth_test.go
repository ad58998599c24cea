package conformance

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// authToolClass is conformance/java/.../AuthTool.java.
const authToolClass = "io.rocketgo.conformance.AuthTool"

// The auth scenarios' super user: Java's initAuthenticationUser and the
// broker's innerClientAuthenticationCredentials.
const (
	authSuper     = "rocketmq"
	authSuperPass = "12345678"
)

// authConf is the broker configuration of the auth scenarios, the same
// lines for the Java 5.3.3 broker and ours (ours ignores the provider
// class names, which name its only implementation).
var authConf = []string{
	"authenticationEnabled=true",
	"authorizationEnabled=true",
	"authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider",
	"authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider",
	"authorizationProvider=org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider",
	"authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider",
	`initAuthenticationUser={"username":"` + authSuper + `","password":"` + authSuperPass + `"}`,
	`innerClientAuthenticationCredentials={"accessKey":"` + authSuper + `","secretKey":"` + authSuperPass + `"}`,
}

// TestAuth runs the authentication and authorization scenarios of issue
// #20 with the Java 5.3.3 client (AclClientRPCHook), Java's mqadmin and
// the Go client (WithCredentials), against our server (make test) and,
// with CONFORMANCE_AUTH_SERVERS=ours,java, against the Java reference
// too: every expectation holds for both.
func TestAuth(t *testing.T) {
	if os.Getenv("CONFORMANCE_MATRIX") == "1" || os.Getenv("CONFORMANCE_GOLDEN") == "1" {
		t.Skip("matrix/golden run selected")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	if !javadriver.Available() {
		t.Skip("java/mvn not installed")
	}
	kinds := []harness.Kind{harness.Ours}
	if s := os.Getenv("CONFORMANCE_AUTH_SERVERS"); s != "" {
		kinds = nil
		for _, k := range strings.Split(s, ",") {
			kinds = append(kinds, harness.Kind(k))
		}
	}
	drv := javadriver.New(filepath.Join(env.Root, "conformance", "java"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, drv.Build(ctx, javadriver.Profiles[scenario.Java5]))
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			c, err := harness.Start(ctx, env, kind, harness.Options{Dir: t.TempDir(), BrokerExtraConf: authConf})
			if errors.Is(err, harness.ErrNoJava) || errors.Is(err, harness.ErrNotBuilt) {
				t.Skip(err.Error())
			}
			require.NoError(t, err, "the broker registers with auth on (signed with its inner credentials)")
			defer c.Close()
			runAuthScenarios(ctx, t, drv, c)
		})
	}
}

// authJava runs AuthTool and returns its stdout lines.
func authJava(ctx context.Context, t *testing.T, drv *javadriver.Driver, args ...string) []string {
	t.Helper()
	var lines []string
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	err := drv.RunClass(ctx, scenario.Java5, authToolClass, args, nil, func(l string) { lines = append(lines, l) })
	require.NoError(t, err, "AuthTool %v: %v", args, lines)
	return lines
}

// mqadmin runs Java's mqadmin as the super user.
func mqadmin(ctx context.Context, t *testing.T, drv *javadriver.Driver, args ...string) string {
	t.Helper()
	out := strings.Join(authJava(ctx, t, drv, append([]string{"admin", "--ak", authSuper, "--sk", authSuperPass, "--"}, args...)...), "\n")
	t.Logf("mqadmin %s\n%s", strings.Join(args, " "), out)
	return out
}

// javaSend sends n messages with the Java client as ak/sk ("" = unsigned)
// and returns the SENT/ERR lines.
func javaSend(ctx context.Context, t *testing.T, drv *javadriver.Driver, ns, topic, ak, sk string, n int) []string {
	t.Helper()
	args := []string{"send", "--namesrv", ns, "--topic", topic, "--count", fmt.Sprint(n)}
	if ak != "" {
		args = append(args, "--ak", ak, "--sk", sk)
	}
	var out []string
	for _, l := range authJava(ctx, t, drv, args...) {
		if strings.HasPrefix(l, "SENT ") || strings.HasPrefix(l, "ERR ") {
			out = append(out, l)
		}
	}
	require.Len(t, out, n, "one line per send")
	t.Logf("Java send to %s as %q: %v", topic, ak, out)
	return out
}

func requireAllSent(t *testing.T, lines []string, what string) {
	t.Helper()
	for _, l := range lines {
		require.True(t, strings.HasPrefix(l, "SENT SEND_OK"), "%s: %s", what, l)
	}
}

func requireAllRefused(t *testing.T, lines []string, what string) {
	t.Helper()
	for _, l := range lines {
		require.True(t, strings.HasPrefix(l, "ERR 16 "), "%s: want NO_PERMISSION (16), got %s", what, l)
	}
}

func runAuthScenarios(ctx context.Context, t *testing.T, drv *javadriver.Driver, c *harness.Cluster) {
	ns, br := c.NamesrvAddr, c.BrokerAddr
	for _, topic := range []string{"AuthT", "AuthOther", "AuthDeny"} {
		out := mqadmin(ctx, t, drv, "updateTopic", "-b", br, "-t", topic, "-r", "4", "-w", "4")
		require.Contains(t, out, "create topic to "+br+" success", "the super user creates topics")
	}
	out := mqadmin(ctx, t, drv, "createUser", "-b", br, "-u", "alice", "-p", "alice-secret")
	require.NotContains(t, out, "Exception", "createUser")
	out = mqadmin(ctx, t, drv, "createUser", "-b", br, "-u", "bob", "-p", "bob-secret")
	require.NotContains(t, out, "Exception", "createUser")
	out = mqadmin(ctx, t, drv, "getUser", "-b", br, "-u", "alice")
	require.Contains(t, out, "alice", "getUser")
	out = mqadmin(ctx, t, drv, "listUser", "-b", br)
	require.Contains(t, out, "alice")
	require.Contains(t, out, "bob")

	out = mqadmin(ctx, t, drv, "createAcl", "-b", br, "-s", "User:alice", "-r", "Topic:AuthT", "-a", "Pub", "-d", "Allow")
	require.NotContains(t, out, "Exception", "createAcl")
	out = mqadmin(ctx, t, drv, "getAcl", "-b", br, "-s", "User:alice")
	require.Contains(t, out, "Topic:AuthT")

	t.Run("right_signature_passes", func(t *testing.T) {
		requireAllSent(t, javaSend(ctx, t, drv, ns, "AuthT", "alice", "alice-secret", 2), "Java client as alice")
		require.NoError(t, goSend(ns, "AuthT", "alice", "alice-secret"), "Go client as alice")
	})
	t.Run("wrong_signature_refused", func(t *testing.T) {
		requireAllRefused(t, javaSend(ctx, t, drv, ns, "AuthT", "alice", "not-her-secret", 1), "wrong secret")
		requireNoPermission(t, goSend(ns, "AuthT", "alice", "not-her-secret"))
	})
	t.Run("missing_signature_refused", func(t *testing.T) {
		requireAllRefused(t, javaSend(ctx, t, drv, ns, "AuthT", "", "", 1), "unsigned")
		requireNoPermission(t, goSend(ns, "AuthT", "", ""))
	})
	t.Run("unknown_user_refused", func(t *testing.T) {
		requireAllRefused(t, javaSend(ctx, t, drv, ns, "AuthT", "mallory", "whatever-1", 1), "unknown user")
	})
	t.Run("signature_replayed_onto_another_body_refused", func(t *testing.T) {
		ext := map[string]string{"a": "authtool_pg", "b": "AuthT", "c": "TBW102", "d": "4", "e": "0", "f": "0",
			"g": fmt.Sprint(time.Now().UnixMilli()), "h": "0", "i": "", "j": "0", "k": "false", "m": "false", "AccessKey": "alice"}
		ext["Signature"] = javaSignature(ext, []byte("the signed body"), "alice-secret")
		f, err := harness.Call(ctx, br, 310, ext, []byte("the signed body"))
		require.NoError(t, err)
		require.EqualValues(t, 0, f.Code, "the signed request itself passes: %s", f.Remark)
		f, err = harness.Call(ctx, br, 310, ext, []byte("another body"))
		require.NoError(t, err)
		require.EqualValues(t, 16, f.Code, "replayed signature: %s", f.Remark)
	})
	t.Run("no_pub_on_topic_refused", func(t *testing.T) {
		requireAllRefused(t, javaSend(ctx, t, drv, ns, "AuthOther", "alice", "alice-secret", 1), "alice has no Pub on AuthOther")
		requireNoPermission(t, goSend(ns, "AuthOther", "alice", "alice-secret"))
	})
	t.Run("deny_beats_allow", func(t *testing.T) {
		out := mqadmin(ctx, t, drv, "createAcl", "-b", br, "-s", "User:bob", "-r", "Topic:Auth*", "-a", "Pub", "-d", "Allow")
		require.NotContains(t, out, "Exception")
		out = mqadmin(ctx, t, drv, "updateAcl", "-b", br, "-s", "User:bob", "-r", "Topic:AuthDeny", "-a", "Pub", "-d", "Deny")
		require.NotContains(t, out, "Exception")
		requireAllSent(t, javaSend(ctx, t, drv, ns, "AuthOther", "bob", "bob-secret", 1), "bob's prefix allow")
		requireAllRefused(t, javaSend(ctx, t, drv, ns, "AuthDeny", "bob", "bob-secret", 1), "bob's literal deny")
	})
	t.Run("disabled_user_refused", func(t *testing.T) {
		out := mqadmin(ctx, t, drv, "updateUser", "-b", br, "-u", "alice", "-s", "disable")
		require.NotContains(t, out, "Exception")
		requireAllRefused(t, javaSend(ctx, t, drv, ns, "AuthT", "alice", "alice-secret", 1), "disabled alice")
		out = mqadmin(ctx, t, drv, "updateUser", "-b", br, "-u", "alice", "-s", "enable")
		require.NotContains(t, out, "Exception")
		requireAllSent(t, javaSend(ctx, t, drv, ns, "AuthT", "alice", "alice-secret", 1), "enabled again")
	})
	t.Run("consume_needs_sub", func(t *testing.T) {
		args := []string{"consume", "--namesrv", ns, "--topic", "AuthT", "--group", "AuthG", "--expect", "5", "--deadline-ms", "40000",
			"--ak", "alice", "--sk", "alice-secret"}
		out := mqadmin(ctx, t, drv, "updateAcl", "-b", br, "-s", "User:alice", "-r", "Topic:AuthT", "-a", "Pub,Sub", "-d", "Allow")
		require.NotContains(t, out, "Exception")
		out = mqadmin(ctx, t, drv, "updateAcl", "-b", br, "-s", "User:alice", "-r", "Group:AuthG", "-a", "Sub", "-d", "Allow")
		require.NotContains(t, out, "Exception")
		lines := authJava(ctx, t, drv, args...)
		// Two Java sends, one Go send, the raw signed frame, and one after
		// alice was enabled again.
		got := -1
		for _, l := range lines {
			if n, ok := strings.CutPrefix(l, "DONE got="); ok {
				got, _ = strconv.Atoi(n)
			}
		}
		require.GreaterOrEqual(t, got, 5, "alice consumes what she sent: %v", lines)
	})
	t.Run("acl_and_user_deleted", func(t *testing.T) {
		out := mqadmin(ctx, t, drv, "deleteAcl", "-b", br, "-s", "User:bob", "-r", "Topic:Auth*")
		require.NotContains(t, out, "Exception")
		requireAllRefused(t, javaSend(ctx, t, drv, ns, "AuthOther", "bob", "bob-secret", 1), "bob's allow deleted")
		out = mqadmin(ctx, t, drv, "deleteUser", "-b", br, "-u", "bob")
		require.NotContains(t, out, "Exception")
		out = mqadmin(ctx, t, drv, "listUser", "-b", br)
		require.NotContains(t, out, "bob")
	})
}

// javaSignature is AclClientRPCHook's signature, written from its
// description: the values of the ext fields sorted by key, then the body,
// HMAC-SHA1 with the secret key, Base64.
func javaSignature(ext map[string]string, body []byte, secret string) string {
	keys := make([]string, 0, len(ext))
	for k := range ext {
		if k != "Signature" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	m := hmac.New(sha1.New, []byte(secret))
	for _, k := range keys {
		m.Write([]byte(ext[k]))
	}
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// goSend sends one message with the official Go client, signed with
// ak/sk unless ak is empty.
func goSend(ns, topic, ak, sk string) error { return goSendTLS(ns, topic, ak, sk, false) }

// goSendTLS is goSend, over TLS when useTLS (the Go client's WithTls).
func goSendTLS(ns, topic, ak, sk string, useTLS bool) error {
	rlog.SetLogLevel("error")
	opts := []producer.Option{producer.WithNameServer(primitive.NamesrvAddr{ns}), producer.WithRetry(0),
		producer.WithGroupName("authgo_pg"), producer.WithSendMsgTimeout(5 * time.Second), producer.WithTls(useTLS)}
	if ak != "" {
		opts = append(opts, producer.WithCredentials(primitive.Credentials{AccessKey: ak, SecretKey: sk}))
	}
	p, err := rocketmq.NewProducer(opts...)
	if err != nil {
		return err
	}
	if err := p.Start(); err != nil {
		return err
	}
	defer func() { _ = p.Shutdown() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("go auth")))
	if err != nil {
		return err
	}
	if res.Status != primitive.SendOK {
		return fmt.Errorf("send status %v", res.Status)
	}
	return nil
}

func requireNoPermission(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	var be primitive.MQBrokerErr
	if errors.As(err, &be) {
		require.EqualValues(t, 16, be.ResponseCode, "Go client: %v", err)
		return
	}
	require.Contains(t, err.Error(), "16", "Go client: want NO_PERMISSION: %v", err)
}
