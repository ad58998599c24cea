package broker

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

// flipStoredBody inverts the first byte of the body of the record at phy
// in the commit-log file (4 MiB segments, testConfig).
func flipStoredBody(t *testing.T, root string, phy int64) {
	t.Helper()
	const segSize = 4 << 20
	start := phy - phy%segSize
	f, err := os.OpenFile(filepath.Join(root, "commitlog", fmt.Sprintf("%020d", start)), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	hdr := make([]byte, 128)
	_, err = f.ReadAt(hdr, phy-start)
	require.NoError(t, err)
	p := 48 + 8 + 8 + 8 + 16
	sf := int32(binary.BigEndian.Uint32(hdr[message.PosSysFlag:]))
	if sf&message.BornHostV6Flag != 0 {
		p += 12
	}
	if sf&message.StoreHostV6Flag != 0 {
		p += 12
	}
	hdr[p] ^= 0x01
	_, err = f.WriteAt(hdr[p:p+1], phy-start+int64(p))
	require.NoError(t, err)
}

// TestCorruptRecordNotDelivered: a record whose body no longer matches its
// CRC is not delivered by pull, view-by-id or query-by-key; the consumer
// moves past it.
func TestCorruptRecordNotDelivered(t *testing.T) {
	root := t.TempDir()
	tb, _ := startBrokerAt(t, root, nil)
	var phys []int64
	for i := 0; i < 3; i++ {
		r := tb.invoke(t, sendV1("CRC", 0, props("KEYS", "key"+strconv.Itoa(i)), []byte("body-"+strconv.Itoa(i))))
		require.Equal(t, int32(codec.RespSuccess), r.Code, r.Remark)
		_, phy, err := message.DecodeOffsetMsgID(ext(t, r, "msgId"))
		require.NoError(t, err)
		phys = append(phys, phy)
	}
	tb.waitDispatched(t, "CRC", 0, 3)
	flipStoredBody(t, root, phys[1])

	r := tb.invoke(t, pullReq("cg", "CRC", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), r.Code, r.Remark)
	recs := decodeRecords(t, r.Body)
	require.Len(t, recs, 2)
	require.Equal(t, "body-0", string(recs[0].Body))
	require.Equal(t, "body-2", string(recs[1].Body))
	require.Equal(t, "3", ext(t, r, "nextBeginOffset"))

	// A consumer positioned on it is moved past it, not wedged.
	r = tb.invoke(t, pullReq("cg", "CRC", 0, 1, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), r.Code, r.Remark)
	recs = decodeRecords(t, r.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "body-2", string(recs[0].Body))

	r = tb.invoke(t, request(codec.ReqViewMessageById, "topic", "CRC", "offset", strconv.FormatInt(phys[1], 10)))
	require.Equal(t, int32(codec.RespSystemError), r.Code)
	r = tb.invoke(t, request(codec.ReqViewMessageById, "topic", "CRC", "offset", strconv.FormatInt(phys[2], 10)))
	require.Equal(t, int32(codec.RespSuccess), r.Code)

	now := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	query := func(key string) *codec.Frame {
		return tb.invoke(t, request(codec.ReqQueryMessage, "topic", "CRC", "key", key, "maxNum", "16", "beginTimestamp", "0", "endTimestamp", now))
	}
	require.Eventually(t, func() bool { return query("key2").Code == int32(codec.RespSuccess) }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(codec.RespQueryNotFound), query("key1").Code)
}
