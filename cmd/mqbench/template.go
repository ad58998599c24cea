package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/codec"
)

// Opaques cycle through [opaqueMin, opaqueMax] so that their decimal form
// (JSON headers) always takes ten characters and can be patched in place.
const (
	opaqueMin int32 = 1_000_000_000
	opaqueMax int32 = 2_147_483_647
)

// bodyMagic starts every body mqbench sends (when the size allows); the
// next 8 bytes are the send time in Unix nanoseconds.
const (
	bodyMagic   = "RGBENCH1"
	bodyStampAt = len(bodyMagic)
	bodyStamped = bodyStampAt + 8
)

// Sentinels written into the template and located afterwards. They only
// have to be unique within one header.
const (
	bornSentinel = "9999999999991"    // 13 digits: epoch milliseconds
	uniqSentinel = "FFFFFFFFFFFFFFFE" // 16 hex: low half of UNIQ_KEY
	keySentinel  = "999999999992"     // 12 digits: KEYS value counter
	keyPrefix    = "mqbench-"
)

// sendSpec describes the frames one producer sends.
type sendSpec struct {
	Group      string
	Topic      string
	BrokerName string
	QueueID    int
	Size       int
	Tags       string
	Keys       bool
	Batch      int // > 0: SEND_BATCH_MESSAGE with that many messages
	Oneway     bool
	Serialize  codec.SerializeType
	UniqPrefix string // 16 upper-case hex chars, fixed per producer
	// AccessKey and SecretKey, when set, sign every frame as Java's
	// AclClientRPCHook (template_sign.go).
	AccessKey, SecretKey string
}

// sendTemplate is a pre-encoded send frame plus the positions patched per
// send. Positions are relative to the frame start.
type sendTemplate struct {
	frame     []byte
	serialize codec.SerializeType
	opaqueAt  int          // JSON: 10 ASCII digits; ROCKETMQ: int32 BE
	bornAt    int          // 13 ASCII digits
	uniqAt    []int        // 16 hex digits each
	keyAt     []int        // 12 ASCII digits each
	stampAt   []int        // int64 BE each
	msgs      int          // messages per frame
	bodyBytes int          // user body bytes per frame (all messages)
	sig       *sigTemplate // nil: unsigned
}

func appendProps(dst []byte, spec *sendSpec) []byte {
	prop := func(dst []byte, k, v string) []byte {
		dst = append(dst, k...)
		dst = append(dst, 1)
		dst = append(dst, v...)
		return append(dst, 2)
	}
	if spec.Tags != "" {
		dst = prop(dst, "TAGS", spec.Tags)
	}
	if spec.Keys {
		dst = prop(dst, "KEYS", keyPrefix+keySentinel)
	}
	dst = prop(dst, "WAIT", "true")
	dst = prop(dst, "UNIQ_KEY", spec.UniqPrefix+uniqSentinel)
	return dst
}

func appendBody(dst []byte, size int) []byte {
	start := len(dst)
	for i := 0; i < size; i++ {
		dst = append(dst, 'a'+byte(i%26))
	}
	if size >= bodyStamped {
		copy(dst[start:], bodyMagic)
	}
	return dst
}

// buildSendTemplate encodes the frame for spec once.
func buildSendTemplate(spec *sendSpec) (*sendTemplate, error) {
	if len(spec.UniqPrefix) != 16 {
		return nil, fmt.Errorf("template: uniq prefix must be 16 hex chars, got %q", spec.UniqPrefix)
	}
	f := codec.Frame{
		Code:      int32(codec.ReqSendMessageV2),
		Language:  codec.LangJava,
		Version:   codec.ServerVersion,
		Opaque:    opaqueMin,
		Serialize: spec.Serialize,
	}
	if spec.Oneway {
		f.Flag = codec.FlagOneway
	}
	msgs := 1
	var headerProps, body []byte
	if spec.Batch > 0 {
		f.Code = int32(codec.ReqSendBatchMessage)
		msgs = spec.Batch
		// The batch itself carries WAIT and a UNIQ_KEY, as Java's MessageBatch.
		headerProps = appendProps(nil, &sendSpec{UniqPrefix: spec.UniqPrefix})
		for i := 0; i < spec.Batch; i++ {
			props := appendProps(nil, spec)
			body = binary.BigEndian.AppendUint32(body, uint32(22+spec.Size+len(props)))
			body = binary.BigEndian.AppendUint32(body, 0) // magic
			body = binary.BigEndian.AppendUint32(body, 0) // body crc
			body = binary.BigEndian.AppendUint32(body, 0) // flag
			body = binary.BigEndian.AppendUint32(body, uint32(spec.Size))
			body = appendBody(body, spec.Size)
			body = binary.BigEndian.AppendUint16(body, uint16(len(props)))
			body = append(body, props...)
		}
	} else {
		headerProps = appendProps(nil, spec)
		body = appendBody(nil, spec.Size)
	}
	f.Body = body
	f.Ext = []codec.KV{
		{Key: "a", Value: spec.Group},
		{Key: "b", Value: spec.Topic},
		{Key: "c", Value: "TBW102"},
		{Key: "d", Value: "4"},
		{Key: "e", Value: strconv.Itoa(spec.QueueID)},
		{Key: "f", Value: "0"},
		{Key: "g", Value: bornSentinel},
		{Key: "h", Value: "0"},
		{Key: "i", Value: string(headerProps)},
		{Key: "j", Value: "0"},
		{Key: "k", Value: "false"},
		{Key: "m", Value: strconv.FormatBool(spec.Batch > 0)},
	}
	if spec.BrokerName != "" {
		f.Ext = append(f.Ext, codec.KV{Key: "n", Value: spec.BrokerName})
	}
	if spec.AccessKey != "" {
		f.Ext = append(f.Ext, codec.KV{Key: "AccessKey", Value: spec.AccessKey}, codec.KV{Key: "Signature", Value: sigSentinel})
	}
	frame := f.AppendTo(nil)
	t := &sendTemplate{frame: frame, serialize: spec.Serialize, msgs: msgs, bodyBytes: msgs * spec.Size}
	hdrEnd := len(frame) - len(body)

	if spec.Serialize == codec.SerializeRocketMQ {
		t.opaqueAt = 8 + 5
	} else {
		t.opaqueAt = bytes.Index(frame[:hdrEnd], []byte(`"opaque":1000000000`))
		if t.opaqueAt < 0 {
			return nil, fmt.Errorf("template: opaque not found in JSON header")
		}
		t.opaqueAt += len(`"opaque":`)
	}
	t.bornAt = bytes.Index(frame[:hdrEnd], []byte(bornSentinel))
	if t.bornAt < 0 {
		return nil, fmt.Errorf("template: born timestamp not found in header")
	}
	for _, at := range findAll(frame, []byte(spec.UniqPrefix+uniqSentinel)) {
		t.uniqAt = append(t.uniqAt, at+len(spec.UniqPrefix))
	}
	for _, at := range findAll(frame, []byte(keyPrefix+keySentinel)) {
		t.keyAt = append(t.keyAt, at+len(keyPrefix))
	}
	if len(t.uniqAt) != 1+boolInt(spec.Batch > 0)*spec.Batch {
		return nil, fmt.Errorf("template: found %d UNIQ_KEY sentinels", len(t.uniqAt))
	}
	if spec.Size >= bodyStamped {
		for _, at := range findAll(frame[hdrEnd:], []byte(bodyMagic)) {
			t.stampAt = append(t.stampAt, hdrEnd+at+bodyStampAt)
		}
		if len(t.stampAt) != msgs {
			return nil, fmt.Errorf("template: found %d body stamps for %d messages", len(t.stampAt), msgs)
		}
	}
	if spec.AccessKey != "" {
		sig, err := newSigTemplate(&f, frame, spec)
		if err != nil {
			return nil, err
		}
		t.sig = sig
	}
	return t, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func findAll(b, sub []byte) []int {
	var out []int
	for off := 0; ; {
		i := bytes.Index(b[off:], sub)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(sub)
	}
}

// patch writes the per-send fields into dst, a copy of t.frame. seq makes
// UNIQ_KEY and KEYS unique per message for this producer.
func (t *sendTemplate) patch(dst []byte, opaque int32, wallNanos int64, seq uint64) {
	if t.serialize == codec.SerializeRocketMQ {
		binary.BigEndian.PutUint32(dst[t.opaqueAt:], uint32(opaque))
	} else {
		putDecimal(dst[t.opaqueAt:t.opaqueAt+10], uint64(opaque))
	}
	putDecimal(dst[t.bornAt:t.bornAt+13], uint64(wallNanos/1e6))
	for i, at := range t.uniqAt {
		putHex(dst[at:at+16], seq*uint64(t.msgs+1)+uint64(i))
	}
	for i, at := range t.keyAt {
		putDecimal(dst[at:at+12], (seq*uint64(t.msgs)+uint64(i))%1e12)
	}
	for _, at := range t.stampAt {
		binary.BigEndian.PutUint64(dst[at:], uint64(wallNanos))
	}
	if t.sig != nil {
		t.sig.sign(dst, wallNanos, seq, t.msgs)
	}
}

// putDecimal writes v right-aligned, zero-padded, into dst.
func putDecimal(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
}

const upperHex = "0123456789ABCDEF"

// putHex writes v as upper-case hex, zero-padded, into dst.
func putHex(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = upperHex[v&0xF]
		v >>= 4
	}
}
