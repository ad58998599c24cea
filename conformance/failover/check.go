package failover

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Result is one run of one fault.
type Result struct {
	Set      string // ours or java
	Fault    string
	Run      int
	Acked    int // SEND_OK
	Failed   int // sends that ended in an error or another status
	Lost     int // SEND_OK keys absent from the final master's log
	DupStore int // keys stored more than once (client retries)
	DupDeliv int // keys delivered more than once to the consumer
	Undeliv  int // stored keys the consumer never got
	// Recovery: fault to the end of the first SEND_OK send that started
	// after the fault (on the new master when the master changed).
	Recovery time.Duration
	// ServerRecovery: fault to the first raw SEND_MESSAGE acknowledged by
	// the master the controller names (the new one when it changes).
	ServerRecovery time.Duration
	OldMaster      string
	NewMaster      string
	Epochs         string // final master's epochs
	SplitEpochs    []int  // epochs whose records carry two store hosts
	StaleAcks      int    // SEND_OK whose offset holds another host's record in the final log
	// StaleWindowAcks: SEND_OK of the old master after the new one took a write.
	StaleWindowAcks int
	Err             string // the run did not complete
	LostExamples    []string
}

// SplitBrain says whether two brokers accepted writes in one epoch.
func (r Result) SplitBrain() bool {
	return len(r.SplitEpochs) > 0 || r.StaleAcks > 0 || r.StaleWindowAcks > 0
}

// epochOf finds the epoch whose range holds off (the last entry whose
// start is ≤ off).
func epochOf(list []EpochEntry, off int64) int {
	e := -1
	for _, x := range list {
		if x.StartOffset <= off {
			e = x.Epoch
		}
	}
	return e
}

// Check fills the counts of r from the acks, the deliveries, the final
// master's records and its epoch cache.
//
// When the master changed (newMaster set), every SEND_OK of oldMaster
// that started after the new master's first SEND_OK counts in
// StaleWindowAcks: two masters took writes at the same time.
func Check(r *Result, acks []Ack, got []Delivery, stored []Stored, cache EpochCache, fault time.Time, oldMaster, newMaster string) {
	storedKeys := map[string]int{}
	atOffset := map[int64]string{}
	hosts := map[int]map[string]bool{}
	add := func(epoch int, host string) {
		if hosts[epoch] == nil {
			hosts[epoch] = map[string]bool{}
		}
		hosts[epoch][host] = true
	}
	for _, s := range stored {
		storedKeys[s.Key]++
		atOffset[s.PhyOffset] = s.Host
		add(epochOf(cache.EpochList, s.PhyOffset), s.Host)
	}
	for _, n := range storedKeys {
		if n > 1 {
			r.DupStore++
		}
	}
	var first time.Time
	for _, a := range acks {
		if !a.OK {
			r.Failed++
			continue
		}
		r.Acked++
		if storedKeys[a.Key] == 0 {
			r.Lost++
			if len(r.LostExamples) < 5 {
				r.LostExamples = append(r.LostExamples, fmt.Sprintf("%s@%s/%d", a.Key, a.Host, a.PhyOffset))
			}
		}
		if h, ok := atOffset[a.PhyOffset]; ok && h != a.Host {
			r.StaleAcks++
		}
		probe := strings.Contains(a.Key, "-probe-") || strings.Contains(a.Key, "-old-")
		if !probe && a.Start.After(fault) && (newMaster == "" || a.Host == newMaster) && (first.IsZero() || a.End.Before(first)) {
			first = a.End
		}
	}
	if !first.IsZero() {
		r.Recovery = first.Sub(fault)
	}
	if newMaster != "" {
		var newFirst time.Time
		for _, a := range acks {
			if a.OK && a.Host == newMaster && a.Start.After(fault) && (newFirst.IsZero() || a.Start.Before(newFirst)) {
				newFirst = a.Start
			}
		}
		for _, a := range acks {
			if !newFirst.IsZero() && a.OK && a.Host == oldMaster && a.Start.After(newFirst) {
				r.StaleWindowAcks++
			}
		}
	}
	delivered := map[string]int{}
	for _, g := range got {
		delivered[g.Key]++
	}
	for k, n := range delivered {
		if n > 1 {
			r.DupDeliv++
		}
		_ = k
	}
	for k := range storedKeys {
		if delivered[k] == 0 {
			r.Undeliv++
		}
	}
	for e, hs := range hosts {
		if len(hs) > 1 {
			r.SplitEpochs = append(r.SplitEpochs, e)
		}
	}
	sort.Ints(r.SplitEpochs)
	var eps []string
	for _, x := range cache.EpochList {
		eps = append(eps, fmt.Sprintf("%d@%d", x.Epoch, x.StartOffset))
	}
	r.Epochs = strings.Join(eps, " ")
}

// Table renders results as markdown.
func Table(rs []Result) string {
	var sb strings.Builder
	sb.WriteString("| set | fault | run | acked | failed sends | lost | dup stored | dup delivered | undelivered | failover (raw send) | failover (Go client) | split brain | old → new master | epochs (final master) | error |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		split := "no"
		if r.SplitBrain() {
			split = fmt.Sprintf("**YES** epochs %v, stale acks %d, old master acks after the new one's first %d", r.SplitEpochs, r.StaleAcks, r.StaleWindowAcks)
		}
		rec := "—"
		if r.Recovery > 0 {
			rec = r.Recovery.Round(time.Millisecond).String()
		}
		srec := "—"
		if r.ServerRecovery > 0 {
			srec = r.ServerRecovery.Round(time.Millisecond).String()
		}
		lost := fmt.Sprint(r.Lost)
		if r.Lost > 0 {
			lost = fmt.Sprintf("**%d** %v", r.Lost, r.LostExamples)
		}
		fmt.Fprintf(&sb, "| %s | %s | %d | %d | %d | %s | %d | %d | %d | %s | %s | %s | %s → %s | %s | %s |\n",
			r.Set, r.Fault, r.Run, r.Acked, r.Failed, lost, r.DupStore, r.DupDeliv, r.Undeliv, srec, rec, split,
			r.OldMaster, r.NewMaster, r.Epochs, strings.ReplaceAll(r.Err, "|", "/"))
	}
	return sb.String()
}
