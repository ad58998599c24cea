package main

import (
	"bufio"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// startLaggingBroker answers every request at once except the first, whose
// reply it holds back until it has answered `after` others.
func startLaggingBroker(t *testing.T, after int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		go func() { <-stop; nc.Close() }()
		r := bufio.NewReader(nc)
		var held []byte
		answered := 0
		var f codec.Frame
		for {
			if readTestFrame(r, &f) != nil {
				return
			}
			resp := codec.NewResponse(&f, 0, "").AppendTo(nil)
			if held == nil && answered == 0 {
				held = resp
				continue
			}
			if _, err := nc.Write(resp); err != nil {
				return
			}
			if answered++; answered == after {
				if _, err := nc.Write(held); err != nil {
					return
				}
			}
		}
	}()
	return ln.Addr().String()
}

// A reply that comes back after more requests than the ring has slots is a
// slow reply, timed as such — not an error (mqbench used to reuse the
// slot and count the request TIMEOUT).
func TestSlowReplyOlderThanTheRingIsNotAnError(t *testing.T) {
	const after = 3000 // the ring has 1024 slots
	addr := startLaggingBroker(t, after)
	rec := newRecorder()
	clk := newClock()
	c, err := dialSend(addr, clk, rec, 2, time.Minute)
	require.NoError(t, err)
	defer c.close()
	tpl, err := buildSendTemplate(&sendSpec{Group: "g", Topic: "T", Size: 64,
		Serialize: codec.SerializeRocketMQ, UniqPrefix: "0000000000000001"})
	require.NoError(t, err)
	cr := newCredits(2)
	for i := 0; i <= after; i++ {
		cr.ch <- struct{}{}
		require.NoError(t, c.send(tpl, clk.mono(), time.Now().UnixNano(), uint64(i), cr))
	}
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.reqs == after+1
	}, 10*time.Second, time.Millisecond)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Zero(t, rec.errCount, "errors: %v", rec.errs)
	require.Equal(t, uint64(after+1), rec.msgs)
}
