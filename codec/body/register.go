package body

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// MQVersion ordinals that change the REGISTER_BROKER body layout.
const (
	VersionV3_0_11 = 37  // from here the body is RegisterBrokerBody, before a bare TopicConfigSerializeWrapper
	VersionV4_9_4  = 401 // from here route data is written BrowserCompatible
	VersionV5_0_0  = 413 // from here the compressed body carries static-topic mappings
)

// MaxInflatedRegisterBody bounds the inflated content of a compressed
// REGISTER_BROKER body. Java has no bound; ours is the frame limit, which is
// enough for any topic table a broker could also register uncompressed (a
// topic's text line is several times shorter than its JSON entry in the
// plain body, which must fit one frame), about 100,000 topics with the
// longest names. A zlib bomb is refused once this much has been inflated:
// at most this many bytes of work and memory per request.
const MaxInflatedRegisterBody = codec.DefaultMaxFrameLength

// readStep is how much of an announced chunk is read (and allocated) at a
// time, so memory follows the bytes the stream really holds, not the length
// it announces.
const readStep = 32 << 10

// ErrRegisterBody is wrapped by every register-body decoding error.
var ErrRegisterBody = errors.New("body: malformed register broker body")

// TopicMapping is one topicQueueMappingInfoMap entry (5.x static topics):
// the topic, the broker name ("bname") inside the info, and its raw JSON.
type TopicMapping struct {
	Topic      string
	BrokerName string
	JSON       []byte
}

// RegisterBrokerBody is the REGISTER_BROKER (103) request body.
type RegisterBrokerBody struct {
	DataVersion      TopicVersion
	Topics           []TopicConfig // in the order the broker sent them
	FilterServerList []string
	Mappings         []TopicMapping
}

// DecodeRegisterBrokerBody reads the body in the layout chosen by the
// header's compressed flag and the broker's version.
func DecodeRegisterBrokerBody(b []byte, compressed bool, brokerVersion int32) (RegisterBrokerBody, error) {
	if len(b) == 0 {
		// Like Java: no body registers nothing, with a zero data version.
		return RegisterBrokerBody{}, nil
	}
	if compressed {
		return decodeCompressedRegister(b, brokerVersion)
	}
	var body RegisterBrokerBody
	rd := fastjson.NewReader(b)
	if brokerVersion < VersionV3_0_11 {
		readTopicConfigWrapper(rd, &body)
	} else {
		for rd.ObjectStart(); rd.More(); {
			switch rd.Key() {
			case "filterServerList":
				body.FilterServerList = readStrings(rd)
			case "topicConfigSerializeWrapper":
				readTopicConfigWrapper(rd, &body)
			default:
				rd.Skip()
			}
		}
	}
	if err := rd.End(); err != nil {
		return body, fmt.Errorf("%w: %w", ErrRegisterBody, err)
	}
	return body, nil
}

func readTopicConfigWrapper(rd *fastjson.Reader, body *RegisterBrokerBody) {
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "dataVersion":
			body.DataVersion = readDataVersion(rd)
		case "topicConfigTable":
			var topics blockList[TopicConfig]
			for rd.ObjectStart(); rd.More(); {
				name := rd.Key()
				tc := readTopicConfigJSON(rd)
				if tc.TopicName == "" {
					tc.TopicName = name
				}
				topics.add(tc)
			}
			body.Topics = topics.appendTo(body.Topics)
		case "topicQueueMappingInfoMap":
			var mappings blockList[TopicMapping]
			for rd.ObjectStart(); rd.More(); {
				topic := rd.Key()
				raw := append([]byte(nil), rd.Raw()...)
				mappings.add(TopicMapping{Topic: topic, BrokerName: mappingBname(raw), JSON: raw})
			}
			body.Mappings = mappings.appendTo(body.Mappings)
		default:
			rd.Skip()
		}
	}
}

func mappingBname(raw []byte) string {
	var bname string
	rd := fastjson.NewReader(raw)
	for rd.ObjectStart(); rd.More(); {
		if rd.Key() == "bname" {
			bname = rd.String()
		} else {
			rd.Skip()
		}
	}
	return bname
}

func readDataVersion(rd *fastjson.Reader) TopicVersion {
	var v TopicVersion
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "counter":
			v.Counter = rd.Int()
		case "stateVersion":
			v.StateVersion = rd.Int()
		case "timestamp":
			v.Timestamp = rd.Int()
		default:
			rd.Skip()
		}
	}
	return v
}

// DecodeDataVersion reads a DataVersion (QUERY_DATA_VERSION body).
func DecodeDataVersion(b []byte) (TopicVersion, error) {
	rd := fastjson.NewReader(b)
	v := readDataVersion(rd)
	if err := rd.End(); err != nil {
		return v, fmt.Errorf("body: data version: %w", err)
	}
	return v, nil
}

func readTopicConfigJSON(rd *fastjson.Reader) TopicConfig {
	tc := TopicConfig{ReadQueueNums: DefaultReadQueueNums, WriteQueueNums: DefaultWriteQueueNums, Perm: DefaultPerm, TopicFilterType: SingleTag}
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "topicName":
			tc.TopicName = rd.String()
		case "readQueueNums":
			tc.ReadQueueNums = int32(rd.Int())
		case "writeQueueNums":
			tc.WriteQueueNums = int32(rd.Int())
		case "perm":
			tc.Perm = int32(rd.Int())
		case "topicFilterType":
			tc.TopicFilterType = rd.String()
		case "topicSysFlag":
			tc.TopicSysFlag = int32(rd.Int())
		case "order":
			tc.Order = rd.Bool()
		case "attributes":
			tc.Attributes = readStringMap(rd)
		default:
			rd.Skip()
		}
	}
	return tc
}

func readStringMap(rd *fastjson.Reader) map[string]string {
	m := map[string]string{}
	for rd.ObjectStart(); rd.More(); {
		k := rd.Key()
		m[k] = rd.String()
	}
	return m
}

// decodeCompressedRegister inflates and walks the custom layout.
func decodeCompressedRegister(b []byte, brokerVersion int32) (RegisterBrokerBody, error) {
	var body RegisterBrokerBody
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return body, fmt.Errorf("%w: zlib: %w", ErrRegisterBody, err)
	}
	defer zr.Close()
	in := &limitedReader{r: zr, left: MaxInflatedRegisterBody}
	dv, err := in.chunk()
	if err != nil {
		return body, err
	}
	if body.DataVersion, err = DecodeDataVersion(dv); err != nil {
		return body, fmt.Errorf("%w: %w", ErrRegisterBody, err)
	}
	n, err := in.int()
	if err != nil {
		return body, err
	}
	if n < 0 || n > in.left/4 { // every entry takes at least its length prefix
		return body, fmt.Errorf("%w: topic count %d", ErrRegisterBody, n)
	}
	var topics blockList[TopicConfig]
	for range n {
		text, err := in.chunk()
		if err != nil {
			return body, err
		}
		tc, ok := parseTopicConfigText(text)
		if !ok {
			return body, fmt.Errorf("%w: topic config %q", ErrRegisterBody, truncate(text))
		}
		topics.add(tc)
	}
	body.Topics = topics.appendTo(nil)
	fl, err := in.chunk()
	if err != nil {
		return body, err
	}
	rd := fastjson.NewReader(fl)
	body.FilterServerList = readStrings(rd)
	if rd.End() != nil {
		body.FilterServerList = []string{} // Java logs and carries on with an empty list
	}
	if brokerVersion >= VersionV5_0_0 {
		n, err := in.int()
		if err != nil {
			return body, err
		}
		if n < 0 || n > in.left/4 {
			return body, fmt.Errorf("%w: mapping count %d", ErrRegisterBody, n)
		}
		var mappings blockList[TopicMapping]
		for range n {
			raw, err := in.chunk()
			if err != nil {
				return body, err
			}
			raw = append([]byte(nil), raw...)
			var topic, bname string
			rd := fastjson.NewReader(raw)
			for rd.ObjectStart(); rd.More(); {
				switch rd.Key() {
				case "topic":
					topic = rd.String()
				case "bname":
					bname = rd.String()
				default:
					rd.Skip()
				}
			}
			if err := rd.End(); err != nil {
				return body, fmt.Errorf("%w: mapping info: %w", ErrRegisterBody, err)
			}
			mappings.add(TopicMapping{Topic: topic, BrokerName: bname, JSON: raw})
		}
		body.Mappings = mappings.appendTo(nil)
	}
	return body, nil
}

// blockList collects a list of unknown length in fixed-size blocks and
// hands it out as one slice of the exact length: at most about twice the
// final size is ever allocated, where append's 1.25x growth of a large slice
// allocates about five times it (a 16 MiB register body of minimal topic
// lines made 254 MiB of garbage that way).
type blockList[T any] struct {
	full [][]T
	cur  []T
	n    int
}

const listBlock = 1024

func (l *blockList[T]) add(v T) {
	if len(l.cur) == cap(l.cur) && cap(l.cur) >= listBlock {
		l.full = append(l.full, l.cur)
		l.cur = make([]T, 0, listBlock)
	}
	l.cur = append(l.cur, v)
	l.n++
}

// appendTo appends the collected items to dst.
func (l *blockList[T]) appendTo(dst []T) []T {
	if len(l.full) == 0 && len(dst) == 0 {
		return l.cur
	}
	dst = slices.Grow(dst, l.n)
	for _, b := range l.full {
		dst = append(dst, b...)
	}
	return append(dst, l.cur...)
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// parseTopicConfigText reads TopicConfig.encode()'s space-separated form,
// split as Java's String.split(" ") does. Only the name (and the attributes)
// are allocated: a line costs little more than the TopicConfig it yields.
func parseTopicConfigText(b []byte) (TopicConfig, bool) {
	// Java's String.split drops trailing empty fields.
	b = bytes.TrimRight(b, " ")
	var parts [6][]byte
	n := 0
	for rest := b; n < len(parts); n++ {
		i := bytes.IndexByte(rest, ' ')
		if i < 0 {
			parts[n] = rest
			n++
			break
		}
		parts[n], rest = rest[:i], rest[i+1:]
	}
	if n < 5 {
		return TopicConfig{}, false
	}
	tc := TopicConfig{TopicName: string(parts[0])}
	switch string(parts[4]) {
	case SingleTag:
		tc.TopicFilterType = SingleTag
	case MultiTag:
		tc.TopicFilterType = MultiTag
	default:
		return TopicConfig{}, false
	}
	for i, dst := range []*int32{&tc.ReadQueueNums, &tc.WriteQueueNums, &tc.Perm} {
		v, ok := parseJavaInt(parts[i+1])
		if !ok {
			return TopicConfig{}, false
		}
		*dst = v
	}
	if n >= 6 {
		// Like Java: attributes that fail to parse (values with spaces) are ignored.
		var rd fastjson.Reader
		rd.Reset(parts[5])
		if m := readStringMap(&rd); rd.End() == nil {
			tc.Attributes = m
		}
	}
	return tc, true
}

// parseJavaInt parses a decimal int32 as Integer.parseInt does (optional
// sign, ASCII digits, no spaces) without allocating.
func parseJavaInt(b []byte) (int32, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v > 1<<31 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	if v > 1<<31-1 || v < -1<<31 {
		return 0, false
	}
	return int32(v), true
}

// limitedReader reads the inflated stream, refusing to go past left bytes
// in total.
type limitedReader struct {
	r    io.Reader
	left int
	buf  []byte
	num  [4]byte
}

// read returns the next n bytes (valid until the next read). The buffer
// grows by at most readStep beyond what has really been inflated, so a
// stream that announces more than it holds costs what it holds.
func (l *limitedReader) read(n int) ([]byte, error) {
	if n < 0 || n > l.left {
		return nil, fmt.Errorf("%w: length %d exceeds what is left of the %d-byte inflate limit (%d)",
			ErrRegisterBody, n, MaxInflatedRegisterBody, l.left)
	}
	l.left -= n
	b, err := codec.ReadAnnounced(l.r, l.buf, n, readStep)
	if err != nil {
		return nil, fmt.Errorf("%w: truncated after %d of %d bytes: %w", ErrRegisterBody, len(b), n, err)
	}
	l.buf = b
	return b, nil
}

func (l *limitedReader) int() (int, error) {
	if l.left < 4 {
		return 0, fmt.Errorf("%w: inflated content exceeds %d bytes", ErrRegisterBody, MaxInflatedRegisterBody)
	}
	l.left -= 4
	if _, err := io.ReadFull(l.r, l.num[:]); err != nil {
		return 0, fmt.Errorf("%w: truncated: %w", ErrRegisterBody, err)
	}
	return int(int32(binary.BigEndian.Uint32(l.num[:]))), nil
}

// chunk reads an int32 length and that many bytes, valid until the next
// read (callers copy what they keep).
func (l *limitedReader) chunk() ([]byte, error) {
	n, err := l.int()
	if err != nil {
		return nil, err
	}
	return l.read(n)
}

// AppendRegisterBrokerBody writes the plain JSON body as a 5.x broker does.
func AppendRegisterBrokerBody(dst []byte, b *RegisterBrokerBody) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.StringsField("filterServerList", b.FilterServerList)
	w.Key("topicConfigSerializeWrapper")
	w.ObjectStart()
	w.Key("dataVersion")
	w.Raw(AppendTopicVersion(nil, b.DataVersion))
	w.Key("mappingDataVersion")
	w.Raw(AppendTopicVersion(nil, TopicVersion{Timestamp: b.DataVersion.Timestamp}))
	w.Key("topicConfigTable")
	w.ObjectStart()
	for i := range b.Topics {
		w.Key(b.Topics[i].TopicName)
		w.Raw(AppendTopicConfig(nil, &b.Topics[i]))
	}
	w.ObjectEnd()
	w.EmptyObjectField("topicQueueMappingDetailMap")
	w.Key("topicQueueMappingInfoMap")
	w.ObjectStart()
	for _, m := range b.Mappings {
		w.Key(m.Topic)
		w.Raw(m.JSON)
	}
	w.ObjectEnd()
	w.ObjectEnd()
	w.ObjectEnd()
	return w.Buf
}

// AppendTopicConfigText writes TopicConfig.encode(): the 5.x form with the
// attributes JSON.
func AppendTopicConfigText(dst []byte, t *TopicConfig) []byte {
	dst = append(dst, t.TopicName...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(t.ReadQueueNums), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(t.WriteQueueNums), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(t.Perm), 10)
	dst = append(dst, ' ')
	filter := t.TopicFilterType
	if filter == "" {
		filter = SingleTag
	}
	dst = append(dst, filter...)
	dst = append(dst, ' ')
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	for _, k := range sortedKeys(t.Attributes) {
		w.StringField(k, t.Attributes[k])
	}
	w.ObjectEnd()
	return w.Buf
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// AppendRegisterBrokerBodyCompressed writes the compressed layout (see the
// package comment) as a broker of brokerVersion does.
func AppendRegisterBrokerBodyCompressed(dst []byte, b *RegisterBrokerBody, brokerVersion int32) ([]byte, error) {
	var raw []byte
	chunk := func(p []byte) {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(p)))
		raw = append(raw, p...)
	}
	chunk(AppendTopicVersion(nil, b.DataVersion))
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(b.Topics)))
	for i := range b.Topics {
		chunk(AppendTopicConfigText(nil, &b.Topics[i]))
	}
	w := fastjson.Writer{}
	w.ArrayStart()
	for _, s := range b.FilterServerList {
		w.String(s)
	}
	w.ArrayEnd()
	chunk(w.Buf)
	if brokerVersion >= VersionV5_0_0 {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(b.Mappings)))
		for _, m := range b.Mappings {
			chunk(m.JSON)
		}
	}
	out := bytes.NewBuffer(dst)
	zw, err := zlib.NewWriterLevel(out, zlib.BestCompression)
	if err != nil {
		return dst, fmt.Errorf("body: register compress: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return dst, fmt.Errorf("body: register compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return dst, fmt.Errorf("body: register compress: %w", err)
	}
	return out.Bytes(), nil
}
