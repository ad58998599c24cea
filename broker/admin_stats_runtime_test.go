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
