package message

import (
	"bytes"
	"encoding/hex"
	"hash/crc32"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sampleMessage() *Message {
	var props []byte
	props = AppendProperty(props, PropertyTags, "TagA")
	props = AppendProperty(props, PropertyKeys, "k1 k2")
	props = AppendProperty(props, PropertyUniqKey, "C0A8000100002A9F00000000000003E8")
	return &Message{
		Topic: "TopicTest", QueueID: 3, Flag: 7, Body: []byte("hello world"),
		Properties: string(props), BornTimestamp: 1700000000123,
		BornHost:  netip.MustParseAddrPort("10.1.2.3:4567"),
		StoreHost: netip.MustParseAddrPort("192.168.0.1:10911"),
		SysFlag:   TransactionCommitType, ReconsumeTimes: 2,
		PreparedTransactionOffset: 99, StoreTimestamp: 1700000000456,
	}
}

func TestRecordLayoutIPv4(t *testing.T) {
	m := sampleMessage()
	b := AppendRecord(nil, m, BodyCRC(m.Body), 42, 1000)
	// Java: 91 + body + topic + properties for IPv4/IPv4, V1.
	require.Len(t, b, 91+len(m.Body)+len(m.Topic)+len(m.Properties))
	require.Equal(t, m.RecordSize(), len(b))
	require.Equal(t, "daa320a7", hex.EncodeToString(b[4:8]))
	require.Equal(t, int32(crc32.ChecksumIEEE(m.Body)&0x7fffffff), BodyCRC(m.Body))
	require.Equal(t, []byte{10, 1, 2, 3, 0, 0, 0x11, 0xd7}, b[48:56])    // born host
	require.Equal(t, []byte{192, 168, 0, 1, 0, 0, 0x2a, 0x9f}, b[64:72]) // store host
	require.Equal(t, byte(len(m.Topic)), b[88+len(m.Body)])

	var e Ext
	require.NoError(t, Decode(b, &e))
	require.NoError(t, e.CheckCRC())
	require.Equal(t, MagicV1, e.Magic)
	require.Equal(t, int64(42), e.QueueOffset)
	require.Equal(t, int64(1000), e.PhysicalOffset)
	require.Equal(t, m.Topic, e.Topic)
	require.Equal(t, m.Body, e.Body)
	require.Equal(t, m.Properties, e.Properties)
	require.Equal(t, m.BornHost, e.BornHost)
	require.Equal(t, m.StoreHost, e.StoreHost)
	require.Equal(t, m.StoreTimestamp, e.StoreTimestamp)
	require.Equal(t, m.ReconsumeTimes, e.ReconsumeTimes)
	require.Equal(t, m.PreparedTransactionOffset, e.PreparedTransactionOffset)
	require.Equal(t, m.Flag, e.Flag)
	require.Equal(t, m.SysFlag, e.SysFlag)
	ts, err := StoreTimestampOf(b)
	require.NoError(t, err)
	require.Equal(t, m.StoreTimestamp, ts)

	// Re-encoding the decoded record gives the same bytes.
	m2 := e.Message()
	require.Equal(t, b, AppendRecord(nil, &m2, e.BodyCRC, e.QueueOffset, e.PhysicalOffset))

	b[8] ^= 1
	require.NoError(t, Decode(b, &e))
	require.ErrorIs(t, e.CheckCRC(), ErrCRC)
}

func TestRecordIPv6AndV2(t *testing.T) {
	m := sampleMessage()
	m.BornHost = netip.MustParseAddrPort("[2001:db8::1]:1234")
	m.Topic = "%RETRY%" + strings.Repeat("g", 130)
	b := AppendRecord(nil, m, BodyCRC(m.Body), 1, 2)
	require.Equal(t, 91+12+len(m.Body)+1+len(m.Topic)+len(m.Properties), len(b))
	var e Ext
	require.NoError(t, Decode(b, &e))
	require.Equal(t, MagicV2, e.Magic)
	require.Equal(t, BornHostV6Flag|TransactionCommitType, e.SysFlag)
	require.Equal(t, m.BornHost, e.BornHost)
	require.Equal(t, m.StoreHost, e.StoreHost)
	require.Equal(t, m.Topic, e.Topic)
	ts, err := StoreTimestampOf(b)
	require.NoError(t, err)
	require.Equal(t, m.StoreTimestamp, ts)

	// IPv4-mapped IPv6 addresses are written as IPv4.
	m.Topic = "T"
	m.BornHost = netip.AddrPortFrom(netip.MustParseAddr("::ffff:10.0.0.1"), 1)
	require.Equal(t, TransactionCommitType, m.EffectiveSysFlag())
}

func TestDecodeRejects(t *testing.T) {
	m := sampleMessage()
	b := AppendRecord(nil, m, BodyCRC(m.Body), 1, 2)
	var e Ext
	require.ErrorIs(t, Decode(b[:len(b)-1], &e), ErrTruncated)
	bad := bytes.Clone(b)
	bad[4] = 0
	require.ErrorIs(t, Decode(bad, &e), ErrMagic)
	bad = bytes.Clone(b)
	bad[3]++ // total size one larger than the fields
	require.Error(t, Decode(append(bad, 0), &e))
	blank := make([]byte, 16)
	PutBlank(blank, 16)
	require.ErrorIs(t, Decode(blank, &e), ErrBlank)
	require.Equal(t, int32(16), e.TotalSize)
	require.Equal(t, "cbd43194", hex.EncodeToString(blank[4:8]))
}

func TestProperties(t *testing.T) {
	p := "TAGS\x01a\x02KEYS\x01k1 k2\x02\x01novalue\x02EMPTY\x01\x02X\x01v\x01w\x02TAGS\x01b\x02"
	v, ok := Property(p, "TAGS")
	require.True(t, ok)
	require.Equal(t, "b", v, "last occurrence wins, like Java's HashMap")
	v, ok = Property(p, "X")
	require.True(t, ok)
	require.Equal(t, "v\x01w", v)
	_, ok = Property(p, "EMPTY")
	require.False(t, ok, "Java drops empty values")
	require.Equal(t, map[string]string{"TAGS": "b", "KEYS": "k1 k2", "X": "v\x01w"}, ParseProperties(p))
	require.Equal(t, "A\x011\x02B\x012\x02", EncodeProperties(map[string]string{"B": "2", "A": "1"}))
	q := SetProperty("A\x011\x02B\x012\x02", "A", "3")
	require.Equal(t, "B\x012\x02A\x013\x02", q)
	require.Equal(t, "B\x012\x02", DeleteProperty(q, "A"))
	allocs := testing.AllocsPerRun(100, func() { Property(p, "KEYS") })
	require.Zero(t, allocs)
}

func TestTagsHash(t *testing.T) {
	// Values of Java's "...".hashCode() (computed over UTF-16 code units).
	require.Equal(t, int64(0), TagsHash(""))
	require.Equal(t, int64(2598919), TagsHash("TagA"))
	require.Equal(t, int64(99162322), TagsHash("hello"))
	require.Equal(t, int64(204089217), TagsHash("TopicTest#key-1"))
	require.Equal(t, int64(646394), TagsHash("中文"))
	require.Equal(t, int64(1772899), TagsHash("😀")) // surrogate pair 0xD83D 0xDE00
	require.Equal(t, int64(-2147483648), TagsHash("polygenelubricants"), "sign-extended")
	require.Equal(t, int64(-1900111067), TagsHash("TagB-negative?"))
	require.Equal(t, JavaStringHash("ab#cd"), JavaStringHashFrom(JavaStringHash("ab"), "#cd"))
}

func TestBatch(t *testing.T) {
	var body []byte
	body = AppendBatchEntry(body, 1, []byte("one"), "A\x01a\x02")
	body = AppendBatchEntry(body, 2, []byte("two!"), "")
	require.Len(t, body, 22+3+4+22+4)
	it := IterBatch(body)
	var e BatchEntry
	require.True(t, it.Next(&e))
	require.Equal(t, int32(1), e.Flag)
	require.Equal(t, "one", string(e.Body))
	require.Equal(t, "A\x01a\x02", e.Properties)
	require.True(t, it.Next(&e))
	require.Equal(t, "two!", string(e.Body))
	require.False(t, it.Next(&e))
	require.NoError(t, it.Err())

	it = IterBatch(body[:len(body)-1])
	require.True(t, it.Next(&e))
	require.False(t, it.Next(&e))
	require.Error(t, it.Err())
	allocs := testing.AllocsPerRun(100, func() {
		it := IterBatch(body)
		for it.Next(&e) {
		}
	})
	require.Zero(t, allocs)
}

func TestOffsetMsgID(t *testing.T) {
	host := netip.MustParseAddrPort("192.168.0.1:10911")
	id := OffsetMsgID(host, 1000)
	require.Equal(t, "C0A8000100002A9F00000000000003E8", id)
	h, off, err := DecodeOffsetMsgID(strings.ToLower(id))
	require.NoError(t, err)
	require.Equal(t, host, h)
	require.Equal(t, int64(1000), off)
	v6 := netip.MustParseAddrPort("[2001:db8::5]:10911")
	id6 := OffsetMsgID(v6, 1<<40)
	require.Len(t, id6, 56)
	h, off, err = DecodeOffsetMsgID(id6)
	require.NoError(t, err)
	require.Equal(t, v6, h)
	require.Equal(t, int64(1<<40), off)
	_, _, err = DecodeOffsetMsgID("XYZ")
	require.ErrorIs(t, err, ErrMsgID)
	_, _, err = DecodeOffsetMsgID(strings.Repeat("G", 32))
	require.ErrorIs(t, err, ErrMsgID)
}

func TestUniqKey(t *testing.T) {
	// Go client style id (upper-case prefix, lower-case tail).
	k, err := ParseUniqKey("C00002025823000000009515d1380001")
	require.NoError(t, err)
	require.Equal(t, netip.MustParseAddr("192.0.2.2"), k.IP)
	require.Equal(t, int16(0x5823), k.Pid)
	require.Equal(t, int32(0), k.Hash)
	require.Equal(t, int32(-1793732296), k.Millis) // 0x9515d138
	require.Equal(t, int16(1), k.Counter)

	loc := time.UTC
	g := NewUniqIDGen(netip.MustParseAddr("10.0.0.9"), 4242, 0x11223344, loc)
	now := time.Date(2026, 11, 3, 4, 5, 6, 7e6, loc)
	id := string(g.Append(nil, now))
	require.Len(t, id, 32)
	require.Equal(t, strings.ToUpper(id), id)
	k, err = ParseUniqKey(id)
	require.NoError(t, err)
	require.Equal(t, netip.MustParseAddr("10.0.0.9"), k.IP)
	require.Equal(t, int16(4242), k.Pid)
	require.Equal(t, int32(0x11223344), k.Hash)
	require.Equal(t, int16(0), k.Counter)
	require.Equal(t, now, k.Time(now.Add(time.Hour), loc))
	id2 := string(g.Append(nil, now))
	require.NotEqual(t, id, id2)
}

func TestDecompress(t *testing.T) {
	body := bytes.Repeat([]byte("rocketmq "), 1000)
	z, err := CompressZlib(body, 5)
	require.NoError(t, err)
	got, err := Decompress(z, CompressedFlag, 0)
	require.NoError(t, err)
	require.Equal(t, body, got)
	got, err = Decompress(z, CompressedFlag|CompressionZLIBType, 0)
	require.NoError(t, err)
	require.Equal(t, body, got)
	got, err = Decompress(body, 0, 0)
	require.NoError(t, err)
	require.Equal(t, body, got)
	_, err = Decompress(z, CompressedFlag|CompressionLZ4Type, 0)
	require.ErrorIs(t, err, ErrUnsupportedCompression)
	_, err = Decompress(z, CompressedFlag, 100)
	require.Error(t, err)
	require.Equal(t, CompressionZLIB, Compression(CompressedFlag|CompressionZLIBType))
}
