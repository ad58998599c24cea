package body

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// MQVersion ordinals that change the REGISTER_BROKER body layout.
const (
	VersionV3_0_11 = 37  // from here the body is RegisterBrokerBody, before a bare TopicConfigSerializeWrapper
	VersionV4_9_4  = 401 // from here route data is written BrowserCompatible
	VersionV5_0_0  = 413 // from here the compressed body carries static-topic mappings
)

// maxInflated bounds the inflated size of a compressed register body.
const maxInflated = 256 << 20

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
			for rd.ObjectStart(); rd.More(); {
				name := rd.Key()
				tc := readTopicConfigJSON(rd)
				if tc.TopicName == "" {
					tc.TopicName = name
				}
				body.Topics = append(body.Topics, tc)
			}
		case "topicQueueMappingInfoMap":
			for rd.ObjectStart(); rd.More(); {
				topic := rd.Key()
				raw := append([]byte(nil), rd.Raw()...)
				body.Mappings = append(body.Mappings, TopicMapping{Topic: topic, BrokerName: mappingBname(raw), JSON: raw})
			}
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
	in := &limitedReader{r: zr, left: maxInflated}
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
	if n < 0 || n > maxInflated/8 {
		return body, fmt.Errorf("%w: topic count %d", ErrRegisterBody, n)
	}
	for range n {
		text, err := in.chunk()
		if err != nil {
			return body, err
		}
		tc, ok := parseTopicConfigText(string(text))
		if !ok {
			return body, fmt.Errorf("%w: topic config %q", ErrRegisterBody, truncate(text))
		}
		body.Topics = append(body.Topics, tc)
	}
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
		if n < 0 || n > maxInflated/8 {
			return body, fmt.Errorf("%w: mapping count %d", ErrRegisterBody, n)
		}
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
			body.Mappings = append(body.Mappings, TopicMapping{Topic: topic, BrokerName: bname, JSON: raw})
		}
	}
	return body, nil
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// parseTopicConfigText reads TopicConfig.encode()'s space-separated form.
func parseTopicConfigText(s string) (TopicConfig, bool) {
	// Java's String.split drops trailing empty fields.
	parts := strings.Split(s, " ")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 5 {
		return TopicConfig{}, false
	}
	tc := TopicConfig{TopicName: parts[0], TopicFilterType: parts[4]}
	for i, dst := range []*int32{&tc.ReadQueueNums, &tc.WriteQueueNums, &tc.Perm} {
		v, err := strconv.ParseInt(parts[i+1], 10, 32)
		if err != nil {
			return TopicConfig{}, false
		}
		*dst = int32(v)
	}
	if tc.TopicFilterType != SingleTag && tc.TopicFilterType != MultiTag {
		return TopicConfig{}, false
	}
	if len(parts) >= 6 {
		// Like Java: attributes that fail to parse (values with spaces) are ignored.
		rd := fastjson.NewReader([]byte(parts[5]))
		if m := readStringMap(rd); rd.End() == nil {
			tc.Attributes = m
		}
	}
	return tc, true
}

type limitedReader struct {
	r    io.Reader
	left int
	buf  []byte
}

func (l *limitedReader) read(n int) ([]byte, error) {
	if n < 0 || n > l.left {
		return nil, fmt.Errorf("%w: length %d exceeds what is left (%d)", ErrRegisterBody, n, l.left)
	}
	l.left -= n
	if cap(l.buf) < n {
		l.buf = make([]byte, n)
	}
	b := l.buf[:n]
	if _, err := io.ReadFull(l.r, b); err != nil {
		return nil, fmt.Errorf("%w: truncated: %w", ErrRegisterBody, err)
	}
	return b, nil
}

func (l *limitedReader) int() (int, error) {
	b, err := l.read(4)
	if err != nil {
		return 0, err
	}
	return int(int32(binary.BigEndian.Uint32(b))), nil
}

// chunk reads an int32 length and that many bytes (valid until the next read).
func (l *limitedReader) chunk() ([]byte, error) {
	n, err := l.int()
	if err != nil {
		return nil, err
	}
	b, err := l.read(n)
	if err != nil {
		return nil, err
	}
	l.buf = nil // the chunk is handed out; the next read gets fresh memory
	return b, nil
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
