package grpcsvc

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func TestBrokerKeys(t *testing.T) {
	on, port, err := BrokerKeys("")
	require.NoError(t, err)
	require.False(t, on)
	require.Equal(t, 8081, port)

	p := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(p, []byte("brokerName=b\nenableGrpcProxy=true\ngrpcServerPort=18081\n"), 0o644))
	on, port, err = BrokerKeys(p)
	require.NoError(t, err)
	require.True(t, on)
	require.Equal(t, 18081, port)
	require.True(t, IsBrokerKey("enableGrpcProxy"))
	require.False(t, IsBrokerKey("brokerName"))

	require.NoError(t, os.WriteFile(p, []byte("grpcServerPort=70000\n"), 0o644))
	_, _, err = BrokerKeys(p)
	require.Error(t, err)
}

func TestLoadProxyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rmq-proxy.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"rocketMQClusterName":"C1","namesrvAddr":"127.0.0.1:9876","grpcServerPort":9081,"enableACL":false}`), 0o644))
	pf, err := LoadProxyFile(p)
	require.NoError(t, err)
	require.Equal(t, "C1", pf.RocketMQClusterName)
	require.Equal(t, 9081, pf.GrpcServerPort)
	require.Equal(t, 8080, pf.RemotingListenPort, "Java's default")
	require.Equal(t, "cluster", pf.ProxyMode, "Java's default")
	require.Equal(t, []string{"enableACL"}, pf.Unknown)
	require.Equal(t, int64(10000), pf.MinInvisibleRecvMs, "Java's default")

	require.NoError(t, os.WriteFile(p, []byte(`{"minInvisibleTimeMillsForRecv":1000}`), 0o644))
	pf, err = LoadProxyFile(p)
	require.NoError(t, err)
	require.Equal(t, int64(1000), pf.MinInvisibleRecvMs)
	require.Empty(t, pf.Unknown)
}

func TestTuneFromBrokerConf(t *testing.T) {
	c := Default()
	require.NoError(t, TuneFromBrokerConf("", &c))
	require.Equal(t, 10*time.Second, c.MinInvisible, "Java's default")
	p := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(p, []byte("brokerName=b\nminInvisibleTimeMillsForRecv=1500\n"), 0o644))
	require.NoError(t, TuneFromBrokerConf(p, &c))
	require.Equal(t, 1500*time.Millisecond, c.MinInvisible)
	require.True(t, IsBrokerKey("minInvisibleTimeMillsForRecv"))
	require.NoError(t, os.WriteFile(p, []byte("minInvisibleTimeMillsForRecv=soon\n"), 0o644))
	require.Error(t, TuneFromBrokerConf(p, &c))
}

// Guava's consistentHash of String.hashCode, the FIFO queue choice of
// Java's proxy. The expected values were printed by Guava 31.1's
// Hashing.consistentHash (a throwaway Java program, not committed).
func TestConsistentHashMatchesGuava(t *testing.T) {
	buckets := []int{1, 4, 8, 16, 100}
	golden := map[string][]int{
		"order-42": {0, 3, 3, 10, 25},
		"a":        {0, 0, 0, 0, 29},
		"group-1":  {0, 1, 7, 15, 36},
		"":         {0, 0, 0, 0, 0},
		"消息组":      {0, 2, 7, 7, 95},
		"x-very-long-message-group-name-0123456789": {0, 3, 3, 3, 3},
	}
	for key, want := range golden {
		for i, b := range buckets {
			require.Equal(t, want[i], consistentHash(int64(message.JavaStringHash(key)), b), "key %q buckets %d", key, b)
		}
	}
	longs := []int{42, 5, 34, 0, 7, 71, 67, 17, 82, 74}
	for i, want := range longs {
		require.Equal(t, want, consistentHash(int64(i-3)*1000003, 100), "input %d", (i-3)*1000003)
	}
}

// Receipt handles are Java's ReceiptHandle: 9 fields; parse and the
// retry mark survive.
func TestParseHandle(t *testing.T) {
	h, err := parseHandle("10 1700000000000 30000 3 1 broker-a 2 11 4096")
	require.NoError(t, err)
	require.Equal(t, "broker-a", h.BrokerName)
	require.Equal(t, int32(2), h.QueueID)
	require.Equal(t, int64(11), h.MsgQueueOffset)
	require.Equal(t, int64(4096), h.commitLogOffset)
	require.Equal(t, byte('1'), h.Retry)
	_, err = parseHandle("1 2 3")
	require.Error(t, err)
	ns, name := splitNamespace("ns1%TopicA")
	require.Equal(t, "ns1", ns)
	require.Equal(t, "TopicA", name)
	ns, name = splitNamespace("%RETRY%ns1%G")
	require.Equal(t, "ns1", ns)
	require.Equal(t, "%RETRY%G", name)
	ns, name = splitNamespace("Plain")
	require.Empty(t, ns)
	require.Equal(t, "Plain", name)
}

// The auto-renew keys: Java's defaults, read from rmq-proxy.json and from
// a broker.conf (local mode).
func TestRenewKeys(t *testing.T) {
	pf := DefaultProxyFile()
	require.Equal(t, DefaultRenew().withDefaults(), pf.RenewKeys.Config())
	require.True(t, pf.EnableProxyAutoRenew)
	require.Equal(t, int64(10000), pf.RenewAheadTimeMillis)
	require.Equal(t, int64(3*3600*1000), pf.RenewMaxTimeMillis)

	dir := t.TempDir()
	js := filepath.Join(dir, "rmq-proxy.json")
	require.NoError(t, os.WriteFile(js, []byte(`{"enableProxyAutoRenew":false,"renewAheadTimeMillis":2000,"maxRenewRetryTimes":5,"renewThreadPoolQueueCapacity":10}`), 0o600))
	pf, err := LoadProxyFile(js)
	require.NoError(t, err)
	require.Empty(t, pf.Unknown)
	rc := pf.RenewKeys.Config()
	require.True(t, rc.Disabled)
	require.Equal(t, 2*time.Second, rc.Ahead)
	require.Equal(t, 5, rc.MaxRetries)
	require.Equal(t, 10, rc.Queue)
	require.Equal(t, time.Minute, rc.DefaultInvisible)

	bc := filepath.Join(dir, "broker.conf")
	require.NoError(t, os.WriteFile(bc, []byte("defaultInvisibleTimeMills=30000\nrenewSchedulePeriodMillis=1000\ninvisibleTimeMillisWhenClear=500\n"), 0o600))
	c := Default()
	require.NoError(t, TuneFromBrokerConf(bc, &c))
	require.False(t, c.Renew.Disabled)
	require.Equal(t, 30*time.Second, c.Renew.DefaultInvisible)
	require.Equal(t, time.Second, c.Renew.Period)
	require.Equal(t, 500*time.Millisecond, c.Renew.ClearInvisible)
	require.True(t, IsBrokerKey("renewAheadTimeMillis"))

	require.NoError(t, os.WriteFile(bc, []byte("renewAheadTimeMillis=-1\n"), 0o600))
	require.Error(t, TuneFromBrokerConf(bc, &c))
}
