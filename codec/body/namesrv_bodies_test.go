package body

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func sampleRoute() TopicRouteData {
	return TopicRouteData{
		BrokerDatas: []BrokerData{{
			Cluster: "DefaultCluster", BrokerName: "broker-a",
			BrokerAddrs: []BrokerAddr{{0, "192.168.0.1:10911"}, {1, "192.168.0.2:10911"}},
		}},
		QueueDatas: []QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
	}
}

func TestTopicRouteDataGolden(t *testing.T) {
	r := sampleRoute()
	// Recorded from fastjson 1.2.83 (protocol reference §4.3).
	const browser = `{"brokerDatas":[{"brokerAddrs":{"0":"192.168.0.1:10911","1":"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	const bare = `{"brokerDatas":[{"brokerAddrs":{0:"192.168.0.1:10911",1:"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	require.Equal(t, browser, string(AppendTopicRouteData(nil, &r, true)))
	require.Equal(t, bare, string(AppendTopicRouteData(nil, &r, false)))

	for _, s := range []string{browser, bare} {
		got, err := DecodeTopicRouteData([]byte(s))
		require.NoError(t, err)
		got.FilterServerTable = nil
		require.Equal(t, r, got)
	}
}

func TestTopicRouteDataOptionalFields(t *testing.T) {
	r := sampleRoute()
	r.OrderTopicConf = "broker-a:4;broker-b:8"
	r.BrokerDatas[0].ZoneName = "zone1"
	r.BrokerDatas[0].EnableActingMaster = true
	r.FilterServerTable = []FilterServers{{"192.168.0.1:10911", []string{"f1:1"}}}
	r.MappingByBroker = []MappingInfo{{"broker-a", []byte(`{"bname":"broker-a","epoch":0,"topic":"t","totalQueues":4}`)}}
	out := AppendTopicRouteData(nil, &r, false)
	require.Equal(t, `{"brokerDatas":[{"brokerAddrs":{0:"192.168.0.1:10911",1:"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":true,"zoneName":"zone1"}],"filterServerTable":{"192.168.0.1:10911":["f1:1"]},"orderTopicConf":"broker-a:4;broker-b:8","queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}],"topicQueueMappingByBroker":{"broker-a":{"bname":"broker-a","epoch":0,"topic":"t","totalQueues":4}}}`, string(out))
	got, err := DecodeTopicRouteData(out)
	require.NoError(t, err)
	require.Equal(t, r, got)
}

func TestClusterInfoGolden(t *testing.T) {
	info := ClusterInfo{
		BrokerAddrTable:  []BrokerData{{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerAddrs: []BrokerAddr{{0, "10.0.0.1:10911"}}}},
		ClusterAddrTable: []ClusterBrokers{{"DefaultCluster", []string{"broker-a"}}},
	}
	out := AppendClusterInfo(nil, &info)
	require.Equal(t, `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`, string(out))
	got, err := DecodeClusterInfo(out)
	require.NoError(t, err)
	require.Equal(t, info, got)
}

func TestKVAndTopicList(t *testing.T) {
	kv := []KVEntry{{"TopicA", "broker-a:4"}, {"TopicB", "broker-a:8;broker-b:8"}}
	out := AppendKVTable(nil, kv)
	require.Equal(t, `{"table":{"TopicA":"broker-a:4","TopicB":"broker-a:8;broker-b:8"}}`, string(out))
	got, err := DecodeKVTable(out)
	require.NoError(t, err)
	require.Equal(t, kv, got)

	file := []KVNamespace{{"ORDER_TOPIC_CONFIG", kv}, {"ns2", []KVEntry{{"k", "v\"q"}}}}
	out = AppendKVConfigFile(nil, file)
	require.Equal(t, `{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicA":"broker-a:4","TopicB":"broker-a:8;broker-b:8"},"ns2":{"k":"v\"q"}}}`, string(out))
	gotFile, err := DecodeKVConfigFile(out)
	require.NoError(t, err)
	require.Equal(t, file, gotFile)

	l := TopicList{Topics: []string{"a", "b"}}
	require.Equal(t, `{"topicList":["a","b"]}`, string(AppendTopicList(nil, &l)))
	l.BrokerAddr = "1.2.3.4:10911"
	out = AppendTopicList(nil, &l)
	require.Equal(t, `{"brokerAddr":"1.2.3.4:10911","topicList":["a","b"]}`, string(out))
	gotList, err := DecodeTopicList(out)
	require.NoError(t, err)
	require.Equal(t, l, gotList)

	require.Equal(t, `{"brokerMemberGroup":{"brokerAddrs":{0:"a:1",2:"b:2"},"brokerName":"broker-a","cluster":"c"}}`,
		string(AppendBrokerMemberGroupBody(nil, "c", "broker-a", []BrokerAddr{{0, "a:1"}, {2, "b:2"}})))
}

// A 5.x broker's plain register body, shaped as the Java broker sends it.
const javaRegisterBody = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4},"TBW102":{"attributes":{},"order":false,"perm":7,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}`

func TestRegisterBrokerBodyPlain(t *testing.T) {
	b, err := DecodeRegisterBrokerBody([]byte(javaRegisterBody), false, 479)
	require.NoError(t, err)
	require.Equal(t, TopicVersion{Counter: 3, Timestamp: 1700000000000}, b.DataVersion)
	require.Equal(t, []string{}, b.FilterServerList)
	require.Len(t, b.Topics, 2)
	require.Equal(t, TopicConfig{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: SingleTag, Attributes: map[string]string{}}, b.Topics[0])
	require.Equal(t, int32(7), b.Topics[1].Perm)
	// Our encoder writes the same bytes the Java broker does.
	require.Equal(t, javaRegisterBody, string(AppendRegisterBrokerBody(nil, &b)))
}

// javaCompressed builds a compressed register body independently of our
// encoder, byte for byte as RegisterBrokerBody.encode(true) lays it out.
func javaCompressed(t testing.TB, withMappings bool) []byte {
	var raw []byte
	chunk := func(s string) {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(s)))
		raw = append(raw, s...)
	}
	chunk(`{"counter":5,"stateVersion":2,"timestamp":1700000000001}`)
	raw = binary.BigEndian.AppendUint32(raw, 2)
	chunk(`TopicTest 4 4 6 SINGLE_TAG {}`)
	chunk(`Ordered 8 8 2 MULTI_TAG {"+message.type":"FIFO"}`)
	chunk(`["10.0.0.9:1"]`)
	if withMappings {
		raw = binary.BigEndian.AppendUint32(raw, 1)
		chunk(`{"bname":"broker-a","currIdMap":{0:0},"dirty":false,"epoch":1,"scope":"__global__","topic":"Static","totalQueues":1}`)
	}
	var buf bytes.Buffer
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestRegisterBrokerBodyCompressed(t *testing.T) {
	for _, v := range []int32{VersionV4_9_4, 479} {
		b, err := DecodeRegisterBrokerBody(javaCompressed(t, v >= VersionV5_0_0), true, v)
		require.NoError(t, err)
		require.Equal(t, TopicVersion{Counter: 5, StateVersion: 2, Timestamp: 1700000000001}, b.DataVersion)
		require.Equal(t, []string{"10.0.0.9:1"}, b.FilterServerList)
		require.Equal(t, []TopicConfig{
			{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: SingleTag, Attributes: map[string]string{}},
			{TopicName: "Ordered", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 2, TopicFilterType: MultiTag, Attributes: map[string]string{"+message.type": "FIFO"}},
		}, b.Topics)
		if v >= VersionV5_0_0 {
			require.Len(t, b.Mappings, 1)
			require.Equal(t, "Static", b.Mappings[0].Topic)
			require.Equal(t, "broker-a", b.Mappings[0].BrokerName)
		}
		// Our encoder round-trips through the decoder.
		enc, err := AppendRegisterBrokerBodyCompressed(nil, &b, v)
		require.NoError(t, err)
		back, err := DecodeRegisterBrokerBody(enc, true, v)
		require.NoError(t, err)
		require.Equal(t, b, back)
	}
}

func TestRegisterBrokerBodyMalformed(t *testing.T) {
	full := javaCompressed(t, true)
	for _, bad := range [][]byte{
		[]byte(`{"topicConfigSerializeWrapper":{"topicConfigTable":{"a":{"perm":`),
		[]byte(`{"filterServerList":[1,}`),
		[]byte("not json"),
	} {
		_, err := DecodeRegisterBrokerBody(bad, false, 479)
		require.ErrorIs(t, err, ErrRegisterBody, "%q", bad)
	}
	for _, cut := range []int{1, 10, len(full) / 2} {
		_, err := DecodeRegisterBrokerBody(full[:cut], true, 479)
		require.ErrorIs(t, err, ErrRegisterBody, "cut %d", cut)
	}
	_, err := DecodeRegisterBrokerBody([]byte("garbage, not zlib"), true, 479)
	require.ErrorIs(t, err, ErrRegisterBody)
	// A well-formed zlib stream whose content stops inside a topic entry.
	var short []byte
	short = binary.BigEndian.AppendUint32(short, 2)
	short = append(short, "{}"...)
	short = binary.BigEndian.AppendUint32(short, 3)
	short = binary.BigEndian.AppendUint32(short, 20)
	short = append(short, "TopicTest 4"...)
	var sb bytes.Buffer
	szw := zlib.NewWriter(&sb)
	_, _ = szw.Write(short)
	require.NoError(t, szw.Close())
	_, err = DecodeRegisterBrokerBody(sb.Bytes(), true, 479)
	require.ErrorIs(t, err, ErrRegisterBody)
	// A huge declared length is refused without allocating it.
	var raw []byte
	raw = binary.BigEndian.AppendUint32(raw, 0x7FFFFFF0)
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	_, _ = zw.Write(raw)
	require.NoError(t, zw.Close())
	_, err = DecodeRegisterBrokerBody(buf.Bytes(), true, 479)
	require.ErrorIs(t, err, ErrRegisterBody)
	// An empty body registers nothing.
	b, err := DecodeRegisterBrokerBody(nil, false, 479)
	require.NoError(t, err)
	require.Empty(t, b.Topics)
}

func FuzzRegisterBrokerBody(f *testing.F) {
	f.Add([]byte(javaRegisterBody), false)
	f.Fuzz(func(t *testing.T, b []byte, compressed bool) {
		body, err := DecodeRegisterBrokerBody(b, compressed, 479)
		if err != nil {
			return
		}
		back, err := DecodeRegisterBrokerBody(AppendRegisterBrokerBody(nil, &body), false, 479)
		require.NoError(t, err)
		require.Equal(t, len(body.Topics), len(back.Topics))
	})
}

func FuzzTopicRouteData(f *testing.F) {
	r := sampleRoute()
	f.Add(AppendTopicRouteData(nil, &r, false))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeTopicRouteData(b)
		if err != nil {
			return
		}
		back, err := DecodeTopicRouteData(AppendTopicRouteData(nil, &got, false))
		require.NoError(t, err)
		require.Equal(t, len(got.BrokerDatas), len(back.BrokerDatas))
	})
}
