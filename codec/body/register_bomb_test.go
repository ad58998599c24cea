package body

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// zlibOf compresses raw as a Java broker would.
func zlibOf(t testing.TB, raw []byte) []byte {
	var buf bytes.Buffer
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// announceBomb is a compressed register body whose first chunk announces
// n bytes and then ends.
func announceBomb(t testing.TB, n uint32) []byte {
	return zlibOf(t, binary.BigEndian.AppendUint32(nil, n))
}

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRegisterBodyAnnouncedLengthNotAllocated: the 16-byte body from the
// issue (first chunk says 256 MiB−8, stream ends) and one announcing just
// under the inflate limit are refused after allocating what the stream
// holds, not what it announces (the old decoder allocated 256 MiB).
func TestRegisterBodyAnnouncedLengthNotAllocated(t *testing.T) {
	for _, n := range []uint32{256<<20 - 8, MaxInflatedRegisterBody - 8, 0x7FFFFFFF} {
		bomb := announceBomb(t, n)
		require.LessOrEqual(t, len(bomb), 16)
		var err error
		got := allocatedBy(func() { _, err = DecodeRegisterBrokerBody(bomb, true, 479) })
		require.ErrorIs(t, err, ErrRegisterBody)
		require.Less(t, got, uint64(2<<20), "announced %d: allocated %d bytes", n, got)
	}
}

// TestRegisterBodyTopicLengthNotAllocated: the same attack on a topic
// entry after a valid data version.
func TestRegisterBodyTopicLengthNotAllocated(t *testing.T) {
	var raw []byte
	raw = binary.BigEndian.AppendUint32(raw, 2)
	raw = append(raw, "{}"...)
	raw = binary.BigEndian.AppendUint32(raw, 1)
	raw = binary.BigEndian.AppendUint32(raw, MaxInflatedRegisterBody-64)
	bomb := zlibOf(t, raw)
	var err error
	got := allocatedBy(func() { _, err = DecodeRegisterBrokerBody(bomb, true, 479) })
	require.ErrorIs(t, err, ErrRegisterBody)
	require.Less(t, got, uint64(2<<20), "allocated %d bytes", got)
}

// TestRegisterBodyInflateBomb: a body that really inflates past the limit
// (16 KiB of zlib holding 64 MiB of topic lines) is refused once the limit
// has been inflated, with memory bounded by a small multiple of the limit.
func TestRegisterBodyInflateBomb(t *testing.T) {
	line := []byte("a 1 1 6 SINGLE_TAG")
	entry := binary.BigEndian.AppendUint32(nil, uint32(len(line)))
	entry = append(entry, line...)
	count := (4 * MaxInflatedRegisterBody) / len(entry)
	var raw bytes.Buffer
	raw.Write(binary.BigEndian.AppendUint32(nil, 2))
	raw.WriteString("{}")
	raw.Write(binary.BigEndian.AppendUint32(nil, uint32(count)))
	var buf bytes.Buffer
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(raw.Bytes())
	require.NoError(t, err)
	for range count {
		_, _ = zw.Write(entry)
	}
	require.NoError(t, zw.Close())
	bomb := buf.Bytes()
	require.Less(t, len(bomb), 1<<20)
	got := allocatedBy(func() { _, err = DecodeRegisterBrokerBody(bomb, true, 479) })
	require.ErrorIs(t, err, ErrRegisterBody)
	require.Less(t, got, uint64(4*MaxInflatedRegisterBody), "allocated %d bytes", got)
	t.Logf("bomb of %d bytes: refused after allocating %d MiB", len(bomb), got>>20)
}

// TestRegisterBodyAtLimit: a legitimate table well inside the limit still
// decodes (100,000 topics, about 4 MiB inflated).
func TestRegisterBodyAtLimit(t *testing.T) {
	b := RegisterBrokerBody{DataVersion: TopicVersion{Counter: 1, Timestamp: 1}, FilterServerList: []string{}}
	for i := range 100000 {
		tc := NewTopicConfig("BigTopic-" + strconv.Itoa(i))
		tc.Attributes = map[string]string{}
		b.Topics = append(b.Topics, tc)
	}
	enc, err := AppendRegisterBrokerBodyCompressed(nil, &b, 479)
	require.NoError(t, err)
	got, err := DecodeRegisterBrokerBody(enc, true, 479)
	require.NoError(t, err)
	require.Len(t, got.Topics, 100000)
}

// FuzzCompressedRegisterBody: the compressed decoder never panics, never
// allocates far past what a stream holds, and what it accepts re-encodes to
// the same table.
func FuzzCompressedRegisterBody(f *testing.F) {
	f.Add(announceBomb(f, 256<<20-8), int32(479))
	f.Add(announceBomb(f, MaxInflatedRegisterBody-8), int32(401))
	f.Add(javaCompressed(f, true), int32(479))
	f.Add(javaCompressed(f, false), int32(401))
	f.Fuzz(func(t *testing.T, b []byte, version int32) {
		got, err := DecodeRegisterBrokerBody(b, true, version)
		if err != nil {
			return
		}
		enc, err := AppendRegisterBrokerBodyCompressed(nil, &got, version)
		require.NoError(t, err)
		back, err := DecodeRegisterBrokerBody(enc, true, version)
		require.NoError(t, err)
		require.Equal(t, len(got.Topics), len(back.Topics))
		require.Equal(t, got.DataVersion, back.DataVersion)
	})
}

// TestRegisterBodyPlainListGrowth: a plain body of one frame of minimal
// topic entries costs about twice the decoded table, not the five times
// that append's growth of a large slice allocates.
func TestRegisterBodyPlainListGrowth(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"topicConfigSerializeWrapper":{"topicConfigTable":{`)
	n := 0
	for b.Len() < 8<<20 {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"a":{}`)
		n++
	}
	b.WriteString(`}}}`)
	raw := b.Bytes()
	var (
		got RegisterBrokerBody
		err error
	)
	alloc := allocatedBy(func() { got, err = DecodeRegisterBrokerBody(raw, false, 479) })
	require.NoError(t, err)
	require.Len(t, got.Topics, n)
	table := uint64(n) * uint64(unsafe.Sizeof(TopicConfig{}))
	t.Logf("%d topics from %d bytes: table %d MiB, allocated %d MiB", n, len(raw), table>>20, alloc>>20)
	require.Less(t, alloc, 3*table)
}

func BenchmarkDecodeRegisterBrokerBodyCompressed10k(b *testing.B) {
	body := RegisterBrokerBody{DataVersion: TopicVersion{Counter: 1, Timestamp: 1}, FilterServerList: []string{}}
	for i := range 10000 {
		tc := NewTopicConfig("BigTopic-" + strconv.Itoa(i))
		tc.Attributes = map[string]string{}
		body.Topics = append(body.Topics, tc)
	}
	raw, err := AppendRegisterBrokerBodyCompressed(nil, &body, 479)
	require.NoError(b, err)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRegisterBrokerBody(raw, true, 479); err != nil {
			b.Fatal(err)
		}
	}
}
