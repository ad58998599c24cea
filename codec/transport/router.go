package transport

import (
	"fmt"
	"runtime/debug"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// route is where one request code goes: h or lh (one of them is set).
type route struct {
	h    Handler
	lh   LeasedHandler
	pool *Pool // nil: inline on the event loop
}

// leased reports whether the request with code is lent to its handler.
func (r *Router) leased(code int32) bool {
	return r.lookup(code).lh != nil
}

// Router maps request codes to handlers and the pools they run on. Build it
// completely before the server or client using it starts; it is read
// without locks afterwards.
type Router struct {
	routes map[int32]route
	def    route
	mw     []Middleware
	obs    Observer
}

// NewRouter returns an empty router: every code answers
// REQUEST_CODE_NOT_SUPPORTED until a handler is registered.
func NewRouter() *Router {
	return &Router{routes: make(map[int32]route)}
}

// Handle routes code to h, run on pool, or inline on the event loop when
// pool is nil (only for cheap, non-blocking, in-memory handlers). A second
// registration of the same code replaces the first.
func (r *Router) Handle(code codec.RequestCode, pool *Pool, h Handler) {
	if h == nil {
		panic("transport: Router.Handle with nil handler")
	}
	r.routes[int32(code)] = route{h: h, pool: pool}
}

// SetDefault routes every code without its own handler to h.
func (r *Router) SetDefault(pool *Pool, h Handler) {
	r.def = route{h: h, pool: pool}
}

func (r *Router) lookup(code int32) route {
	if r == nil {
		return route{}
	}
	if rt, ok := r.routes[code]; ok {
		return rt
	}
	return r.def
}

// dispatch routes one request from the connection's reader. It returns the
// response to write now (inline handlers, refusals), or nil when a pool
// took the request or no reply is due. l is the request's lease (nil when
// it is not pooled); kept reports that a pool task took over the caller's
// reference, which the caller otherwise releases after encoding resp.
func (c *Conn) dispatch(r *Router, req *codec.Frame, l *Lease) (resp *codec.Frame, kept bool) {
	rt := r.lookup(req.Code)
	if rt.h == nil && rt.lh == nil {
		c.log.Warn("transport: request code not supported", "remote", c.remote, "code", codec.RequestCode(req.Code).String())
		return c.refuse(r, req, codec.RespRequestCodeNotSupported, remarks.RequestCodeNotSupported(req.Code)), false
	}
	t := task{c: c, req: req, h: rt.h, lh: rt.lh, l: l, r: r}
	if rt.pool == nil {
		return c.run(&t), false
	}
	c.inflight.Add(1)
	if !rt.pool.submit(t) {
		c.inflight.Add(-1)
		if rt.pool.shouldWarn() {
			c.log.Warn("transport: pool full, answering SYSTEM_BUSY", "pool", rt.pool.name, "remote", c.remote, "code", req.Code)
		}
		return c.refuse(r, req, codec.RespSystemBusy, remarks.SystemBusyOverload), false
	}
	return nil, true
}

// refuse builds a transport error response, or nil for a oneway request;
// either way the router's observer hears of it.
func (c *Conn) refuse(r *Router, req *codec.Frame, code codec.ResponseCode, remark string) *codec.Frame {
	var resp *codec.Frame
	if !req.IsOneway() {
		resp = codec.NewResponse(req, int32(code), remark)
		answer(req, resp)
	}
	r.observe(c, req, resp)
	return resp
}

// run takes t's request through the router's middleware and its handler,
// and completes an immediate response (opaque, response flag, version).
// A panic becomes SYSTEM_ERROR; the connection stays up. The observer
// hears of an immediate response or a oneway request here, of a deferred
// one when it leaves through Conn.Reply.
func (c *Conn) run(t *task) (resp *codec.Frame) {
	req := t.req
	defer func() {
		if v := recover(); v != nil {
			c.log.Error("transport: handler panic", "remote", c.remote, "code", req.Code, "panic", v, "stack", string(debug.Stack()))
			resp = c.refuse(t.r, req, codec.RespSystemError, remarks.ProcessRequestPanic(fmt.Sprint(v)))
		}
	}()
	if refused := t.r.check(c, req); refused != nil {
		if !answer(req, refused) {
			refused = nil
		}
		t.r.observe(c, req, refused)
		return refused
	}
	if t.lh != nil {
		resp = t.lh(c, req, t.l)
	} else {
		resp = t.h(c, req)
	}
	if req.IsOneway() {
		t.r.observe(c, req, nil)
		return nil
	}
	if resp == nil {
		return nil
	}
	answer(req, resp)
	t.r.observe(c, req, resp)
	return resp
}
