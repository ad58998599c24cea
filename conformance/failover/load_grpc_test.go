package failover

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// The gRPC load against our name server + broker on 127.0.0.1 (no
// namespaces, no root), through bin/mqproxy: every gRPC send is
// acknowledged and stored once, Check places each ack on the broker by its
// key, the SimpleConsumer gets every key, and Close ends the JVM and the
// proxy.
func TestGRPCLoad(t *testing.T) {
	env, err := harness.FindEnv()
	require.NoError(t, err)
	proxyBin := env.Bin("mqproxy")
	if _, err := os.Stat(proxyBin); err != nil {
		t.Skip("bin/mqproxy not built (make build)")
	}
	why, err := PrepareGRPCLoad(context.Background())
	require.NoError(t, err)
	if why != "" {
		t.Skip(why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl, err := harness.Start(ctx, env, harness.Ours, harness.Options{Dir: t.TempDir()})
	if errors.Is(err, harness.ErrNotBuilt) {
		t.Skip("bin/rocketgo not built (make build)")
	}
	require.NoError(t, err)
	defer cl.Close()
	topic := "fogrpc_t"
	require.NoError(t, cl.CreateTopic(ctx, topic, 4, nil))
	p, err := StartProxy(proxyBin, t.TempDir(), cl.NamesrvAddr, 0)
	require.NoError(t, err)
	defer p.Close()

	l := &Load{Topic: topic}
	l.grpc, err = startGRPCLoad(p.Endpoint, topic, "fogrpc-"+ClientGRPC, 5000, 2, 10*time.Millisecond, l.Add, l.addDelivery)
	require.NoError(t, err)
	l.stopFns = append(l.stopFns, l.closeJava)
	defer l.Close()
	require.Equal(t, []string{ClientGo, ClientGRPC}, l.Senders())
	require.NoError(t, l.grpc.awaitFirstOK(60*time.Second))
	require.Eventually(t, func() bool { return l.AckedSince(time.Time{}) >= 40 }, 60*time.Second, 50*time.Millisecond)
	l.StopSending()
	acks := l.Acks()
	ok := map[string]bool{}
	for _, a := range acks {
		require.True(t, a.OK, "%+v", a)
		require.Equal(t, ClientGRPC, a.Client)
		require.True(t, strings.HasPrefix(a.Key, "fogrpc-grpc-"), a.Key)
		ok[a.Key] = true
	}
	require.Eventually(t, func() bool {
		seen := map[string]bool{}
		for _, g := range l.Deliveries() {
			seen[g.Key] = true
		}
		for k := range ok {
			if !seen[k] {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "the SimpleConsumer got every key")

	stored, err := ReadAll(ctx, cl.BrokerAddr, topic, "fogrpc_check", 4)
	require.NoError(t, err)
	var r Result
	Check(&r, acks, l.Deliveries(), stored, EpochCache{}, time.Time{}, "", "")
	require.Zero(t, r.Lost)
	require.Zero(t, r.DupStore)
	require.Equal(t, len(acks), r.ByClient[ClientGRPC].Acked)
	require.Zero(t, r.ByClient[ClientGRPC].Undeliv)
	for _, a := range acks {
		require.Equal(t, cl.BrokerAddr, a.Host, "placed on the broker: %+v", a)
	}
	j := l.grpc
	l.Close()
	select {
	case <-j.done:
	default:
		t.Fatal("JVM still running after Close")
	}
	require.Empty(t, l.Err())
}
