package grpcsvc

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// switchover is a name server and broker group broker-a whose master can
// be replaced: the old one closed, a new one at another address started
// as broker-a's master (what a controller-mode master change looks like
// at the name server), with a gRPC endpoint in cluster mode on a backend
// whose route TTL is long, so only the watch or a re-resolve can find
// the new master.
type switchover struct {
	*cluster
	backend *RemotingBackend
	dir     string
}

func startSwitchover(t *testing.T, watch time.Duration) *switchover {
	c := startCluster(t, nil)
	log := slog.New(slog.DiscardHandler)
	client := transport.NewClient(transport.ClientConfig{Logger: log})
	t.Cleanup(func() { _ = client.Close() })
	b, err := NewRemotingBackend(RemotingConfig{NamesrvAddrs: []string{c.ns.Addr()}, RouteTTL: time.Hour, WatchInterval: watch, Client: client, Logger: log})
	require.NoError(t, err)
	gc := Default()
	gc.GRPCPort = 0
	svc, err := New(gc, b, log)
	require.NoError(t, err)
	addr, err := svc.Listen("127.0.0.1:0")
	require.NoError(t, err)
	b.StartWatch()
	t.Cleanup(func() { svc.Close(); b.Close() })
	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	c.conn, c.cli = conn, v2.NewMessagingServiceClient(conn)
	return &switchover{cluster: c, backend: b, dir: t.TempDir()}
}

// replaceMaster closes the master and starts a new broker-a master with
// the topic; it returns the new master's address once the name server
// routes topic to it, and when that was seen.
func (s *switchover) replaceMaster(t *testing.T, topic string) (string, time.Time) {
	require.NoError(t, s.b.Close())
	bc := broker.DefaultConfig()
	bc.BrokerName = "broker-a"
	bc.StorePathRootDir = filepath.Join(s.dir, "store2")
	bc.ListenIP, bc.ListenPort, bc.BrokerIP1 = "127.0.0.1", 0, "127.0.0.1"
	bc.FastListen = false
	bc.NamesrvAddr = s.ns.Addr()
	nb, err := broker.New(bc, broker.Deps{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, nb.Start())
	t.Cleanup(func() { _ = nb.Close() })
	s.b, s.broker = nb, nb.BrokerAddr()
	s.createTopic(t, topic, "NORMAL", 2)
	var seen time.Time
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r, err := s.admin.Invoke(ctx, s.ns.Addr(), newRequest(codec.ReqGetRouteinfoByTopic, &header.GetRouteInfoRequest{Topic: topic}))
		if err != nil || r.Code != int32(codec.RespSuccess) {
			return false
		}
		rd, err := body.DecodeTopicRouteData(r.Body)
		if a, ok := masterAddr(&rd, "broker-a"); err == nil && ok && a == s.broker {
			seen = time.Now()
			return true
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	return s.broker, seen
}

// cachedMaster is broker-a's master in the backend's cached route of
// topic ("" when none is cached), without fetching.
func (b *RemotingBackend) cachedMaster(topic string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.routes[topic]
	if !ok {
		return ""
	}
	a, _ := masterAddr(c.r, "broker-a")
	return a
}

func (s *switchover) send(t *testing.T, topic, id string) *v2.SendMessageResponse {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second) // the SDKs' request timeout
	defer cancel()
	r, err := s.cli.SendMessage(as(ctx, "failover-client"), &v2.SendMessageRequest{Messages: []*v2.Message{newMessage(topic, id, "body "+id)}})
	require.NoError(t, err)
	return r
}

// The route watch follows a master change at the name server within a
// second although the cached route would live an hour.
func TestRouteWatchFollowsMasterChange(t *testing.T) {
	s := startSwitchover(t, 0) // default watch interval
	s.createTopic(t, "WatchT", "NORMAL", 2)
	old := s.broker
	r := s.send(t, "WatchT", "W-1")
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), r.GetStatus().GetMessage())
	require.Equal(t, old, s.backend.cachedMaster("WatchT"))

	nm, seen := s.replaceMaster(t, "WatchT")
	require.NotEqual(t, old, nm)
	require.Eventually(t, func() bool { return s.backend.cachedMaster("WatchT") == nm }, 5*time.Second, 5*time.Millisecond)
	lag := time.Since(seen)
	t.Logf("watch: cached route names the new master %v after the name server did (interval %v)", lag.Round(time.Millisecond), defaultWatchInterval)
	require.Less(t, lag, time.Second, "the watch took %v", lag)
	r = s.send(t, "WatchT", "W-2")
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), r.GetStatus().GetMessage())
}

// Without the watch, a send to a dead master re-resolves the route and is
// sent once more, to the new master, within one request.
func TestSendReresolvesAfterFailedWrite(t *testing.T) {
	s := startSwitchover(t, -1) // watch off: only the failed write can notice
	s.createTopic(t, "ReresT", "NORMAL", 2)
	old := s.broker
	r := s.send(t, "ReresT", "R-1")
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), r.GetStatus().GetMessage())
	nm, _ := s.replaceMaster(t, "ReresT")
	require.Equal(t, old, s.backend.cachedMaster("ReresT"), "the stale route is still cached")
	start := time.Now()
	r = s.send(t, "ReresT", "R-2")
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), r.GetStatus().GetMessage())
	t.Logf("send after the master change: OK in %v (one failed write, one re-resolve, one retry)", time.Since(start).Round(time.Millisecond))
	require.Equal(t, nm, s.backend.cachedMaster("ReresT"))
	// The message is on the new master.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var total int64
	for q := range 2 {
		resp, err := s.admin.Invoke(ctx, nm, newRequest(codec.ReqGetMaxOffset, &header.GetMaxOffsetRequest{Topic: "ReresT", QueueID: int32(q)}))
		require.NoError(t, err)
		var h header.GetMaxOffsetResponse
		require.NoError(t, h.Decode(resp))
		total += h.Offset
	}
	require.Equal(t, int64(1), total)
}

// A route whose group has no master (the old one gone, the new one not
// registered yet) waits for one instead of answering FORBIDDEN at once;
// other routes are untouched.
func TestMasterless(t *testing.T) {
	r := &body.TopicRouteData{
		QueueDatas:  []body.QueueData{{BrokerName: "a", WriteQueueNums: 4, ReadQueueNums: 4, Perm: 6}},
		BrokerDatas: []body.BrokerData{{BrokerName: "a", BrokerAddrs: []body.BrokerAddr{{ID: 1, Addr: "127.0.0.1:1"}}}},
	}
	require.True(t, masterless(r))
	r.BrokerDatas[0].BrokerAddrs = append([]body.BrokerAddr{{ID: 0, Addr: "127.0.0.1:2"}}, r.BrokerDatas[0].BrokerAddrs...)
	require.False(t, masterless(r))
	r.QueueDatas[0].Perm = 4 // read-only: nothing to wait for
	r.BrokerDatas[0].BrokerAddrs = r.BrokerDatas[0].BrokerAddrs[1:]
	require.False(t, masterless(r))

	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	require.True(t, resolveUntil(ctx).IsZero(), "no retry fits a deadline under the reserve")
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	require.WithinDuration(t, time.Now().Add(resolveBudget), resolveUntil(ctx2), 100*time.Millisecond)
}

// Fingerprints differ when a group's master moves and not when its
// addresses are listed in another order.
func TestFingerprint(t *testing.T) {
	a := fingerprint([]body.BrokerAddr{{ID: 0, Addr: "x:1"}, {ID: 1, Addr: "y:1"}})
	require.Equal(t, a, fingerprint([]body.BrokerAddr{{ID: 1, Addr: "y:1"}, {ID: 0, Addr: "x:1"}}))
	require.NotEqual(t, a, fingerprint([]body.BrokerAddr{{ID: 0, Addr: "y:1"}, {ID: 1, Addr: "x:1"}}))
	require.NotEqual(t, a, fingerprint([]body.BrokerAddr{{ID: 1, Addr: "y:1"}}))
}
