package remoting

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// Java's proxy timeouts (remoting/activity): sends, offsets, locks and
// transactions 3 s; recall 2 s; a pull or POP its own hold plus 10 s.
const (
	defaultTimeout = 3 * time.Second
	recallTimeout  = 2 * time.Second
	holdMargin     = 10 * time.Second
)

// Response ext fields Java's proxy writes on every answer.
const (
	extRegion = "MSG_REGION"
	extTrace  = "TRACE_ON"
)

// job handles one request of a session off the event loop; it returns the
// answer, or nil (oneway, or already answered).
type job func(ctx context.Context, ss *session, req *codec.Frame) *codec.Frame

// router is the proxy's one table of what it serves: the codes Java's
// RemotingProtocolServer registers (every other code answers
// REQUEST_CODE_NOT_SUPPORTED, as there).
func (s *Server) router() *transport.Router {
	r := transport.NewRouter()
	fixed := func(d time.Duration) func(*codec.Frame) time.Duration {
		return func(*codec.Frame) time.Duration { return d }
	}
	forward := func(t func(*codec.Frame) time.Duration) job {
		return func(ctx context.Context, ss *session, req *codec.Frame) *codec.Frame {
			return s.forward(ctx, ss, req, t(req))
		}
	}
	for _, code := range []codec.RequestCode{codec.ReqSendMessage, codec.ReqSendMessageV2, codec.ReqSendBatchMessage} {
		r.Handle(code, nil, s.async(s.send))
	}
	for _, code := range []codec.RequestCode{codec.ReqConsumerSendMsgBack, codec.ReqEndTransaction,
		codec.ReqUpdateConsumerOffset, codec.ReqQueryConsumerOffset, codec.ReqSearchOffsetByTimestamp,
		codec.ReqGetMinOffset, codec.ReqGetMaxOffset, codec.ReqLockBatchMq, codec.ReqUnlockBatchMq,
		codec.ReqAckMessage, codec.ReqChangeMessageInvisibletime,
		codec.ReqGetConsumerListByGroup, codec.ReqGetConsumerConnectionList} {
		r.Handle(code, nil, s.async(forward(fixed(defaultTimeout))))
	}
	r.Handle(codec.ReqRecallMessage, nil, s.async(forward(fixed(recallTimeout))))
	r.Handle(codec.ReqPullMessage, nil, s.async(forward(pullTimeout)))
	r.Handle(codec.ReqLitePullMessage, nil, s.async(forward(pullTimeout)))
	r.Handle(codec.ReqPopMessage, nil, s.async(forward(popTimeout)))
	r.Handle(codec.ReqHeartBeat, nil, s.async(func(ctx context.Context, ss *session, req *codec.Frame) *codec.Frame {
		return ss.heartbeat(ctx, req)
	}))
	r.Handle(codec.ReqUnregisterClient, nil, s.async(func(ctx context.Context, ss *session, req *codec.Frame) *codec.Frame {
		return ss.unregister(ctx, req)
	}))
	r.Handle(codec.ReqCheckClientConfig, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		return s.finish(req, codec.NewResponse(req, int32(codec.RespSuccess), ""))
	})
	r.Handle(codec.ReqGetRouteinfoByTopic, nil, s.async(s.route))
	return r
}

// pullTimeout is the pull's suspendTimeoutMillis + 10 s.
func pullTimeout(req *codec.Frame) time.Duration {
	var h header.PullMessageRequest
	if h.Decode(req) != nil || h.SuspendTimeoutMillis < 0 {
		return defaultTimeout
	}
	return time.Duration(h.SuspendTimeoutMillis)*time.Millisecond + holdMargin
}

// popTimeout is the POP's pollTime + 10 s.
func popTimeout(req *codec.Frame) time.Duration {
	var h header.PopMessageRequest
	if h.Decode(req) != nil || h.PollTime < 0 {
		return defaultTimeout
	}
	return time.Duration(h.PollTime)*time.Millisecond + holdMargin
}

// async runs j for a request of the event loop on a goroutine of its own
// (a forward waits on its broker, up to a long poll's hold), counted in
// the connection's in-flight bound and in Config.MaxInflight.
func (s *Server) async(j job) transport.Handler {
	return func(c *transport.Conn, req *codec.Frame) *codec.Frame {
		ss := sessionOf(c)
		if ss == nil {
			return s.finish(req, codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyForwardFailed("proxy remoting: connection has no session")))
		}
		if s.inflight.Add(1) > int64(s.cfg.MaxInflight) {
			s.inflight.Add(-1)
			return s.finish(req, codec.NewResponse(req, int32(codec.RespSystemBusy), remarks.SystemBusyOverload))
		}
		c.BeginTask()
		go func() {
			defer s.inflight.Add(-1)
			defer c.EndTask()
			resp := j(context.Background(), ss, req)
			if resp != nil && !req.IsOneway() {
				_ = c.Reply(req, s.finish(req, resp))
			}
		}()
		return nil
	}
}

// finish adds what Java's proxy adds to every answer (writeResponse:
// MSG_REGION and TRACE_ON, over the broker's) and answers in the
// request's header encoding.
func (s *Server) finish(req, resp *codec.Frame) *codec.Frame {
	resp.Set(extRegion, s.region)
	resp.Set(extTrace, s.trace)
	resp.Serialize = req.Serialize
	return resp
}

// send forwards a send (Java's SendMessageActivity: the header must
// parse), and remembers where a half message went.
func (s *Server) send(ctx context.Context, ss *session, req *codec.Frame) *codec.Frame {
	var h header.SendMessageRequest
	if req.Code == int32(codec.ReqSendMessage) {
		if err := h.Decode(req); err != nil {
			return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyBadHeader(err.Error()))
		}
	} else {
		var v2 header.SendMessageRequestV2
		if err := v2.Decode(req); err != nil {
			return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyBadHeader(err.Error()))
		}
		v2.ToV1(&h)
	}
	prepared := h.SysFlag&message.TransactionPreparedType != 0
	name, refusal := s.brokerFor(ctx, req, h.Topic, h.QueueID, true)
	if refusal != nil {
		return refusal
	}
	resp := s.forwardTo(ctx, ss, req, name, defaultTimeout)
	if prepared && resp != nil && resp.Code == int32(codec.RespSuccess) {
		var rh header.SendMessageResponse
		_ = rh.Decode(resp) // best effort: only the ids are wanted
		uniq, _ := message.Property(h.Properties, message.PropertyUniqKey)
		s.txns.put(name, rh.TransactionID, rh.MsgID, uniq)
	}
	return resp
}

// forward takes req to the broker it names (or the one brokerFor picks)
// and returns the broker's answer.
func (s *Server) forward(ctx context.Context, ss *session, req *codec.Frame, timeout time.Duration) *codec.Frame {
	// compat: a routing hint only, read before the generated decoders of
	// the many header types these codes carry (the broker decodes them).
	topic := req.Value("topic")
	qid := int32(-1)
	if v, err := strconv.ParseInt(req.Value("queueId"), 10, 32); err == nil {
		qid = int32(v)
	}
	name, refusal := s.brokerFor(ctx, req, topic, qid, false)
	if refusal != nil {
		return refusal
	}
	return s.forwardTo(ctx, ss, req, name, timeout)
}

// forwardTo sends req over the session to broker name's master.
func (s *Server) forwardTo(ctx context.Context, ss *session, req *codec.Frame, name string, timeout time.Duration) *codec.Frame {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr, err := s.table.master(ctx, name)
	if err != nil {
		if errors.Is(err, errTopicNotFound) {
			return codec.NewResponse(req, int32(codec.RespTopicNotExist), remarks.NoTopicRouteInfo(name))
		}
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyForwardFailed(err.Error()))
	}
	up := ss.upstream()
	if up == nil {
		return nil // the client left
	}
	fwd := *req
	if req.IsOneway() {
		if err := up.InvokeOneway(ctx, addr, &fwd); err != nil {
			s.log.Debug("proxy remoting: oneway forward failed", "code", codec.RequestCode(req.Code).String(), "broker", addr, "err", err)
		}
		return nil
	}
	resp, err := up.Invoke(ctx, addr, &fwd)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyForwardFailed(err.Error()))
	}
	return resp
}

// brokerFor is the broker group a request goes to. Like Java's proxy: the
// bname ext field ("n" for SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE, which
// 5.x clients and rocketmq-client-go send), and for LOCK/UNLOCK_BATCH_MQ
// the first queue of the body. Ours beyond Java, for clients that send
// no broker name (Java's proxy refuses them VERSION_NOT_SUPPORTED): the
// half message's broker for END_TRANSACTION, the broker of topic's route
// serving queue qid (the first by name when several do), or the cluster's
// only broker group.
func (s *Server) brokerFor(ctx context.Context, req *codec.Frame, topic string, qid int32, write bool) (string, *codec.Frame) {
	switch codec.RequestCode(req.Code) {
	case codec.ReqLockBatchMq, codec.ReqUnlockBatchMq:
		if lb, err := body.DecodeLockBatchRequest(req.Body); err == nil && len(lb.MQSet) > 0 {
			return lb.MQSet[0].BrokerName, nil
		}
	case codec.ReqSendMessageV2, codec.ReqSendBatchMessage:
		if n := req.Value("n"); n != "" {
			return n, nil
		}
	}
	if n := req.Value("bname"); n != "" {
		return n, nil
	}
	ctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	if req.Code == int32(codec.ReqEndTransaction) {
		var h header.EndTransactionRequest
		if h.Decode(req) == nil {
			if n := s.txns.broker(h.TransactionID, h.MsgID); n != "" {
				return n, nil
			}
		}
	}
	if topic != "" {
		if r, err := s.table.cachedRouteOf(ctx, topic); err == nil {
			if n := pickBroker(r, qid, write); n != "" {
				return n, nil
			}
		}
	}
	if g, err := s.table.snapshot(ctx, false); err == nil && len(g.names) > 0 {
		switch codec.RequestCode(req.Code) {
		case codec.ReqGetConsumerListByGroup, codec.ReqGetConsumerConnectionList:
			// Every member heartbeats every broker through us: any knows the group.
			return g.names[0], nil
		}
		if len(g.names) == 1 {
			return g.names[0], nil
		}
	}
	return "", codec.NewResponse(req, int32(codec.RespVersionNotSupported), remarks.ProxyNoBrokerName)
}

// pickBroker is the broker of r serving queue qid (any queue when qid < 0)
// for writing or reading, the first in route order.
func pickBroker(r *body.TopicRouteData, qid int32, write bool) string {
	for _, q := range r.QueueDatas {
		n := q.ReadQueueNums
		if write {
			n = q.WriteQueueNums
		}
		if n > 0 && qid < n {
			return q.BrokerName
		}
	}
	return ""
}

// route answers GET_ROUTEINFO_BY_TOPIC with the name server's route in
// which every broker address is this proxy (Java's GetTopicRouteActivity
// and ProxyTopicRouteData): clients use the proxy as name server and as
// every broker.
func (s *Server) route(ctx context.Context, _ *session, req *codec.Frame) *codec.Frame {
	var h header.GetRouteInfoRequest
	if err := h.Decode(req); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyBadHeader(err.Error()))
	}
	ctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	r, err := s.table.route(ctx, h.Topic)
	if err != nil {
		var ne *nsError
		if errors.As(err, &ne) {
			return codec.NewResponse(req, ne.code, ne.remark)
		}
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProxyForwardFailed(err.Error()))
	}
	out := body.TopicRouteData{QueueDatas: r.QueueDatas}
	for _, bd := range r.BrokerDatas {
		nb := body.BrokerData{Cluster: bd.Cluster, BrokerName: bd.BrokerName}
		for _, a := range bd.BrokerAddrs {
			nb.BrokerAddrs = append(nb.BrokerAddrs, body.BrokerAddr{ID: a.ID, Addr: s.access})
		}
		out.BrokerDatas = append(out.BrokerDatas, nb)
	}
	browser := req.Version >= body.VersionV4_9_4 || h.AcceptStandardJsonOnly
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendTopicRouteData(make([]byte, 0, 256+64*len(out.QueueDatas)), &out, browser)
	return resp
}
