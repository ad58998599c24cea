package grpcsvc

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// Broker requests relayed to gRPC clients (Java's GrpcClientChannel with
// the local-mode relay service): GET_CONSUMER_RUNNING_INFO with jstack
// becomes a PrintThreadStackTraceCommand, CONSUME_MESSAGE_DIRECTLY a
// VerifyMessageCommand, each with a nonce; the client's ThreadStackTrace /
// VerifyMessageResult on its telemetry stream answers the broker's request
// on the connection it came from. An answer that does not come within
// RelayTimeout is SYSTEM_BUSY "call remote timeout", as Java's expiry scan
// answers it. Java's cluster-mode relay answers neither request (its
// ClusterProxyRelayService is "not implement yet"); ours relays in both
// modes.

const (
	// defaultRelayTimeout is Java's grpcProxyRelayRequestTimeoutInSeconds.
	defaultRelayTimeout = 5 * time.Second
	// maxRelays bounds the requests waiting for a client's answer.
	maxRelays = 4096
)

type relayKind uint8

const (
	relayJstack relayKind = iota
	relayVerify
)

// pendingRelay is a broker request waiting for a client's answer.
type pendingRelay struct {
	kind   relayKind
	client string // the client asked: only its stream answers
	conn   *transport.Conn
	req    *codec.Frame
	timer  *time.Timer
}

// relays holds the pending requests by nonce.
type relays struct {
	next    atomic.Int64
	timeout time.Duration
	mu      sync.Mutex
	pending map[string]*pendingRelay // guarded by mu
}

func newRelays(timeout time.Duration) *relays {
	if timeout <= 0 {
		timeout = defaultRelayTimeout
	}
	return &relays{timeout: timeout, pending: map[string]*pendingRelay{}}
}

// add registers a request and returns its nonce ("" when too many wait).
func (r *relays) add(kind relayKind, client string, c *transport.Conn, req *codec.Frame) string {
	nonce := strconv.FormatInt(r.next.Add(1)-1, 10) // Java's nonces count from 0
	p := &pendingRelay{kind: kind, client: client, conn: c, req: req}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) >= maxRelays {
		return ""
	}
	r.pending[nonce] = p
	p.timer = time.AfterFunc(r.timeout, func() {
		if p := r.take(nonce, kind, client); p != nil {
			reply(p.conn, p.req, codec.NewResponse(p.req, int32(codec.RespSystemBusy), "call remote timeout"))
		}
	})
	return nonce
}

// take removes and returns the request of nonce if it is of kind and was
// asked of client, nil if it is gone (answered, timed out, never sent) or
// another's.
func (r *relays) take(nonce string, kind relayKind, client string) *pendingRelay {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pending[nonce]
	if !ok || p.kind != kind || p.client != client {
		return nil
	}
	delete(r.pending, nonce)
	p.timer.Stop()
	return p
}

// waiting is the number of requests waiting for an answer.
func (r *relays) waiting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// drop forgets the request of nonce without answering it.
func (r *relays) drop(nonce string, kind relayKind, client string) { r.take(nonce, kind, client) }

func reply(c *transport.Conn, req, resp *codec.Frame) {
	// An error here is a closed connection: the broker's request is gone with it.
	_ = c.Reply(req, resp)
}

// consumerRunningInfo is GET_CONSUMER_RUNNING_INFO from a broker for one
// of our gRPC clients.
func (s *Service) consumerRunningInfo(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetConsumerRunningInfoRequest
	if err := h.Decode(req); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	if !h.JstackEnable {
		// compat: Java's proxy sends nothing to the client and never answers
		// (the caller times out); a gRPC client has no running info besides
		// its thread dump, so we say so at once.
		return codec.NewResponse(req, int32(codec.RespSystemError),
			"the gRPC client "+h.ClientID+" only answers running info with jstack")
	}
	return s.relayToClient(c, req, h.ClientID, relayJstack, func(nonce string) *v2.TelemetryCommand {
		return &v2.TelemetryCommand{Command: &v2.TelemetryCommand_PrintThreadStackTraceCommand{
			PrintThreadStackTraceCommand: &v2.PrintThreadStackTraceCommand{Nonce: nonce}}}
	})
}

// consumeMessageDirectly is CONSUME_MESSAGE_DIRECTLY from a broker: the
// message goes to the client to be verified by its listener.
func (s *Service) consumeMessageDirectly(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ConsumeMessageDirectlyResultRequest
	if err := h.Decode(req); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	var e message.Ext
	if err := message.Decode(req.Body, &e); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), "bad message body: "+err.Error())
	}
	msg := s.toMessage(&e, "")
	msg.Topic = resourceOf(e.Topic)
	return s.relayToClient(c, req, h.ClientID, relayVerify, func(nonce string) *v2.TelemetryCommand {
		return &v2.TelemetryCommand{Command: &v2.TelemetryCommand_VerifyMessageCommand{
			VerifyMessageCommand: &v2.VerifyMessageCommand{Nonce: nonce, Message: msg}}}
	})
}

// relayToClient writes the command to clientID's telemetry stream; the
// answer comes through the stream (answerRelay). It returns the broker's
// immediate reply when the command cannot be written, nil otherwise.
func (s *Service) relayToClient(c *transport.Conn, req *codec.Frame, clientID string, kind relayKind,
	build func(nonce string) *v2.TelemetryCommand) *codec.Frame {
	out := s.clients.stream(clientID)
	if out == nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), "the gRPC client "+clientID+" has no telemetry stream on this proxy")
	}
	nonce := s.relay.add(kind, clientID, c, req)
	if nonce == "" {
		return codec.NewResponse(req, int32(codec.RespSystemBusy), "too many requests wait for gRPC clients")
	}
	select {
	case out <- build(nonce):
		return nil
	default:
		s.relay.drop(nonce, kind, clientID)
		return codec.NewResponse(req, int32(codec.RespSystemBusy), "the gRPC client "+clientID+"'s telemetry stream is full")
	}
}

// answerJstack is client's ThreadStackTrace (Java's reportThreadStackTrace).
func (s *Service) answerJstack(client string, st *v2.Status, t *v2.ThreadStackTrace) {
	p := s.relay.take(t.GetNonce(), relayJstack, client)
	if p == nil {
		return
	}
	var resp *codec.Frame
	switch st.GetCode() {
	case v2.Code_OK:
		resp = codec.NewResponse(p.req, int32(codec.RespSuccess), "")
		resp.Body = body.AppendJstackRunningInfo(nil, t.GetThreadStackTrace())
	case v2.Code_VERIFY_FIFO_MESSAGE_UNSUPPORTED:
		resp = codec.NewResponse(p.req, int32(codec.RespNoPermission), "forbidden to verify message")
	default:
		resp = codec.NewResponse(p.req, int32(codec.RespSystemError), "verify message failed")
	}
	reply(p.conn, p.req, resp)
}

// answerVerify is client's VerifyMessageResult (Java's
// reportVerifyMessageResult and buildConsumeMessageDirectlyResult).
func (s *Service) answerVerify(client string, st *v2.Status, v *v2.VerifyMessageResult) {
	p := s.relay.take(v.GetNonce(), relayVerify, client)
	if p == nil {
		return
	}
	r := body.ConsumeMessageDirectlyResult{AutoCommit: true, Remark: "from gRPC client"}
	switch st.GetCode() {
	case v2.Code_OK:
		r.ConsumeResult = body.CRSuccess
	case v2.Code_FAILED_TO_CONSUME_MESSAGE:
		r.ConsumeResult = body.CRLater
	case v2.Code_MESSAGE_CORRUPTED:
		r.ConsumeResult = body.CRReturnNull
	}
	resp := codec.NewResponse(p.req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendConsumeMessageDirectlyResult(nil, &r)
	reply(p.conn, p.req, resp)
}
