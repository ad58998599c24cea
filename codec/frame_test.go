package codec

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func decodeWire(t *testing.T, wire []byte) *Frame {
	t.Helper()
	n, err := FrameLength(wire, DefaultMaxFrameLength)
	require.NoError(t, err)
	require.Equal(t, len(wire)-4, n)
	var f Frame
	require.NoError(t, Decode(append([]byte(nil), wire[4:]...), &f))
	return &f
}

// The Go client's GET_ROUTEINFO_BY_TOPIC request, as documented in the
// protocol reference (verified against rocketmq-client-go).
func TestDecodeGoClientJSON(t *testing.T) {
	hdr := `{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"T"}}`
	wire := []byte{0, 0, 0, 0x68, 0, 0, 0, 0x64}
	wire = append(wire, hdr...)
	f := decodeWire(t, wire)
	require.Equal(t, int32(105), f.Code)
	require.Equal(t, LangGo, f.Language)
	require.Equal(t, int32(317), f.Version)
	require.Equal(t, int32(1), f.Opaque)
	require.Equal(t, "T", f.Value("topic"))
	require.Equal(t, SerializeJSON, f.Serialize)
}

// The Go client's HEART_BEAT in ROCKETMQ form with body "x".
func TestDecodeGoClientRocketMQ(t *testing.T) {
	wire, err := hex.DecodeString("000000220100001d002209013d00000002000000000000000000000008000" + "16b0000000176" + "78")
	require.NoError(t, err)
	f := decodeWire(t, wire)
	require.Equal(t, int32(34), f.Code)
	require.Equal(t, LangGo, f.Language)
	require.Equal(t, int32(317), f.Version)
	require.Equal(t, int32(2), f.Opaque)
	require.Equal(t, "v", f.Value("k"))
	require.Equal(t, []byte("x"), f.Body)
}

func TestJSONHeaderShapeMatchesFastjson(t *testing.T) {
	f := &Frame{Code: 0, Language: LangJava, Opaque: 7, Flag: 1, Remark: "ok"}
	out := f.AppendHeader(nil, 0)
	require.Equal(t, `{"code":0,"flag":1,"language":"JAVA","opaque":7,"remark":"ok","serializeTypeCurrentRPC":"JSON","version":0}`, string(out[8:]))
}

func TestRoundTripBothSerializations(t *testing.T) {
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		in := &Frame{Code: 310, Language: LangGo, Version: 401, Opaque: -5, Flag: FlagOneway,
			Remark: "héllo \"q\"\n", Ext: []KV{{"a", "g"}, {"b", "Topic\\x"}, {"i", "KEYS\x01k\x02"}}, Body: []byte("body"), Serialize: st}
		wire := in.AppendTo(nil)
		out := decodeWire(t, wire)
		require.Equal(t, in.Code, out.Code)
		require.Equal(t, in.Opaque, out.Opaque)
		require.Equal(t, in.Flag, out.Flag)
		require.Equal(t, in.Remark, out.Remark)
		require.Equal(t, in.Ext, out.Ext)
		require.Equal(t, in.Body, out.Body)
		require.Equal(t, st, out.Serialize)
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	cases := map[string]string{
		"header beyond frame": "00000010" + "00000100" + strings.Repeat("00", 8),
		"unknown serialize":   "00000006" + "05000002" + "7b7d",
		"bad json":            "00000006" + "00000002" + "7b7b",
		"short rocketmq":      "00000006" + "01000002" + "0000",
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			wire, err := hex.DecodeString(h)
			require.NoError(t, err)
			var f Frame
			require.Error(t, Decode(wire[4:], &f))
		})
	}
	_, err := FrameLength([]byte{0x01, 0, 0, 0}, DefaultMaxFrameLength)
	require.ErrorIs(t, err, ErrFrameTooLarge)
	_, err = FrameLength([]byte{0xff, 0xff, 0xff, 0xff}, DefaultMaxFrameLength)
	require.ErrorIs(t, err, ErrFrameTooShort)
}

func TestJSONUnknownKeysAndLanguageOrdinal(t *testing.T) {
	hdr := `{"code":11,"x":{"y":[1,{"z":null}],"w":"\u00e9"},"language":9,"opaque":3,"remark":null,"extFields":{"n":12,"b":true,"z":null,"s":"\ud83d\ude00"}}`
	var f Frame
	buf := append([]byte{0, 0, 0, byte(len(hdr))}, hdr...)
	require.NoError(t, Decode(buf, &f))
	require.Equal(t, LangGo, f.Language)
	require.Equal(t, "12", f.Value("n"))
	require.Equal(t, "true", f.Value("b"))
	require.Equal(t, "😀", f.Value("s"))
	_, ok := f.Get("z")
	require.False(t, ok)
}

func TestCodeNames(t *testing.T) {
	require.Equal(t, "SEND_MESSAGE_V2", ReqSendMessageV2.String())
	require.Equal(t, RequestCode(310), ReqSendMessageV2)
	require.Equal(t, RequestCode(105), ReqGetRouteinfoByTopic)
	require.Equal(t, RequestCode(200151), ReqBatchAckMessage)
	require.Equal(t, "12345", RequestCode(12345).String())
	require.Equal(t, "SUCCESS", RespSuccess.String())
	require.Equal(t, "TOPIC_NOT_EXIST", RespTopicNotExist.String())
	require.Equal(t, ResponseCode(19), RespPullNotFound)
	// 209–211 carry a 5.x and a 4.9.x name; String gives the 5.x one.
	require.Equal(t, RespPollingFull, RespUpdateAndCreateAclConfigFailed)
	require.Equal(t, "POLLING_FULL", RespUpdateAndCreateAclConfigFailed.String())
	require.Equal(t, "POLLING_TIMEOUT", RespDeleteAclConfigFailed.String())
	require.Equal(t, "BROKER_NOT_EXIST", RespUpdateGlobalWhiteAddrsConfigFailed.String())
	require.Equal(t, "-7", ResponseCode(-7).String())
	require.Equal(t, "RPC_TIME_OUT", RespRpcTimeOut.String())
	c, ok := ParseRequestCode("PULL_MESSAGE")
	require.True(t, ok)
	require.Equal(t, ReqPullMessage, c)
	r, ok := ParseResponseCode("DELETE_ACL_CONFIG_FAILED")
	require.True(t, ok)
	require.Equal(t, ResponseCode(210), r)
	_, ok = ParseRequestCode("NOPE")
	require.False(t, ok)
}
