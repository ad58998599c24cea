package codec

import (
	"testing"
)

// benchSendV2 is a Java SEND_MESSAGE_V2 with a 128-byte body.
func benchSendV2(ser SerializeType) *Frame {
	return &Frame{Code: 310, Language: LangJava, Version: 479, Opaque: 123456, Serialize: ser, Ext: []KV{
		{"a", "please_rename_unique_group_name"}, {"b", "TopicTest"}, {"c", "TBW102"}, {"d", "4"},
		{"e", "1"}, {"f", "0"}, {"g", "1700000000123"}, {"h", "0"},
		{"i", "UNIQ_KEY\x01AC110001A1B218B4AAC2000000000000\x02WAIT\x01true\x02TAGS\x01TagA\x02"},
		{"j", "0"}, {"k", "false"}, {"m", "false"}, {"n", "broker-a"}, {"bname", "broker-a"},
	}, Body: make([]byte, 128)}
}

// benchPullResp is a PULL_MESSAGE response header (body sent separately).
func benchPullResp(ser SerializeType) *Frame {
	return &Frame{Code: 0, Language: LangJava, Version: ServerVersion, Opaque: 99, Flag: FlagResponse, Remark: "FOUND", Serialize: ser, Ext: []KV{
		{"suggestWhichBrokerId", "0"}, {"nextBeginOffset", "1234599"}, {"minOffset", "0"}, {"maxOffset", "2000000"},
	}}
}

func benchDecode(b *testing.B, f *Frame) {
	wire := f.AppendTo(nil)
	buf := make([]byte, len(wire))
	var out Frame
	out.Ext = make([]KV, 0, 32)
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		copy(buf, wire) // Decode unescapes JSON in place
		if err := Decode(buf[4:], &out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSendV2JSON(b *testing.B)     { benchDecode(b, benchSendV2(SerializeJSON)) }
func BenchmarkDecodeSendV2RocketMQ(b *testing.B) { benchDecode(b, benchSendV2(SerializeRocketMQ)) }
func BenchmarkDecodePullRespJSON(b *testing.B)   { benchDecode(b, benchPullResp(SerializeJSON)) }

func benchEncode(b *testing.B, f *Frame) {
	buf := f.AppendTo(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf = f.AppendTo(buf[:0])
	}
}

func BenchmarkEncodeSendV2JSON(b *testing.B)     { benchEncode(b, benchSendV2(SerializeJSON)) }
func BenchmarkEncodeSendV2RocketMQ(b *testing.B) { benchEncode(b, benchSendV2(SerializeRocketMQ)) }

func BenchmarkEncodePullRespHeaderJSON(b *testing.B) {
	f := benchPullResp(SerializeJSON)
	buf := f.AppendHeader(nil, 4096)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf = f.AppendHeader(buf[:0], 4096)
	}
}

// BenchmarkNextFrame splits a buffer of 64 back-to-back frames.
func BenchmarkNextFrame(b *testing.B) {
	one := benchSendV2(SerializeJSON).AppendTo(nil)
	var stream []byte
	for range 64 {
		stream = append(stream, one...)
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := stream
		for len(s) > 0 {
			_, n, err := NextFrame(s, DefaultMaxFrameLength)
			if err != nil || n == 0 {
				b.Fatal("short stream", err)
			}
			s = s[n:]
		}
	}
}

func TestCodecAllocs(t *testing.T) {
	for _, ser := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		f := benchSendV2(ser)
		wire := f.AppendTo(nil)
		buf := make([]byte, len(wire))
		var out Frame
		out.Ext = make([]KV, 0, 32)
		if n := testing.AllocsPerRun(100, func() {
			copy(buf, wire)
			if err := Decode(buf[4:], &out); err != nil {
				panic(err)
			}
		}); n != 0 {
			t.Fatalf("decode %v: %v allocs", ser, n)
		}
		enc := make([]byte, 0, 2*len(wire))
		if n := testing.AllocsPerRun(100, func() { enc = f.AppendTo(enc[:0]) }); n != 0 {
			t.Fatalf("encode %v: %v allocs", ser, n)
		}
	}
}
