package goclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/rocketgo/rocketgo/conformance/capture"
)

// Codes used by raw frames (Apache RocketMQ RequestCode / ResponseCode).
const (
	codeUnknownRequest          = 9999
	respRequestCodeNotSupported = 3
)

// expectClosed reads from c until the peer closes it (or answers), bounded
// by a deadline; a server that keeps a poisoned connection open fails.
func expectClosed(c net.Conn, what string) error {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue // an error response is allowed; the close must follow
		}
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
			return nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%s: connection still open 5 s later", what)
		}
		return fmt.Errorf("%s: read: %w", what, err)
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

func dial(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 3 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return c, nil
}

// badInput: hostile frames on fresh connections, then normal traffic works.
func badInput(ctx context.Context, t Target) error {
	for _, addr := range []string{t.Broker, t.Namesrv} {
		// 1. Garbage: a header length far beyond the frame.
		c, err := dial(ctx, addr)
		if err != nil {
			return err
		}
		garbage := []byte{0, 0, 0, 12, 0, 0x7f, 0xff, 0xff, 'j', 'u', 'n', 'k', '!', '!', '!', '!'}
		if _, err := c.Write(garbage); err != nil {
			_ = c.Close()
			return fmt.Errorf("write garbage: %w", err)
		}
		err = expectClosed(c, addr+" garbage header")
		_ = c.Close()
		if err != nil {
			return err
		}
		// 2. Oversize length prefix (2 GiB - 1).
		if c, err = dial(ctx, addr); err != nil {
			return err
		}
		// 16 bytes: a 5.x server's protocol detection (TLS / proxy
		// protocol) waits for 12 bytes before it decodes anything.
		var big [16]byte
		binary.BigEndian.PutUint32(big[:4], 0x7fffffff)
		if _, err := c.Write(big[:]); err != nil {
			_ = c.Close()
			return fmt.Errorf("write oversize: %w", err)
		}
		err = expectClosed(c, addr+" oversize frame")
		_ = c.Close()
		if err != nil {
			return err
		}
		// 3. Unknown request code answers REQUEST_CODE_NOT_SUPPORTED, and the
		// same connection keeps working.
		if c, err = dial(ctx, addr); err != nil {
			return err
		}
		err = unknownCode(c)
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", addr, err)
		}
	}
	// 4. The official client still sends.
	topic := t.name("bad_input")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	p, err := newProducer(t, "bad_input_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	return sendAll(ctx, p, primitive.NewMessage(topic, []byte("after-bad-input")))
}

func unknownCode(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	for i, opaque := range []int32{101, 102} {
		if _, err := c.Write(capture.EncodeRequest(codeUnknownRequest, opaque, 0, map[string]string{"x": "y"}, []byte("body"))); err != nil {
			return fmt.Errorf("write unknown code #%d: %w", i, err)
		}
		raw, err := capture.ReadFrame(c, 1<<20)
		if err != nil {
			return fmt.Errorf("read reply to unknown code #%d: %w", i, err)
		}
		f, err := capture.ParseFrame(raw)
		if err != nil {
			return fmt.Errorf("decode reply to unknown code: %w", err)
		}
		if !f.IsResponse() || f.Opaque != opaque || f.Code != respRequestCodeNotSupported {
			return fmt.Errorf("unknown code: got flag %d opaque %d code %d remark %q, want response %d code 3",
				f.Flag, f.Opaque, f.Code, f.Remark, opaque)
		}
		if !strings.Contains(f.Remark, "9999") {
			return fmt.Errorf("unknown code: remark %q does not name the code", f.Remark)
		}
	}
	return nil
}
