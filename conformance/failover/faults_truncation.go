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

// truncRound is one kill of the rejoining old master: delay after its
// truncation line (onCut: after our store's cut line, when it cuts).
type truncRound struct {
	onCut bool
	delay time.Duration
}

// truncRounds place the kills at different points of the truncation.
// The tail: tailSends raw sends to tailTopic while the master's HA link
// is down.
const (
	tailTopic = "fo_trunc_tail"
	tailSends = 8
)

var truncRounds = []truncRound{{false, 0}, {true, 0}, {false, 5 * time.Millisecond}, {true, 2 * time.Millisecond}, {false, 20 * time.Millisecond}}

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

// killDuringTruncation gives the master a tail no slave has (its HA link
// down, a few raw sends to it: a send waits for the SyncStateSet's acks,
// so none of them may be acknowledged), kills it with SIGKILL while the
// link is down (a moment, well below haMaxTimeSlaveNotCatchup, so the
// slaves stay eligible), waits for the new master, then restarts the old
// master and kills it again while it truncates at its HA handshake, at
// the moments of truncRounds; then starts it for good, waits until every
// broker caught up and checks that each broker's commit log equals the
// final master's byte for byte up to its end and that their epoch lists
// agree. A run whose old master had nothing to cut says so in its error.
func killDuringTruncation(ctx context.Context, s *Set, m *Node, _ time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
	var notes []string
	if err := s.CreateTopic(ctx, m, tailTopic, 1); err != nil {
		return time.Now(), err
	}
	if err := s.Topo.SetLink(m.Name, NetHA, false); err != nil {
		return time.Now(), err
	}
	// The sends in flight at the cut may have reached the slaves already:
	// only what the master appends from now on is surely a tail.
	mc0, err := GetEpochCache(ctx, m.Addr)
	if err != nil {
		_ = s.Topo.SetLink(m.Name, NetHA, true)
		return time.Now(), err
	}
	burstCtx, stopBurst := context.WithCancel(ctx)
	burst := make(chan Ack, tailSends)
	for i := range tailSends {
		go func() {
			burst <- ProbeSend(burstCtx, m.Addr, tailTopic, fmt.Sprintf("tail-%d-%d", time.Now().UnixNano(), i), 0)
		}()
	}
	mmax := mc0.MaxOffset
	tailed := poll(ctx, 3*time.Second, func() bool {
		c, err := GetEpochCache(ctx, m.Addr)
		if err == nil {
			mmax = c.MaxOffset
		}
		return mmax > mc0.MaxOffset
	})
	t0 := time.Now()
	m.Kill9()
	mark()
	stopBurst()
	if err := s.Topo.SetLink(m.Name, NetHA, true); err != nil {
		return t0, err
	}
	for range tailSends {
		// A SEND_OK here was acknowledged without any slave having it.
		if a := <-burst; a.OK {
			notes = append(notes, fmt.Sprintf("tail send %s acknowledged with the HA link down (offset %d)", a.Key, a.PhyOffset))
		}
	}
	if !tailed {
		notes = append(notes, fmt.Sprintf("the master did not append past %d before the kill", mc0.MaxOffset))
	}
	smax := mc0.MaxOffset
	nm, _, err := s.WaitMaster(ctx, m.Addr, 60*time.Second)
	if err != nil {
		return t0, fmt.Errorf("no new master: %w", err)
	}
	nc, err := GetEpochCache(ctx, nm.Addr)
	if err != nil || len(nc.EpochList) == 0 {
		return t0, fmt.Errorf("epochs of the new master %s: %v %w", nm.Name, nc, err)
	}
	epochStart := nc.EpochList[len(nc.EpochList)-1].StartOffset
	logf("kill-during-truncation: %s killed at max offset ≥ %d (≤ %d at the HA cut); new master %s epoch %d starts at %d: tail ≥ %d bytes to cut",
		m.Name, mmax, smax, nm.Name, nc.EpochList[len(nc.EpochList)-1].Epoch, epochStart, mmax-epochStart)
	if mmax <= epochStart {
		notes = append(notes, fmt.Sprintf("old master had nothing to truncate (max %d ≤ new epoch start %d)", mmax, epochStart))
	}

	consistent, cutLine := lineConsistentOurs, lineCutOurs
	if m.Java {
		consistent, cutLine = lineConsistentJava, lineConsistentJava
	}
	path := m.LogPath()
	cuts := 0 // rounds whose line showed a cut to make
	for i, rd := range truncRounds {
		w := WatchLog(path)
		if err := m.Start(); err != nil {
			return t0, err
		}
		line, _, err := w.Next(ctx, 60*time.Second, consistent)
		if err != nil {
			return t0, fmt.Errorf("round %d: %s did not reach its truncation: %w", i, m.Name, err)
		}
		cp, localMax := parseTruncLine(m.Java, line)
		cut := localMax > cp
		if m.Java { // no local end in the line: the old master's end before the kill bounds it
			cut = cp >= 0 && cp < mmax
		}
		at := consistent
		if rd.onCut && cut && !m.Java {
			at = cutLine
			if _, _, err := w.Next(ctx, 5*time.Second, cutLine); err != nil {
				at = consistent + " (no cut line)"
			}
		}
		waitFor(ctx, rd.delay) // where the kill lands, not a synchronization
		m.Kill9()
		after := "not started"
		if m.Java {
			if _, j, _ := w.Next(ctx, 0, lineNoCutJava, "Truncate slave log to"); j == 0 {
				cut, after = false, "nothing to cut"
			} else if j == 1 {
				after = "done"
			}
		} else if at == cutLine {
			after = "started"
		} else if _, _, err := w.Next(ctx, 0, cutLine); err == nil {
			after = "started"
		}
		if cut {
			cuts++
		}
		logf("kill-during-truncation round %d: %s killed %v after %q: consistent point %d, local end %d, cut to make %v, cut %s",
			i, m.Name, rd.delay, at, cp, localMax, cut, after)
	}
	w := WatchLog(path)
	if err := m.Start(); err != nil {
		return t0, err
	}
	if line, _, err := w.Next(ctx, 60*time.Second, consistent); err == nil {
		cp, localMax := parseTruncLine(m.Java, line)
		logf("kill-during-truncation: %s started for good: consistent point %d, local end %d", m.Name, cp, localMax)
	} else {
		return t0, fmt.Errorf("%s did not reach its truncation after the kills: %w", m.Name, err)
	}
	if cuts == 0 {
		notes = append(notes, "no truncation line showed a cut to make")
	}
	if err := verifyTruncated(ctx, s, m, logf); err != nil {
		notes = append(notes, err.Error())
	}
	if len(notes) > 0 {
		return t0, errors.New(strings.Join(notes, "; "))
	}
	return t0, nil
}

// verifyTruncated waits until every broker caught up with the master and
// compares each one's commit log with the master's up to its own end,
// and its epoch list with the master's.
func verifyTruncated(ctx context.Context, s *Set, old *Node, logf func(string, ...any)) error {
	fm, err := s.Ready(ctx, 90*time.Second)
	if err != nil {
		return fmt.Errorf("%s did not rejoin: %w", old.Name, err)
	}
	mc, err := GetEpochCache(ctx, fm.Addr)
	if err != nil {
		return err
	}
	var bad []string
	for _, b := range s.Brokers {
		if b == fm {
			continue
		}
		bc, err := GetEpochCache(ctx, b.Addr)
		if err != nil {
			return err
		}
		if !sameEpochs(bc.EpochList, mc.EpochList) {
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
				b.Name, fm.Name, bc.MaxOffset, at < 0, sameEpochs(bc.EpochList, mc.EpochList))
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

// sameEpochs compares epoch numbers and start offsets (end offsets are
// open on the last entry and may differ in form).
func sameEpochs(a, b []EpochEntry) bool {
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
