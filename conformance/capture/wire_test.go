package capture

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// binaryFrame builds a ROCKETMQ-serialized frame by hand.
func binaryFrame(code int16, lang byte, version int16, opaque, flag int32, remark string, ext [][2]string, body []byte) []byte {
	be := binary.BigEndian
	var h []byte
	h = be.AppendUint16(h, uint16(code))
	h = append(h, lang)
	h = be.AppendUint16(h, uint16(version))
	h = be.AppendUint32(h, uint32(opaque))
	h = be.AppendUint32(h, uint32(flag))
	h = be.AppendUint32(h, uint32(len(remark)))
	h = append(h, remark...)
	var e []byte
	for _, kv := range ext {
		e = be.AppendUint16(e, uint16(len(kv[0])))
		e = append(e, kv[0]...)
		e = be.AppendUint32(e, uint32(len(kv[1])))
		e = append(e, kv[1]...)
	}
	h = be.AppendUint32(h, uint32(len(e)))
	h = append(h, e...)
	out := be.AppendUint32(nil, uint32(4+len(h)+len(body)))
	out = be.AppendUint32(out, 1<<24|uint32(len(h)))
	out = append(out, h...)
	return append(out, body...)
}

func TestParseBinaryHeader(t *testing.T) {
	raw := binaryFrame(310, 9, 317, 42, 0, "hi", [][2]string{{"a", "TopicX"}, {"b", "grp"}}, []byte("body"))
	f, err := ParseFrame(raw)
	require.NoError(t, err)
	require.Equal(t, "ROCKETMQ", f.Serialize)
	require.EqualValues(t, 310, f.Code)
	require.Equal(t, "GO", f.Language)
	require.EqualValues(t, 317, f.Version)
	require.EqualValues(t, 42, f.Opaque)
	require.Equal(t, "hi", f.Remark)
	require.Equal(t, map[string]string{"a": "TopicX", "b": "grp"}, f.Ext)
	require.Equal(t, "body", string(f.Body))
	require.False(t, f.IsResponse())
}

func TestParseJSONHeader(t *testing.T) {
	raw := EncodeRequest(105, 7, FlagOneway, map[string]string{"topic": "T"}, []byte("xyz"))
	f, err := ParseFrame(raw)
	require.NoError(t, err)
	require.Equal(t, "JSON", f.Serialize)
	require.EqualValues(t, 105, f.Code)
	require.Equal(t, "JAVA", f.Language)
	require.EqualValues(t, 479, f.Version)
	require.EqualValues(t, 7, f.Opaque)
	require.EqualValues(t, FlagOneway, f.Flag)
	require.Equal(t, map[string]string{"topic": "T"}, f.Ext)
	require.Equal(t, "xyz", string(f.Body))

	// Numbers in extFields (which the Go client cannot decode) still render.
	hdr := []byte(`{"code":0,"language":9,"version":1,"opaque":3,"flag":1,"remark":null,"extFields":{"n":12,"s":"v"}}`)
	raw = binary.BigEndian.AppendUint32(nil, uint32(4+len(hdr)))
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(hdr)))
	raw = append(raw, hdr...)
	f, err = ParseFrame(raw)
	require.NoError(t, err)
	require.Equal(t, "GO", f.Language)
	require.True(t, f.IsResponse())
	require.Equal(t, map[string]string{"n": "12", "s": "v"}, f.Ext)
	require.Empty(t, f.Body)
}

func TestParseFrameRejectsDamage(t *testing.T) {
	good := EncodeRequest(10, 1, 0, nil, []byte("b"))
	_, err := ParseFrame(good[:6])
	require.ErrorIs(t, err, ErrShortFrame)

	_, err = ParseFrame(good[:len(good)-1])
	require.Error(t, err, "length prefix must match")

	bad := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(bad[4:8], uint32(len(good))) // header longer than frame
	_, err = ParseFrame(bad)
	require.Error(t, err)

	bad = append([]byte(nil), good...)
	bad[4] = 7 // unknown serialize type
	_, err = ParseFrame(bad)
	require.Error(t, err)

	trunc := binaryFrame(1, 0, 1, 1, 0, "", [][2]string{{"k", "v"}}, nil)
	// Claim a longer ext value than present.
	trunc[len(trunc)-5] = 9
	_, err = ParseFrame(trunc)
	require.Error(t, err)
}
