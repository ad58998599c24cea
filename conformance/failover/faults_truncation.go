package failover

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The log lines of a slave's truncation at its HA handshake.
const (
	// Ours (store/ha/autoswitch Client.truncate): before the cut, with the
	// consistent point and the local end.
	lineConsistentOurs = "autoswitch: truncating to the consistent point"
	// Ours (store.TruncateTo): the cut begins (only when there is one).
	lineCutOurs = "store: truncating the commit log"
	// Java (AutoSwitchHAClient.doTruncate): the consistent point, before
	// truncateFiles; "no need to truncate files" follows when nothing is cut.
	lineConsistentJava = "truncateOffset is"
	lineNoCutJava      = "no need to truncate files"
)

// Ours (store recovery): the checkpoint recorded a cut the crash
// interrupted before the segment was zeroed.
const lineFinishOurs = "store: finishing an interrupted truncation"

// The tail: tailSends raw sends to tailTopic while the master's HA link
// is down.
const (
	tailTopic = "fo_trunc_tail"
	tailSends = 8
)

// truncRound is one kill of the rejoining old master: delay after its
// truncation line (onCut: after our store's cut line, when it cuts).
type truncRound struct {
	onCut bool
	delay time.Duration
}

// truncRounds place the kills at different points of the truncation;
// each round makes a new tail (a kill at the line already lands after the
// cut began, so the next start has nothing left to cut).
var truncRounds = []truncRound{{true, 0}, {false, 0}, {false, 2 * time.Millisecond}, {false, 5 * time.Millisecond}, {false, 20 * time.Millisecond}}

var (
	reOffset   = regexp.MustCompile(`\boffset=(\d+)`)
	reLocalMax = regexp.MustCompile(`\blocalMax=(\d+)`)
	reJavaCP   = regexp.MustCompile(`truncateOffset is (\d+)`)
)

// parseTruncLine returns the consistent point of a truncation line and
// the local end it gives (-1: Java's line has none).
func parseTruncLine(java bool, line string) (cp, localMax int64) {
	num := func(re *regexp.Regexp) int64 {
		if m := re.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseInt(m[1], 10, 64)
			return v
		}
		return -1
	}
	if java {
		return num(reJavaCP), -1
	}
	return num(reOffset), num(reLocalMax)
}

// killDuringTruncation runs truncRounds; each round gives the current
// master a tail no slave has (its HA link down, a few raw sends to it: a
// send waits for the SyncStateSet's acks, so none of them may be
// acknowledged), kills it with SIGKILL while the link is down (a moment,
// well below haMaxTimeSlaveNotCatchup, so the slaves stay eligible), waits
// for the new master, restarts the old master and kills it again at the
// round's moment of its truncation on its HA handshake, then starts it
// for good, waits until every broker caught up and checks that each
// broker's commit log equals the final master's byte for byte up to its
// end and that their epoch lists agree. A round whose old master had
// nothing to cut says so in the run's error.
func killDuringTruncation(ctx context.Context, s *Set, m *Node, _ time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
	var notes []string
	var t0 time.Time
	cur, cuts := m, 0
	landings := map[string]int{}
	for i, rd := range truncRounds {
		marked := func() {}
		if i == 0 {
			marked = mark
		}
		at, next, cut, err := truncRoundRun(ctx, s, cur, i, rd, logf, marked, &notes, landings)
		if i == 0 {
			t0 = at
		}
		if err != nil {
			notes = append(notes, err.Error())
			break
		}
		if cut {
			cuts++
		}
		cur = next
	}
	logf("kill-during-truncation: where the kills landed: %v", landings)
	if cuts < len(truncRounds) {
		notes = append(notes, fmt.Sprintf("%d of %d rounds had a cut to make", cuts, len(truncRounds)))
	}
	if len(notes) > 0 {
		return t0, errors.New(strings.Join(notes, "; "))
	}
	return t0, nil
}

// truncRoundRun is one round on master x; it returns the time of the
// first kill, the new master, and whether x's truncation line showed a
// cut to make.
func truncRoundRun(ctx context.Context, s *Set, x *Node, i int, rd truncRound, logf func(string, ...any), mark func(), notes *[]string, landings map[string]int) (time.Time, *Node, bool, error) {
	mmax, t0, err := tailAndKill(ctx, s, x, mark, notes)
	if err != nil {
		return t0, nil, false, err
	}
	nm, err := namedMaster(ctx, s, x.Addr, 60*time.Second, notes)
	if err != nil {
		return t0, nil, false, fmt.Errorf("round %d: no new master after %s: %w", i, x.Name, err)
	}
	nc, err := GetEpochCache(ctx, nm.Addr)
	if err != nil || len(nc.EpochList) == 0 {
		return t0, nil, false, fmt.Errorf("round %d: epochs of the new master %s: %v %w", i, nm.Name, nc, err)
	}
	epochStart := nc.EpochList[len(nc.EpochList)-1].StartOffset
	if mmax <= epochStart {
		*notes = append(*notes, fmt.Sprintf("round %d: %s had nothing to truncate (max %d ≤ new epoch start %d)", i, x.Name, mmax, epochStart))
	}

	consistent, cutLine := lineConsistentOurs, lineCutOurs
	if x.Java {
		consistent, cutLine = lineConsistentJava, lineConsistentJava
	}
	path := x.LogPath()
	w := WatchLog(path)
	if err := x.Start(); err != nil {
		return t0, nil, false, err
	}
	line, _, err := w.Next(ctx, 60*time.Second, consistent)
	if err != nil {
		return t0, nil, false, fmt.Errorf("round %d: %s did not reach its truncation: %w", i, x.Name, err)
	}
	cp, localMax := parseTruncLine(x.Java, line)
	cut := localMax > cp
	if x.Java { // no local end in the line: the end before the kill bounds it
		cut = cp >= 0 && cp < mmax
	}
	trigger := consistent
	if rd.onCut && cut && !x.Java {
		trigger = cutLine
		if _, _, err := w.Next(ctx, 5*time.Second, cutLine); err != nil {
			trigger = consistent + " (no cut line)"
		}
	}
	waitFor(ctx, rd.delay) // where the kill lands, not a synchronization
	x.Kill9()
	started := trigger == cutLine
	if x.Java {
		if _, j, _ := w.Next(ctx, 0, lineNoCutJava); j == 0 {
			cut = false
		}
	} else if _, _, err := w.Next(ctx, 0, cutLine); err == nil {
		started = true
	}

	// Start it for good: where did the kill land?
	w = WatchLog(path)
	if err := x.Start(); err != nil {
		return t0, nil, false, err
	}
	line, j, err := w.Next(ctx, 60*time.Second, lineFinishOurs, consistent)
	if err != nil {
		return t0, nil, false, fmt.Errorf("round %d: %s did not reach its truncation after the kill: %w", i, x.Name, err)
	}
	landed := ""
	if j == 0 {
		landed = "inside the cut (recovery finished it: " + afterMsg(line) + ")"
		if line, _, err = w.Next(ctx, 60*time.Second, consistent); err != nil {
			return t0, nil, false, fmt.Errorf("round %d: %s did not reach its truncation after the kill: %w", i, x.Name, err)
		}
	}
	if cp2, lm2 := parseTruncLine(x.Java, line); landed == "" && x.Java {
		// Java's line has no local end: the next one says whether it cuts.
		if _, k, err := w.Next(ctx, 10*time.Second, lineNoCutJava, "Truncate slave log to"); err != nil {
			landed = "unknown (no truncation result line)"
		} else if k == 0 {
			landed = "after the cut (nothing left to cut)"
		} else {
			landed = "before the cut was complete (cut again at the next start)"
		}
	} else if landed == "" {
		switch {
		case lm2 > cp2:
			landed = "before the cut (the tail was still there)"
		case started:
			landed = "after the segment was cut"
		default:
			landed = "before the cut line, but nothing was left to cut at the next start"
		}
	}
	landings[strings.SplitN(landed, " (", 2)[0]]++
	cp2, lm2 := parseTruncLine(x.Java, line)
	logf("kill-during-truncation round %d: %s (tail ≥ %d bytes past the new epoch %d of %s at %d) killed %v after %q: consistent point %d, local end %d, cut to make %v; kill landed %s; next start: consistent point %d, local end %d",
		i, x.Name, mmax-epochStart, nc.EpochList[len(nc.EpochList)-1].Epoch, nm.Name, epochStart, rd.delay, trigger, cp, localMax, cut, landed, cp2, lm2)
	if err := verifyTruncated(ctx, s, x, logf); err != nil {
		return t0, nil, cut, fmt.Errorf("round %d: %w", i, err)
	}
	return t0, nm, cut, nil
}

// namedMaster is WaitMaster; when no master answers with the
// controller's epoch last in its epoch file, but the broker the controller
// names answers as master, it notes that and goes on with it (Java 5.3.3
// refuses a new epoch that starts where its last one does and writes on
// under the old epoch), so the commit logs are still compared.
func namedMaster(ctx context.Context, s *Set, not string, d time.Duration, notes *[]string) (*Node, error) {
	nm, _, err := s.WaitMaster(ctx, not, d)
	if err == nil {
		return nm, nil
	}
	r, ok := s.Replica(ctx)
	b := s.BrokerByAddr(r.MasterAddr)
	if !ok || b == nil || r.MasterAddr == not {
		return nil, err
	}
	c, cerr := GetEpochCache(ctx, b.Addr)
	if cerr != nil || c.BrokerID != 0 {
		return nil, err
	}
	*notes = append(*notes, fmt.Sprintf("master %s of epoch %d has epochs %v (its epoch not in its epoch file)", b.Name, r.MasterEpoch, c.EpochList))
	return b, nil
}

// afterMsg is a log line from its msg= on.
func afterMsg(line string) string {
	if i := strings.Index(line, "msg="); i >= 0 {
		return line[i:]
	}
	return line
}

// tailAndKill gives master x records no slave has and kills it; it
// returns x's max offset seen before the kill (a lower bound of its end).
func tailAndKill(ctx context.Context, s *Set, x *Node, mark func(), notes *[]string) (int64, time.Time, error) {
	if err := s.CreateTopic(ctx, x, tailTopic, 1); err != nil {
		return 0, time.Now(), err
	}
	if err := s.Topo.SetLink(x.Name, NetHA, false); err != nil {
		return 0, time.Now(), err
	}
	// The sends in flight at the cut may have reached the slaves already:
	// only what the master appends from now on is surely a tail.
	c0, err := GetEpochCache(ctx, x.Addr)
	if err != nil {
		_ = s.Topo.SetLink(x.Name, NetHA, true)
		return 0, time.Now(), err
	}
	burstCtx, stopBurst := context.WithCancel(ctx)
	burst := make(chan Ack, tailSends)
	for i := range tailSends {
		go func() {
			burst <- ProbeSend(burstCtx, x.Addr, tailTopic, fmt.Sprintf("tail-%d-%d", time.Now().UnixNano(), i), 0)
		}()
	}
	mmax := c0.MaxOffset
	tailed := poll(ctx, 3*time.Second, func() bool {
		c, err := GetEpochCache(ctx, x.Addr)
		if err == nil {
			mmax = c.MaxOffset
		}
		return mmax > c0.MaxOffset
	})
	t0 := time.Now()
	x.Kill9()
	mark()
	stopBurst()
	if err := s.Topo.SetLink(x.Name, NetHA, true); err != nil {
		return mmax, t0, err
	}
	for range tailSends {
		// A SEND_OK here was acknowledged without any slave having it.
		if a := <-burst; a.OK {
			*notes = append(*notes, fmt.Sprintf("tail send %s acknowledged by %s with its HA link down (offset %d)", a.Key, x.Name, a.PhyOffset))
		}
	}
	if !tailed {
		*notes = append(*notes, fmt.Sprintf("%s did not append past %d before the kill", x.Name, c0.MaxOffset))
	}
	return mmax, t0, nil
}

// verifyTruncated waits until every broker caught up with the master and
// compares each one's commit log with the master's up to its own end,
// and its epoch list with the master's.
func verifyTruncated(ctx context.Context, s *Set, old *Node, logf func(string, ...any)) error {
	var lenient []string
	fm, err := namedMaster(ctx, s, "", 90*time.Second, &lenient)
	if err != nil {
		return fmt.Errorf("%s did not rejoin: %w", old.Name, err)
	}
	mc, err := GetEpochCache(ctx, fm.Addr)
	if err != nil {
		return err
	}
	if !poll(ctx, 90*time.Second, func() bool {
		for _, b := range s.Brokers {
			c, err := GetEpochCache(ctx, b.Addr)
			if err != nil || c.MaxOffset < mc.MaxOffset {
				return false
			}
		}
		return true
	}) {
		return fmt.Errorf("%s did not rejoin: brokers did not catch up with master %s at %d", old.Name, fm.Name, mc.MaxOffset)
	}
	bad := lenient
	for _, b := range s.Brokers {
		if b == fm {
			continue
		}
		bc, err := GetEpochCache(ctx, b.Addr)
		if err != nil {
			return err
		}
		if !sameEpochs(bc.EpochList, mc.EpochList, bc.MaxOffset) {
			bad = append(bad, fmt.Sprintf("%s epochs %v ≠ master %s %v", b.Name, bc.EpochList, fm.Name, mc.EpochList))
		}
		at, err := CompareCommitLogs(b, fm, 0, bc.MaxOffset)
		if err != nil {
			return err
		}
		if at >= 0 {
			bad = append(bad, fmt.Sprintf("%s commit log differs from master %s at %d (compared to %d)", b.Name, fm.Name, at, bc.MaxOffset))
		}
		if b == old {
			logf("kill-during-truncation: %s rejoined: commit log equal to master %s's over [0, %d): %v; epochs equal: %v",
				b.Name, fm.Name, bc.MaxOffset, at < 0, sameEpochs(bc.EpochList, mc.EpochList, bc.MaxOffset))
		}
	}
	// The tail's records were cut: the old master's queue of the tail
	// topic must end where the master's does (consume queues truncated).
	fq, err := MaxOffset(ctx, fm.Addr, tailTopic, 0)
	if err != nil {
		fq = 0 // the master never had the topic
	}
	if oq, err := MaxOffset(ctx, old.Addr, tailTopic, 0); err == nil {
		logf("kill-during-truncation: %s queue %s/0 ends at %d, master's at %d", old.Name, tailTopic, oq, fq)
		if oq != fq {
			bad = append(bad, fmt.Sprintf("%s queue %s/0 ends at %d, master %s's at %d", old.Name, tailTopic, oq, fm.Name, fq))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// sameEpochs compares the epochs and start offsets of the entries that
// start below end (a slave learns an epoch with its first record: a new
// master's epoch without records yet is not on its slaves).
func sameEpochs(a, b []EpochEntry, end int64) bool {
	below := func(l []EpochEntry) []EpochEntry {
		var out []EpochEntry
		for _, e := range l {
			if e.StartOffset < end {
				out = append(out, e)
			}
		}
		return out
	}
	a, b = below(a), below(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Epoch != b[i].Epoch || a[i].StartOffset != b[i].StartOffset {
			return false
		}
	}
	return true
}
