package message

import (
	"bytes"
	"testing"
)

func FuzzDecodeRecord(f *testing.F) {
	m := sampleMessage()
	f.Add(AppendRecord(nil, m, BodyCRC(m.Body), 1, 2))
	m.BornHost = m.StoreHost
	m.Topic = string(bytes.Repeat([]byte("t"), 200))
	f.Add(AppendRecord(nil, m, BodyCRC(m.Body), 3, 4))
	blank := make([]byte, 8)
	PutBlank(blank, 8)
	f.Add(blank)
	f.Add([]byte{0, 0, 0, 100, 0xda, 0xa3, 0x20, 0xa7})
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Ext
		if err := Decode(b, &e); err != nil {
			return
		}
		_ = e.CheckCRC()
		if _, err := StoreTimestampOf(b); err != nil {
			t.Fatalf("decoded record but no store timestamp: %v", err)
		}
		m := e.Message()
		if len(m.Topic) > 127 && e.Magic == MagicV1 {
			t.Fatalf("V1 record with topic length %d", len(m.Topic))
		}
		if e.Magic == MagicV2 && len(m.Topic) <= 127 {
			return // V2 with a short topic: we always re-encode as V1
		}
		// The sysFlag v6 bits are recomputed from the decoded addresses.
		enc := AppendRecord(nil, &m, e.BodyCRC, e.QueueOffset, e.PhysicalOffset)
		if !bytes.Equal(enc, b[:e.TotalSize]) {
			// Only the v6 bits of an IPv4-mapped address may differ.
			var e2 Ext
			if err := Decode(enc, &e2); err != nil {
				t.Fatalf("re-encoded record does not decode: %v", err)
			}
			if e2.Topic != e.Topic || !bytes.Equal(e2.Body, e.Body) || e2.Properties != e.Properties ||
				e2.BornHost.Port() != e.BornHost.Port() || e2.QueueOffset != e.QueueOffset {
				t.Fatalf("decode→encode→decode changed the record")
			}
			return
		}
		var e2 Ext
		if err := Decode(enc, &e2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if e2.Topic != e.Topic || e2.Properties != e.Properties || !bytes.Equal(e2.Body, e.Body) ||
			e2.StoreHost != e.StoreHost || e2.BornHost != e.BornHost || e2.SysFlag != e.SysFlag {
			t.Fatal("decode→encode→decode not stable")
		}
	})
}

func FuzzProperties(f *testing.F) {
	f.Add("TAGS\x01a\x02KEYS\x01k1 k2\x02")
	f.Add("\x01\x02\x01x\x02y\x01\x02a\x01b\x01c")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseProperties(s)
		for k, v := range m {
			got, ok := Property(s, k)
			if !ok || got != v {
				t.Fatalf("Property(%q) = %q,%v; map has %q", k, got, ok, v)
			}
		}
		enc := EncodeProperties(m)
		m2 := ParseProperties(enc)
		if len(m2) != len(m) {
			t.Fatalf("encode→parse changed %d entries to %d", len(m), len(m2))
		}
		for k, v := range m {
			if m2[k] != v {
				t.Fatalf("key %q: %q became %q", k, v, m2[k])
			}
		}
		if EncodeProperties(m2) != enc {
			t.Fatal("encoding not stable")
		}
	})
}

func FuzzBatch(f *testing.F) {
	var body []byte
	body = AppendBatchEntry(body, 1, []byte("one"), "A\x01a\x02")
	body = AppendBatchEntry(body, 2, nil, "")
	f.Add(body)
	f.Add([]byte{0, 0, 0, 22})
	f.Fuzz(func(t *testing.T, b []byte) {
		it := IterBatch(b)
		var e BatchEntry
		var out []byte
		for it.Next(&e) {
			out = AppendBatchEntry(out, e.Flag, e.Body, e.Properties)
		}
		it2 := IterBatch(out)
		var e2 BatchEntry
		n := 0
		for it2.Next(&e2) {
			n++
		}
		if it2.Err() != nil {
			t.Fatalf("re-encoded batch does not decode: %v", it2.Err())
		}
		if it.Err() == nil && !bytes.Equal(out, zeroHeaders(b)) {
			t.Fatal("decode→encode changed a valid batch")
		}
	})
}

// zeroHeaders returns b with each entry's magic and CRC fields zeroed (the
// encoder always writes 0 there).
func zeroHeaders(b []byte) []byte {
	c := bytes.Clone(b)
	it := IterBatch(c)
	var e BatchEntry
	pos := 0
	for it.Next(&e) {
		clear(c[pos+4 : pos+12])
		pos += 22 + len(e.Body) + len(e.Properties)
	}
	return c
}
