package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// clientVersion is the MQVersion ordinal mqbench announces: >= V4_9_4 so
// name servers answer route queries with standard JSON.
const clientVersion = codec.ServerVersion

// call is one synchronous request; reusable after invoke returns.
type call struct {
	buf  []byte      // reply payload, owned by the call
	resp codec.Frame // decoded from buf
	at   time.Time   // when the reader took the reply off the socket
	done chan struct{}
}

func newCall() *call { return &call{done: make(chan struct{}, 1)} }

// rpcConn is a request/response connection for control requests and
// pulls: any number of calls in flight, replies matched by opaque.
type rpcConn struct {
	nc   net.Conn
	addr string

	wmu  sync.Mutex // serialises writes; guards wbuf
	wbuf []byte

	mu     sync.Mutex // guards calls, err
	calls  map[int32]*call
	err    error
	opaque atomic.Int32
	hdr    []byte // reader's scratch
	wg     sync.WaitGroup
}

func dialRPC(addr string) (*rpcConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := &rpcConn{nc: nc, addr: addr, calls: make(map[int32]*call)}
	c.wg.Add(1)
	go c.readLoop()
	return c, nil
}

// invoke sends req (its Opaque is overwritten) and waits up to timeout for
// the reply, decoded into cl.resp.
func (c *rpcConn) invoke(req *codec.Frame, cl *call, timeout time.Duration) error {
	return c.invokeCancel(req, cl, timeout, nil)
}

// errCanceled is returned by invokeCancel when cancel closes first.
var errCanceled = errors.New("mqbench: call canceled")

// invokeCancel is invoke that also gives up when cancel is closed.
func (c *rpcConn) invokeCancel(req *codec.Frame, cl *call, timeout time.Duration, cancel <-chan struct{}) error {
	req.Opaque = c.opaque.Add(1)
	req.Flag &^= codec.FlagResponse
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	select { // drop a stale signal from an earlier timed-out use
	case <-cl.done:
	default:
	}
	c.calls[req.Opaque] = cl
	c.mu.Unlock()

	c.wmu.Lock()
	c.wbuf = req.AppendTo(c.wbuf[:0])
	_, err := c.nc.Write(c.wbuf)
	c.wmu.Unlock()
	if err != nil {
		c.forget(req.Opaque, cl)
		c.fail(err)
		return fmt.Errorf("write to %s: %w", c.addr, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-cl.done:
	case <-t.C:
		if c.forget(req.Opaque, cl) {
			return fmt.Errorf("%s: %s: timeout after %v", c.addr, codec.RequestCode(req.Code), timeout)
		}
		<-cl.done // the reader owns cl right now; it signals shortly
	case <-cancel:
		if c.forget(req.Opaque, cl) {
			return errCanceled
		}
		<-cl.done
	}
	if cl.buf == nil {
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", c.addr, err)
	}
	if err := codec.Decode(cl.buf, &cl.resp); err != nil {
		return fmt.Errorf("%s: decode reply: %w", c.addr, err)
	}
	return nil
}

// forget removes cl if it is still registered and reports whether it was.
func (c *rpcConn) forget(op int32, cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[op] == cl {
		delete(c.calls, op)
		return true
	}
	return false
}

func (c *rpcConn) readLoop() {
	defer c.wg.Done()
	var f codec.Frame
	err := readFrames(c.nc, 512<<10, codec.DefaultMaxFrameLength, false, func(_, payload []byte, _ time.Time) error {
		c.dispatch(payload, &f)
		return nil
	})
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = errConnClosed
	}
	c.fail(err)
}

func (c *rpcConn) dispatch(payload []byte, f *codec.Frame) {
	// Peek at the header without disturbing payload (Decode unescapes in
	// place, so decode a copy only for broker-initiated requests).
	if len(payload) < 4 {
		return
	}
	var opaque, flag int32
	if payload[0] == byte(codec.SerializeRocketMQ) {
		if len(payload) < 4+13 {
			return
		}
		h := payload[4:]
		opaque = int32(uint32(h[5])<<24 | uint32(h[6])<<16 | uint32(h[7])<<8 | uint32(h[8]))
		flag = int32(uint32(h[9])<<24 | uint32(h[10])<<16 | uint32(h[11])<<8 | uint32(h[12]))
	} else {
		// Decode a copy of the header only; Decode unescapes in place.
		hl := int(uint32(payload[1])<<16 | uint32(payload[2])<<8 | uint32(payload[3]))
		if hl > len(payload)-4 {
			return
		}
		c.hdr = append(c.hdr[:0], payload[:4+hl]...)
		if codec.Decode(c.hdr, f) != nil {
			return
		}
		opaque, flag = f.Opaque, f.Flag
	}
	if flag&codec.FlagResponse == 0 {
		c.answerUnsupported(payload, f)
		return
	}
	c.mu.Lock()
	cl := c.calls[opaque]
	delete(c.calls, opaque)
	c.mu.Unlock()
	if cl == nil {
		return
	}
	cl.buf = append(cl.buf[:0], payload...)
	cl.at = time.Now()
	cl.done <- struct{}{}
}

func (c *rpcConn) answerUnsupported(payload []byte, f *codec.Frame) {
	tmp := append([]byte(nil), payload...)
	if codec.Decode(tmp, f) != nil || f.IsOneway() {
		return
	}
	resp := codec.NewResponse(f, int32(codec.RespRequestCodeNotSupported), fmt.Sprintf(" request type %d not supported", f.Code))
	c.wmu.Lock()
	c.nc.Write(resp.AppendTo(nil))
	c.wmu.Unlock()
}

func (c *rpcConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	calls := c.calls
	c.calls = make(map[int32]*call)
	c.mu.Unlock()
	for _, cl := range calls {
		cl.buf = nil
		cl.done <- struct{}{}
	}
	c.nc.Close()
}

// broken reports whether the connection has failed.
func (c *rpcConn) broken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}

func (c *rpcConn) close() {
	c.fail(errConnClosed)
	c.wg.Wait()
}
