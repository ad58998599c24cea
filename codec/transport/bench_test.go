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
)

// benchRoundTrip measures closed-loop request/response round trips over
// loopback with inFlight concurrent callers sharing one client connection.
func benchRoundTrip(b *testing.B, inFlight int, onPool bool) {
	var pool *Pool
	if onPool {
		pool = newPool(b, "bench", 4, 1024)
	}
	r := NewRouter()
	r.Handle(codeEcho, pool, func(_ *Conn, req *codec.Frame) *codec.Frame {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
	s := startServer(b, ServerConfig{}, r)
	cl := newClient(b, nil)
	ctx := context.Background()
	_, err := cl.Invoke(ctx, s.Addr(), request(codeEcho, 0)) // dial outside the timing
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

func BenchmarkRoundTrip(b *testing.B) {
	for _, inFlight := range []int{1, 64} {
		for _, onPool := range []bool{false, true} {
			name := "inline"
			if onPool {
				name = "pool"
			}
			b.Run(name+"/inflight="+strconv.Itoa(inFlight), func(b *testing.B) { benchRoundTrip(b, inFlight, onPool) })
		}
	}
}

// BenchmarkServerSide drives the server with a raw socket that neither
// allocates nor decodes, so allocs/op are the server's alone: the request
// frame and its payload, the handler's response, and gnet's task when a
// pool worker writes. inFlight requests stay pipelined on one connection.
func BenchmarkServerSide(b *testing.B) {
	for _, inFlight := range []int{1, 64} {
		for _, onPool := range []bool{false, true} {
			name := "inline"
			if onPool {
				name = "pool"
			}
			b.Run(name+"/inflight="+strconv.Itoa(inFlight), func(b *testing.B) { benchServerSide(b, inFlight, onPool) })
		}
	}
}

func benchServerSide(b *testing.B, inFlight int, onPool bool) {
	var pool *Pool
	if onPool {
		pool = newPool(b, "bench", 2, 1024)
	}
	r := NewRouter()
	r.Handle(codeEcho, pool, func(_ *Conn, req *codec.Frame) *codec.Frame {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
	s := startServer(b, ServerConfig{}, r)
	rc := dialRaw(b, s.Addr())
	req := request(codeEcho, 1)
	req.Set("topic", "BenchTopic")
	req.Set("queueId", "3")
	req.Body = make([]byte, 128)
	wire := req.AppendTo(nil)
	reply := make([]byte, 64<<10)
	readReply := func() {
		if _, err := io.ReadFull(rc.br, reply[:4]); err != nil {
			b.Fatal(err)
		}
		n := int(binary.BigEndian.Uint32(reply))
		if _, err := io.ReadFull(rc.br, reply[:n]); err != nil {
			b.Fatal(err)
		}
	}
	_ = rc.nc.SetDeadline(time.Now().Add(time.Minute))
	b.ReportAllocs()
	b.SetBytes(int64(len(wire)))
	b.ResetTimer()
	sent, got := 0, 0
	for ; sent < min(inFlight, b.N); sent++ {
		rc.sendBytes(wire)
	}
	for got < b.N {
		readReply()
		got++
		if sent < b.N {
			rc.sendBytes(wire)
			sent++
		}
	}
}
