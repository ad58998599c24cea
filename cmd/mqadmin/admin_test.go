package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// fakeCluster is a name server + one broker in one transport server.
type fakeCluster struct {
	addr string

	mu      sync.Mutex
	created []map[string]string // UPDATE_AND_CREATE_TOPIC headers
	sent    []string            // bodies of SEND_MESSAGE_V2
}

func (fc *fakeCluster) handle(code codec.RequestCode, h func(req *codec.Frame) *codec.Frame, r *transport.Router) {
	r.Handle(code, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame { return h(req) })
}

func startFakeCluster(t *testing.T) *fakeCluster {
	fc := &fakeCluster{}
	r := transport.NewRouter()
	bd := func() body.BrokerData {
		return body.BrokerData{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerAddrs: []body.BrokerAddr{{ID: 0, Addr: fc.address()}}}
	}
	fc.handle(codec.ReqGetBrokerClusterInfo, func(req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = body.AppendClusterInfo(nil, &body.ClusterInfo{
			BrokerAddrTable:  []body.BrokerData{bd()},
			ClusterAddrTable: []body.ClusterBrokers{{Cluster: "DefaultCluster", BrokerNames: []string{"broker-a"}}},
		})
		return resp
	}, r)
	fc.handle(codec.ReqGetRouteinfoByTopic, func(req *codec.Frame) *codec.Frame {
		if req.Value("topic") != "TopicA" {
			return codec.NewResponse(req, int32(codec.RespTopicNotExist), "No topic route info in name server for the topic: "+req.Value("topic"))
		}
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = body.AppendTopicRouteData(nil, &body.TopicRouteData{
			QueueDatas:  []body.QueueData{{BrokerName: "broker-a", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}},
			BrokerDatas: []body.BrokerData{bd()},
		}, false)
		return resp
	}, r)
	fc.handle(codec.ReqUpdateAndCreateTopic, func(req *codec.Frame) *codec.Frame {
		m := map[string]string{}
		for _, kv := range req.Ext {
			m[kv.Key] = kv.Value
		}
		fc.mu.Lock()
		fc.created = append(fc.created, m)
		fc.mu.Unlock()
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}, r)
	fc.handle(codec.ReqGetTopicStatsInfo, func(req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = body.AppendTopicStatsTable(nil, []body.TopicOffset{
			{MQ: body.MessageQueue{Topic: "TopicA", BrokerName: "broker-a", QueueID: 1}, MinOffset: 0, MaxOffset: 7},
			{MQ: body.MessageQueue{Topic: "TopicA", BrokerName: "broker-a", QueueID: 0}, MinOffset: 2, MaxOffset: 5, LastUpdateTimestamp: 1700000000000},
		}, 0)
		return resp
	}, r)
	fc.handle(codec.ReqSendMessageV2, func(req *codec.Frame) *codec.Frame {
		fc.mu.Lock()
		fc.sent = append(fc.sent, string(req.Body))
		fc.mu.Unlock()
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Ext = []codec.KV{{Key: "msgId", Value: "7F00000100002A9F0000000000000000"}, {Key: "queueId", Value: req.Value("e")}, {Key: "queueOffset", Value: "0"}}
		return resp
	}, r)
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, r)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	fc.mu.Lock()
	fc.addr = srv.Addr()
	fc.mu.Unlock()
	return fc
}

func (fc *fakeCluster) address() string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.addr
}

func runAdmin(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(args, &out, &errOut)
	return out.String(), err
}

func TestParseArguments(t *testing.T) {
	var errOut bytes.Buffer
	_, ns, timeout, err := parse([]string{"updateTopic", "-n", "127.0.0.1:9876;127.0.0.2:9876", "-c", "C", "-t", "T", "-r", "4", "-timeout", "2s"}, &errOut)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9876;127.0.0.2:9876", ns)
	require.Equal(t, 2*time.Second, timeout)
	a := newAdmin(ns, io.Discard, timeout)
	defer a.close()
	require.Equal(t, []string{"127.0.0.1:9876", "127.0.0.2:9876"}, a.ns)

	t.Setenv("NAMESRV_ADDR", "10.0.0.1:9876")
	_, ns, _, err = parse([]string{"topicList"}, &errOut)
	require.NoError(t, err)
	require.Equal(t, "10.0.0.1:9876", ns, "-n defaults to NAMESRV_ADDR")

	_, _, _, err = parse([]string{"noSuchCommand"}, &errOut)
	require.ErrorContains(t, err, "not supported")
	_, _, _, err = parse([]string{"topicRoute", "-t", "T", "stray"}, &errOut)
	require.ErrorContains(t, err, "unexpected arguments")
	_, _, _, err = parse([]string{"updateTopic", "-r", "many"}, &errOut)
	require.Error(t, err)
	_, _, _, err = parse(nil, &errOut)
	require.Error(t, err)
	require.Contains(t, errOut.String(), "updateTopic")

	_, err = runAdmin(t, "topicRoute", "-n", "127.0.0.1:1")
	require.ErrorContains(t, err, "missing required option: -t")
	_, err = runAdmin(t, "updateTopic", "-n", "127.0.0.1:1", "-t", "T")
	require.ErrorContains(t, err, "need -b brokerAddr or -c clusterName")
}

func TestUpdateTopicOnCluster(t *testing.T) {
	fc := startFakeCluster(t)
	out, err := runAdmin(t, "updateTopic", "-n", fc.address(), "-c", "DefaultCluster", "-t", "TopicB", "-r", "4", "-w", "3", "-p", "4", "-o")
	require.NoError(t, err)
	require.Contains(t, out, fmt.Sprintf("create topic to %s success.", fc.address()))
	require.Contains(t, out, "TopicConfig [topicName=TopicB, readQueueNums=4, writeQueueNums=3, perm=R--")
	_, err = runAdmin(t, "updateTopic", "-n", fc.address(), "-c", "NoCluster", "-t", "TopicB")
	require.ErrorContains(t, err, "cluster [NoCluster] not found")
	fc.mu.Lock()
	defer fc.mu.Unlock()
	require.Len(t, fc.created, 1)
	h := fc.created[0]
	require.Equal(t, "TopicB", h["topic"])
	require.Equal(t, "TBW102", h["defaultTopic"])
	require.Equal(t, "4", h["readQueueNums"])
	require.Equal(t, "3", h["writeQueueNums"])
	require.Equal(t, "4", h["perm"])
	require.Equal(t, "true", h["order"])
	require.Equal(t, "SINGLE_TAG", h["topicFilterType"])

}

func TestTopicStatusAndRoute(t *testing.T) {
	fc := startFakeCluster(t)
	out, err := runAdmin(t, "topicStatus", "-n", fc.address(), "-t", "TopicA")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[0], "#Broker Name"))
	require.Regexp(t, `^broker-a\s+0\s+2\s+5\s+\d{4}-\d\d-\d\d`, lines[1], "sorted by queue id")
	require.Regexp(t, `^broker-a\s+1\s+0\s+7\s*$`, lines[2])

	out, err = runAdmin(t, "topicRoute", "-n", fc.address(), "-t", "TopicA")
	require.NoError(t, err)
	require.Contains(t, out, `"brokerName": "broker-a"`)
	require.Contains(t, out, `"0": "`+fc.address()+`"`, "bare integer keys are quoted for display")

	_, err = runAdmin(t, "topicStatus", "-n", fc.address(), "-t", "Nope")
	require.ErrorContains(t, err, "TOPIC_NOT_EXIST")
}

func TestSendMessage(t *testing.T) {
	fc := startFakeCluster(t)
	out, err := runAdmin(t, "sendMessage", "-n", fc.address(), "-t", "TopicA", "-p", "hello world", "-i", "1", "-c", "TagA")
	require.NoError(t, err)
	require.Regexp(t, `broker-a\s+1\s+SEND_OK\s+[0-9A-F]{32}`, out)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	require.Equal(t, []string{"hello world"}, fc.sent)
}

func TestParseJavaTimestamp(t *testing.T) {
	ms, err := parseJavaTimestamp("1700000000123")
	require.NoError(t, err)
	require.Equal(t, int64(1700000000123), ms)
	ms, err = parseJavaTimestamp("2023-11-14#22:13:20:123")
	require.NoError(t, err)
	require.Equal(t, time.Date(2023, 11, 14, 22, 13, 20, 123e6, time.Local).UnixMilli(), ms)
	now, err := parseJavaTimestamp("now")
	require.NoError(t, err)
	require.InDelta(t, time.Now().UnixMilli(), now, 5000)
	_, err = parseJavaTimestamp("yesterday")
	require.Error(t, err)
}

func TestDecodeConsumeStatsAndResetBody(t *testing.T) {
	b := body.AppendConsumeStats(nil, 1.5, []body.OffsetWrapper{{MQ: body.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 3}, BrokerOffset: 10, ConsumerOffset: 4, LastTimestamp: 1}})
	tps, rows, err := decodeConsumeStats(b)
	require.NoError(t, err, string(b))
	require.Equal(t, 1.5, tps)
	require.Equal(t, []consumeOffset{{mq: body.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 3}, brokerOffset: 10, consumer: 4, lastTimestamp: 1}}, rows)

	rb := body.AppendResetOffsetBody(nil, []body.QueueOffset{{MQ: body.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}, Offset: 42}})
	offs, err := decodeResetOffsetBody(rb)
	require.NoError(t, err, string(rb))
	require.Equal(t, map[body.MessageQueue]int64{{Topic: "T", BrokerName: "b", QueueID: 1}: 42}, offs)
}
