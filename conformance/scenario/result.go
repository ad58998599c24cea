package scenario

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Status is the outcome of one scenario × client × server cell.
type Status string

// Cell outcomes.
const (
	Pass   Status = "pass"
	Fail   Status = "FAIL"
	NotYet Status = "not-yet" // feature not built in our server (see NotYetTable)
	NA     Status = "n/a"     // client has no such feature
	Skip   Status = "skip"    // tool missing on this machine (java/mvn), with a reason
)

// Result is one cell of the matrix.
type Result struct {
	Scenario string
	Client   Client
	Server   string
	Status   Status
	Detail   string
	Elapsed  time.Duration
}

// Line renders a result as one log line.
func (r Result) Line() string {
	s := fmt.Sprintf("%-8s %-14s %-11s %-12s %6.1fs", r.Status, r.Scenario, r.Client, r.Server, r.Elapsed.Seconds())
	if r.Detail != "" {
		s += "  " + r.Detail
	}
	return s
}

// columns are the client columns of a table: every client of Clients,
// then each opt-in client (MatrixClients: java-5.4.0) that has a result.
func columns(results []Result) []Client {
	has := map[Client]bool{}
	for _, r := range results {
		has[r.Client] = true
	}
	cols := append([]Client{}, Clients...)
	for _, c := range MatrixClients {
		if has[c] && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	return cols
}

// hasRow reports whether any client of cols has a result for scenario name
// on srv.
func hasRow(cell map[[3]string]Result, cols []Client, srv, name string) bool {
	for _, c := range cols {
		if _, ok := cell[[3]string{srv, name, string(c)}]; ok {
			return true
		}
	}
	return false
}

// Markdown renders results as one table per server kind, scenarios as rows
// and clients as columns.
func Markdown(results []Result, servers []string) string {
	cell := map[[3]string]Result{}
	for _, r := range results {
		cell[[3]string{r.Server, r.Scenario, string(r.Client)}] = r
	}
	cols := columns(results)
	var b strings.Builder
	for _, srv := range servers {
		fmt.Fprintf(&b, "\n### server: %s\n\n| scenario |", srv)
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", c)
		}
		b.WriteString("\n|---|")
		for range cols {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, s := range Table {
			if !hasRow(cell, cols, srv, s.Name) {
				continue // not run against srv (a partial matrix)
			}
			fmt.Fprintf(&b, "| %s |", s.Name)
			for _, c := range cols {
				r, ok := cell[[3]string{srv, s.Name, string(c)}]
				if !ok {
					b.WriteString(" |")
					continue
				}
				fmt.Fprintf(&b, " %s |", r.Status)
			}
			b.WriteString("\n")
		}
	}
	var notes []string
	for _, r := range results {
		if (r.Status == Fail || r.Status == Skip) && r.Detail != "" {
			notes = append(notes, fmt.Sprintf("- %s / %s / %s: %s", r.Server, r.Scenario, r.Client, oneLine(r.Detail, 300)))
		}
	}
	if len(notes) > 0 {
		sort.Strings(notes)
		b.WriteString("\n### failures and skips\n\n" + strings.Join(notes, "\n") + "\n")
	}
	// Notes of passing cells: measured lateness, restart windows, probe rounds.
	var passNotes []string
	for _, r := range results {
		if r.Status == Pass && r.Detail != "" {
			passNotes = append(passNotes, fmt.Sprintf("- %s / %s / %s: %s", r.Server, r.Scenario, r.Client, oneLine(r.Detail, 400)))
		}
	}
	if len(passNotes) > 0 {
		sort.Strings(passNotes)
		b.WriteString("\n### notes of passing cells (lateness = consumed minus due, early = failure)\n\n" + strings.Join(passNotes, "\n") + "\n")
	}
	var ny []string
	for k, v := range NotYetTable {
		ny = append(ny, fmt.Sprintf("| %s | %s |", k, v))
	}
	sort.Strings(ny)
	b.WriteString("\n### not-yet (scenario.NotYetTable)\n\n| scenario | reason |\n|---|---|\n" + strings.Join(ny, "\n") + "\n")
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
