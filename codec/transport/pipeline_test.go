package transport

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// outcome is what an observer saw of one request.
type outcome struct {
	code     int32 // request code
	respCode int32 // -1: no response (oneway)
	opaque   int32
}

type recorder struct {
	mu   sync.Mutex
	seen []outcome
	ch   chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 64)} }

func (r *recorder) observe(_ *Conn, req, resp *codec.Frame) {
	o := outcome{code: req.Code, respCode: -1, opaque: req.Opaque}
	if resp != nil {
		o.respCode = resp.Code
		if resp.Opaque != req.Opaque || !resp.IsResponse() {
			panic("observer saw an unfinished response")
		}
	}
	r.mu.Lock()
	r.seen = append(r.seen, o)
	r.mu.Unlock()
	r.ch <- struct{}{}
}

func (r *recorder) wait(t *testing.T, n int) []outcome {
	t.Helper()
	for range n {
		select {
		case <-r.ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("observer saw fewer than %d requests", n)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]outcome(nil), r.seen...)
}

// Every request passes the middleware on its worker, and the observer sees
// each exactly once: immediate and deferred replies (Conn.Reply), oneway
// requests, middleware refusals, unknown codes.
func TestPipelineMiddlewareAndObserver(t *testing.T) {
	pool := newPool(t, "p", 2, 16)
	rec := newRecorder()
	r := NewRouter()
	var loopMu sync.Mutex
	deny := map[int32]bool{}
	r.Use(func(c *Conn, req *codec.Frame) *codec.Frame {
		loopMu.Lock()
		defer loopMu.Unlock()
		if deny[req.Opaque] {
			return codec.NewResponse(req, int32(codec.RespNoPermission), "denied")
		}
		return nil
	})
	r.Observe(rec.observe)
	ran := make(chan int32, 16)
	r.Handle(codec.ReqGetBrokerConfig, pool, func(_ *Conn, req *codec.Frame) *codec.Frame {
		ran <- req.Opaque
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
	r.Handle(codec.ReqPullMessage, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		ran <- req.Opaque
		go func() { // answered later, from another goroutine
			require.NoError(t, c.Reply(req, codec.NewResponse(req, int32(codec.RespPullNotFound), "")))
		}()
		return nil
	})
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())

	rc.send(request(codec.ReqGetBrokerConfig, 1))
	require.Equal(t, int32(codec.RespSuccess), rc.recv().Code)

	rc.send(request(codec.ReqPullMessage, 2))
	resp := rc.recv()
	require.Equal(t, int32(codec.RespPullNotFound), resp.Code)
	require.Equal(t, int32(2), resp.Opaque)

	ow := request(codec.ReqGetBrokerConfig, 3)
	ow.Flag |= codec.FlagOneway
	rc.send(ow)

	loopMu.Lock()
	deny[4] = true
	loopMu.Unlock()
	rc.send(request(codec.ReqGetBrokerConfig, 4))
	refused := rc.recv()
	require.Equal(t, int32(codec.RespNoPermission), refused.Code)
	require.Equal(t, "denied", refused.Remark)

	rc.send(request(codec.RequestCode(9999), 5))
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), rc.recv().Code)

	seen := rec.wait(t, 5)
	require.ElementsMatch(t, []outcome{
		{int32(codec.ReqGetBrokerConfig), int32(codec.RespSuccess), 1},
		{int32(codec.ReqPullMessage), int32(codec.RespPullNotFound), 2},
		{int32(codec.ReqGetBrokerConfig), -1, 3},
		{int32(codec.ReqGetBrokerConfig), int32(codec.RespNoPermission), 4},
		{9999, int32(codec.RespRequestCodeNotSupported), 5},
	}, seen)
	close(ran)
	var handled []int32
	for op := range ran {
		handled = append(handled, op)
	}
	require.ElementsMatch(t, []int32{1, 2, 3}, handled, "a refused request reached its handler")
	select {
	case <-rec.ch:
		t.Fatal("a request was observed twice")
	default:
	}
}

// A handler panic is answered SYSTEM_ERROR through the pipeline too.
func TestPipelinePanicObserved(t *testing.T) {
	pool := newPool(t, "p", 1, 4)
	rec := newRecorder()
	r := NewRouter()
	r.Observe(rec.observe)
	r.Handle(codec.ReqGetBrokerConfig, pool, func(*Conn, *codec.Frame) *codec.Frame { panic("boom") })
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())
	rc.send(request(codec.ReqGetBrokerConfig, 7))
	resp := rc.recv()
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, []outcome{{int32(codec.ReqGetBrokerConfig), int32(codec.RespSystemError), 7}}, rec.wait(t, 1))
}

// Middleware must never run on an event loop: a server whose router has
// middleware and an inline route does not start.
func TestPipelineRefusesInlineRoutesWithMiddleware(t *testing.T) {
	r := NewRouter()
	r.Use(func(*Conn, *codec.Frame) *codec.Frame { return nil })
	r.Handle(codec.ReqGetBrokerConfig, nil, echo)
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r)
	err := s.Start()
	require.Error(t, err)
	require.Contains(t, err.Error(), "event loop")
}

// A client's BeforeRequest hook runs on every request it sends, invokes
// and oneways alike, before the request is encoded.
func TestClientBeforeRequestHook(t *testing.T) {
	pool := newPool(t, "p", 1, 8)
	got := make(chan string, 4)
	r := NewRouter()
	r.Handle(codec.ReqGetBrokerConfig, pool, func(_ *Conn, req *codec.Frame) *codec.Frame {
		got <- req.Value("Signed")
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
	s := startServer(t, ServerConfig{}, r)
	var n sync.Mutex
	count := 0
	cl := NewClient(ClientConfig{Logger: testLogger(), DialTimeout: time.Second, BeforeRequest: func(req *codec.Frame) {
		n.Lock()
		count++
		n.Unlock()
		req.Set("Signed", "yes")
	}})
	t.Cleanup(func() { require.NoError(t, cl.Close()) })
	resp, err := cl.Invoke(t.Context(), s.Addr(), request(codec.ReqGetBrokerConfig, 0))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.NoError(t, cl.InvokeOneway(t.Context(), s.Addr(), request(codec.ReqGetBrokerConfig, 0)))
	require.Equal(t, "yes", <-got)
	require.Equal(t, "yes", <-got)
	n.Lock()
	require.Equal(t, 2, count)
	n.Unlock()
}

// The observer gets each request's arrival time (Frame.Arrived): stamped
// before the handler ran, also for a deferred reply and a refusal.
func TestPipelineObserverSeesArrival(t *testing.T) {
	pool := newPool(t, "p", 1, 4)
	type seen struct{ arrived, observed int64 }
	got := make(chan seen, 4)
	r := NewRouter()
	r.Observe(func(_ *Conn, req, _ *codec.Frame) {
		got <- seen{req.Arrived, time.Now().UnixNano()}
	})
	r.Handle(codec.ReqPullMessage, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		go func() {
			time.Sleep(30 * time.Millisecond)
			_ = c.Reply(req, codec.NewResponse(req, int32(codec.RespPullNotFound), ""))
		}()
		return nil
	})
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())
	before := time.Now().UnixNano()
	rc.send(request(codec.ReqPullMessage, 1))
	require.Equal(t, int32(codec.RespPullNotFound), rc.recv().Code)
	rc.send(request(codec.RequestCode(9999), 2))
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), rc.recv().Code)
	held, refused := <-got, <-got
	require.GreaterOrEqual(t, held.arrived, before)
	require.GreaterOrEqual(t, held.observed-held.arrived, int64(30*time.Millisecond))
	require.NotZero(t, refused.arrived)
	require.LessOrEqual(t, refused.arrived, refused.observed)
}
