package storecompat

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"strings"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/stretchr/testify/require"
)

// record builds a V1 stored record by hand (Java's CommitLog layout), so
// the checkers are tested against bytes no rocketgo code produced.
func record(topic string, qid int32, qoff, phy int64, body []byte, props map[string]string) []byte {
	var p strings.Builder
	for k, v := range props {
		p.WriteString(k + "\x01" + v + "\x02")
	}
	ps := p.String()
	size := 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + len(body) + 1 + len(topic) + 2 + len(ps)
	b := make([]byte, 0, size)
	be := binary.BigEndian
	b = be.AppendUint32(b, uint32(size))
	b = be.AppendUint32(b, 0xDAA320A7)
	b = be.AppendUint32(b, crc32.ChecksumIEEE(body))
	b = be.AppendUint32(b, uint32(qid))
	b = be.AppendUint32(b, 0) // flag
	b = be.AppendUint64(b, uint64(qoff))
	b = be.AppendUint64(b, uint64(phy))
	b = be.AppendUint32(b, 0)             // sysflag
	b = be.AppendUint64(b, 1700000000000) // born
	b = append(b, 127, 0, 0, 1)
	b = be.AppendUint32(b, 5555)
	b = be.AppendUint64(b, 1700000000001) // store
	b = append(b, 127, 0, 0, 1)
	b = be.AppendUint32(b, 10911)
	b = be.AppendUint32(b, 0) // reconsume
	b = be.AppendUint64(b, 0) // prepared
	b = be.AppendUint32(b, uint32(len(body)))
	b = append(b, body...)
	b = append(b, byte(len(topic)))
	b = append(b, topic...)
	b = be.AppendUint16(b, uint16(len(ps)))
	b = append(b, ps...)
	return b
}

func sentFor(topic string, qid int, qoff, phy int64, body string, props map[string]string) Sent {
	return Sent{
		Topic: topic, QueueID: qid, QueueOffset: qoff, MsgID: props["UNIQ_KEY"],
		OffsetMsgID: primitive.CreateMessageId(net.IPv4(127, 0, 0, 1).To4(), 10911, phy),
		Body:        []byte(body), Keys: strings.Split(props["KEYS"], " "), Tags: props["TAGS"],
		Props: map[string]string{"seq": props["seq"]},
	}
}

func TestCheckFindsEveryKindOfDifference(t *testing.T) {
	props := func(i string) map[string]string {
		return map[string]string{"KEYS": "k-" + i + " g-1", "TAGS": "tag1", "UNIQ_KEY": "U" + i, "seq": i}
	}
	r0 := record("T", 0, 0, 0, []byte("m-0"), props("0"))
	r1 := record("T", 0, 1, int64(len(r0)), []byte("m-1"), props("1"))
	sent := []Sent{
		sentFor("T", 0, 0, 0, "m-0", props("0")),
		sentFor("T", 0, 1, int64(len(r0)), "m-1", props("1")),
	}
	body := append(append([]byte(nil), r0...), r1...)
	recs, err := SplitRecords(body)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	snap := Snapshot{{"T", 0}: recs}
	require.Empty(t, Check(sent, snap))
	require.Empty(t, SameRecords(snap, snap))

	// Swapped offsets, a changed body, a lost record, a changed property.
	require.NotEmpty(t, Check(sent, Snapshot{{"T", 0}: {r1, r0}}))
	bad := record("T", 0, 1, int64(len(r0)), []byte("m-X"), props("1"))
	require.NotEmpty(t, Check(sent, Snapshot{{"T", 0}: {r0, bad}}))
	require.NotEmpty(t, SameRecords(snap, Snapshot{{"T", 0}: {r0, bad}}))
	require.NotEmpty(t, Check(sent, Snapshot{{"T", 0}: {r0}}))
	p := props("1")
	p["seq"] = "9"
	require.NotEmpty(t, Check(sent, Snapshot{{"T", 0}: {r0, record("T", 0, 1, int64(len(r0)), []byte("m-1"), p)}}))
	// A record at another commit-log offset has another offset msgId.
	require.NotEmpty(t, Check(sent, Snapshot{{"T", 0}: {r0, record("T", 0, 1, 999, []byte("m-1"), props("1"))}}))

	_, err = SplitRecords(body[:len(body)-1])
	require.Error(t, err)
}

func TestLenientJSONAndShapes(t *testing.T) {
	java := []byte("{\n\t\"dataVersion\":{\"counter\":1},\n\t\"offsetTable\":{\n\t\t\"t@g\":{0:3,1:6\n\t\t}\n\t}\n}")
	ours := []byte(`{"dataVersion":{"counter":1,"timestamp":5},"offsetTable":{"t@g":{"0":3},"u@g":{"0":1}}}`)
	onlyJ, onlyO, err := ShapeDiff(java, ours)
	require.NoError(t, err)
	require.Empty(t, onlyJ)
	require.Equal(t, []string{"dataVersion.timestamp"}, onlyO)
	dropped, added, err := TableKeyDiff("consumerOffset.json", java, ours)
	require.NoError(t, err)
	require.Empty(t, dropped)
	require.Equal(t, []string{"u@g"}, added)
	dropped, _, err = TableKeyDiff("consumerOffset.json", ours, java)
	require.NoError(t, err)
	require.Equal(t, []string{"u@g"}, dropped)
}
