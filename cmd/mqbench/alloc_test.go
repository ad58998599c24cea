package main

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// startSink accepts connections and discards everything they send.
func startSink(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.Copy(io.Discard, nc)
				nc.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

func newSinkConn(t testing.TB) (*sendConn, *sendTemplate) {
	addr := startSink(t)
	c, err := dialSend(addr, newClock(), newRecorder(), 64, time.Minute)
	require.NoError(t, err)
	t.Cleanup(c.close)
	tpl, err := buildSendTemplate(&sendSpec{Group: "g", Topic: "T", Size: 1024, Oneway: true,
		Serialize: codec.SerializeRocketMQ, UniqPrefix: "0000000000000001"})
	require.NoError(t, err)
	return c, tpl
}

// The send path (template copy, patch, hand-off to the writer goroutine,
// socket write) allocates nothing per message once buffers have grown.
func TestSendPathDoesNotAllocate(t *testing.T) {
	c, tpl := newSinkConn(t)
	seq := uint64(0)
	send := func() {
		require.NoError(t, c.send(tpl, c.clk.mono(), time.Now().UnixNano(), seq, nil))
		seq++
	}
	for i := 0; i < 5000; i++ { // grow the double buffer
		send()
	}
	allocs := testing.AllocsPerRun(20000, send)
	require.Less(t, allocs, 0.05, "allocations per send")
}

func BenchmarkSendOneway(b *testing.B) {
	c, tpl := newSinkConn(b)
	b.SetBytes(int64(len(tpl.frame)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := c.send(tpl, c.clk.mono(), 1764460082000000000, uint64(i), nil); err != nil {
			b.Fatal(err)
		}
	}
}
