package transport

import (
	"github.com/rocketgo/rocketgo/codec"
)

// Handler processes one request. It returns the response to write, or nil
// when it writes nothing now: a oneway request, or a reply it sends later
// with Conn.Write (long polling, group commit). The transport fills in the
// response's opaque and response flag, and never writes a response to a
// oneway request. req (its strings and Body) is owned by the handler and may
// be kept after it returns (LeasedHandler is the pooled alternative).
type Handler func(c *Conn, req *codec.Frame) *codec.Frame
