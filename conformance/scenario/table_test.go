package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTableIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Table {
		require.False(t, seen[s.Name], "duplicate scenario %s", s.Name)
		seen[s.Name] = true
		require.True(t, s.Go || s.Java, "%s runs with no client", s.Name)
		require.Positive(t, s.Timeout, s.Name)
		require.LessOrEqual(t, s.Timeout, s.MaxTimeout(), "%s: scenarios are bounded", s.Name)
	}
	for key := range NotYetTable {
		name, client, scoped := strings.Cut(key, "@")
		require.True(t, seen[name], "NotYetTable names unknown scenario %s", key)
		if scoped {
			s, _ := Lookup(name)
			require.Contains(t, Clients, Client(client), key)
			require.True(t, s.Supports(Client(client)), "%s: client does not run it", key)
		}
	}
	// The lookup rules, on a sample ledger.
	saved := NotYetTable
	t.Cleanup(func() { NotYetTable = saved })
	NotYetTable = map[string]string{"send_push@java-4.9.8": "broker: sample broker bug"}
	_, ok := NotYetFor("send_push", Java49, true, false)
	require.True(t, ok)
	_, ok = NotYetFor("send_push", Java49, false, true)
	require.False(t, ok, "a broker bug does not apply to our name server + Java broker")
	_, ok = NotYetFor("send_push", Java5, true, true)
	require.False(t, ok)
	s, found := Lookup("send_push")
	require.True(t, found)
	require.True(t, s.Supports(GoV2) && s.Supports(Java5))
	s, _ = Lookup("query")
	require.False(t, s.Supports(GoV2))
}

func TestMarkdown(t *testing.T) {
	md := Markdown([]Result{
		{Scenario: "send_push", Client: GoV2, Server: "java", Status: Pass},
		{Scenario: "send_push", Client: Java5, Server: "java", Status: Fail, Detail: "boom\nline two"},
		{Scenario: "query", Client: GoV2, Server: "java", Status: NA},
		{Scenario: "timer", Client: GoV2, Server: "java", Status: Pass, Detail: "lateness min/p50/max +1/+2/+3 ms (n=3)"},
	}, []string{"java"})
	require.Contains(t, md, "### server: java")
	require.Contains(t, md, "| send_push | pass | | | FAIL |")
	require.Contains(t, md, "| query | n/a |")
	require.Contains(t, md, "- java / send_push / java-5: boom line two")
	require.Contains(t, md, "- java / timer / go-v2: lateness min/p50/max +1/+2/+3 ms (n=3)")
	for name, reason := range NotYetTable {
		require.True(t, strings.Contains(md, "| "+name+" | "+reason+" |"), name)
	}
}

// TestMarkdownJava54Column: the opt-in java-5.4.0 client gets its own
// column, after java-5, when it has results; without results the table
// keeps the default columns.
func TestMarkdownJava54Column(t *testing.T) {
	md := Markdown([]Result{
		{Scenario: "send_push", Client: GoV2, Server: "java-5.4.0", Status: Pass},
		{Scenario: "send_push", Client: Java5, Server: "java-5.4.0", Status: Pass},
		{Scenario: "send_push", Client: Java54, Server: "java-5.4.0", Status: Fail, Detail: "x"},
		{Scenario: "pull", Client: Java54, Server: "java-5.4.0", Status: Pass},
	}, []string{"java-5.4.0"})
	require.Contains(t, md, "| scenario | go-v2 | java-4.9.8 | java-4.9.3 | java-5 | java-5.4.0 |\n|---|---|---|---|---|---|\n")
	require.Contains(t, md, "| send_push | pass | | | pass | FAIL |")
	require.Contains(t, md, "| pull | | | | | pass |")
	plain := Markdown([]Result{{Scenario: "pull", Client: GoV2, Server: "ours", Status: Pass}}, []string{"ours"})
	require.NotContains(t, plain, "java-5.4.0 |")
}
