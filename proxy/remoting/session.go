package remoting

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// session is one client connection to the proxy and its own connections
// to the brokers (one transport.Client, dialed lazily per broker). Every
// request of the client goes to a broker over the session's connection,
// so the broker registers the client's heartbeats on a channel of its own
// and sends its callbacks (CHECK_TRANSACTION_STATE, GET_CONSUMER_RUNNING_INFO,
// NOTIFY_CONSUMER_IDS_CHANGED, CONSUME_MESSAGE_DIRECTLY,
// RESET_CONSUMER_CLIENT_OFFSET …) there: each is relayed to exactly this
// client. When either side closes, the session closes the other, and
// the brokers drop the client's registrations as for a client that left.
type session struct {
	s    *Server
	down *transport.Conn

	mu     sync.Mutex
	up     *transport.Client // guarded by mu; nil until the first forward
	closed bool              // guarded by mu

	hbMu  sync.Mutex // serializes heartbeats: a burst of N waits for the first
	hbSum uint64     // guarded by hbMu: body hash of the last fan-out that reached every broker
	hbAt  time.Time  // guarded by hbMu
}

// heartbeatDedup is how long an identical heartbeat body is answered
// without a new fan-out. A client heartbeats once per broker name of its
// routes, every 30 s; through the proxy every one of them arrives here.
const heartbeatDedup = 5 * time.Second

// relayTimeout bounds a broker → client call relayed to the client (Java
// RemotingChannel's DEFAULT_MQ_CLIENT_TIMEOUT).
const relayTimeout = 3 * time.Second

func newSession(s *Server, c *transport.Conn) *session { return &session{s: s, down: c} }

// upstream is the session's client to the brokers, made on first use;
// nil once the session closed.
func (ss *session) upstream() *transport.Client {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return nil
	}
	if ss.up == nil {
		r := transport.NewRouter()
		r.SetDefault(ss.s.cb, ss.relay)
		cc, err := transport.ClientConfig{Logger: ss.s.log, Router: r}.WithTLS(ss.s.cfg.TLS)
		if err != nil { // validated at Start with the same config
			panic("proxy remoting: client TLS config changed: " + err.Error())
		}
		ss.up = transport.NewClient(cc)
	}
	return ss.up
}

// close drops the broker connections (off the event loop: Client.Close
// waits for its readers).
func (ss *session) close() {
	ss.mu.Lock()
	up := ss.up
	ss.closed, ss.up = true, nil
	ss.mu.Unlock()
	if up != nil {
		go func() { _ = up.Close() }()
	}
}

// relay takes a request a broker sent on one of the session's
// connections to the client, and the client's answer back.
func (ss *session) relay(uc *transport.Conn, req *codec.Frame) *codec.Frame {
	if req.Code == int32(codec.ReqCheckTransactionState) {
		ss.rememberCheck(uc, req)
	}
	fwd := *req
	if req.IsOneway() {
		if err := ss.down.InvokeOneway(&fwd); err != nil {
			ss.s.log.Debug("proxy remoting: relay to client failed", "code", codec.RequestCode(req.Code).String(), "client", ss.down.RemoteAddr(), "err", err)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	resp, err := ss.down.Invoke(ctx, &fwd)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyRelayFailed(err.Error()))
	}
	resp.Serialize = req.Serialize
	return resp
}

// rememberCheck notes which broker holds a half message the broker asks
// about, for the END_TRANSACTION a client without broker names answers.
func (ss *session) rememberCheck(uc *transport.Conn, req *codec.Frame) {
	var h header.CheckTransactionStateRequest
	if h.Decode(req) != nil {
		return
	}
	name := h.Bname
	if name == "" {
		ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
		name = ss.s.table.nameOf(ctx, uc.RemoteAddr())
		cancel()
	}
	if name != "" {
		ss.s.txns.put(name, h.TransactionID, h.MsgID)
	}
}

// heartbeat takes a HEART_BEAT to every broker group of the cluster
// (masters; slaves too when it has consumers, as the clients do), on the
// session's connections; the client gets Java's proxy's plain SUCCESS.
func (ss *session) heartbeat(ctx context.Context, req *codec.Frame) *codec.Frame {
	ctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	h := fnv.New64a()
	_, _ = h.Write(req.Body)
	sum := h.Sum64()
	ss.hbMu.Lock()
	defer ss.hbMu.Unlock()
	if sum == ss.hbSum && time.Since(ss.hbAt) < heartbeatDedup {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	var targets []string
	g, err := ss.s.table.snapshot(ctx, false)
	if err != nil {
		ss.s.log.Warn("proxy remoting: heartbeat: no cluster info", "client", ss.down.RemoteAddr(), "err", err)
	} else {
		consumers := heartbeatHasConsumers(req.Body)
		for _, name := range g.names {
			for _, a := range g.byName[name].BrokerAddrs {
				if a.ID == 0 || consumers {
					targets = append(targets, a.Addr)
				}
			}
		}
	}
	if ss.fanOut(ctx, req, targets) && len(targets) > 0 {
		ss.hbSum, ss.hbAt = sum, time.Now()
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// unregister takes an UNREGISTER_CLIENT to every master.
func (ss *session) unregister(ctx context.Context, req *codec.Frame) *codec.Frame {
	var h header.UnregisterClientRequest
	if err := h.Decode(req); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyBadHeader(err.Error()))
	}
	ctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	ss.hbMu.Lock()
	ss.hbSum, ss.hbAt = 0, time.Time{}
	ss.hbMu.Unlock()
	var targets []string
	if g, err := ss.s.table.snapshot(ctx, false); err == nil {
		for _, name := range g.names {
			bd := g.byName[name]
			if a, ok := bd.Addr(0); ok {
				targets = append(targets, a)
			}
		}
	}
	ss.fanOut(ctx, req, targets)
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// fanOut sends a copy of req to every address at once and reports whether
// all of them answered SUCCESS.
func (ss *session) fanOut(ctx context.Context, req *codec.Frame, addrs []string) bool {
	up := ss.upstream()
	if up == nil {
		return false
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	all := true
	for _, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fwd := *req
			fwd.Flag &^= codec.FlagOneway
			resp, err := up.Invoke(ctx, a, &fwd)
			if err == nil && resp.Code == int32(codec.RespSuccess) {
				return
			}
			mu.Lock()
			all = false
			mu.Unlock()
			if err != nil {
				ss.s.log.Warn("proxy remoting: fan-out failed", "code", codec.RequestCode(req.Code).String(), "broker", a, "err", err)
			} else {
				ss.s.log.Warn("proxy remoting: fan-out refused", "code", codec.RequestCode(req.Code).String(), "broker", a, "resp", resp.Code, "remark", resp.Remark)
			}
		}()
	}
	wg.Wait()
	return all
}
