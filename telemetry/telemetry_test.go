package telemetry

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/stretchr/testify/require"
)

func scrape(t *testing.T, g prometheus.Gatherer) []byte {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		require.NoError(t, enc.Encode(mf))
	}
	return buf.Bytes()
}

func newTestExporter(t *testing.T, cfg Config) *Exporter {
	t.Helper()
	e, err := NewExporter(Node{Type: NodeBroker, Cluster: "C", ID: "broker-a", Scope: "broker-meter"}, cfg)
	require.NoError(t, err)
	return e
}

// TestRPCCountsPerCode: one observation per request, by request and
// response code names in Java's lower case, with Java's buckets.
func TestRPCCountsPerCode(t *testing.T) {
	e := newTestExporter(t, Config{ExporterType: ExporterProm, Label: "k1:v1", InDelta: true})
	r := NewRPC(e.Registerer())
	now := time.Now().UnixNano()
	send := &codec.Frame{Code: int32(codec.ReqSendMessageV2), Arrived: now - int64(4*time.Millisecond)}
	pull := &codec.Frame{Code: int32(codec.ReqPullMessage), Arrived: now}
	oneway := &codec.Frame{Code: int32(codec.ReqHeartBeat), Flag: codec.FlagOneway, Arrived: now}
	r.Observe(nil, send, &codec.Frame{Code: int32(codec.RespSuccess)})
	r.Observe(nil, send, &codec.Frame{Code: int32(codec.RespSuccess)})
	sendsTook := time.Now().UnixNano() - send.Arrived // at least 4 ms; more on a slow machine
	r.Observe(nil, pull, &codec.Frame{Code: int32(codec.RespPullNotFound)})
	r.Observe(nil, oneway, nil)
	r.Observe(nil, &codec.Frame{Code: 54321}, &codec.Frame{Code: int32(codec.RespSystemBusy)})
	text := scrape(t, e.Gatherer())

	count := func(req, resp, result string) float64 {
		v, _ := Value(text, RPCLatencyName+"_count", map[string]string{"request_code": req, "response_code": resp, "result": result})
		return v
	}
	require.Equal(t, 2.0, count("send_message_v2", "success", "success"))
	require.Equal(t, 1.0, count("pull_message", "pull_not_found", "success"))
	require.Equal(t, 1.0, count("heart_beat", "success", "oneway"))
	require.Equal(t, 1.0, count("54321", "system_busy", "success"))
	// 4 ms never lands in le=3; it lands in le=5 unless the machine took
	// longer than that between the stamp and the observations.
	le3, _ := Value(text, RPCLatencyName+"_bucket", map[string]string{"request_code": "send_message_v2", "le": "3"})
	le5, _ := Value(text, RPCLatencyName+"_bucket", map[string]string{"request_code": "send_message_v2", "le": "5"})
	require.Equal(t, 0.0, le3)
	if sendsTook < int64(6*time.Millisecond) {
		require.Equal(t, 2.0, le5)
	}

	shape, err := Shape(text)
	require.NoError(t, err)
	s := shape[RPCLatencyName]
	require.Equal(t, "histogram", s.Type)
	require.Equal(t, RPCLatencyBuckets, s.Buckets)
	require.Equal(t, []string{"aggregation", "cluster", "is_long_polling", "k1", "node_id", "node_type", "otel_scope_name",
		"protocol_type", "request_code", "response_code", "result"}, s.Labels)
}

// TestObserverAllocs: the observer path allocates nothing once a
// (request code, response code) pair has been seen.
func TestObserverAllocs(t *testing.T) {
	e := newTestExporter(t, Config{ExporterType: ExporterProm})
	r := NewRPC(e.Registerer())
	req := &codec.Frame{Code: int32(codec.ReqSendMessageV2), Arrived: time.Now().UnixNano()}
	resp := &codec.Frame{Code: int32(codec.RespSuccess)}
	obs := r.Observer()
	obs(nil, req, resp)
	require.Zero(t, testing.AllocsPerRun(1000, func() { obs(nil, req, resp) }))
}

func BenchmarkRPCObserve(b *testing.B) {
	e, _ := NewExporter(Node{Type: NodeBroker}, Config{ExporterType: ExporterProm})
	r := NewRPC(e.Registerer())
	req := &codec.Frame{Code: int32(codec.ReqSendMessageV2), Arrived: time.Now().UnixNano()}
	resp := &codec.Frame{Code: int32(codec.RespSuccess)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Observe(nil, req, resp)
		}
	})
}

func TestConfig(t *testing.T) {
	require.NoError(t, Config{ExporterType: "prom", PromPort: 5557}.Validate())
	require.True(t, Config{ExporterType: "prom"}.Prom())
	require.Error(t, Config{ExporterType: "STATSD"}.Validate())
	require.Error(t, Config{Label: "novalue"}.Validate())
	l, err := ParseLabels("a:1,b:2")
	require.NoError(t, err)
	require.Equal(t, [][2]string{{"a", "1"}, {"b", "2"}}, l)
	require.Equal(t, "127.0.0.10:5557", Config{PromPort: 5557}.Addr("127.0.0.10"))
	require.Equal(t, "127.0.0.1:9", Config{PromHost: "127.0.0.1", PromPort: 9}.Addr("127.0.0.10"))
}

func BenchmarkRPCObserveSerial(b *testing.B) {
	e, _ := NewExporter(Node{Type: NodeBroker}, Config{ExporterType: ExporterProm})
	r := NewRPC(e.Registerer())
	req := &codec.Frame{Code: int32(codec.ReqSendMessageV2), Arrived: time.Now().UnixNano()}
	resp := &codec.Frame{Code: int32(codec.RespSuccess)}
	b.ReportAllocs()
	for range b.N {
		r.Observe(nil, req, resp)
	}
}

// BenchmarkArrivalStamp is what the transport adds per request when a
// router has an observer: one wall-clock read.
func BenchmarkArrivalStamp(b *testing.B) {
	var f codec.Frame
	b.ReportAllocs()
	for range b.N {
		f.Arrived = time.Now().UnixNano()
	}
}

// TestPprofOnlyWhenAsked: /debug/pprof/ is served with Pprof and absent
// without it; /metrics is served either way.
func TestPprofOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		e, err := NewExporter(Node{Type: NodeBroker}, Config{ExporterType: ExporterProm, Pprof: on})
		require.NoError(t, err)
		require.NoError(t, e.Serve("127.0.0.1:0"))
		get := func(path string) int {
			resp, err := http.Get("http://" + e.Addr() + path)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusOK, get("/metrics"))
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		require.Equal(t, want, get("/debug/pprof/goroutine?debug=1"), "pprof=%v", on)
		require.NoError(t, e.Close())
	}
}
