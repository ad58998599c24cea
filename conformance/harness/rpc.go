package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/rocketgo/rocketgo/conformance/capture"
)

// Request codes the harness itself sends (values from Apache RocketMQ RequestCode).
const (
	codeUpdateAndCreateTopic = 17
	codeGetRouteinfoByTopic  = 105
	codeGetBrokerClusterInfo = 106
)

// Call sends one JSON-header request on a fresh connection and returns the
// decoded response. It is deliberately tiny and independent of rocketgo.
func Call(ctx context.Context, addr string, code int32, ext map[string]string, body []byte) (*capture.Frame, error) {
	return call(ctx, addr, false, code, ext, body)
}

// CallTLS is Call over TLS (the test servers' certificates are
// self-signed: not verified).
func CallTLS(ctx context.Context, addr string, code int32, ext map[string]string, body []byte) (*capture.Frame, error) {
	return call(ctx, addr, true, code, ext, body)
}

func call(ctx context.Context, addr string, useTLS bool, code int32, ext map[string]string, body []byte) (*capture.Frame, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	var c net.Conn
	var err error
	if useTLS {
		td := tls.Dialer{NetDialer: &d, Config: &tls.Config{InsecureSkipVerify: true}}
		c, err = td.DialContext(ctx, "tcp", addr)
	} else {
		c, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("harness: dial %s: %w", addr, err)
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	const opaque = 7
	if _, err := c.Write(capture.EncodeRequest(code, opaque, 0, ext, body)); err != nil {
		return nil, fmt.Errorf("harness: write to %s: %w", addr, err)
	}
	for {
		raw, err := capture.ReadFrame(c, 64<<20)
		if err != nil {
			return nil, fmt.Errorf("harness: read from %s: %w", addr, err)
		}
		f, err := capture.ParseFrame(raw)
		if err != nil {
			return nil, err
		}
		if f.IsResponse() && f.Opaque == opaque {
			return f, nil
		}
	}
}
