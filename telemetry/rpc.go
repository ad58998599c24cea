package telemetry

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// RPCLatencyName is rocketmq_rpc_latency as Java's exporter serves it
// (the unit appended).
const RPCLatencyName = "rocketmq_rpc_latency_milliseconds"

// RPCLatencyBuckets are Java's rocketmq_rpc_latency buckets, milliseconds.
var RPCLatencyBuckets = []float64{1, 3, 5, 7, 10, 100, 1000, 2000, 3000}

// rpcKey is one child of the latency histogram.
type rpcKey struct {
	req, resp         int32
	oneway, suspended bool
}

// RPC is rocketmq_rpc_latency: every request's time from arrival to its
// response, by request code and response code (Java's lower-case field
// names: RemotingHelper.getRequestCodeDesc), fed by the router's
// Observer. Like Java, protocol_type="remoting"; result is "success", or
// "oneway" for a oneway request (Java records it only when the processor
// made a response, and with that response's code; ours has none, so its
// response_code is "success"); is_long_polling is the request's Suspended
// mark (a held pull).
type RPC struct {
	vec *prometheus.HistogramVec

	mu    sync.Mutex                                     // serializes adding children
	cache atomic.Pointer[map[rpcKey]prometheus.Observer] // copy-on-write; read lock-free
}

// NewRPC registers rocketmq_rpc_latency with reg.
func NewRPC(reg prometheus.Registerer) *RPC {
	r := &RPC{vec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    RPCLatencyName,
		Help:    "Rpc latency",
		Buckets: RPCLatencyBuckets,
	}, []string{"protocol_type", "request_code", "response_code", "is_long_polling", "result"})}
	m := map[rpcKey]prometheus.Observer{}
	r.cache.Store(&m)
	reg.MustRegister(r.vec)
	return r
}

// Observer is r as a transport.Router observer.
func (r *RPC) Observer() transport.Observer { return r.Observe }

// Observe records one request's outcome. It does not allocate once its
// (request code, response code) pair has been seen.
func (r *RPC) Observe(_ *transport.Conn, req, resp *codec.Frame) {
	k := rpcKey{req: req.Code, oneway: resp == nil, suspended: req.Suspended}
	if resp != nil {
		k.resp = resp.Code
	}
	o, ok := (*r.cache.Load())[k]
	if !ok {
		o = r.child(k)
	}
	var ms int64
	if req.Arrived != 0 {
		ms = (time.Now().UnixNano() - req.Arrived) / int64(time.Millisecond) // whole ms, as Java's Stopwatch
	}
	o.Observe(float64(ms))
}

// child resolves k's histogram once and publishes a new cache.
func (r *RPC) child(k rpcKey) prometheus.Observer {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.cache.Load()
	if o, ok := old[k]; ok {
		return o
	}
	result := "success"
	if k.oneway {
		result = "oneway"
	}
	longPolling := "false"
	if k.suspended {
		longPolling = "true"
	}
	o := r.vec.WithLabelValues("remoting", RequestCodeName(k.req), ResponseCodeName(k.resp), longPolling, result)
	m := make(map[rpcKey]prometheus.Observer, len(old)+1)
	for kk, v := range old {
		m[kk] = v
	}
	m[k] = o
	r.cache.Store(&m)
	return o
}

// RequestCodeName is Java's label for a request code: RequestCode's field
// name in lower case, or the number when it has none.
func RequestCodeName(code int32) string {
	return strings.ToLower(codec.RequestCode(code).String())
}

// ResponseCodeName is Java's label for a response code (ResponseCode's
// field name in lower case, or the number).
func ResponseCodeName(code int32) string {
	return strings.ToLower(codec.ResponseCode(code).String())
}
