package failover

import (
	"fmt"
	"sort"
	"strconv"
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
	DupDeliv int // keys delivered more than once to one consumer, summed over the consumers
	Undeliv  int // stored keys a consumer never got, summed over the consumers
	// ByClient splits the counts above by Ack.Client / Delivery.Client
	// (go, java, raw; raw has no consumer).
	ByClient map[string]ClientCounts
	// Recovery: fault to the end of the Go client's first SEND_OK send
	// that started after the fault (on the new master when the master
	// changed). JavaRecovery, GRPCRecovery: the same of the Java client's
	// and of the gRPC client's sends.
	Recovery     time.Duration
	JavaRecovery time.Duration
	GRPCRecovery time.Duration
	// ServerRecovery: fault to the first raw SEND_MESSAGE acknowledged by
	// the master the controller names (the new one when it changes).
	ServerRecovery time.Duration
	OldMaster      string
	NewMaster      string
	Epochs         string // final master's epochs
	SplitEpochs    []int  // epochs whose records carry two store hosts
	StaleAcks      int    // SEND_OK whose offset holds another host's record in the final log
	// StaleWindowAcks: SEND_OK of the old master for sends started after
	// the new one had answered a write.
	StaleWindowAcks int
	Err             string // the run did not complete
	LostExamples    []string
}

// ClientCounts are one client's share of a Result.
type ClientCounts struct {
	Acked, Failed     int
	DupDeliv, Undeliv int // of its consumer
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
	placeGRPCAcks(acks, stored)
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
	r.ByClient = map[string]ClientCounts{}
	consumers := map[string]bool{}
	first := map[string]time.Time{} // per client: end of its first SEND_OK after the fault
	for _, a := range acks {
		c := clientOf(a.Client)
		if strings.Contains(a.Key, "-probe-") || strings.Contains(a.Key, "-old-") {
			c = ClientRaw // probes of callers that do not set Client
		}
		cc := r.ByClient[c]
		if c != ClientRaw {
			consumers[c] = true
		}
		if !a.OK {
			r.Failed++
			cc.Failed++
			r.ByClient[c] = cc
			continue
		}
		r.Acked++
		cc.Acked++
		r.ByClient[c] = cc
		if storedKeys[a.Key] == 0 {
			r.Lost++
			if len(r.LostExamples) < 5 {
				r.LostExamples = append(r.LostExamples, fmt.Sprintf("%s@%s/%d", a.Key, a.Host, a.PhyOffset))
			}
		}
		if h, ok := atOffset[a.PhyOffset]; ok && a.Host != "" && h != a.Host { // an ack without a host (a lost gRPC ack) has no offset
			r.StaleAcks++
		}
		if c != ClientRaw && a.Start.After(fault) && (newMaster == "" || a.Host == newMaster) && (first[c].IsZero() || a.End.Before(first[c])) {
			first[c] = a.End
		}
	}
	if t := first[ClientGo]; !t.IsZero() {
		r.Recovery = t.Sub(fault)
	}
	if t := first[ClientJava]; !t.IsZero() {
		r.JavaRecovery = t.Sub(fault)
	}
	if t := first[ClientGRPC]; !t.IsZero() {
		r.GRPCRecovery = t.Sub(fault)
	}
	if newMaster != "" {
		// newFirst: when the new master had answered its first write. A
		// send's start is no measure of that: a send started while the new
		// master was still a slave may be retried until it answers, while
		// the old master goes on answering sends started later but written
		// before the election (they are in the new master's log: not lost).
		var newFirst time.Time
		for _, a := range acks {
			if a.OK && a.Host == newMaster && a.Start.After(fault) && (newFirst.IsZero() || a.End.Before(newFirst)) {
				newFirst = a.End
			}
		}
		for _, a := range acks {
			if !newFirst.IsZero() && a.OK && a.Host == oldMaster && a.Start.After(newFirst) {
				r.StaleWindowAcks++
			}
		}
	}
	// Each consumer (one group per client) should get every stored key once.
	delivered := map[string]map[string]int{}
	for _, g := range got {
		c := clientOf(g.Client)
		consumers[c] = true
		if delivered[c] == nil {
			delivered[c] = map[string]int{}
		}
		delivered[c][g.Key]++
	}
	for c := range consumers {
		cc := r.ByClient[c]
		for _, n := range delivered[c] {
			if n > 1 {
				cc.DupDeliv++
			}
		}
		for k := range storedKeys {
			if delivered[c][k] == 0 {
				cc.Undeliv++
			}
		}
		r.DupDeliv += cc.DupDeliv
		r.Undeliv += cc.Undeliv
		r.ByClient[c] = cc
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

// Table renders results as markdown. Acked and failed sends are split
// go/java/grpc/raw (raw: the SEND_MESSAGE probes), duplicate and missing
// deliveries go/java/grpc (one consumer group per client); "—" is a client
// that did not run.
func Table(rs []Result) string {
	var sb strings.Builder
	sb.WriteString("| set | fault | run | acked go/java/grpc/raw | failed sends go/java/grpc/raw | lost | dup stored | dup delivered go/java/grpc | undelivered go/java/grpc | failover (raw send) | failover (Go client) | failover (Java client) | failover (gRPC client) | split brain | old → new master | epochs (final master) | error |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		split := "no"
		if r.SplitBrain() {
			split = fmt.Sprintf("**YES** epochs %v, stale acks %d, old master acks after the new one's first %d", r.SplitEpochs, r.StaleAcks, r.StaleWindowAcks)
		}
		lost := fmt.Sprint(r.Lost)
		if r.Lost > 0 {
			lost = fmt.Sprintf("**%d** %v", r.Lost, r.LostExamples)
		}
		fmt.Fprintf(&sb, "| %s | %s | %d | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s → %s | %s | %s |\n",
			r.Set, r.Fault, r.Run,
			r.split(func(c ClientCounts) int { return c.Acked }, ClientGo, ClientJava, ClientGRPC, ClientRaw),
			r.split(func(c ClientCounts) int { return c.Failed }, ClientGo, ClientJava, ClientGRPC, ClientRaw),
			lost, r.DupStore,
			r.split(func(c ClientCounts) int { return c.DupDeliv }, ClientGo, ClientJava, ClientGRPC),
			r.split(func(c ClientCounts) int { return c.Undeliv }, ClientGo, ClientJava, ClientGRPC),
			dur(r.ServerRecovery), dur(r.Recovery), r.clientDur(ClientJava, r.JavaRecovery), r.clientDur(ClientGRPC, r.GRPCRecovery), split,
			r.OldMaster, r.NewMaster, r.Epochs, strings.ReplaceAll(r.Err, "|", "/"))
	}
	return sb.String()
}

// split is one count of each client joined by "/", "—" for a client
// without a share (go and raw always have one).
func (r Result) split(of func(ClientCounts) int, clients ...string) string {
	parts := make([]string, len(clients))
	for i, c := range clients {
		cc, ok := r.ByClient[c]
		switch {
		case ok:
			parts[i] = strconv.Itoa(of(cc))
		case c == ClientJava || c == ClientGRPC:
			parts[i] = "—"
		default:
			parts[i] = "0"
		}
	}
	return strings.Join(parts, "/")
}

// clientDur is dur, or "no Java load" / "no gRPC load" when that client
// did not run.
func (r Result) clientDur(client string, d time.Duration) string {
	if _, ok := r.ByClient[client]; !ok && r.ByClient != nil {
		if client == ClientGRPC {
			return "no gRPC load"
		}
		return "no Java load"
	}
	return dur(d)
}

func dur(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return d.Round(time.Millisecond).String()
}
