package javadriver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/scenario"
)

func TestParseLine(t *testing.T) {
	r, ok := parseLine("PASS send_push 3.25")
	require.True(t, ok)
	require.Equal(t, "send_push", r.Scenario)
	require.Equal(t, scenario.Pass, r.Status)
	require.Equal(t, 3250*time.Millisecond, r.Elapsed)

	r, ok = parseLine("FAIL query 1.5: no message for key k-1: timeout")
	require.True(t, ok)
	require.Equal(t, scenario.Fail, r.Status)
	require.Equal(t, "query", r.Scenario)
	require.Equal(t, "no message for key k-1: timeout", r.Detail)

	_, ok = parseLine("some log line")
	require.False(t, ok)
}
