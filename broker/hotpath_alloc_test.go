package broker

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// rawClient drives a broker over a plain socket with pre-encoded frames
// and a reused read buffer, so it allocates nothing itself:
// testing.AllocsPerRun then counts the broker's allocations alone.
type rawClient struct {
	tb    testing.TB
	nc    net.Conn
	br    *bufio.Reader
	reply []byte
}

func dialRawClient(tb testing.TB, addr string) *rawClient {
	tb.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(tb, err)
	tb.Cleanup(func() { nc.Close() })
	require.NoError(tb, nc.SetDeadline(time.Now().Add(time.Minute)))
	return &rawClient{tb: tb, nc: nc, br: bufio.NewReaderSize(nc, 64<<10), reply: make([]byte, 1<<20)}
}

// roundTrip writes one encoded request and reads its reply's payload (a
// view of the reused buffer, valid until the next call).
func (r *rawClient) roundTrip(wire []byte) []byte {
	if _, err := r.nc.Write(wire); err != nil {
		r.tb.Fatal(err)
	}
	if _, err := io.ReadFull(r.br, r.reply[:4]); err != nil {
		r.tb.Fatal(err)
	}
	n := int(binary.BigEndian.Uint32(r.reply))
	if _, err := io.ReadFull(r.br, r.reply[:n]); err != nil {
		r.tb.Fatal(err)
	}
	return r.reply[:n]
}

// replyCode reads the response code of a JSON-header reply payload
// without allocating: the header is {"code":N,...}.
func replyCode(tb testing.TB, payload []byte) int {
	hl := int(binary.BigEndian.Uint32(payload) & 0xFFFFFF)
	hdr := payload[4 : 4+hl]
	const key = `"code":`
	for i := 0; i+len(key) < len(hdr); i++ {
		if string(hdr[i:i+len(key)]) == key {
			j := i + len(key)
			n := 0
			for ; j < len(hdr) && hdr[j] >= '0' && hdr[j] <= '9'; j++ {
				n = n*10 + int(hdr[j]-'0')
			}
			return n
		}
	}
	tb.Fatalf("no code in reply header %q", hdr)
	return -1
}

func sendV2Wire(topic string, queueID int, props string, body []byte) []byte {
	f := request(codec.ReqSendMessageV2, "a", "pg", "b", topic, "c", "TBW102", "d", "4", "e", strconv.Itoa(queueID),
		"f", "0", "g", strconv.FormatInt(time.Now().UnixMilli(), 10), "h", "0", "i", props, "j", "0", "k", "false",
		"l", "16", "m", "false", "n", "broker-a")
	f.Opaque = 1
	f.Body = body
	return f.AppendTo(nil)
}

// The broker's side of a SEND_MESSAGE_V2 round trip (decode, store, reply)
// allocates nothing per message once warm, and the message is stored.
func TestSendRoundTripAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	tb := startBroker(t, nil)
	rc := dialRawClient(t, tb.addr)
	wire := sendV2Wire("AllocSend", 0, props("TAGS", "TagA", "UNIQ_KEY", "0A0000010000000000000000000000AA"), make([]byte, 1024))
	send := func() {
		if code := replyCode(t, rc.roundTrip(wire)); code != int(codec.RespSuccess) {
			t.Fatalf("send answered %d", code)
		}
	}
	for range 200 {
		send()
	}
	const runs = 500
	n := testing.AllocsPerRun(runs, send)
	t.Logf("%.2f allocs per send round trip", n)
	tb.waitDispatched(t, "AllocSend", 0, 200+runs+1)
	require.Zero(t, n)
}

// The broker's side of a PULL_MESSAGE round trip returning 32 messages
// allocates nothing per pull once warm.
func TestPullRoundTripAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	tb := startBroker(t, nil)
	rc := dialRawClient(t, tb.addr)
	wire := sendV2Wire("AllocPull", 0, props("TAGS", "TagA"), make([]byte, 1024))
	for range 32 {
		require.Equal(t, int(codec.RespSuccess), replyCode(t, rc.roundTrip(wire)))
	}
	tb.waitDispatched(t, "AllocPull", 0, 32)
	pf := pullReq("cg", "AllocPull", 0, 0, pullFlagSubscription, 0, "TagA")
	pf.Opaque = 2
	pull := pf.AppendTo(nil)
	var bodyLen int
	get := func() {
		p := rc.roundTrip(pull)
		if code := replyCode(t, p); code != int(codec.RespSuccess) {
			t.Fatalf("pull answered %d", code)
		}
		bodyLen = len(p) - 4 - int(binary.BigEndian.Uint32(p)&0xFFFFFF)
	}
	for range 100 {
		get()
	}
	n := testing.AllocsPerRun(300, get)
	t.Logf("%.2f allocs per 32-message pull round trip", n)
	require.Greater(t, bodyLen, 32*1024)
	require.Zero(t, n)
}

func skipAllocsUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under the race detector")
	}
}
