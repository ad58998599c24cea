package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// The runtime table's earliestMessageTimeStamp is the first record's
// store time (-1 before any), so clusterList's #Hour is right, and the
// disk ratios are the store paths' used fractions.
func TestRuntimeInfoEarliestAndDiskRatios(t *testing.T) {
	tb := startBroker(t, nil)
	require.Equal(t, "-1", runtimeTable(t, tb)["earliestMessageTimeStamp"])
	tb.topics.createIfAbsent("RT", 1, 6, 0)
	before := time.Now().UnixMilli()
	resp := tb.invoke(t, sendV1("RT", 0, "", []byte("x")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	info := runtimeTable(t, tb)
	ts, err := strconv.ParseInt(info["earliestMessageTimeStamp"], 10, 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, ts, before-1000)
	require.LessOrEqual(t, ts, time.Now().UnixMilli())
	for _, k := range []string{"commitLogDiskRatio", "consumeQueueDiskRatio"} {
		r, err := strconv.ParseFloat(info[k], 64)
		require.NoError(t, err, k)
		require.Greater(t, r, 0.0, k)
		require.LessOrEqual(t, r, 1.0, k)
	}
}

// Java's mqadmin reads the pool figures of every pool (clusterList's
// #OutTPS prints the ack pool's: "null" without them), the flush backlog
// and the store directory's capacity in MixAll.humanReadableByteCount's
// form, and one disk ratio per commit-log path.
func TestRuntimeInfoJavaKeys(t *testing.T) {
	tb := startBroker(t, nil)
	info := runtimeTable(t, tb)
	for _, k := range []string{"ackThreadPoolQueueSize", "ackThreadPoolQueueHeadWaitTimeMills",
		"litePullThreadPoolQueueSize", "queryThreadPoolQueueSize", "EndTransactionQueueSize",
		"litePullThreadPoolQueueHeadWaitTimeMills", "queryThreadPoolQueueHeadWaitTimeMills",
		"startAcceptSendRequestTimeStamp", "dispatchMaxBuffer"} {
		require.Equal(t, "0", info[k], k)
	}
	// Java's first minute (TestRuntimeInfoPutLatency: the minutes after).
	require.Equal(t, "null", info["putMessageDistributeTime"])
	require.Equal(t, "0.00", info["putLatency99"])
	require.Equal(t, "100000", info["ackThreadPoolQueueCapacity"])
	require.Equal(t, "20000", info["queryThreadPoolQueueCapacity"])
	require.Regexp(t, `^\d+(\.\d)? (B|[KMGTPE]iB)$`, info["remainHowManyDataToFlush"])
	require.Regexp(t, `^Total : \d+\.\d [KMGTPE]iB, Free : \d+(\.\d)? (B|[KMGTPE]iB)\.$`, info["commitLogDirCapacity"])
	require.Equal(t, info["commitLogDiskRatio"], info["commitLogDiskRatio_"+tb.cfg.StorePathCommitLog])
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		5 << 20: "5.0 MiB", 105105108992: "97.9 GiB"} {
		require.Equal(t, want, humanBytes(n), n)
	}
}
