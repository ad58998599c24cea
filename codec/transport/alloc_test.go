package transport

import (
	"encoding/binary"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// Encoding a response into a pooled buffer allocates nothing once warm.
func TestEncodeResponseAllocs(t *testing.T) {
	skipUnderRace(t)
	req := request(codeEcho, 5)
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Set("msgId", "7F00000100002A9F0000000000000000")
	resp.Set("queueId", "3")
	resp.Set("queueOffset", "12345")
	resp.Body = make([]byte, 256)
	n := testing.AllocsPerRun(1000, func() {
		b := getBuf()
		b.b = resp.AppendTo(b.b)
		_ = b.release(nil, nil)
	})
	require.Zero(t, n)
}

// Taking a request for an ordinary (non-leased) route off the wire costs
// the frame and its owned payload, and no more for up to 16 extFields.
func TestDecodeFrameAllocs(t *testing.T) {
	skipUnderRace(t)
	req := request(codeEcho, 5)
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"} {
		req.Set(k, "value-"+k)
	}
	req.Body = make([]byte, 100)
	wire := req.AppendTo(nil)
	payload, _, err := codec.NextFrame(wire, codec.DefaultMaxFrameLength)
	require.NoError(t, err)
	n := testing.AllocsPerRun(1000, func() {
		own := make([]byte, len(payload))
		copy(own, payload)
		f, err := decodeFrame(own)
		if err != nil || len(f.Ext) != 14 {
			t.Fatalf("decode: %v, %d ext", err, len(f.Ext))
		}
	})
	require.Equal(t, 2.0, n)
}

// Taking a leased request off the wire allocates nothing once the size
// class is warm, with up to 24 extFields.
func TestLeaseDecodeAllocs(t *testing.T) {
	skipUnderRace(t)
	req := request(codeEcho, 5)
	for i := range 20 {
		req.Set(string(rune('a'+i)), "value")
	}
	req.Body = make([]byte, 2000)
	wire := req.AppendTo(nil)
	payload, _, err := codec.NextFrame(wire, codec.DefaultMaxFrameLength)
	require.NoError(t, err)
	n := testing.AllocsPerRun(1000, func() {
		l := getLease(len(payload))
		copy(l.buf, payload)
		if err := l.decode(); err != nil || len(l.f.Ext) != 20 || len(l.f.Body) != 2000 {
			t.Fatalf("decode: %v, %d ext", err, len(l.f.Ext))
		}
		l.Release()
	})
	require.Zero(t, n)
}

// The whole server side of an ordinary route's round trip stays within
// its allocation budget: request frame + owned payload + the handler's
// response. (Workers write replies themselves, so there is no loop task
// any more; leased routes cost nothing: TestLeasedRoundTripAllocs.) (AllocsPerRun counts every
// goroutine's allocations, so the server's are included; the raw client
// allocates nothing.)
func TestServerRoundTripAllocBudget(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		name   string
		onPool bool
		budget float64
	}{{"inline", false, 3}, {"pool", true, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			var pool *Pool
			if tc.onPool {
				pool = newPool(t, "budget", 1, 16)
			}
			r := NewRouter()
			r.Handle(codeEcho, pool, func(_ *Conn, req *codec.Frame) *codec.Frame {
				return codec.NewResponse(req, int32(codec.RespSuccess), "")
			})
			s := startServer(t, ServerConfig{}, r)
			rc := dialRaw(t, s.Addr())
			req := request(codeEcho, 1)
			req.Set("topic", "T")
			wire := req.AppendTo(nil)
			reply := make([]byte, 4096)
			roundTrip := func() {
				if _, err := rc.nc.Write(wire); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(rc.br, reply[:4]); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(rc.br, reply[:binary.BigEndian.Uint32(reply)]); err != nil {
					t.Fatal(err)
				}
			}
			for range 100 { // warm pools and buffers
				roundTrip()
			}
			n := testing.AllocsPerRun(500, roundTrip)
			t.Logf("%s: %.1f allocs per round trip", tc.name, n)
			require.LessOrEqual(t, n, tc.budget)
		})
	}
}

func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
}
