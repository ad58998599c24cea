package codec_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
)

// goldenMeta is the description recorded next to each golden frame,
// written independently of our decoder.
type goldenMeta struct {
	Source    string            `json:"source"` // e.g. "java-4.9.8 client"
	Code      int32             `json:"code"`
	Flag      int32             `json:"flag"`
	Opaque    int32             `json:"opaque"`
	Language  string            `json:"language"`
	Version   int32             `json:"version"`
	Serialize string            `json:"serialize"` // "JSON" or "ROCKETMQ"
	Remark    string            `json:"remark"`
	Ext       map[string]string `json:"ext"`
	BodyLen   int               `json:"bodyLen"`
	// RequestCode, optional, names the request a response answers, so its
	// header can be typed (a response frame carries only its result code).
	RequestCode *int32 `json:"requestCode,omitempty"`
}

// TestGolden decodes every recorded frame in testdata/golden and checks it
// against its description, the encode→decode round trip, and the typed
// header of its code.
func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	frames, err := filepath.Glob(filepath.Join(dir, "*.frame"))
	require.NoError(t, err)
	if len(frames) == 0 {
		t.Skipf("no golden fixtures in %s (recorded from real clients/brokers; none wired in yet)", dir)
	}
	for _, path := range frames {
		name := strings.TrimSuffix(filepath.Base(path), ".frame")
		t.Run(name, func(t *testing.T) {
			wire, err := os.ReadFile(path)
			require.NoError(t, err)
			metaSrc, err := os.ReadFile(strings.TrimSuffix(path, ".frame") + ".json")
			require.NoError(t, err, "every .frame needs its .json")
			var meta goldenMeta
			require.NoError(t, json.Unmarshal(metaSrc, &meta))
			require.NoError(t, checkGolden(wire, &meta), "source %s", meta.Source)
		})
	}
}

// checkGolden returns the first way wire disagrees with meta or fails to
// round-trip.
func checkGolden(wire []byte, meta *goldenMeta) error {
	payload, n, err := codec.NextFrame(wire, codec.DefaultMaxFrameLength)
	if err != nil {
		return fmt.Errorf("frame: %w", err)
	}
	if n != len(wire) {
		return fmt.Errorf("frame occupies %d of %d bytes", n, len(wire))
	}
	var f codec.Frame
	if err := codec.Decode(bytes.Clone(payload), &f); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	ser := map[string]codec.SerializeType{"JSON": codec.SerializeJSON, "ROCKETMQ": codec.SerializeRocketMQ}
	wantSer, ok := ser[meta.Serialize]
	if !ok {
		return fmt.Errorf("meta: unknown serialize %q", meta.Serialize)
	}
	var problems []string
	diff := func(what string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			problems = append(problems, fmt.Sprintf("%s: got %v, want %v", what, got, want))
		}
	}
	diff("code", f.Code, meta.Code)
	diff("flag", f.Flag, meta.Flag)
	diff("opaque", f.Opaque, meta.Opaque)
	diff("language", f.Language.String(), meta.Language)
	diff("version", f.Version, meta.Version)
	diff("serialize", f.Serialize, wantSer)
	diff("remark", f.Remark, meta.Remark)
	diff("bodyLen", len(f.Body), meta.BodyLen)
	ext := map[string]string{}
	for _, kv := range f.Ext {
		ext[kv.Key] = kv.Value // last wins, as Java's HashMap
	}
	if meta.Ext == nil {
		meta.Ext = map[string]string{}
	}
	diff("ext", ext, meta.Ext)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}

	// Round trip: our encoding decodes to the same frame; the binary
	// header is canonical, so a ROCKETMQ frame re-encodes byte for byte.
	enc := f.AppendTo(nil)
	var g codec.Frame
	if err := codec.Decode(bytes.Clone(enc[4:]), &g); err != nil {
		return fmt.Errorf("re-decode: %w", err)
	}
	if !reflect.DeepEqual(normal(&f), normal(&g)) {
		return fmt.Errorf("round trip changed the frame:\n%+v\n%+v", normal(&f), normal(&g))
	}
	if f.Serialize == codec.SerializeRocketMQ && !bytes.Equal(enc, wire) {
		return fmt.Errorf("ROCKETMQ frame does not re-encode byte for byte")
	}

	// Typed header.
	var h header.Header
	switch {
	case !f.IsResponse():
		h = header.ForRequest(codec.RequestCode(f.Code))
	case meta.RequestCode != nil && f.Code == int32(codec.RespSuccess):
		// Error responses carry only code and remark, not the typed header.
		h = header.ForResponse(codec.RequestCode(*meta.RequestCode))
	}
	if h == nil {
		return nil
	}
	if err := h.Decode(&f); err != nil {
		return fmt.Errorf("header %T: %w", h, err)
	}
	var e codec.Frame
	h.Encode(&e)
	h2 := reflect.New(reflect.TypeOf(h).Elem()).Interface().(header.Header)
	if err := h2.Decode(&e); err != nil {
		return fmt.Errorf("header %T re-decode: %w", h, err)
	}
	if !reflect.DeepEqual(h, h2) {
		return fmt.Errorf("header %T round trip: %+v != %+v", h, h, h2)
	}
	return nil
}

type normalFrame struct {
	Code, Version, Opaque, Flag int32
	Language                    codec.LanguageCode
	Remark                      string
	Ext                         []codec.KV
	Body                        string
	Serialize                   codec.SerializeType
}

func normal(f *codec.Frame) normalFrame {
	return normalFrame{f.Code, f.Version, f.Opaque, f.Flag, f.Language, f.Remark, f.Ext, string(f.Body), f.Serialize}
}

// TestGoldenChecker exercises checkGolden on the byte-exact Go client
// frame quoted in the protocol reference (§1.2) and on descriptions that
// disagree with it.
func TestGoldenChecker(t *testing.T) {
	hdr := `{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"T"}}`
	wire := binary.BigEndian.AppendUint32(nil, uint32(4+len(hdr)))
	wire = binary.BigEndian.AppendUint32(wire, uint32(len(hdr)))
	wire = append(wire, hdr...)
	good := func() *goldenMeta {
		return &goldenMeta{Source: "go client (protocol.md §1.2)", Code: 105, Opaque: 1, Language: "GO", Version: 317,
			Serialize: "JSON", Ext: map[string]string{"topic": "T"}}
	}
	require.NoError(t, checkGolden(wire, good()))

	for name, mutate := range map[string]func(m *goldenMeta){
		"code":      func(m *goldenMeta) { m.Code = 106 },
		"language":  func(m *goldenMeta) { m.Language = "JAVA" },
		"ext":       func(m *goldenMeta) { m.Ext["topic"] = "U" },
		"bodyLen":   func(m *goldenMeta) { m.BodyLen = 1 },
		"serialize": func(m *goldenMeta) { m.Serialize = "ROCKETMQ" },
	} {
		m := good()
		mutate(m)
		err := checkGolden(wire, m)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), name)
	}
	// A request whose typed header is missing a required field fails.
	bad := strings.Replace(hdr, `"topic":"T"`, `"topik":"T"`, 1)
	wire2 := binary.BigEndian.AppendUint32(nil, uint32(4+len(bad)))
	wire2 = binary.BigEndian.AppendUint32(wire2, uint32(len(bad)))
	wire2 = append(wire2, bad...)
	m := good()
	m.Ext = map[string]string{"topik": "T"}
	err := checkGolden(wire2, m)
	require.ErrorIs(t, err, header.ErrMissingField)
	require.Error(t, checkGolden(wire[:len(wire)-1], good()), "truncated frame")
}
