package main

import (
	"bufio"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// startRawBroker answers every request SUCCESS from a plain net.Listener:
// a fake independent of codec/transport, to tell client bugs from server bugs.
func startRawBroker(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := bufio.NewReaderSize(nc, 1<<20)
				w := bufio.NewWriter(nc)
				var f codec.Frame
				for {
					if readTestFrame(r, &f) != nil {
						return
					}
					if f.IsOneway() {
						continue
					}
					resp := codec.NewResponse(&f, 0, "")
					resp.Ext = []codec.KV{{Key: "msgId", Value: "7F00000100002A9F0000000000000000"}, {Key: "queueId", Value: f.Value("e")}, {Key: "queueOffset", Value: "0"}}
					w.Write(resp.AppendTo(nil))
					if r.Buffered() == 0 {
						w.Flush()
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestProduceAgainstRawBroker(t *testing.T) {
	addr := startRawBroker(t)
	for i := 0; i < 2; i++ {
		sum, err := runProduce(produceConfig{Broker: addr, Topic: "R", Group: "pg", Threads: 4, Conns: 2, Inflight: 8,
			Size: 256, Mode: "async", Duration: 20 * time.Second, Count: 3000, Queues: 4,
			Serialize: codec.SerializeRocketMQ, Timeout: 15 * time.Second})
		require.NoError(t, err)
		require.Equal(t, uint64(3000), sum.Messages, "%+v", sum)
	}
}

// readTestFrame reads and decodes one frame (the test brokers' reader).
func readTestFrame(r io.Reader, f *codec.Frame) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n, err := codec.FrameLength(hdr[:], codec.DefaultMaxFrameLength)
	if err != nil {
		return err
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return err
	}
	return codec.Decode(payload, f)
}
