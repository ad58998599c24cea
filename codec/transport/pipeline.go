package transport

import (
	"github.com/rocketgo/rocketgo/codec"
)

// Middleware checks one request on the worker that runs it, before its
// handler: authentication, authorization, rate limits. It returns nil to
// let the request through, or the response that refuses it (the handler
// then never runs). It must not keep req, which may be leased, and must
// not block for long: it runs on every request of its router.
type Middleware func(c *Conn, req *codec.Frame) *codec.Frame

// Observer sees each request once, when its fate is known: its response as
// it leaves (immediate, deferred through Conn.Reply, or a refusal of the
// transport or a middleware), or nil for a oneway request once its
// handler returned. Per-code metrics hang here. It runs on whichever
// goroutine replies and must be quick and allocation-free; it must not
// keep req or resp.
type Observer func(c *Conn, req, resp *codec.Frame)

// Use appends middleware, run in the order given on every request the
// router routes. Like the routes, call it before the router serves.
// Middleware never runs on an event loop: a server refuses to start with
// a router that has both middleware and inline (pool-less) routes.
func (r *Router) Use(mw ...Middleware) {
	for _, m := range mw {
		if m == nil {
			panic("transport: Router.Use with nil middleware")
		}
	}
	r.mw = append(r.mw, mw...)
}

// Observe sets the router's observer (nil: none). Call it before the
// router serves.
func (r *Router) Observe(o Observer) { r.obs = o }

// inlineWithMiddleware reports a route that would run middleware on an
// event loop (code -1: the default route).
func (r *Router) inlineWithMiddleware() (codec.RequestCode, bool) {
	if r == nil || len(r.mw) == 0 {
		return 0, false
	}
	for code, rt := range r.routes {
		if rt.pool == nil {
			return codec.RequestCode(code), true
		}
	}
	if (r.def.h != nil || r.def.lh != nil) && r.def.pool == nil {
		return -1, true
	}
	return 0, false
}

// check runs the middleware; a non-nil result refuses req.
func (r *Router) check(c *Conn, req *codec.Frame) *codec.Frame {
	if r == nil {
		return nil
	}
	for _, m := range r.mw {
		if resp := m(c, req); resp != nil {
			return resp
		}
	}
	return nil
}

// observe reports req's outcome to the router's observer.
func (r *Router) observe(c *Conn, req, resp *codec.Frame) {
	if r != nil && r.obs != nil {
		r.obs(c, req, resp)
	}
}

// answer completes resp as the answer to req: opaque, response flag and
// version. It reports false for a oneway request, which gets no answer.
func answer(req, resp *codec.Frame) bool {
	if req.IsOneway() {
		return false
	}
	resp.Opaque = req.Opaque
	resp.Flag |= codec.FlagResponse
	if resp.Version == 0 {
		resp.Version = codec.ServerVersion
	}
	return true
}

// Reply sends resp as the deferred answer to req, from any goroutine: the
// one way every reply a handler did not return leaves (long polling,
// store completions, retries, transaction ends). It sets resp's opaque,
// response flag and version, tells the router's observer, and writes
// nothing for a oneway request. resp is not used after Reply returns.
func (c *Conn) Reply(req, resp *codec.Frame) error {
	if !answer(req, resp) {
		return nil
	}
	c.rt.observe(c, req, resp)
	return c.Write(resp)
}

// ReplyWithBody is Reply for a response whose body goes out without a
// copy, as WriteWithBody sends it; done runs as WriteWithBody says (for a
// oneway request at once, with nil).
func (c *Conn) ReplyWithBody(req, resp *codec.Frame, body [][]byte, done func(error)) error {
	if !answer(req, resp) {
		if done != nil {
			done(nil)
		}
		return nil
	}
	c.rt.observe(c, req, resp)
	return c.WriteWithBody(resp, body, done)
}
