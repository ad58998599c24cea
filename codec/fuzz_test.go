package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// Seed corpora live in testdata/fuzz/FuzzXxx (written by TestWriteFuzzSeeds
// with -update-fuzz-seeds); scripts/fuzz.sh runs every target.

// streamResult is what NextFrame makes of a whole stream: the payloads of
// the complete frames, then the error that stopped it, if any.
type streamResult struct {
	payloads [][]byte
	err      string
}

// fuzzMaxFrame keeps the fuzzer's frames small enough to be interesting.
const fuzzMaxFrame = 1 << 16

func parseStream(stream []byte) streamResult {
	var r streamResult
	for {
		p, n, err := NextFrame(stream, fuzzMaxFrame)
		if err != nil {
			r.err = err.Error()
			return r
		}
		if n == 0 {
			return r
		}
		r.payloads = append(r.payloads, p)
		stream = stream[n:]
	}
}

// feedStream delivers stream in chunks (sizes taken cyclically from
// sizes) into a growing buffer, as a connection would, extracting frames
// whenever possible.
func feedStream(stream []byte, sizes []int) streamResult {
	var r streamResult
	var buf []byte
	for i := 0; len(stream) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(stream))
		buf = append(buf, stream[:n]...)
		stream = stream[n:]
		for {
			p, used, err := NextFrame(buf, fuzzMaxFrame)
			if err != nil {
				r.err = err.Error()
				return r
			}
			if used == 0 {
				break
			}
			r.payloads = append(r.payloads, append([]byte(nil), p...))
			buf = buf[used:]
		}
	}
	return r
}

func requireSameStream(t *testing.T, want, got streamResult, how string) {
	t.Helper()
	require.Equal(t, len(want.payloads), len(got.payloads), how)
	for i := range want.payloads {
		require.True(t, bytes.Equal(want.payloads[i], got.payloads[i]), "%s: frame %d differs", how, i)
	}
	require.Equal(t, want.err, got.err, how)
}

func decodeCopy(payload []byte, f *Frame) error {
	return Decode(append([]byte(nil), payload...), f)
}

// checkRoundTrip verifies that a decoded frame re-encodes to a fixed point:
// encode → decode gives the same frame, and encoding that again gives the
// same bytes. It also crosses to the other serialization when the frame's
// values fit it.
func checkRoundTrip(t *testing.T, f *Frame) {
	t.Helper()
	enc1 := f.AppendTo(nil)
	n, err := FrameLength(enc1, 0)
	require.NoError(t, err)
	require.Equal(t, len(enc1)-4, n, "length prefix")

	var f2 Frame
	require.NoError(t, decodeCopy(enc1[4:], &f2), "re-decode of %q", enc1)
	enc2 := f2.AppendTo(nil)
	require.Equal(t, enc1, enc2, "encode→decode→encode not stable")
	var f3 Frame
	require.NoError(t, decodeCopy(enc2[4:], &f3))
	requireSameFrame(t, &f2, &f3)

	// Across serializations, when nothing is out of the other's range:
	// ROCKETMQ holds 16-bit codes and versions and 32767-byte keys; JSON
	// holds language names and, like Java, valid UTF-8 only (the writer
	// turns invalid bytes into U+FFFD).
	if f2.Code != int32(int16(f2.Code)) || f2.Version != int32(int16(f2.Version)) || f2.Language.String() == "OTHER" || !utf8.ValidString(f2.Remark) {
		return
	}
	for _, kv := range f2.Ext {
		if len(kv.Key) > 32767 || !utf8.ValidString(kv.Key) || !utf8.ValidString(kv.Value) {
			return
		}
	}
	other := f2
	other.Serialize = 1 - f2.Serialize
	var f4 Frame
	require.NoError(t, decodeCopy(other.AppendTo(nil)[4:], &f4))
	f4.Serialize = f2.Serialize
	requireSameFrame(t, &f2, &f4)
}

func requireSameFrame(t *testing.T, a, b *Frame) {
	t.Helper()
	require.Equal(t, a.Code, b.Code)
	require.Equal(t, a.Language, b.Language)
	require.Equal(t, a.Version, b.Version)
	require.Equal(t, a.Opaque, b.Opaque)
	require.Equal(t, a.Flag, b.Flag)
	require.Equal(t, a.Remark, b.Remark)
	require.Equal(t, a.Serialize, b.Serialize)
	require.Equal(t, len(a.Ext), len(b.Ext))
	for i := range a.Ext {
		require.Equal(t, a.Ext[i], b.Ext[i])
	}
	require.True(t, bytes.Equal(a.Body, b.Body), "body")
}

// FuzzDecodeFrame treats the input as bytes arriving on a connection.
func FuzzDecodeFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream []byte, chunks []byte) {
		want := parseStream(stream)

		// Every split point for small streams, then the fuzzer's chunking
		// (chunk sizes are the bytes of chunks plus one, cyclically).
		if len(stream) <= 128 {
			for cut := 1; cut < len(stream); cut++ {
				requireSameStream(t, want, feedStream(stream, []int{cut, len(stream)}), "split at "+strconv.Itoa(cut))
			}
		}
		sizes := []int{1}
		if len(chunks) > 0 {
			sizes = sizes[:0]
			for _, c := range chunks {
				sizes = append(sizes, int(c)+1)
			}
		}
		requireSameStream(t, want, feedStream(stream, sizes), "chunked")

		for _, p := range want.payloads {
			var fr Frame
			if err := decodeCopy(p, &fr); err != nil {
				requireKnownDecodeError(t, err)
				continue
			}
			checkRoundTrip(t, &fr)
		}
	})
}

func requireKnownDecodeError(t *testing.T, err error) {
	t.Helper()
	for _, e := range []error{ErrFrameTruncated, ErrHeaderLength, ErrSerializeType, ErrMalformedJSON, ErrMalformedRMQ} {
		if errors.Is(err, e) {
			return
		}
	}
	t.Fatalf("decode error outside the codec's set: %v", err)
}

// wrapHeader builds a frame payload around a raw header.
func wrapHeader(ser SerializeType, hdr, body []byte) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(ser)<<24|uint32(len(hdr)))
	p = append(p, hdr...)
	return append(p, body...)
}

// FuzzJSONHeader decodes arbitrary JSON headers and, for valid UTF-8 JSON,
// compares the extFields with encoding/json's reading of the same text.
func FuzzJSONHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, hdr []byte) {
		if len(hdr) > 0xFFFFFF {
			return
		}
		var fr Frame
		err := decodeCopy(wrapHeader(SerializeJSON, hdr, nil), &fr)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformedJSON)
			return
		}
		checkRoundTrip(t, &fr)
		if !utf8.Valid(hdr) || !json.Valid(hdr) {
			return
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(hdr, &top) != nil {
			return
		}
		if raw, ok := top["code"]; ok {
			if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				require.Equal(t, int32(v), fr.Code, "code")
			}
		}
		if raw, ok := top["remark"]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				require.Equal(t, s, fr.Remark, "remark")
			}
		}
		raw, ok := top["extFields"]
		if !ok {
			return
		}
		var ext map[string]json.RawMessage
		if json.Unmarshal(raw, &ext) != nil {
			return
		}
		for k, rv := range ext {
			var want string
			var s string
			switch {
			case string(rv) == "null":
				continue
			case json.Unmarshal(rv, &s) == nil:
				want = s
			default:
				want = string(rv) // numbers and booleans keep their text
			}
			got, found := "", false
			for _, kv := range fr.Ext {
				if kv.Key == k {
					got, found = kv.Value, true
				}
			}
			require.True(t, found, "extFields key %q lost", k)
			require.Equal(t, want, got, "extFields[%q]", k)
		}
	})
}

// FuzzRocketMQHeader decodes arbitrary binary headers; a header that
// decodes must re-encode to exactly the bytes the decoder consumed.
func FuzzRocketMQHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, hdr []byte, body []byte) {
		if len(hdr) > 0xFFFFFF {
			return
		}
		var fr Frame
		err := decodeCopy(wrapHeader(SerializeRocketMQ, hdr, body), &fr)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformedRMQ)
			return
		}
		rl := int(binary.BigEndian.Uint32(hdr[13:]))
		el := int(binary.BigEndian.Uint32(hdr[17+rl:]))
		consumed := hdr[:21+rl+el]
		enc := fr.AppendTo(nil)
		hl := int(binary.BigEndian.Uint32(enc[4:]) & 0xFFFFFF)
		require.Equal(t, consumed, enc[8:8+hl], "re-encoded header differs from input")
		require.True(t, bytes.Equal(body, enc[8+hl:]), "body")
		checkRoundTrip(t, &fr)
	})
}
