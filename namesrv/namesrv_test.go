package namesrv

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/configfile"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

func masterSlave() (*fakeBroker, *fakeBroker) {
	m := &fakeBroker{cluster: "DefaultCluster", name: "broker-a", addr: "10.0.0.1:10911", ha: "10.0.0.1:10912", id: 0,
		topics: topics("TopicTest", "TBW102", "%RETRY%group1"), version: body.TopicVersion{Counter: 1, Timestamp: 1}}
	s := &fakeBroker{cluster: "DefaultCluster", name: "broker-a", addr: "10.0.0.2:10911", ha: "10.0.0.2:10912", id: 1,
		topics: topics("TopicTest", "TBW102", "%RETRY%group1"), version: body.TopicVersion{Counter: 1, Timestamp: 1}}
	return m, s
}

func TestRouteMasterSlave(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	m, sl := masterSlave()
	resp := m.register(t, c, s.Addr())
	require.Empty(t, resp.Value("masterAddr"))
	resp = sl.register(t, c, s.Addr())
	require.Equal(t, "10.0.0.1:10911", resp.Value("masterAddr"))
	require.Equal(t, "10.0.0.1:10912", resp.Value("haServerAddr"))

	// Java 5.x client: standard JSON, byte for byte as the Java name server.
	resp = getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, `{"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`, string(resp.Body))
	// Go client (version 317): fastjson's bare integer keys.
	resp = getRoute(t, c, s.Addr(), "TopicTest", goClientVersion)
	require.Equal(t, `{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`, string(resp.Body))
	// acceptStandardJsonOnly forces the standard form for old versions too.
	req := request(codec.ReqGetRouteinfoByTopic, "topic", "TopicTest", "acceptStandardJsonOnly", "true")
	req.Version = goClientVersion
	require.Contains(t, string(invoke(t, c, s.Addr(), req).Body), `{"0":"10.0.0.1:10911"`)

	// TBW102 and retry topics are ordinary topics.
	for _, topic := range []string{"TBW102", "%RETRY%group1"} {
		r := decodeRoute(t, getRoute(t, c, s.Addr(), topic, javaClientVersion))
		require.Len(t, r.QueueDatas, 1, topic)
	}
	// Unknown topic: Java's code and remark.
	resp = getRoute(t, c, s.Addr(), "NoSuchTopic", javaClientVersion)
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code)
	require.Equal(t, remarks.NoTopicRouteInfo("NoSuchTopic"), resp.Remark)

	// The cluster name routes to the cluster's brokers.
	r := decodeRoute(t, getRoute(t, c, s.Addr(), "DefaultCluster", javaClientVersion))
	require.Equal(t, []body.QueueData{{BrokerName: "broker-a", ReadQueueNums: 16, WriteQueueNums: 16, Perm: 7}}, r.QueueDatas)
	require.Equal(t, "broker-a", r.BrokerDatas[0].BrokerName)

	// Cluster info: default fastjson, bare keys.
	resp = invoke(t, c, s.Addr(), request(codec.ReqGetBrokerClusterInfo))
	require.Equal(t, `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`, string(resp.Body))
}

func TestRouteTwoBrokersPermsAndDelete(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	a := &fakeBroker{cluster: "c1", name: "broker-a", addr: "10.0.0.1:10911", ha: "10.0.0.1:10912", topics: topics("T1", "T2"), version: body.TopicVersion{Counter: 1}}
	b := &fakeBroker{cluster: "c2", name: "broker-b", addr: "10.0.0.3:10911", ha: "10.0.0.3:10912", topics: topics("T1", "Tb"), version: body.TopicVersion{Counter: 1}}
	a.register(t, c, s.Addr())
	b.register(t, c, s.Addr())

	r := decodeRoute(t, getRoute(t, c, s.Addr(), "T1", javaClientVersion))
	require.Len(t, r.BrokerDatas, 2)
	require.Equal(t, "broker-a", r.QueueDatas[0].BrokerName)
	require.Equal(t, "broker-b", r.QueueDatas[1].BrokerName)

	// Wipe write permission on broker-a: both its topics become read-only.
	resp := invoke(t, c, s.Addr(), request(codec.ReqWipeWritePermOfBroker, "brokerName", "broker-a"))
	require.Equal(t, "2", resp.Value("wipeTopicCount"))
	r = decodeRoute(t, getRoute(t, c, s.Addr(), "T1", javaClientVersion))
	require.Equal(t, int32(body.PermRead), r.QueueDatas[0].Perm)
	require.Equal(t, int32(6), r.QueueDatas[1].Perm)
	resp = invoke(t, c, s.Addr(), request(codec.ReqAddWritePermOfBroker, "brokerName", "broker-a"))
	require.Equal(t, "2", resp.Value("addTopicCount"))
	r = decodeRoute(t, getRoute(t, c, s.Addr(), "T1", javaClientVersion))
	require.Equal(t, int32(6), r.QueueDatas[0].Perm)

	// Re-registering the same data version does not undo an admin change…
	invoke(t, c, s.Addr(), request(codec.ReqWipeWritePermOfBroker, "brokerName", "broker-a"))
	a.register(t, c, s.Addr())
	r = decodeRoute(t, getRoute(t, c, s.Addr(), "T2", javaClientVersion))
	require.Equal(t, int32(body.PermRead), r.QueueDatas[0].Perm)
	// …a new data version does.
	a.version.Counter++
	a.register(t, c, s.Addr())
	r = decodeRoute(t, getRoute(t, c, s.Addr(), "T2", javaClientVersion))
	require.Equal(t, int32(6), r.QueueDatas[0].Perm)

	// Topic lists.
	l := topicList(t, invoke(t, c, s.Addr(), request(codec.ReqGetAllTopicListFromNameserver)))
	require.Equal(t, []string{"T1", "T2", "Tb"}, l.Topics)
	l = topicList(t, invoke(t, c, s.Addr(), request(codec.ReqGetTopicsByCluster, "cluster", "c2")))
	require.Equal(t, []string{"T1", "Tb"}, l.Topics)
	l = topicList(t, invoke(t, c, s.Addr(), request(codec.ReqGetSystemTopicListFromNs)))
	require.Equal(t, []string{"c1", "broker-a", "c2", "broker-b"}, l.Topics)
	require.Equal(t, "10.0.0.1:10911", l.BrokerAddr)

	// Delete T1 from cluster c1 only, then everywhere.
	invoke(t, c, s.Addr(), request(codec.ReqDeleteTopicInNamesrv, "topic", "T1", "clusterName", "c1"))
	r = decodeRoute(t, getRoute(t, c, s.Addr(), "T1", javaClientVersion))
	require.Len(t, r.QueueDatas, 1)
	require.Equal(t, "broker-b", r.QueueDatas[0].BrokerName)
	invoke(t, c, s.Addr(), request(codec.ReqDeleteTopicInNamesrv, "topic", "T1"))
	require.Equal(t, int32(codec.RespTopicNotExist), getRoute(t, c, s.Addr(), "T1", javaClientVersion).Code)

	// Unregister broker-b: its cluster disappears; broker-a's topic stays.
	resp = invoke(t, c, s.Addr(), request(codec.ReqUnregisterBroker, "brokerName", "broker-b", "brokerAddr", "10.0.0.3:10911", "clusterName", "c2", "brokerId", "0"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	info, err := body.DecodeClusterInfo(invoke(t, c, s.Addr(), request(codec.ReqGetBrokerClusterInfo)).Body)
	require.NoError(t, err)
	require.Len(t, info.BrokerAddrTable, 1)
	require.Equal(t, []body.ClusterBrokers{{Cluster: "c1", BrokerNames: []string{"broker-a"}}}, info.ClusterAddrTable)
	require.Equal(t, int32(codec.RespSuccess), getRoute(t, c, s.Addr(), "T2", javaClientVersion).Code)
}

func topicList(t *testing.T, resp *codec.Frame) body.TopicList {
	t.Helper()
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	l, err := body.DecodeTopicList(resp.Body)
	require.NoError(t, err)
	return l
}

func TestSlaveUnregisterKeepsTopicsMasterUnregisterDropsThem(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	m, sl := masterSlave()
	m.register(t, c, s.Addr())
	sl.register(t, c, s.Addr())
	invoke(t, c, s.Addr(), request(codec.ReqUnregisterBroker, "brokerName", "broker-a", "brokerAddr", sl.addr, "clusterName", sl.cluster, "brokerId", "1"))
	r := decodeRoute(t, getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion))
	require.Equal(t, []body.BrokerAddr{{ID: 0, Addr: m.addr}}, r.BrokerDatas[0].BrokerAddrs)
	invoke(t, c, s.Addr(), request(codec.ReqUnregisterBroker, "brokerName", "broker-a", "brokerAddr", m.addr, "clusterName", m.cluster, "brokerId", "0"))
	require.Equal(t, int32(codec.RespTopicNotExist), getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion).Code)
	require.Equal(t, int32(codec.RespTopicNotExist), getRoute(t, c, s.Addr(), "DefaultCluster", javaClientVersion).Code)
}

func TestOrderTopicConfAndKV(t *testing.T) {
	cfg := testConfig(t)
	cfg.OrderMessageEnable = true
	s := startNamesrv(t, cfg)
	c := newClient(t)
	m, _ := masterSlave()
	// Nothing in ORDER_TOPIC_CONFIG yet: the register response has no body.
	require.Empty(t, m.register(t, c, s.Addr()).Body)

	resp := invoke(t, c, s.Addr(), request(codec.ReqPutKvConfig, "namespace", "ORDER_TOPIC_CONFIG", "key", "TopicTest", "value", "broker-a:4"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	r := decodeRoute(t, getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion))
	require.Equal(t, "broker-a:4", r.OrderTopicConf)
	require.Contains(t, string(getRoute(t, c, s.Addr(), "TopicTest", goClientVersion).Body), `,"orderTopicConf":"broker-a:4","queueDatas":`)
	// The broker learns the order config on registration.
	require.Equal(t, `{"table":{"TopicTest":"broker-a:4"}}`, string(m.register(t, c, s.Addr()).Body))

	resp = invoke(t, c, s.Addr(), request(codec.ReqGetKvConfig, "namespace", "ORDER_TOPIC_CONFIG", "key", "TopicTest"))
	require.Equal(t, "broker-a:4", resp.Value("value"))
	resp = invoke(t, c, s.Addr(), request(codec.ReqGetKvlistByNamespace, "namespace", "ORDER_TOPIC_CONFIG"))
	require.Equal(t, `{"table":{"TopicTest":"broker-a:4"}}`, string(resp.Body))
	resp = invoke(t, c, s.Addr(), request(codec.ReqGetKvConfig, "namespace", "ns", "key", "k"))
	require.Equal(t, int32(codec.RespQueryNotFound), resp.Code)
	require.Equal(t, "No config item, Namespace: ns Key: k", resp.Remark)
	resp = invoke(t, c, s.Addr(), request(codec.ReqGetKvlistByNamespace, "namespace", "ns"))
	require.Equal(t, int32(codec.RespQueryNotFound), resp.Code)
	require.Equal(t, "No config item, Namespace: ns", resp.Remark)

	invoke(t, c, s.Addr(), request(codec.ReqDeleteKvConfig, "namespace", "ORDER_TOPIC_CONFIG", "key", "TopicTest"))
	r = decodeRoute(t, getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion))
	require.Empty(t, r.OrderTopicConf)
}

func TestKVPersistsAcrossRestart(t *testing.T) {
	cfg := testConfig(t)
	s, err := New(cfg, testLogger())
	require.NoError(t, err)
	require.NoError(t, s.Start())
	c := newClient(t)
	invoke(t, c, s.Addr(), request(codec.ReqPutKvConfig, "namespace", "ORDER_TOPIC_CONFIG", "key", "T", "value", "broker-a:8"))
	invoke(t, c, s.Addr(), request(codec.ReqPutKvConfig, "namespace", "ns2", "key", "k", "value", "中文 \"q\""))
	require.NoError(t, s.Close())

	b, err := readFile(cfg.KVConfigPath)
	require.NoError(t, err)
	require.Equal(t, `{"configTable":{"ORDER_TOPIC_CONFIG":{"T":"broker-a:8"},"ns2":{"k":"中文 \"q\""}}}`, b)

	s2 := startNamesrv(t, cfg)
	resp := invoke(t, c, s2.Addr(), request(codec.ReqGetKvConfig, "namespace", "ns2", "key", "k"))
	require.Equal(t, "中文 \"q\"", resp.Value("value"))

	// A Java-written file (unordered, with whitespace) loads too.
	require.NoError(t, configfile.Write(cfg.KVConfigPath, []byte("{\n \"configTable\" : { \"x\" : { \"a\" : \"1\" } } }")))
	cfg2 := cfg
	s3, err := New(cfg2, testLogger())
	require.NoError(t, err)
	v, found := s3.kv.get("x", "a")
	require.True(t, found)
	require.Equal(t, "1", v)
	// A corrupt file is refused rather than silently replaced.
	require.NoError(t, configfile.Write(cfg.KVConfigPath, []byte("{\"configTable\":{")))
	_, err = New(cfg2, testLogger())
	require.Error(t, err)
}

func TestLivenessByTimeout(t *testing.T) {
	cfg := testConfig(t)
	cfg.ScanNotActiveBrokerInterval = 20 * time.Millisecond
	cfg.BrokerChannelExpiredTime = 300 * time.Millisecond
	s := startNamesrv(t, cfg)
	c := newClient(t)
	// The broker has its own connection: expiry closes it, as Java does.
	bc := newClient(t)
	m, _ := masterSlave()
	m.register(t, bc, s.Addr())

	// Heartbeats keep it alive well past the expiry time.
	start := time.Now()
	for time.Since(start) < 3*cfg.BrokerChannelExpiredTime {
		resp := invoke(t, bc, s.Addr(), request(codec.ReqBrokerHeartbeat, "clusterName", m.cluster, "brokerAddr", m.addr, "brokerName", m.name))
		require.Equal(t, int32(codec.RespSuccess), resp.Code)
		require.Equal(t, int32(codec.RespSuccess), getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion).Code)
		time.Sleep(50 * time.Millisecond) // the heartbeat period of this fake broker
	}
	// Silence: the broker and its topics go.
	eventually(t, 5*time.Second, func() bool {
		return getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion).Code == int32(codec.RespTopicNotExist)
	}, "silent broker never expired")
	info, err := body.DecodeClusterInfo(invoke(t, c, s.Addr(), request(codec.ReqGetBrokerClusterInfo)).Body)
	require.NoError(t, err)
	require.Empty(t, info.BrokerAddrTable)
}

func TestLivenessByConnectionClose(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	admin := newClient(t)
	brokerConn := transport.NewClient(transport.ClientConfig{Logger: testLogger(), DialTimeout: time.Second})
	m, _ := masterSlave()
	m.register(t, brokerConn, s.Addr())
	require.Equal(t, int32(codec.RespSuccess), getRoute(t, admin, s.Addr(), "TopicTest", javaClientVersion).Code)
	require.NoError(t, brokerConn.Close())
	eventually(t, 5*time.Second, func() bool {
		return getRoute(t, admin, s.Addr(), "TopicTest", javaClientVersion).Code == int32(codec.RespTopicNotExist)
	}, "broker not dropped when its connection closed")
}

func TestQueryDataVersionAndCompressedRegister(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	m, _ := masterSlave()
	m.compressed = true
	m.version = body.TopicVersion{Counter: 7, StateVersion: 1, Timestamp: 99}
	m.register(t, c, s.Addr())
	r := decodeRoute(t, getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion))
	require.Equal(t, int32(4), r.QueueDatas[0].WriteQueueNums)

	q := request(codec.ReqQueryDataVersion, "brokerName", m.name, "brokerAddr", m.addr, "clusterName", m.cluster, "brokerId", "0")
	q.Body = body.AppendTopicVersion(nil, m.version)
	resp := invoke(t, c, s.Addr(), q)
	require.Equal(t, "false", resp.Value("changed"))
	require.Equal(t, `{"counter":7,"stateVersion":1,"timestamp":99}`, string(resp.Body))
	q = request(codec.ReqQueryDataVersion, "brokerName", m.name, "brokerAddr", m.addr, "clusterName", m.cluster, "brokerId", "0")
	q.Body = body.AppendTopicVersion(nil, body.TopicVersion{Counter: 8})
	require.Equal(t, "true", invoke(t, c, s.Addr(), q).Value("changed"))
}

func TestRegisterRejections(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	m, _ := masterSlave()
	f := m.registerFrame(t)
	f.Set("bodyCrc32", "12345")
	resp := invoke(t, c, s.Addr(), f)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "crc32 not match", resp.Remark)

	f = m.registerFrame(t)
	f.Body = f.Body[:len(f.Body)/2]
	resp = invoke(t, c, s.Addr(), f)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "Failed to decode RegisterBrokerBody", resp.Remark)

	f = m.registerFrame(t)
	f.Set("compressed", "true") // plain JSON is not a zlib stream
	require.Equal(t, int32(codec.RespSystemError), invoke(t, c, s.Addr(), f).Code)

	// A single-topic registration from an unknown broker fails as in Java.
	one := &fakeBroker{cluster: "c", name: "b", addr: "1.1.1.1:1", ha: "1.1.1.1:2", topics: topics("Only")}
	resp = invoke(t, c, s.Addr(), one.registerFrame(t))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "register broker failed", resp.Remark)

	// Missing required header field.
	resp = invoke(t, c, s.Addr(), request(codec.ReqGetRouteinfoByTopic))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "the custom field <topic> is null", resp.Remark)
	// Nothing registered by the failures.
	require.Equal(t, int32(codec.RespTopicNotExist), getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion).Code)
}

func TestNamesrvConfigRemote(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	resp := invoke(t, c, s.Addr(), request(codec.ReqGetNamesrvConfig))
	require.Contains(t, string(resp.Body), "orderMessageEnable=false\n")
	require.Contains(t, string(resp.Body), "scanNotActiveBrokerInterval=5000\n")

	u := request(codec.ReqUpdateNamesrvConfig)
	u.Body = []byte("orderMessageEnable=true\nenableAllTopicList=false\n")
	require.Equal(t, int32(codec.RespSuccess), invoke(t, c, s.Addr(), u).Code)
	require.True(t, s.Config().OrderMessageEnable)
	resp = invoke(t, c, s.Addr(), request(codec.ReqGetAllTopicListFromNameserver))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "disable", resp.Remark)
	stored, err := readFile(s.Config().ConfigStorePath)
	require.NoError(t, err)
	require.Contains(t, stored, "orderMessageEnable=true\n")

	u = request(codec.ReqUpdateNamesrvConfig)
	u.Body = []byte("kvConfigPath=/tmp/evil\n")
	resp = invoke(t, c, s.Addr(), u)
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
	require.Equal(t, "Can not update config in black list.", resp.Remark)
	require.False(t, strings.HasPrefix(s.Config().KVConfigPath, "/tmp/evil"))
}

func TestZoneModeFiltersRoute(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	for _, b := range []struct{ name, addr, zone string }{{"broker-a", "10.0.0.1:10911", "z1"}, {"broker-b", "10.0.0.2:10911", "z2"}} {
		f := (&fakeBroker{cluster: "c", name: b.name, addr: b.addr, ha: b.addr, topics: topics("T", "U")}).registerFrame(t)
		f.Set("__ZONE_NAME", b.zone)
		require.Equal(t, int32(codec.RespSuccess), invoke(t, c, s.Addr(), f).Code)
	}
	req := request(codec.ReqGetRouteinfoByTopic, "topic", "T", "__ZONE_MODE", "true", "__ZONE_NAME", "Z2")
	resp := invoke(t, c, s.Addr(), req)
	require.Equal(t, `{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.2:10911"},"brokerName":"broker-b","cluster":"c","enableActingMaster":false,"zoneName":"z2"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`, string(resp.Body))
	// Without zone mode both brokers are returned.
	r := decodeRoute(t, getRoute(t, c, s.Addr(), "T", javaClientVersion))
	require.Len(t, r.BrokerDatas, 2)
}

func TestRegisterTopicMemberGroupAndUnitLists(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	c := newClient(t)
	m, sl := masterSlave()
	m.topics = topics("Plain", "Unit", "UnitSub", "Both")
	m.topics[1].TopicSysFlag = 1
	m.topics[2].TopicSysFlag = 2
	m.topics[3].TopicSysFlag = 3
	m.register(t, c, s.Addr())
	sl.register(t, c, s.Addr())

	rt := request(codec.ReqRegisterTopicInNamesrv, "topic", "Static")
	rt.Body = []byte(`{"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":2,"topicSysFlag":0,"writeQueueNums":2}]}`)
	require.Equal(t, int32(codec.RespSuccess), invoke(t, c, s.Addr(), rt).Code)
	r := decodeRoute(t, getRoute(t, c, s.Addr(), "Static", javaClientVersion))
	require.Equal(t, int32(2), r.QueueDatas[0].WriteQueueNums)
	// Unknown brokers are refused (the reply is still SUCCESS, as in Java).
	rt = request(codec.ReqRegisterTopicInNamesrv, "topic", "Ghost")
	rt.Body = []byte(`{"queueDatas":[{"brokerName":"nobody","perm":6,"readQueueNums":2,"writeQueueNums":2}]}`)
	require.Equal(t, int32(codec.RespSuccess), invoke(t, c, s.Addr(), rt).Code)
	require.Equal(t, int32(codec.RespTopicNotExist), getRoute(t, c, s.Addr(), "Ghost", javaClientVersion).Code)

	resp := invoke(t, c, s.Addr(), request(codec.ReqGetBrokerMemberGroup, "clusterName", "DefaultCluster", "brokerName", "broker-a"))
	require.Equal(t, `{"brokerMemberGroup":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}}`, string(resp.Body))

	require.Equal(t, []string{"Both", "Unit"}, topicList(t, invoke(t, c, s.Addr(), request(codec.ReqGetUnitTopicList))).Topics)
	require.Equal(t, []string{"Both", "UnitSub"}, topicList(t, invoke(t, c, s.Addr(), request(codec.ReqGetHasUnitSubTopicList))).Topics)
	require.Equal(t, []string{"UnitSub"}, topicList(t, invoke(t, c, s.Addr(), request(codec.ReqGetHasUnitSubUnunitTopicList))).Topics)

	// Codes the name server does not implement answer REQUEST_CODE_NOT_SUPPORTED.
	resp = invoke(t, c, s.Addr(), request(codec.ReqSendMessageV2))
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code)
}

func TestActingMasterRoute(t *testing.T) {
	cfg := testConfig(t)
	cfg.SupportActingMaster = true
	s := startNamesrv(t, cfg)
	c := newClient(t)
	yes := true
	m, sl := masterSlave()
	m.actingMaster, sl.actingMaster = &yes, &yes
	m.register(t, c, s.Addr())
	sl.register(t, c, s.Addr())
	// The master leaves: the slave's queues lose write permission and the
	// route presents the slave as broker 0.
	invoke(t, c, s.Addr(), request(codec.ReqUnregisterBroker, "brokerName", "broker-a", "brokerAddr", m.addr, "clusterName", m.cluster, "brokerId", "0"))
	r := decodeRoute(t, getRoute(t, c, s.Addr(), "TopicTest", javaClientVersion))
	require.Equal(t, int32(body.PermRead), r.QueueDatas[0].Perm)
	require.Equal(t, []body.BrokerAddr{{ID: 0, Addr: sl.addr}}, r.BrokerDatas[0].BrokerAddrs)
	require.True(t, r.BrokerDatas[0].EnableActingMaster)
}

func TestNotReadyAndStateVersionConflict(t *testing.T) {
	cfg := testConfig(t)
	cfg.NeedWaitForService = true
	cfg.WaitSecondsForService = 3600
	s := startNamesrv(t, cfg)
	c := newClient(t)
	resp := getRoute(t, c, s.Addr(), "Any", javaClientVersion)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "name server not ready", resp.Remark)

	// Broker id 0 re-registering from a new address with an older state
	// version is ignored (the newer registration wins), as in Java.
	m, _ := masterSlave()
	m.version.StateVersion = 5
	m.register(t, c, s.Addr())
	stale := *m
	stale.addr = "10.0.0.7:10911"
	stale.version.StateVersion = 4
	stale.register(t, c, s.Addr())
	info, err := body.DecodeClusterInfo(invoke(t, c, s.Addr(), request(codec.ReqGetBrokerClusterInfo)).Body)
	require.NoError(t, err)
	require.Equal(t, []body.BrokerAddr{{ID: 0, Addr: m.addr}}, info.BrokerAddrTable[0].BrokerAddrs)
	// A newer state version takes over the id.
	stale.version.StateVersion = 6
	stale.register(t, c, s.Addr())
	info, err = body.DecodeClusterInfo(invoke(t, c, s.Addr(), request(codec.ReqGetBrokerClusterInfo)).Body)
	require.NoError(t, err)
	require.Equal(t, []body.BrokerAddr{{ID: 0, Addr: stale.addr}}, info.BrokerAddrTable[0].BrokerAddrs)
}
