package metrics

import (
	"bytes"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/telemetry"
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

// TestIntHistogramAllocs: an observation allocates nothing.
func TestIntHistogramAllocs(t *testing.T) {
	var h IntHistogram
	h.Init(MessageSizeBuckets)
	require.Zero(t, testing.AllocsPerRun(1000, func() { h.Observe(1500) }))
}

func TestVersionName(t *testing.T) {
	require.Equal(t, "v5_4_0", VersionName(codec.ServerVersion))
	require.Equal(t, "higher_version", VersionName(1<<20))
	require.Equal(t, "java", LanguageName(codec.LangJava))
}

func TestIntHistogram(t *testing.T) {
	e, err := telemetry.NewExporter(telemetry.Node{Type: telemetry.NodeBroker}, telemetry.Config{})
	require.NoError(t, err)
	var h IntHistogram
	h.Init(MessageSizeBuckets)
	for _, v := range []int64{10, 1024, 1025, 5 << 20} {
		h.Observe(v)
	}
	d := prometheus.NewDesc("x_size", "x", []string{"topic"}, nil)
	require.NoError(t, e.Registerer().Register(constCollector{h.Metric(d, "T")}))
	text := scrape(t, e.Gatherer())
	for le, want := range map[string]float64{"1024": 2, "4096": 3, "4.194304e+06": 3, "+Inf": 4} {
		v, ok := telemetry.Value(text, "x_size_bucket", map[string]string{"le": le})
		require.True(t, ok, le)
		require.Equal(t, want, v, le)
	}
	sum, _ := telemetry.Value(text, "x_size_sum", nil)
	require.Equal(t, float64(10+1024+1025+5<<20), sum)
}

type constCollector struct{ m prometheus.Metric }

func (c constCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.m.Desc() }
func (c constCollector) Collect(ch chan<- prometheus.Metric) { ch <- c.m }

// TestJavaGoldenParses: the golden scrape is what we think it is.
func TestJavaGoldenParses(t *testing.T) {
	b, err := os.ReadFile("testdata/java-5.3.3.prom")
	require.NoError(t, err)
	s, err := telemetry.Shape(b)
	require.NoError(t, err)
	require.Equal(t, telemetry.RPCLatencyBuckets, s[telemetry.RPCLatencyName].Buckets)
	var sizes []float64
	for _, v := range MessageSizeBuckets {
		sizes = append(sizes, float64(v))
	}
	require.Equal(t, sizes, s["rocketmq_message_size"].Buckets)
}
