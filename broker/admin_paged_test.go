package broker

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
)

// topicPage asks GET_ALL_TOPIC_CONFIG with the given extFields and returns
// the page's sorted names, its data version and totalTopicNum.
func topicPage(t *testing.T, tb *testBroker, kv ...string) ([]string, body.TopicVersion, int32) {
	t.Helper()
	resp := tb.invoke(t, request(codec.ReqGetAllTopicConfig, kv...))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	f, err := body.DecodeTopicConfigFile(resp.Body)
	require.NoError(t, err)
	var h header.GetAllTopicConfigResponse
	require.NoError(t, h.Decode(resp))
	names := make([]string, 0, len(f.TopicConfigTable))
	for n := range f.TopicConfigTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, f.DataVersion, h.TotalTopicNum
}

// Java 5.4.0's AdminBrokerProcessor.getAllTopicConfig: a request without
// topicSeq, maxTopicNum and dataVersion gets the whole table; one with them
// gets [topicSeq, topicSeq+min(splitMetadataSize, maxTopicNum)) of the
// sorted table, from 0 when its dataVersion is blank or old; totalTopicNum
// always names the whole table.
func TestGetAllTopicConfigPaged(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.SplitMetadataSize = 3 })
	for i := range 5 {
		resp := tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", fmt.Sprintf("PageT%d", i), "readQueueNums", "1", "writeQueueNums", "1", "perm", "6"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	v, all := tb.topics.snapshot()
	var sorted []string
	for _, tc := range all {
		sorted = append(sorted, tc.TopicName)
	}
	require.Greater(t, len(sorted), 6)
	dv := string(body.AppendTopicVersion(nil, v))

	// A 5.3.3 slave, mqadmin up to 5.3.3, the Go admin: no header, everything.
	names, gotV, total := topicPage(t, tb)
	require.Equal(t, sorted, names)
	require.Equal(t, v, gotV)
	require.Equal(t, int32(len(sorted)), total)

	// A 5.4.0 slave's first page: seq 0, its page size, dataVersion "".
	names, _, total = topicPage(t, tb, "topicSeq", "0", "maxTopicNum", "2000", "dataVersion", "")
	require.Equal(t, sorted[:3], names)
	require.Equal(t, int32(len(sorted)), total)
	// The next page with the first page's version.
	names, _, _ = topicPage(t, tb, "topicSeq", "3", "maxTopicNum", "2000", "dataVersion", dv)
	require.Equal(t, sorted[3:6], names)
	// maxTopicNum below splitMetadataSize wins.
	names, _, _ = topicPage(t, tb, "topicSeq", "3", "maxTopicNum", "2", "dataVersion", dv)
	require.Equal(t, sorted[3:5], names)
	// An old or blank version starts over at 0.
	old := string(body.AppendTopicVersion(nil, body.TopicVersion{Counter: v.Counter - 1, Timestamp: v.Timestamp}))
	names, _, _ = topicPage(t, tb, "topicSeq", "3", "maxTopicNum", "2000", "dataVersion", old)
	require.Equal(t, sorted[:3], names)
	names, _, _ = topicPage(t, tb, "topicSeq", "3", "maxTopicNum", "2000")
	require.Equal(t, sorted[:3], names)
	// Past the end: an empty page.
	names, _, total = topicPage(t, tb, "topicSeq", strconv.Itoa(len(sorted)), "maxTopicNum", "2000", "dataVersion", dv)
	require.Empty(t, names)
	require.Equal(t, int32(len(sorted)), total)
	// Input Java fails on answers without harm.
	names, _, _ = topicPage(t, tb, "topicSeq", "-5", "maxTopicNum", "2", "dataVersion", dv)
	require.Equal(t, sorted[:2], names)
	names, _, _ = topicPage(t, tb, "topicSeq", "1", "maxTopicNum", "0", "dataVersion", dv)
	require.Empty(t, names)
	names, _, _ = topicPage(t, tb, "topicSeq", "1", "maxTopicNum", "-7", "dataVersion", "{not json")
	require.Empty(t, names)

	// enableSplitMetadata=false (live, as Java reads it per request): the whole table.
	resp := updateConfig(t, tb, "enableSplitMetadata=false\n")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	names, _, total = topicPage(t, tb, "topicSeq", "0", "maxTopicNum", "2000", "dataVersion", "")
	require.Equal(t, sorted, names)
	require.Equal(t, int32(len(sorted)), total)
}

func TestGetAllSubscriptionGroupPaged(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.SplitMetadataSize = 4 })
	for i := range 3 {
		g := request(codec.ReqUpdateAndCreateSubscriptiongroup)
		g.Body = []byte(fmt.Sprintf(`{"groupName":"PageG%d"}`, i))
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, g).Code)
	}
	v, all := tb.groups.snapshot()
	var sorted []string
	for _, sg := range all {
		sorted = append(sorted, sg.GroupName)
	}
	require.Greater(t, len(sorted), 8)
	page := func(kv ...string) ([]string, int32) {
		resp := tb.invoke(t, request(codec.ReqGetAllSubscriptiongroupConfig, kv...))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		f, err := body.DecodeSubscriptionGroupFile(resp.Body)
		require.NoError(t, err)
		require.Equal(t, v, f.DataVersion)
		require.NotNil(t, f.ForbiddenTable)
		var h header.GetAllSubscriptionGroupResponse
		require.NoError(t, h.Decode(resp))
		var names []string
		for n := range f.SubscriptionGroupTable {
			names = append(names, n)
		}
		sort.Strings(names)
		return names, h.TotalGroupNum
	}
	names, total := page()
	require.Equal(t, sorted, names)
	require.Equal(t, int32(len(sorted)), total)
	names, total = page("groupSeq", "0", "maxGroupNum", "2000", "dataVersion", "")
	require.Equal(t, sorted[:4], names)
	require.Equal(t, int32(len(sorted)), total)
	dv := string(body.AppendTopicVersion(nil, v))
	names, _ = page("groupSeq", "4", "maxGroupNum", "2000", "dataVersion", dv)
	require.Equal(t, sorted[4:8], names)
	names, _ = page("groupSeq", "8", "maxGroupNum", "2000", "dataVersion", dv)
	require.Equal(t, sorted[8:], names)
}

// Our slave pages from a master that splits (as a 5.4.0 slave does) and
// ends up with every topic and group, page by page.
func TestSlaveSyncPagesFromOurMaster(t *testing.T) {
	master := startBroker(t, func(c *Config) { c.SplitMetadataSize = 4 })
	for i := range 9 {
		resp := master.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", fmt.Sprintf("SyncPage%d", i), "readQueueNums", "2", "writeQueueNums", "2", "perm", "6"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var topicPages, groupPages int
	cli := invokerFunc(func(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error) {
		switch req.Code {
		case int32(codec.ReqGetAllTopicConfig):
			topicPages++
			require.Equal(t, "2000", req.Value("maxTopicNum"))
		case int32(codec.ReqGetAllSubscriptiongroupConfig):
			groupPages++
		case int32(codec.ReqGetAllMessageRequestMode):
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
			resp.Body = []byte(emptyMessageRequestModes)
			return resp, nil
		}
		return master.cli.Invoke(ctx, addr, req)
	})
	tables, _ := freshSlaveTables(t)
	s := newSlaveSync(cli, fixedRole{slave: true, master: master.addr}, nil, tables, testLogger())
	require.NoError(t, s.SyncOnce(ctx))
	mv, want := master.topics.snapshot()
	_, got := tables.topics.snapshot()
	require.Equal(t, string(body.AppendTopicConfigFile(nil, mv, want)), string(body.AppendTopicConfigFile(nil, mv, got)))
	require.Equal(t, (len(want)+3)/4, topicPages)
	gv, wantG := master.groups.snapshot()
	_, gotG := tables.groups.snapshot()
	require.Equal(t, string(body.AppendSubscriptionGroupFile(nil, gv, wantG)), string(body.AppendSubscriptionGroupFile(nil, gv, gotG)))
	require.Equal(t, (len(wantG)+3)/4, groupPages)
}
