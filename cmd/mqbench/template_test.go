package main

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func decodeFrame(t *testing.T, frame []byte) codec.Frame {
	t.Helper()
	payload, n, err := codec.NextFrame(frame, codec.DefaultMaxFrameLength)
	require.NoError(t, err)
	require.Equal(t, len(frame), n, "exactly one frame")
	var f codec.Frame
	require.NoError(t, codec.Decode(append([]byte(nil), payload...), &f))
	return f
}

func props(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, "\x02") {
		if k, v, ok := strings.Cut(kv, "\x01"); ok {
			out[k] = v
		}
	}
	return out
}

func TestSendTemplateDecodesToExpectedHeader(t *testing.T) {
	for _, ser := range []codec.SerializeType{codec.SerializeRocketMQ, codec.SerializeJSON} {
		spec := &sendSpec{Group: "pg", Topic: "BenchTopic", BrokerName: "broker-a", QueueID: 5, Size: 100,
			Tags: "TagA", Keys: true, Serialize: ser, UniqPrefix: "0A0B0C0D00010002"}
		tpl, err := buildSendTemplate(spec)
		require.NoError(t, err)

		buf := append([]byte(nil), tpl.frame...)
		const wall = int64(1764460082123456789)
		tpl.patch(buf, 1234567890, wall, 42)
		f := decodeFrame(t, buf)
		require.Equal(t, int32(codec.ReqSendMessageV2), f.Code)
		require.Equal(t, ser, f.Serialize)
		require.Equal(t, int32(1234567890), f.Opaque)
		require.False(t, f.IsResponse())
		require.False(t, f.IsOneway())
		require.Equal(t, "pg", f.Value("a"))
		require.Equal(t, "BenchTopic", f.Value("b"))
		require.Equal(t, "TBW102", f.Value("c"))
		require.Equal(t, "5", f.Value("e"))
		require.Equal(t, "0", f.Value("f"))
		require.Equal(t, "1764460082123", f.Value("g"))
		require.Equal(t, "false", f.Value("m"))
		require.Equal(t, "broker-a", f.Value("n"))
		p := props(f.Value("i"))
		require.Equal(t, "TagA", p["TAGS"])
		require.Equal(t, "true", p["WAIT"])
		require.Len(t, p["UNIQ_KEY"], 32)
		require.True(t, strings.HasPrefix(p["UNIQ_KEY"], "0A0B0C0D00010002"))
		require.True(t, strings.HasPrefix(p["KEYS"], keyPrefix))
		require.Len(t, f.Body, 100)
		require.Equal(t, bodyMagic, string(f.Body[:8]))
		require.Equal(t, uint64(wall), binary.BigEndian.Uint64(f.Body[8:16]))

		// A second send differs only in the patched fields.
		buf2 := append([]byte(nil), tpl.frame...)
		tpl.patch(buf2, opaqueMax, wall+1e6, 43)
		f2 := decodeFrame(t, buf2)
		require.Equal(t, opaqueMax, f2.Opaque)
		require.Equal(t, "1764460082124", f2.Value("g"))
		p2 := props(f2.Value("i"))
		require.NotEqual(t, p["UNIQ_KEY"], p2["UNIQ_KEY"])
		require.NotEqual(t, p["KEYS"], p2["KEYS"])
	}
}

func TestSendTemplateBatchAndOneway(t *testing.T) {
	spec := &sendSpec{Group: "pg", Topic: "T", QueueID: 0, Size: 20, Batch: 3, Oneway: true,
		Serialize: codec.SerializeJSON, UniqPrefix: "FFFFFFFFFFFFFFFF"}
	tpl, err := buildSendTemplate(spec)
	require.NoError(t, err)
	require.Equal(t, 3, tpl.msgs)
	require.Equal(t, 60, tpl.bodyBytes)
	buf := append([]byte(nil), tpl.frame...)
	tpl.patch(buf, opaqueMin, 1764460082000000000, 7)
	f := decodeFrame(t, buf)
	require.Equal(t, int32(codec.ReqSendBatchMessage), f.Code)
	require.True(t, f.IsOneway())
	require.Equal(t, "true", f.Value("m"))
	_, hasN := f.Get("n")
	require.False(t, hasN)

	// Walk the batch body (MessageDecoder.encodeMessages layout).
	seen := map[string]bool{}
	b := f.Body
	for i := 0; i < 3; i++ {
		total := int(binary.BigEndian.Uint32(b))
		require.Zero(t, binary.BigEndian.Uint32(b[4:]), "magic")
		bl := int(binary.BigEndian.Uint32(b[16:]))
		require.Equal(t, 20, bl)
		body := b[20 : 20+bl]
		require.Equal(t, bodyMagic, string(body[:8]))
		pl := int(binary.BigEndian.Uint16(b[20+bl:]))
		require.Equal(t, total, 22+bl+pl)
		u := props(string(b[22+bl : 22+bl+pl]))["UNIQ_KEY"]
		require.Len(t, u, 32)
		seen[u] = true
		b = b[total:]
	}
	require.Empty(t, b)
	require.Len(t, seen, 3, "every inner message has its own UNIQ_KEY")
	require.NotContains(t, seen, props(f.Value("i"))["UNIQ_KEY"])
}

func TestSendTemplateTinyBodyHasNoStamp(t *testing.T) {
	tpl, err := buildSendTemplate(&sendSpec{Group: "g", Topic: "T", Size: 4, UniqPrefix: "0000000000000000"})
	require.NoError(t, err)
	require.Empty(t, tpl.stampAt)
	buf := append([]byte(nil), tpl.frame...)
	tpl.patch(buf, opaqueMin, 1764460082000000000, 0)
	require.Len(t, decodeFrame(t, buf).Body, 4)
}

func TestPatchDoesNotAllocate(t *testing.T) {
	tpl, err := buildSendTemplate(&sendSpec{Group: "g", Topic: "T", Size: 1024, Keys: true, UniqPrefix: "0000000000000001"})
	require.NoError(t, err)
	buf := append([]byte(nil), tpl.frame...)
	seq := uint64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		tpl.patch(buf, opaqueMin+int32(seq), 1764460082000000000+int64(seq), seq)
		seq++
	})
	require.Zero(t, allocs)
}

func BenchmarkTemplatePatch(b *testing.B) {
	tpl, err := buildSendTemplate(&sendSpec{Group: "g", Topic: "T", Size: 1024, UniqPrefix: "0000000000000001"})
	require.NoError(b, err)
	buf := make([]byte, 0, len(tpl.frame))
	b.SetBytes(int64(len(tpl.frame)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = append(buf[:0], tpl.frame...)
		tpl.patch(buf, opaqueMin+int32(i&0xFFFFFF), 1764460082000000000, uint64(i))
	}
}
