package header

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// javaSendV2 is the extFields of a SEND_MESSAGE_V2 as the Java 5.x client
// builds it (values as String.valueOf would write them).
func javaSendV2() *codec.Frame {
	return &codec.Frame{Code: int32(codec.ReqSendMessageV2), Ext: []codec.KV{
		{Key: "a", Value: "please_rename_unique_group_name"},
		{Key: "b", Value: "TopicTest"},
		{Key: "c", Value: "TBW102"},
		{Key: "d", Value: "4"},
		{Key: "e", Value: "3"},
		{Key: "f", Value: "0"},
		{Key: "g", Value: "1700000000123"},
		{Key: "h", Value: "0"},
		{Key: "i", Value: "KEYS\x01k1\x02UNIQ_KEY\x01AC11000100002A9F0000000000000000\x02WAIT\x01true\x02TAGS\x01TagA\x02"},
		{Key: "j", Value: "0"},
		{Key: "k", Value: "false"},
		{Key: "m", Value: "false"},
		{Key: "n", Value: "broker-a"},
		{Key: "bname", Value: "broker-a"},
	}}
}

// goPull is the extFields of a PULL_MESSAGE as rocketmq-client-go sends
// it: every key, empty strings for unset ones.
func goPull() *codec.Frame {
	return &codec.Frame{Code: int32(codec.ReqPullMessage), Ext: []codec.KV{
		{Key: "consumerGroup", Value: "testGroup"},
		{Key: "topic", Value: "TopicTest"},
		{Key: "queueId", Value: "1"},
		{Key: "queueOffset", Value: "1234567"},
		{Key: "maxMsgNums", Value: "32"},
		{Key: "sysFlag", Value: "3"},
		{Key: "commitOffset", Value: "1234000"},
		{Key: "suspendTimeoutMillis", Value: "20000"},
		{Key: "subscription", Value: ""},
		{Key: "subVersion", Value: "0"},
		{Key: "expressionType", Value: "TAG"},
		{Key: "bname", Value: ""},
	}}
}

func TestSendMessageRequestV2Decode(t *testing.T) {
	var h SendMessageRequestV2
	require.NoError(t, h.Decode(javaSendV2()))
	require.Equal(t, "please_rename_unique_group_name", h.ProducerGroup)
	require.Equal(t, "TopicTest", h.Topic)
	require.Equal(t, "TBW102", h.DefaultTopic)
	require.Equal(t, int32(4), h.DefaultTopicQueueNums)
	require.Equal(t, int32(3), h.QueueID)
	require.Equal(t, int64(1700000000123), h.BornTimestamp)
	require.Contains(t, h.Properties, "UNIQ_KEY\x01AC11")
	require.False(t, h.Batch)
	require.Equal(t, "broker-a", h.BrokerName)
	require.Equal(t, int32(0), h.MaxReconsumeTimes) // l absent

	var v1 SendMessageRequest
	h.ToV1(&v1)
	require.Equal(t, h.ProducerGroup, v1.ProducerGroup)
	require.Equal(t, h.QueueID, v1.QueueID)
	require.Equal(t, h.Properties, v1.Properties)
	require.Equal(t, "broker-a", v1.Bname, "V2 n becomes V1 bname, as Java's createSendMessageRequestHeaderV1")

	var back SendMessageRequestV2
	back.FromV1(&v1)
	require.Equal(t, h.ProducerGroup, back.ProducerGroup)
	require.Equal(t, h.BornTimestamp, back.BornTimestamp)
	require.Equal(t, "broker-a", back.BrokerName)
}

func TestSendMessageRequestV2Batch(t *testing.T) {
	f := javaSendV2()
	f.Set("m", "TRUE")
	var h SendMessageRequestV2
	require.NoError(t, h.Decode(f))
	require.True(t, h.Batch, "Boolean.parseBoolean ignores case")
	f.Set("m", "yes")
	require.NoError(t, h.Decode(f))
	require.False(t, h.Batch, "anything but true is false")
}

func TestPullMessageRequestGoClient(t *testing.T) {
	var h PullMessageRequest
	require.NoError(t, h.Decode(goPull()))
	require.Equal(t, "testGroup", h.ConsumerGroup)
	require.Equal(t, int32(1), h.QueueID)
	require.Equal(t, int64(1234567), h.QueueOffset)
	require.Equal(t, int32(32), h.MaxMsgNums)
	require.Equal(t, int32(3), h.SysFlag)
	require.Equal(t, int64(20000), h.SuspendTimeoutMillis)
	require.Equal(t, "", h.Subscription)
	require.Equal(t, "TAG", h.ExpressionType)
}

func TestDecodeMissingRequired(t *testing.T) {
	f := goPull()
	f.Ext = append(f.Ext[:2], f.Ext[3:]...) // drop queueId
	var h PullMessageRequest
	err := h.Decode(f)
	require.Error(t, err)
	require.ErrorIs(t, err, ErrMissingField)
	var fe *FieldError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "queueId", fe.Key)
	require.Equal(t, "PullMessageRequest", fe.Header)
	require.Equal(t, "the custom field <queueId> is null", err.Error())
}

func TestDecodeEmptyIsAbsent(t *testing.T) {
	f := javaSendV2()
	f.Set("a", "")
	var h SendMessageRequestV2
	err := h.Decode(f)
	require.ErrorIs(t, err, ErrMissingField)
	require.Contains(t, err.Error(), "<a>")

	// Optional with a default: GET_MAX_OFFSET's committed is true unless sent.
	var m GetMaxOffsetRequest
	g := &codec.Frame{Ext: []codec.KV{{Key: "topic", Value: "T"}, {Key: "queueId", Value: "0"}, {Key: "committed", Value: ""}}}
	require.NoError(t, m.Decode(g))
	require.True(t, m.Committed)
	g.Set("committed", "false")
	require.NoError(t, m.Decode(g))
	require.False(t, m.Committed)

	var r ResetOffsetRequest
	rf := &codec.Frame{Ext: []codec.KV{{Key: "group", Value: "g"}, {Key: "topic", Value: "t"}, {Key: "timestamp", Value: "1"}, {Key: "isForce", Value: "true"}}}
	require.NoError(t, r.Decode(rf))
	require.Equal(t, int32(-1), r.QueueID, "Java initialises queueId to -1")
	require.True(t, r.IsForce)
}

func TestDecodeLastWins(t *testing.T) {
	f := goPull()
	f.Ext = append(f.Ext, codec.KV{Key: "queueId", Value: "7"})
	var h PullMessageRequest
	require.NoError(t, h.Decode(f))
	require.Equal(t, int32(7), h.QueueID)
	// A later empty value removes the key, as Frame.Get sees it.
	f.Ext = append(f.Ext, codec.KV{Key: "topic", Value: ""})
	require.ErrorIs(t, h.Decode(f), ErrMissingField)
}

func TestDecodeInvalidNumber(t *testing.T) {
	for _, v := range []string{"abc", "1.5", " 1", "2147483648", "-2147483649", "0x10", "1_000"} {
		f := goPull()
		f.Set("queueId", v)
		var h PullMessageRequest
		err := h.Decode(f)
		require.ErrorIs(t, err, ErrInvalidField, v)
		var fe *FieldError
		require.True(t, errors.As(err, &fe))
		require.Equal(t, "queueId", fe.Key)
		require.Equal(t, v, fe.Value)
		require.Contains(t, err.Error(), "queueId")
	}
	// Java's parseInt accepts an explicit sign and the int range edges.
	for v, want := range map[string]int32{"+5": 5, "-1": -1, "2147483647": 2147483647, "-2147483648": -2147483648} {
		f := goPull()
		f.Set("queueId", v)
		var h PullMessageRequest
		require.NoError(t, h.Decode(f), v)
		require.Equal(t, want, h.QueueID)
	}
	f := goPull()
	f.Set("queueOffset", "9223372036854775807")
	var h PullMessageRequest
	require.NoError(t, h.Decode(f))
	require.Equal(t, int64(9223372036854775807), h.QueueOffset)
	f.Set("queueOffset", "9223372036854775808")
	require.ErrorIs(t, h.Decode(f), ErrInvalidField)
}

func TestEncodeOmitsUnsetOptional(t *testing.T) {
	h := PullMessageResponse{SuggestWhichBrokerID: 0, NextBeginOffset: 12345, MinOffset: 0, MaxOffset: 99999}
	var f codec.Frame
	h.Encode(&f)
	require.Equal(t, []codec.KV{
		{Key: "suggestWhichBrokerId", Value: "0"},
		{Key: "nextBeginOffset", Value: "12345"},
		{Key: "minOffset", Value: "0"},
		{Key: "maxOffset", Value: "99999"},
	}, f.Ext, "the four MUST keys, always; optional ones absent")

	m := GetMaxOffsetRequest{Topic: "T", QueueID: 2, Committed: true}
	f.Reset()
	m.Encode(&f)
	require.Equal(t, []codec.KV{{Key: "topic", Value: "T"}, {Key: "queueId", Value: "2"}}, f.Ext, "committed=true is the default: omitted")
	m.Committed = false
	f.Reset()
	m.Encode(&f)
	require.Equal(t, "false", f.Value("committed"))
}

func TestSendMessageResponseExtras(t *testing.T) {
	h := SendMessageResponse{MsgID: "0A0000010000..", QueueID: 1, QueueOffset: 100, TransactionID: "x", MsgRegion: "DefaultRegion", TraceOn: "true"}
	var f codec.Frame
	h.Encode(&f)
	require.Equal(t, "DefaultRegion", f.Value("MSG_REGION"))
	require.Equal(t, "true", f.Value("TRACE_ON"))
	require.Equal(t, "100", f.Value("queueOffset"))
	var got SendMessageResponse
	require.NoError(t, got.Decode(&f))
	require.Equal(t, h, got)
}

func TestAppendExtScratchSurvivesGrowth(t *testing.T) {
	h := PullMessageRequest{ConsumerGroup: "g", Topic: "t", QueueID: 123456, QueueOffset: 1 << 40,
		MaxMsgNums: 32, SysFlag: 2, CommitOffset: -5, SuspendTimeoutMillis: 15000, SubVersion: 1700000000000}
	var f codec.Frame
	scratch := make([]byte, 0, 2) // forces several reallocations
	scratch = h.AppendExt(&f, scratch)
	require.NotEmpty(t, scratch)
	var got PullMessageRequest
	require.NoError(t, got.Decode(&f))
	require.Equal(t, h, got)
}

func TestRegistry(t *testing.T) {
	require.IsType(t, &SendMessageRequestV2{}, ForRequest(codec.ReqSendMessageV2))
	require.IsType(t, &SendMessageRequestV2{}, ForRequest(codec.ReqSendBatchMessage))
	require.IsType(t, &SendMessageRequest{}, ForRequest(codec.ReqSendMessage))
	require.IsType(t, &PullMessageRequest{}, ForRequest(codec.ReqLitePullMessage))
	require.IsType(t, &GetRouteInfoRequest{}, ForRequest(codec.ReqGetRouteinfoByTopic))
	require.IsType(t, &RegisterBrokerRequest{}, ForRequest(codec.ReqRegisterBroker))
	require.IsType(t, &RegisterBrokerResponse{}, ForResponse(codec.ReqRegisterBroker))
	require.IsType(t, &SendMessageResponse{}, ForResponse(codec.ReqSendMessageV2))
	require.IsType(t, &PullMessageResponse{}, ForResponse(codec.ReqPullMessage))
	require.Nil(t, ForRequest(codec.RequestCode(-12345)))
	require.Nil(t, ForResponse(codec.ReqGetRouteinfoByTopic), "route info answers with a body only")
	require.Greater(t, len(All()), 130)
}

// fill sets every field of the struct behind h to a random value, keeping
// required strings non-empty so the result decodes.
func fill(rng *rand.Rand, h Header) {
	v := reflect.ValueOf(h).Elem()
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue // presence bits: Decode's to set
		}
		fv := v.Field(i)
		switch fv.Kind() {
		case reflect.String:
			if rng.IntN(4) == 0 {
				fv.SetString("")
			} else {
				fv.SetString(fmt.Sprintf("v%d,:\"{}\x01é", rng.Int64()))
			}
		case reflect.Int32:
			fv.SetInt(int64(rng.Int32()) - int64(rng.Int32()))
		case reflect.Int64:
			fv.SetInt(rng.Int64() - rng.Int64())
		case reflect.Bool:
			fv.SetBool(rng.IntN(2) == 0)
		default:
			panic("unexpected field kind " + fv.Kind().String())
		}
	}
}

// exported lists the exported field values of the struct behind h (the
// presence bits of has fields are Decode's, not the caller's).
func exported(h Header) []any {
	v := reflect.ValueOf(h).Elem()
	var out []any
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).IsExported() {
			out = append(out, v.Field(i).Interface())
		}
	}
	return out
}

// TestPresence: a has field reports whether the request carried it with a
// value, through ToV1 too, and an explicit default survives re-encoding.
func TestPresence(t *testing.T) {
	req := func(kv ...string) *codec.Frame {
		f := &codec.Frame{}
		for i := 0; i < len(kv); i += 2 {
			f.Ext = append(f.Ext, codec.KV{Key: kv[i], Value: kv[i+1]})
		}
		return f
	}
	var v1 SendMessageRequest
	_ = v1.Decode(req("queueId", "", "maxReconsumeTimes", "0"))
	require.False(t, v1.HasQueueID(), "an empty value is absent")
	require.True(t, v1.HasMaxReconsumeTimes())
	var f codec.Frame
	v1.Encode(&f)
	require.Equal(t, "0", f.Value("maxReconsumeTimes"), "present at its default: still written")

	var v2 SendMessageRequestV2
	_ = v2.Decode(req("e", "3"))
	require.True(t, v2.HasQueueID())
	require.False(t, v2.HasMaxReconsumeTimes())
	v2.ToV1(&v1)
	require.True(t, v1.HasQueueID())
	require.False(t, v1.HasMaxReconsumeTimes())
	_ = v2.Decode(req("l", "-1"))
	v2.ToV1(&v1)
	require.False(t, v1.HasQueueID())
	require.True(t, v1.HasMaxReconsumeTimes())
	var back SendMessageRequestV2
	back.FromV1(&v1)
	require.True(t, back.HasMaxReconsumeTimes())
	require.EqualValues(t, -1, back.MaxReconsumeTimes)
}

// TestRoundTripAllHeaders encodes every generated header with random
// values and decodes it back, directly and through a whole frame in both
// serializations.
func TestRoundTripAllHeaders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name := range All() {
		for iter := 0; iter < 20; iter++ {
			h := All()[name]
			fill(rng, h)
			var f codec.Frame
			h.Encode(&f)
			got := All()[name]
			err := got.Decode(&f)
			if errors.Is(err, ErrMissingField) {
				// A required string came out empty: absent on the wire, as in Java.
				continue
			}
			require.NoError(t, err, name)
			require.Equal(t, exported(h), exported(got), name)

			for _, ser := range []codec.SerializeType{codec.SerializeJSON, codec.SerializeRocketMQ} {
				f.Serialize = ser
				wire := f.AppendTo(nil)
				var d codec.Frame
				require.NoError(t, codec.Decode(wire[4:], &d), name)
				got2 := All()[name]
				require.NoError(t, got2.Decode(&d), name)
				require.Equal(t, exported(h), exported(got2), "%s via %v", name, ser)
			}
		}
	}
}

func TestDecodeAllocs(t *testing.T) {
	send := javaSendV2()
	pull := goPull()
	var sv2 SendMessageRequestV2
	var pr PullMessageRequest
	var v1 SendMessageRequest
	require.Zero(t, testing.AllocsPerRun(200, func() {
		if err := sv2.Decode(send); err != nil {
			panic(err)
		}
	}))
	require.Zero(t, testing.AllocsPerRun(200, func() {
		if err := pr.Decode(pull); err != nil {
			panic(err)
		}
	}))
	require.Zero(t, testing.AllocsPerRun(200, func() { sv2.ToV1(&v1) }))

	// Whole path from wire bytes: frame decode + header decode.
	wire := send.AppendTo(nil)
	buf := make([]byte, len(wire))
	var fr codec.Frame
	fr.Ext = make([]codec.KV, 0, 32)
	require.Zero(t, testing.AllocsPerRun(200, func() {
		copy(buf, wire) // Decode may unescape in place
		if err := codec.Decode(buf[4:], &fr); err != nil {
			panic(err)
		}
		if err := sv2.Decode(&fr); err != nil {
			panic(err)
		}
	}))
}

func TestEncodeAllocs(t *testing.T) {
	resp := PullMessageResponse{SuggestWhichBrokerID: 0, NextBeginOffset: 1234567, MinOffset: 0, MaxOffset: 7654321}
	send := SendMessageResponse{MsgID: "AC11000100002A9F000000000000ABCD", QueueID: 3, QueueOffset: 123456789, MsgRegion: "DefaultRegion", TraceOn: "true"}
	f := codec.Frame{Ext: make([]codec.KV, 0, 16)}
	scratch := make([]byte, 0, 128)
	require.Zero(t, testing.AllocsPerRun(200, func() {
		f.Ext = f.Ext[:0]
		scratch = resp.AppendExt(&f, scratch[:0])
	}))
	require.Zero(t, testing.AllocsPerRun(200, func() {
		f.Ext = f.Ext[:0]
		scratch = send.AppendExt(&f, scratch[:0])
	}))
}
