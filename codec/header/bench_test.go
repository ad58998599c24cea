package header

import (
	"testing"

	"github.com/rocketgo/rocketgo/codec"
)

func BenchmarkSendMessageRequestV2Decode(b *testing.B) {
	f := javaSendV2()
	var h SendMessageRequestV2
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Decode(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSendMessageRequestV2DecodeToV1(b *testing.B) {
	f := javaSendV2()
	var h SendMessageRequestV2
	var v1 SendMessageRequest
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Decode(f); err != nil {
			b.Fatal(err)
		}
		h.ToV1(&v1)
	}
}

func BenchmarkPullMessageRequestDecode(b *testing.B) {
	f := goPull()
	var h PullMessageRequest
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Decode(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSendMessageRequestV2Encode(b *testing.B) {
	var h SendMessageRequestV2
	if err := h.Decode(javaSendV2()); err != nil {
		b.Fatal(err)
	}
	f := codec.Frame{Ext: make([]codec.KV, 0, 32)}
	scratch := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		f.Ext = f.Ext[:0]
		scratch = h.AppendExt(&f, scratch[:0])
	}
}

func BenchmarkPullMessageRequestEncode(b *testing.B) {
	var h PullMessageRequest
	if err := h.Decode(goPull()); err != nil {
		b.Fatal(err)
	}
	f := codec.Frame{Ext: make([]codec.KV, 0, 32)}
	scratch := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		f.Ext = f.Ext[:0]
		scratch = h.AppendExt(&f, scratch[:0])
	}
}

func BenchmarkSendMessageResponseEncode(b *testing.B) {
	h := SendMessageResponse{MsgID: "AC11000100002A9F000000000000ABCD", QueueID: 3, QueueOffset: 123456789, TransactionID: "AC110001A1B218B4AAC2000000000000", MsgRegion: "DefaultRegion", TraceOn: "true"}
	f := codec.Frame{Ext: make([]codec.KV, 0, 16)}
	scratch := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		f.Ext = f.Ext[:0]
		scratch = h.AppendExt(&f, scratch[:0])
	}
}

func BenchmarkPullMessageResponseEncode(b *testing.B) {
	h := PullMessageResponse{NextBeginOffset: 1234599, MaxOffset: 2000000}
	f := codec.Frame{Ext: make([]codec.KV, 0, 16)}
	scratch := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		f.Ext = f.Ext[:0]
		scratch = h.AppendExt(&f, scratch[:0])
	}
}

// BenchmarkSendV2FromWire is the whole receive path of a send header:
// frame decode (JSON) plus header decode.
func BenchmarkSendV2FromWire(b *testing.B) {
	src := javaSendV2()
	src.Body = make([]byte, 128)
	wire := src.AppendTo(nil)
	buf := make([]byte, len(wire))
	fr := codec.Frame{Ext: make([]codec.KV, 0, 32)}
	var h SendMessageRequestV2
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, wire)
		if err := codec.Decode(buf[4:], &fr); err != nil {
			b.Fatal(err)
		}
		if err := h.Decode(&fr); err != nil {
			b.Fatal(err)
		}
	}
}
