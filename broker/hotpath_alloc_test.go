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

func skipAllocsUnderRace(t testing.TB) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under the race detector")
	}
}

// BenchmarkServerSideSend is one SEND_MESSAGE_V2 of 1 KiB at a time over a
// raw socket: allocs/op are the broker's alone.
func BenchmarkServerSideSend(b *testing.B) {
	tb := startBroker(b, nil)
	rc := dialRawClient(b, tb.addr)
	wire := sendV2Wire("BenchRawSend", 0, props("TAGS", "TagA", "UNIQ_KEY", "0A0000010000000000000000000000AA"), make([]byte, 1024))
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		if code := replyCode(b, rc.roundTrip(wire)); code != int(codec.RespSuccess) {
			b.Fatalf("send answered %d", code)
		}
	}
}

// BenchmarkServerSidePull pulls the same 32 stored 1 KiB messages over a
// raw socket: allocs/op are the broker's alone.
func BenchmarkServerSidePull(b *testing.B) {
	tb := startBroker(b, nil)
	rc := dialRawClient(b, tb.addr)
	wire := sendV2Wire("BenchRawPull", 0, props("TAGS", "TagA"), make([]byte, 1024))
	for range 32 {
		if code := replyCode(b, rc.roundTrip(wire)); code != int(codec.RespSuccess) {
			b.Fatalf("send answered %d", code)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for tb.store.MaxOffset("BenchRawPull", 0) < 32 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	pf := pullReq("cg", "BenchRawPull", 0, 0, pullFlagSubscription, 0, "TagA")
	pull := pf.AppendTo(nil)
	b.SetBytes(32 * 1024)
	b.ReportAllocs()
	for b.Loop() {
		if code := replyCode(b, rc.roundTrip(pull)); code != int(codec.RespSuccess) {
			b.Fatalf("pull answered %d", code)
		}
	}
}

// Under load (16 sends pipelined on one connection, replies coalesced by
// the transport's writer) the broker still allocates nothing per message.
func TestPipelinedSendAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	tb := startBroker(t, nil)
	rc := dialRawClient(t, tb.addr)
	const inFlight = 16
	var wire []byte
	for i := range inFlight {
		f := request(codec.ReqSendMessageV2, "a", "pg", "b", "AllocPipe", "c", "TBW102", "d", "4", "e", strconv.Itoa(i%4),
			"f", "0", "g", "1700000000000", "h", "0", "i", props("TAGS", "T"), "j", "0", "k", "false", "m", "false")
		f.Opaque = int32(i)
		f.Body = make([]byte, 512)
		wire = f.AppendTo(wire)
	}
	burst := func() {
		if _, err := rc.nc.Write(wire); err != nil {
			t.Fatal(err)
		}
		for range inFlight {
			if _, err := io.ReadFull(rc.br, rc.reply[:4]); err != nil {
				t.Fatal(err)
			}
			n := int(binary.BigEndian.Uint32(rc.reply))
			if _, err := io.ReadFull(rc.br, rc.reply[:n]); err != nil {
				t.Fatal(err)
			}
			if code := replyCode(t, rc.reply[:n]); code != int(codec.RespSuccess) {
				t.Fatalf("send answered %d", code)
			}
		}
	}
	for range 50 {
		burst()
	}
	n := testing.AllocsPerRun(100, burst)
	t.Logf("%.2f allocs per burst of %d sends", n, inFlight)
	for q := int32(0); q < 4; q++ { // AllocsPerRun runs once more to warm up
		tb.waitDispatched(t, "AllocPipe", q, inFlight/4*(50+100+1))
	}
	require.Zero(t, n)
}
