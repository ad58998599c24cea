package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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

// The names the mqadmin table's setup creates on each server.
const (
	mqaTopic     = "MqaTopic"    // 4 queues, mqaMessages messages with keys
	mqaTopicDel  = "MqaTopicDel" // deleted by deleteTopic
	mqaGroup     = "MqaGroup"    // a live push consumer with committed offsets
	mqaProducer  = "MqaProducer" // a live producer
	mqaMessages  = 20            // sent to mqaTopic before the commands run
	mqaKeyPrefix = "mqa-key-"    // message i carries key mqa-key-i
	mqaTag       = "TagA"        // every message's tag
	mqaCluster   = "DefaultCluster"
	mqaBroker    = "broker-a"
)

// mqaServer is one name server + broker under test with the data the
// commands refer to.
type mqaServer struct {
	name        string // "ours" or "java"
	namesrv     string
	broker      string
	dir         string // scratch directory of this server's files
	commitLog   string // the first commit-log file (dumpCompactionLog)
	uniqKey     string // a message's client-side id (UNIQ_KEY)
	offsetMsgID string // the same message's offset id
	stop        func()
}

// startOursSplit starts bin/mqnamesrv and bin/mqbroker on loopback with
// the auth metadata keys mqadmin's user and ACL commands need.
func startOursSplit(ctx context.Context, t *testing.T, env harness.Env, dir string) *mqaServer {
	nsPort, err := harness.FreePort()
	require.NoError(t, err)
	brPort, err := harness.FreeBrokerPort()
	require.NoError(t, err)
	s := &mqaServer{name: "ours", dir: dir,
		namesrv: "127.0.0.1:" + strconv.Itoa(nsPort), broker: "127.0.0.1:" + strconv.Itoa(brPort)}
	nsDir, brDir := filepath.Join(dir, "mqnamesrv"), filepath.Join(dir, "mqbroker")
	require.NoError(t, os.MkdirAll(nsDir, 0o755))
	require.NoError(t, os.MkdirAll(brDir, 0o755))
	nsConf := filepath.Join(nsDir, "namesrv.conf")
	require.NoError(t, os.WriteFile(nsConf, []byte("listenPort="+strconv.Itoa(nsPort)+"\nbindAddress=127.0.0.1\norderMessageEnable=true\n"), 0o644))
	brConf := filepath.Join(brDir, "broker.conf")
	store := filepath.Join(brDir, "store")
	text := strings.Join(append([]string{
		"brokerClusterName=" + mqaCluster, "brokerName=" + mqaBroker, "brokerId=0",
		"listenPort=" + strconv.Itoa(brPort), "brokerIP1=127.0.0.1", "listenIP=127.0.0.1",
		"storePathRootDir=" + store, "namesrvAddr=" + s.namesrv,
		"autoCreateTopicEnable=true", "autoCreateSubscriptionGroup=true", "enablePropertyFilter=true",
		"traceTopicEnable=true", "mappedFileSizeCommitLog=67108864",
	}, authBrokerConf...), "\n") + "\n"
	require.NoError(t, os.WriteFile(brConf, []byte(text), 0o644))
	ns, err := harness.StartProcess("mqnamesrv", nsDir, nil, env.Bin("mqnamesrv"), "-c", nsConf)
	require.NoError(t, err)
	br, err := harness.StartProcess("mqbroker", brDir, nil, env.Bin("mqbroker"), "-c", brConf)
	if err != nil {
		ns.Stop(5 * time.Second)
		require.NoError(t, err)
	}
	s.stop = func() { br.Stop(10 * time.Second); ns.Stop(5 * time.Second) }
	s.commitLog = filepath.Join(store, "commitlog", "00000000000000000000")
	deadline := time.Now().Add(60 * time.Second)
	for {
		f, err := harness.Call(ctx, s.namesrv, 106, nil, nil) // GET_BROKER_CLUSTER_INFO
		if err == nil && f.Code == 0 && strings.Contains(string(f.Body), s.broker) {
			break
		}
		if done, werr := br.Exited(); done {
			s.stop()
			t.Fatalf("mqbroker exited: %v\n%s", werr, br.Tail(2000))
		}
		if time.Now().After(deadline) {
			s.stop()
			t.Fatalf("ours not ready: %v\n%s", err, br.Tail(2000))
		}
		time.Sleep(200 * time.Millisecond) // polling interval of a readiness check
	}
	return s
}

// startJavaRef starts Java 5.3.3's name server and broker.
func startJavaRef(ctx context.Context, t *testing.T, env harness.Env, dir string) *mqaServer {
	c, err := harness.Start(ctx, env, harness.Java, harness.Options{Dir: dir, BrokerExtraConf: authBrokerConf})
	require.NoError(t, err)
	return &mqaServer{name: "java", dir: dir, namesrv: c.NamesrvAddr, broker: c.BrokerAddr,
		commitLog: filepath.Join(dir, "java-broker", "store", "commitlog", "00000000000000000000"),
		stop:      c.Close}
}

// populate creates the topics, sends the messages, starts the live
// producer and consumer and waits until the consumer's offsets are
// committed. The clients stay up until the returned stop runs.
func (s *mqaServer) populate(ctx context.Context, t *testing.T) func() {
	goclient.Quiet()
	c := harness.Attach(harness.Ours, s.namesrv, s.broker)
	for _, topic := range []string{mqaTopic, mqaTopicDel} {
		require.NoError(t, c.CreateTopic(ctx, topic, 4, nil), s.name)
	}
	p, err := rocketmq.NewProducer(
		producer.WithNameServer(primitive.NamesrvAddr{s.namesrv}),
		producer.WithGroupName(mqaProducer),
		producer.WithInstanceName("mqa-producer-"+s.name),
		producer.WithRetry(2))
	require.NoError(t, err)
	require.NoError(t, p.Start())
	for i := range mqaMessages {
		m := primitive.NewMessage(mqaTopic, []byte(fmt.Sprintf("mqadmin table message %d", i)))
		m.WithKeys([]string{mqaKeyPrefix + strconv.Itoa(i)})
		m.WithTag(mqaTag)
		r, err := p.SendSync(ctx, m)
		require.NoError(t, err, s.name)
		require.Equal(t, primitive.SendOK, r.Status, s.name)
		if i == 3 {
			s.uniqKey, s.offsetMsgID = r.MsgID, r.OffsetMsgID
		}
	}
	var got atomic.Int64
	pc, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer(primitive.NamesrvAddr{s.namesrv}),
		consumer.WithGroupName(mqaGroup),
		consumer.WithInstance("mqa-consumer-"+s.name),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(mqaTopic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			got.Add(int64(len(msgs)))
			return consumer.ConsumeSuccess, nil
		}))
	require.NoError(t, pc.Start())
	stop := func() { _ = pc.Shutdown(); _ = p.Shutdown() }
	// Committed: QUERY_CONSUMER_OFFSET (14) of the four queues adds up.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var sum int64
		for q := range 4 {
			f, err := harness.Call(ctx, s.broker, 14, map[string]string{
				"consumerGroup": mqaGroup, "topic": mqaTopic, "queueId": strconv.Itoa(q)}, nil)
			if err == nil && f.Code == 0 {
				n, _ := strconv.ParseInt(f.Ext["offset"], 10, 64)
				sum += n
			}
		}
		if got.Load() >= mqaMessages && sum >= mqaMessages {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%s: consumed %d, committed %d of %d", s.name, got.Load(), sum, mqaMessages)
		}
		time.Sleep(500 * time.Millisecond) // polling interval of the commit check
	}
	return stop
}
