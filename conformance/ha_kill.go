package conformance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// haKillScenarios are the replication scenarios that kill a broker under
// client load (consume from the slave, SYNC_MASTER with inSyncReplicas=2).
var haKillScenarios = []HAScenario{
	{
		Name: "repl_consume_slave",
		Desc: "slaveReadEnable=true: 2,000 keyed messages, a group consumes about half and commits; once the slave has the data " +
			"and the group's offsets (its 10 s sync), kill -9 the master; a new consumer of the group continues on the slave: " +
			"every key delivered, nothing below the committed offsets redelivered (go-v2: the Go push consumer cannot start " +
			"without a master, its offset store asks only the master; the Go pull consumer reads the slave from the offsets the slave holds)",
		Clients: scenario.ReplicationClients,
		Options: func(harness.PairKind) harness.PairOptions {
			return harness.PairOptions{Both: []string{"slaveReadEnable=true"}}
		},
		Run:     replConsumeSlave,
		Timeout: 5 * time.Minute,
	},
	{
		Name: "repl_sync_kill",
		Desc: "SYNC_MASTER, totalReplicas=2, inSyncReplicas=2: sync sends with unique keys from 8 senders, kill -9 of the master " +
			"after 800 SEND_OK; every key acknowledged SEND_OK is in the slave's queues (0 lost)",
		Clients: scenario.ReplicationClients,
		Options: syncKillOptions,
		Run:     replSyncKill,
		Timeout: 3 * time.Minute,
	},
	{
		Name: "repl_sync_kill_loop",
		Desc: "repl_sync_kill five times: kill -9 the SYNC_MASTER under load, restart it on its store, wait until the slave " +
			"acknowledges again, load again; 0 acknowledged-then-lost over all rounds",
		Clients: scenario.ReplicationClients,
		Options: syncKillOptions,
		Run:     replSyncKillLoop,
		Timeout: 10 * time.Minute,
		Long:    true,
	},
}

const (
	killQueues  = 4
	killThreads = 8
)

func syncKillOptions(harness.PairKind) harness.PairOptions {
	return harness.PairOptions{
		Both:   []string{"slaveReadEnable=true", "totalReplicas=2", "inSyncReplicas=2"},
		Master: []string{"brokerRole=SYNC_MASTER"},
	}
}

// replConsumeSlave: consumers keep consuming from the slave after the
// master's kill -9, from the committed offsets.
func replConsumeSlave(ctx context.Context, h *HARun) error {
	const n = 2000
	p, cl := h.Pair, haClient{h}
	topic, group := h.Name("cs"), h.Name("cs_c")
	if err := p.Master.CreateTopicOn(ctx, topic, killQueues); err != nil {
		return err
	}
	sends := newSendBook()
	if err := cl.produce(ctx, topic, "cs", n, 4, 90*time.Second, sends.add); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	// A busy broker (Java's TIMEOUT_CLEAN_QUEUE on a loaded machine) may
	// refuse a few: the acknowledged keys are the ones to find again.
	acked := sends.okKeys()
	if len(acked) < n*9/10 {
		return fmt.Errorf("produce: %d of %d keys acknowledged SEND_OK; others: %s", len(acked), n, sends.others())
	}
	var ends map[int]int64
	err := waitFor(ctx, 10*time.Second, "master's queues hold every acknowledged message", func() error {
		var err error
		if ends, err = maxOffsets(ctx, p.Master.Addr, topic, killQueues); err != nil {
			return err
		}
		if int(offsetSum(ends)) < len(acked) {
			return fmt.Errorf("queue ends %s, %d acknowledged", offsetString(ends), len(acked))
		}
		return nil
	})
	if err != nil {
		return err
	}
	stored := int(offsetSum(ends)) // a failed send may be stored too

	// Phase 1 on the master: about half, committed on shutdown.
	got := newGotBook()
	if err := cl.consume(ctx, topic, group, "c1", n/2, 500, false, 90*time.Second, got.add); err != nil {
		return fmt.Errorf("consumer on the master: %w", err)
	}
	first := distinctKeys(got.phase("c1"))
	committed, err := stableOffsets(ctx, p.Master.Addr, group, topic, killQueues, time.Second, 20*time.Second)
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	commitAt := time.Now()
	if c := offsetSum(committed); c > int64(len(first)) {
		return fmt.Errorf("master: group committed %d (%s) but only %d keys were delivered", c, offsetString(committed), len(first))
	}

	// The slave has the data, the topic and the group's offsets.
	if _, err := p.WaitCaughtUp(ctx, 60*time.Second); err != nil {
		return err
	}
	// Java 5.3.3's slave syncs its metadata a minute after start and then
	// every minute (BrokerController: lastSyncTimeMs, 60 * 1000): up to two
	// periods, for a commit that just missed one.
	if _, err := waitTopic(ctx, p.Slave.Addr, topic, 130*time.Second); err != nil {
		return err
	}
	if _, err := waitOffsets(ctx, p.Slave.Addr, group, topic, committed, 130*time.Second); err != nil {
		return err
	}
	syncWait := time.Since(commitAt)
	slaveOff := committed

	p.Master.Kill()
	killed := time.Now()

	// Phase 2 on the slave: a new client instance of the same group.
	rest := stored - int(offsetSum(slaveOff))
	how := ""
	if cl.isGo() {
		// Shown, not asserted: the Go push consumer reads its start offsets
		// from the master only (remoteBrokerOffsetStore → FindBrokerAddrByName).
		probe, perr := goclient.HAPushProbe(ctx, p.NamesrvAddr, topic, group, h.Name("probe"), 5*time.Second)
		if perr != nil {
			how = fmt.Sprintf("go push consumer on the slave-only route: %v; ", perr)
		} else {
			how = fmt.Sprintf("go push consumer on the slave-only route delivered %d in 5 s; ", probe)
		}
		slaveEnds, err := maxOffsets(ctx, p.Slave.Addr, topic, killQueues)
		if err != nil {
			return fmt.Errorf("slave: %w", err)
		}
		if !offsetsEqual(slaveEnds, ends) {
			return fmt.Errorf("slave queue ends %s, the master's were %s", offsetString(slaveEnds), offsetString(ends))
		}
		killed = time.Now() // the probe is not the resume time
		how += "go pull consumer (PullFrom falls back to the slave) from the slave's committed offsets (raw QUERY_CONSUMER_OFFSET)"
		err = goclient.HAPullQueues(ctx, p.NamesrvAddr, topic, group, h.Name("c2"), slaveOff, slaveEnds, func(g goclient.Got) {
			g.Phase = "c2"
			got.add(g)
		})
		if err != nil {
			return fmt.Errorf("go pull consumer on the slave: %w", err)
		}
	} else {
		how = string(h.Client) + " push consumer (new JVM; its start-up is in the resume time) on the slave"
		if err := cl.consume(ctx, topic, group, "c2", rest, 0, true, 90*time.Second, got.add); err != nil {
			return fmt.Errorf("consumer on the slave: %w", err)
		}
	}
	second := got.phase("c2")
	resumed := time.Duration(0)
	if t, ok := got.firstAt("c2"); ok {
		resumed = t.Sub(killed)
	}

	// Every key delivered by one of the two; nothing below the slave's
	// committed offsets redelivered.
	union := distinctKeys(got.phase("c1"))
	for k, v := range distinctKeys(second) {
		union[k] += v
	}
	var missing []string
	for k := range acked {
		if union[k] == 0 {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	var below []string
	dupFirst := 0
	for _, g := range second {
		if g.QueueOffset < slaveOff[g.QueueID] {
			below = append(below, fmt.Sprintf("%s(q%d@%d)", g.Key, g.QueueID, g.QueueOffset))
		}
		if first[g.Key] > 0 {
			dupFirst++
		}
	}
	bound := len(first) - int(offsetSum(slaveOff))
	h.Note("%s; acked %d of %d (stored %d); before the kill %d delivered, committed %d (%s), slave had them %.1fs after commit; "+
		"after the kill %d delivered, %d of them already delivered before (bound %d), first delivery %.1fs after the kill",
		how, len(acked), n, stored, len(first), offsetSum(slaveOff), offsetString(slaveOff), syncWait.Seconds(),
		len(second), dupFirst, bound, resumed.Seconds())
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("%d of %d acknowledged keys never delivered: %s", len(missing), len(acked), lostString(missing, acked)))
	}
	if len(below) > 0 {
		if len(below) > 10 {
			below = append(below[:10], "…")
		}
		errs = append(errs, fmt.Errorf("the consumer on the slave redelivered %d messages below the committed offsets (%s): %s",
			len(below), offsetString(slaveOff), strings.Join(below, " ")))
	}
	if dupFirst > bound {
		errs = append(errs, fmt.Errorf("%d redeliveries of keys consumed before the kill, more than the %d delivered but not committed", dupFirst, bound))
	}
	return errors.Join(errs...)
}

// killRound is one load + kill of the SYNC_MASTER.
type killRound struct {
	sends    *sendBook
	killedAt int // SEND_OK count when the master was killed
	// The harness's probe sends (keys <prefix>-probe-<try>) until one is
	// answered SEND_OK: refused ones count as failed sends.
	probeKey string // the acknowledged probe
	refused  int    // probe answers before it
	refusal  string // the first refused answer
}

// acked is the round's acknowledged keys, the harness's probe included.
func (r killRound) acked() map[string]goclient.Sent {
	m := r.sends.okKeys()
	m[r.probeKey] = goclient.Sent{Key: r.probeKey, MsgID: "probe", QueueOffset: -1, Status: "SEND_OK"}
	return m
}

// probeNote describes the probe when it was refused first.
func (r killRound) probeNote() string {
	if r.refused == 0 {
		return ""
	}
	return fmt.Sprintf(" (probe refused %d× first: %s)", r.refused, r.refusal)
}

// syncKillRound waits until a SYNC_MASTER send succeeds (the slave is
// connected and acknowledging; that probe message must be on the slave
// too), loads topic with count sync sends from killThreads senders and
// kills -9 the master after killAfter SEND_OK.
func syncKillRound(ctx context.Context, h *HARun, topic, keyPrefix string, killAfter, count int) (killRound, error) {
	p, cl := h.Pair, haClient{h}
	r := killRound{sends: newSendBook()}
	try := 0
	err := waitFor(ctx, 60*time.Second, "a SYNC_MASTER send answered SEND_OK", func() error {
		try++
		key := fmt.Sprintf("%s-probe-%d", keyPrefix, try)
		code, remark, err := p.Master.Send(ctx, topic, 0, key, []byte("probe "+key))
		if err != nil {
			r.sends.add(goclient.Sent{Key: key, Err: err})
			return err
		}
		if code != 0 {
			r.refused++
			if r.refusal == "" {
				r.refusal = fmt.Sprintf("code %d %q", code, remark)
			}
			r.sends.add(goclient.Sent{Key: key, Status: fmt.Sprintf("probe_code_%d", code)})
			return fmt.Errorf("code %d %q", code, remark)
		}
		r.probeKey = key
		return nil
	})
	if err != nil {
		return r, err
	}

	loadCtx, stop := context.WithCancel(ctx)
	defer stop()
	ended := make(chan struct{})
	var loadErr error
	go func() {
		defer close(ended)
		loadErr = cl.produce(loadCtx, topic, keyPrefix, count, killThreads, 90*time.Second, r.sends.add)
	}()
	if !r.sends.waitAcked(ctx, killAfter, ended) {
		stop()
		<-ended
		return r, fmt.Errorf("load: %d SEND_OK, wanted %d before the kill; others: %s; producer: %v",
			r.sends.acked(), killAfter, r.sends.others(), loadErr)
	}
	p.Master.Kill()
	r.killedAt = r.sends.acked()
	// Let the senders see the kill (answers already on the wire still
	// arrive), then stop them: bounded by their errors or 8 s.
	errsAtKill := r.sends.errors()
	_ = waitFor(ctx, 8*time.Second, "senders see the kill", func() error {
		select {
		case <-ended:
			return nil
		default:
		}
		if r.sends.errors()-errsAtKill >= 2*killThreads {
			return nil
		}
		return errors.New("still sending")
	})
	stop()
	<-ended // a producer ended by the kill or by stop reports errors by design
	return r, nil
}

// replSyncKill: every message acknowledged SEND_OK by a SYNC_MASTER with
// inSyncReplicas=2 is on the slave after the master's kill -9.
func replSyncKill(ctx context.Context, h *HARun) error {
	p := h.Pair
	topic := h.Name("sk")
	if err := p.Master.CreateTopicOn(ctx, topic, killQueues); err != nil {
		return err
	}
	start := time.Now()
	r, err := syncKillRound(ctx, h, topic, "sk", 800, 20000)
	if err != nil {
		return err
	}
	acked := r.acked()
	c, err := checkStored(ctx, p.Slave.Addr, topic, acked, r.sends.failedKeys(), 20*time.Second)
	if err != nil {
		return err
	}
	h.Note("acked %d (killed at %d), lost %d, duplicates %d, failed but stored %d, other outcomes: %s%s; %.1fs",
		r.sends.acked(), r.killedAt, len(c.Lost), c.Duplicates, c.Unacked, r.sends.others(), r.probeNote(), time.Since(start).Seconds())
	if len(c.Lost) > 0 {
		return fmt.Errorf("%d acknowledged messages not on the slave: %s", len(c.Lost), lostString(c.Lost, acked))
	}
	return nil
}

// replSyncKillLoop: five kill -9 / restart rounds of the SYNC_MASTER.
func replSyncKillLoop(ctx context.Context, h *HARun) error {
	const rounds = 5
	p := h.Pair
	topic := h.Name("skl")
	if err := p.Master.CreateTopicOn(ctx, topic, killQueues); err != nil {
		return err
	}
	all := map[string]goclient.Sent{}
	var per []string
	acks := 0
	for i := range rounds {
		if i > 0 {
			restarted := time.Now()
			if err := p.Master.Start(ctx); err != nil {
				return fmt.Errorf("round %d: restart the master: %w", i+1, err)
			}
			per = append(per, fmt.Sprintf("restart %.1fs", time.Since(restarted).Seconds()))
		}
		prefix := fmt.Sprintf("r%d", i+1)
		r, err := syncKillRound(ctx, h, topic, prefix, 400, 10000)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		for k, v := range r.acked() {
			all[k] = v
		}
		acks += r.sends.acked()
		// Every round checks everything acknowledged so far: a restart must
		// not take back what the slave had.
		c, err := checkStored(ctx, p.Slave.Addr, topic, all, r.sends.failedKeys(), 20*time.Second)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		per = append(per, fmt.Sprintf("round %d: acked %d, lost %d, dup %d, failed but stored %d, others %s%s",
			i+1, r.sends.acked(), len(c.Lost), c.Duplicates, c.Unacked, r.sends.counts(), r.probeNote()))
		if len(c.Lost) > 0 {
			h.Note("%s", strings.Join(per, "; "))
			return fmt.Errorf("round %d: %d acknowledged messages not on the slave: %s", i+1, len(c.Lost), lostString(c.Lost, all))
		}
	}
	h.Note("%d rounds, acked %d, lost 0; %s", rounds, acks, strings.Join(per, "; "))
	return nil
}
