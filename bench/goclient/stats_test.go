package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBodyStampRoundTrip(t *testing.T) {
	at := time.Unix(1_700_000_000, 123_456_789)
	b := newBody(1024, at)
	require.Len(t, b, 1024)
	got, ok := stampOf(b)
	require.True(t, ok)
	require.True(t, got.Equal(at))

	_, ok = stampOf([]byte("plain body without a stamp"))
	require.False(t, ok)
	require.Len(t, newBody(4, at), stampLen, "a body never drops the stamp")
}

func TestLatencyOfNearestRank(t *testing.T) {
	us := make([]int64, 1000)
	for i := range us {
		us[len(us)-1-i] = int64(i+1) * 1000 // 1..1000 ms, reversed
	}
	l := latencyOf(us)
	require.Equal(t, uint64(1000), l.Samples)
	require.InDelta(t, 500.0, l.P50, 1e-9)
	require.InDelta(t, 990.0, l.P99, 1e-9)
	require.InDelta(t, 999.0, l.P999, 1e-9)
	require.InDelta(t, 1000.0, l.Max, 1e-9)
	require.InDelta(t, 500.5, l.Mean, 1e-9)
	require.Equal(t, Latency{}, latencyOf(nil))
}

func TestScheduleSpreadsRateOverGoroutines(t *testing.T) {
	start := time.Unix(0, 0)
	// 4 goroutines at 1000/s: one message per ms over all, 4 ms apart per goroutine.
	require.Equal(t, 2*time.Millisecond, schedule(start, 1000, 4, 2, 0).Sub(start))
	require.Equal(t, 6*time.Millisecond, schedule(start, 1000, 4, 2, 1).Sub(start))
	require.Equal(t, 4*time.Millisecond, schedule(start, 1000, 4, 0, 1).Sub(start))
}

func TestSummaryJSONUsesMqbenchNames(t *testing.T) {
	s := Summary{Generator: "go-client", Role: "produce", Messages: 500, Bytes: 512000,
		Errors: map[string]uint64{"timeout": 2, "status_1": 1}}
	s.finish(2 * time.Second)
	var buf bytes.Buffer
	require.NoError(t, s.write(&buf))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	require.InDelta(t, 250.0, m["tps"], 1e-9)
	require.InDelta(t, 3.0, m["errorTotal"], 1e-9)
	require.Contains(t, m, "latencyMs")
	require.Contains(t, m["latencyMs"], "p99")
}
