package grpcsdk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/scenario"
)

func TestParseLine(t *testing.T) {
	r, ok := ParseLine("PASS send_fifo 12.5: in order 10")
	require.True(t, ok)
	require.Equal(t, Result{Scenario: "send_fifo", Status: scenario.Pass, Detail: "in order 10", Elapsed: 12500 * time.Millisecond}, r)
	r, ok = ParseLine("FAIL filter_sql 3.0: received [s0, s1]")
	require.True(t, ok)
	require.Equal(t, scenario.Fail, r.Status)
	require.Equal(t, "received [s0, s1]", r.Detail)
	r, ok = ParseLine("SKIP shared_4x: no API")
	require.True(t, ok)
	require.Equal(t, Result{Scenario: "shared_4x", Status: scenario.Skip, Detail: "no API"}, r)
	_, ok = ParseLine("SLF4J: Failed to load class")
	require.False(t, ok)
}

func TestLookup(t *testing.T) {
	all, err := Lookup(nil)
	require.NoError(t, err)
	require.Equal(t, Scenarios, all)
	two, err := Lookup([]string{"filter_tag", "send_normal"})
	require.NoError(t, err)
	require.Equal(t, []string{"filter_tag", "send_normal"}, []string{two[0].Name, two[1].Name})
	_, err = Lookup([]string{"nope"})
	require.Error(t, err)
}

func TestGoSDKSkips(t *testing.T) {
	d := &Driver{SDK: Go, Root: t.TempDir()}
	rs := d.Run(context.Background(), "java", Scenarios[:2], Options{})
	require.Len(t, rs, 2)
	for _, r := range rs {
		require.Equal(t, scenario.Skip, r.Status)
		require.Contains(t, r.Detail, "not served")
	}
	require.True(t, errors.Is(d.Prepare(context.Background()), ErrNoToolchain))
}

func TestMarkdownCellsAndReasons(t *testing.T) {
	scs := Scenarios[:2]
	md := Markdown(scs, []Result{
		{Scenario: scs[0].Name, SDK: Java, Server: "java", Status: scenario.Pass},
		{Scenario: scs[1].Name, SDK: Java, Server: "java", Status: scenario.Fail, Detail: "a|b"},
		{Scenario: scs[0].Name, SDK: Go, Server: "java", Status: scenario.Skip, Detail: "not served"},
	}, []string{"`native`: not-yet — no flag"}, []string{"an SDK note"})
	require.Contains(t, md, "| scenario | java-5.0.8 | go |")
	require.Contains(t, md, "| send_normal | pass | skip |")
	require.Contains(t, md, "| send_fifo | FAIL | – |")
	require.Contains(t, md, `send_fifo × java-5.0.8 × java: **FAIL** a\|b`)
	require.Contains(t, md, "`native`: not-yet — no flag")
	require.Contains(t, md, "## Notes\n\n- an SDK note\n")
}

func TestMarkdownSaysASkipOnce(t *testing.T) {
	scs := Scenarios[:3]
	var rs []Result
	for _, s := range scs {
		rs = append(rs, Result{Scenario: s.Name, SDK: Go, Server: "java", Status: scenario.Skip, Detail: "no SDK zz9"})
	}
	md := Markdown(scs, rs, nil, nil)
	require.Equal(t, 1, strings.Count(md, "no SDK zz9"), md)
	require.Contains(t, md, "- every scenario × go × java: **skip** no SDK zz9")
}
