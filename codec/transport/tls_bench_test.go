package transport

import (
	"context"
	"encoding/binary"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// Round trips through the transport's Client, plaintext and TLS, against
// one permissive server: what TLS costs a caller.
func BenchmarkRoundTripTLS(b *testing.B) {
	for _, secure := range []bool{false, true} {
		for _, inFlight := range []int{1, 64} {
			name := "plain"
			if secure {
				name = "tls"
			}
			b.Run(name+"/pool/inflight="+strconv.Itoa(inFlight), func(b *testing.B) { benchRoundTripTLS(b, inFlight, secure) })
		}
	}
}

func benchRoundTripTLS(b *testing.B, inFlight int, secure bool) {
	r := NewRouter()
	r.Handle(codeEcho, newPool(b, "bench", 4, 1024), func(_ *Conn, req *codec.Frame) *codec.Frame {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
	s := startServer(b, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(b)}, r)
	cl := newClient(b, nil)
	if secure {
		cl = newTLSClient(b, insecureClientTLS())
	}
	ctx := context.Background()
	_, err := cl.Invoke(ctx, s.Addr(), request(codeEcho, 0))
	require.NoError(b, err)
	body := make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for w := range inFlight {
		n := b.N / inFlight
		if w < b.N%inFlight {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := request(codeEcho, 0)
			req.Set("topic", "BenchTopic")
			req.Body = body
			for range n {
				if _, err := cl.Invoke(ctx, s.Addr(), req); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// The server side alone, driven by a socket that does not allocate per
// frame beyond what crypto/tls does on the client end: plaintext on gnet
// and TLS on the hand-off path of the same permissive server, leased
// handler (the send/pull hot path) on a pool.
func BenchmarkServerSideTLS(b *testing.B) {
	for _, secure := range []bool{false, true} {
		for _, inFlight := range []int{1, 64} {
			name := "plain"
			if secure {
				name = "tls"
			}
			b.Run(name+"/inflight="+strconv.Itoa(inFlight), func(b *testing.B) {
				rt := newServerSideRig(b, secure)
				b.ReportAllocs()
				b.SetBytes(int64(len(rt.wire)))
				b.ResetTimer()
				rt.pipeline(b, b.N, inFlight)
			})
		}
	}
}

type serverSideRig struct {
	rc    *rawConn
	wire  []byte
	reply []byte
}

func newServerSideRig(t testing.TB, secure bool) *serverSideRig {
	r := NewRouter()
	r.HandleLeased(codeEcho, newPool(t, "bench", 2, 1024), func(_ *Conn, req *codec.Frame, _ *Lease) *codec.Frame {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t)}, r)
	var rc *rawConn
	if secure {
		var err error
		rc, err = dialTLS(t, s.Addr(), insecureClientTLS())
		require.NoError(t, err)
	} else {
		rc = dialRaw(t, s.Addr())
	}
	_ = rc.nc.SetDeadline(time.Now().Add(2 * time.Minute))
	req := request(codeEcho, 1)
	req.Set("topic", "BenchTopic")
	req.Set("queueId", "3")
	req.Body = make([]byte, 128)
	rt := &serverSideRig{rc: rc, wire: req.AppendTo(nil), reply: make([]byte, 64<<10)}
	rt.pipeline(t, 200, 8) // warm pools, buffers and the TLS session
	return rt
}

// pipeline sends n requests keeping inFlight outstanding, reading every reply.
func (rt *serverSideRig) pipeline(t testing.TB, n, inFlight int) {
	sent, got := 0, 0
	for ; sent < min(inFlight, n); sent++ {
		rt.rc.sendBytes(rt.wire)
	}
	for got < n {
		if _, err := io.ReadFull(rt.rc.br, rt.reply[:4]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rt.rc.br, rt.reply[:binary.BigEndian.Uint32(rt.reply)]); err != nil {
			t.Fatal(err)
		}
		got++
		if sent < n {
			rt.rc.sendBytes(rt.wire)
			sent++
		}
	}
}

// Plaintext on a permissive server costs what it costs without detection,
// and a TLS round trip allocates no more than the plaintext one plus what
// crypto/tls does itself: one per record read (its readFromUntil boxes an
// atLeastReader), on each end, both ends being in this process.
func TestServerRoundTripTLSAllocBudget(t *testing.T) {
	skipUnderRace(t)
	got := map[bool]float64{}
	for _, secure := range []bool{false, true} {
		rt := newServerSideRig(t, secure)
		got[secure] = testing.AllocsPerRun(500, func() { rt.pipeline(t, 1, 1) })
	}
	t.Logf("allocs per round trip: plaintext %.1f, TLS %.1f", got[false], got[true])
	require.LessOrEqual(t, got[false], 3.0)
	require.LessOrEqual(t, got[true], got[false]+2)
}
