package grpcsdk

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// Markdown renders the results as GRPC-MATRIX.md: one table per server
// kind (scenario rows × SDK columns), every non-pass cell's reason, then
// the notes (what the SDKs do differently, found against the reference).
func Markdown(scs []Scenario, results []Result, kindNotes, notes []string) string {
	var b strings.Builder
	b.WriteString("# gRPC SDK conformance matrix\n\n")
	b.WriteString("Written by `make -C conformance grpc-matrix` (conformance/grpc_test.go TestGRPC, ")
	fmt.Fprintf(&b, "%s). Official RocketMQ 5 gRPC SDKs × scenarios × server kinds:\n\n", time.Now().UTC().Format("2006-01-02"))
	b.WriteString("- `java`: Java 5.3.3 name server + broker + Apache's rocketmq-proxy 5.3.3 (cluster mode): the reference.\n")
	b.WriteString("- `ours-behind-java-proxy`: our `mqnamesrv` + `mqbroker` + Apache's proxy 5.3.3 (issue #21 item 2).\n")
	b.WriteString("- `native`: `rocketgo` with its own gRPC endpoint; `mqproxy`: our `cmd/mqproxy` + Java 5.3.3 name server + broker.\n\n")
	b.WriteString("SDKs: `java-5.0.8` org.apache.rocketmq:rocketmq-client-java 5.0.8 (Maven, conformance/javagrpc); ")
	b.WriteString("`python-5.1.2` rocketmq-python-client 5.1.2 (PyPI) and `nodejs-1.0.8` rocketmq-client-nodejs 1.0.8 (npm), ")
	b.WriteString("installed by scripts/grpcsdk.sh into conformance/.cache/grpc-sdk; `go`: the Go gRPC SDK ")
	b.WriteString("(github.com/apache/rocketmq-clients/golang) is not served by this machine's module proxy, so its column is skip.\n\n")
	if len(kindNotes) > 0 {
		b.WriteString("Server kinds that did not run:\n\n")
		for _, n := range kindNotes {
			b.WriteString("- " + n + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("Scenarios:\n\n")
	for _, s := range scs {
		fmt.Fprintf(&b, "- `%s`: %s\n", s.Name, s.What)
	}
	b.WriteString("\n")
	cell := map[[3]string]Result{}
	var servers []string
	seenServer := map[string]bool{}
	var sdks []SDK
	seenSDK := map[SDK]bool{}
	for _, r := range results {
		cell[[3]string{r.Server, r.Scenario, string(r.SDK)}] = r
		if !seenServer[r.Server] {
			seenServer[r.Server] = true
			servers = append(servers, r.Server)
		}
		if !seenSDK[r.SDK] {
			seenSDK[r.SDK] = true
			sdks = append(sdks, r.SDK)
		}
	}
	sort.SliceStable(sdks, func(i, j int) bool { return sdkRank(sdks[i]) < sdkRank(sdks[j]) })
	// Reasons, one line per (SDK, server, status, detail): a skipped SDK or
	// a not-yet server says why once for all its cells.
	type reasonKey struct {
		sdk      SDK
		srv, why string
		st       scenario.Status
	}
	var order []reasonKey
	cells := map[reasonKey][]string{}
	for _, srv := range servers {
		fmt.Fprintf(&b, "## %s\n\n| scenario |", srv)
		for _, s := range sdks {
			fmt.Fprintf(&b, " %s |", s)
		}
		b.WriteString("\n|---|")
		for range sdks {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, sc := range scs {
			fmt.Fprintf(&b, "| %s |", sc.Name)
			for _, s := range sdks {
				r, ok := cell[[3]string{srv, sc.Name, string(s)}]
				if !ok {
					b.WriteString(" – |")
					continue
				}
				fmt.Fprintf(&b, " %s |", r.Status)
				if r.Status != scenario.Pass && r.Detail != "" {
					k := reasonKey{sdk: s, srv: srv, why: r.Detail, st: r.Status}
					if _, ok := cells[k]; !ok {
						order = append(order, k)
					}
					cells[k] = append(cells[k], sc.Name)
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(order) > 0 {
		b.WriteString("## Reasons (every cell that is not pass)\n\n")
		for _, k := range order {
			names := strings.Join(cells[k], ", ")
			if len(cells[k]) == len(scs) && len(scs) > 1 {
				names = "every scenario"
			}
			fmt.Fprintf(&b, "- %s × %s × %s: **%s** %s\n", names, k.sdk, k.srv, k.st, mdEscape(k.why))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

func sdkRank(s SDK) int {
	for i, x := range SDKs {
		if x == s {
			return i
		}
	}
	return len(SDKs)
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
