package fastjson

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// routeJSON writes a TopicRouteData the way the name server does.
func routeJSON(w *Writer) {
	w.ObjectStart()
	w.Key("brokerDatas")
	w.ArrayStart()
	w.ObjectStart()
	w.Key("brokerAddrs")
	w.ObjectStart()
	w.KeyInt(0)
	w.String("192.168.0.1:10911")
	w.KeyInt(1)
	w.String("192.168.0.2:10911")
	w.ObjectEnd()
	w.StringField("brokerName", "broker-a")
	w.StringField("cluster", "DefaultCluster")
	w.BoolField("enableActingMaster", false)
	w.ObjectEnd()
	w.ArrayEnd()
	w.EmptyObjectField("filterServerTable")
	w.Key("queueDatas")
	w.ArrayStart()
	w.ObjectStart()
	w.StringField("brokerName", "broker-a")
	w.IntField("perm", 6)
	w.IntField("readQueueNums", 4)
	w.IntField("topicSysFlag", 0)
	w.IntField("writeQueueNums", 4)
	w.ObjectEnd()
	w.ArrayEnd()
	w.ObjectEnd()
}

func TestWriterRouteDataGolden(t *testing.T) {
	// Both strings recorded from fastjson 1.2.83 (protocol reference §4.3).
	w := Writer{}
	routeJSON(&w)
	require.Equal(t, `{"brokerDatas":[{"brokerAddrs":{0:"192.168.0.1:10911",1:"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`, string(w.Bytes()))

	w = Writer{Browser: true}
	routeJSON(&w)
	require.Equal(t, `{"brokerDatas":[{"brokerAddrs":{"0":"192.168.0.1:10911","1":"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`, string(w.Bytes()))
}

func TestWriterMessageQueueKeys(t *testing.T) {
	w := Writer{}
	w.ObjectStart()
	w.Key("offsetTable")
	w.ObjectStart()
	w.KeyMessageQueue("TopicTest", "broker-a", 0)
	w.Int(100)
	w.KeyMessageQueue("TopicTest", "broker-a", 1)
	w.Int(-1)
	w.ObjectEnd()
	w.ObjectEnd()
	require.Equal(t, `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:100,{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}:-1}}`, string(w.Bytes()))

	w = Writer{Browser: true}
	w.ObjectStart()
	w.KeyMessageQueue("t", "b", 3)
	w.Int(1 << 60)
	w.ObjectEnd()
	require.Equal(t, `{"{\"brokerName\":\"b\",\"queueId\":3,\"topic\":\"t\"}":"1152921504606846976"}`, string(w.Bytes()))
}

func TestWriterEmptyContainersAndReset(t *testing.T) {
	w := Writer{Buf: make([]byte, 0, 64)}
	w.ObjectStart()
	w.StringsField("filterServerList", nil)
	w.Key("a")
	w.ArrayStart()
	w.ObjectStart()
	w.ObjectEnd()
	w.ObjectStart()
	w.ObjectEnd()
	w.Null()
	w.ArrayEnd()
	w.StringsField("topicList", []string{"x", "y"})
	w.OptStringField("brokerAddr", "")
	w.ObjectEnd()
	require.Equal(t, `{"filterServerList":[],"a":[{},{},null],"topicList":["x","y"]}`, string(w.Bytes()))
	w.Reset()
	w.ArrayStart()
	w.Int(1)
	w.Bool(true)
	w.ArrayEnd()
	require.Equal(t, `[1,true]`, string(w.Bytes()))
}

func TestAppendStringEscapes(t *testing.T) {
	cases := map[string]string{
		"plain":                `"plain"`,
		"q\"b\\":               `"q\"b\\"`,
		"a/b":                  `"a/b"`,
		"\b\t\n\f\r":           `"\b\t\n\f\r"`,
		"\x00\x07\x0b\x0e\x1f": `"\u0000\u0007\u000B\u000E\u001F"`,
		"\x7f":                 `"\u007F"`,
		"\u0085\u009f\u00a0":   `"\u0085\u009F` + "\u00a0\"",
		"中文 ünï":               `"中文 ünï"`,
		"\u2028\u2029":         `"\u2028\u2029"`,
		"bad\xffutf8":          "\"bad\uFFFDutf8\"",
		"😀":                    `"😀"`,
	}
	for in, want := range cases {
		require.Equal(t, want, string(AppendString(nil, in)), "%q", in)
	}
}

func TestAppendBrowserString(t *testing.T) {
	require.Equal(t, `"a\/b\"\\\n\u0001"`, string(AppendBrowserString(nil, "a/b\"\\\n\x01")))
	require.Equal(t, `"\u4E2D\u007F\uD83D\uDE00"`, string(AppendBrowserString(nil, "中\x7f😀")))
}

func TestAppendDoubleLikeJava(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {1.5, "1.5"}, {-2.25, "-2.25"}, {100, "100.0"},
		{0.001, "0.001"}, {0.0001, "1.0E-4"}, {1234567, "1234567.0"}, {9999999.5, "9999999.5"},
		{1e7, "1.0E7"}, {1.25e10, "1.25E10"}, {0.1, "0.1"}, {123.456, "123.456"},
		{0.01234, "0.01234"}, {1.0 / 3, "0.3333333333333333"},
		{1.7976931348623157e308, "1.7976931348623157E308"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, string(AppendDouble(nil, c.v)), "%v", c.v)
	}
}

func TestWriterAllocs(t *testing.T) {
	w := Writer{Buf: make([]byte, 0, 1024)}
	allocs := testing.AllocsPerRun(100, func() {
		w.Reset()
		routeJSON(&w)
	})
	require.Zero(t, allocs)
}

func BenchmarkWriterRoute(b *testing.B) {
	w := Writer{Buf: make([]byte, 0, 1024)}
	b.ReportAllocs()
	for b.Loop() {
		w.Reset()
		routeJSON(&w)
	}
	b.SetBytes(int64(len(w.Bytes())))
}
