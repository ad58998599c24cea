package autoswitch

import (
	"slices"
	"time"

	"github.com/rocketgo/rocketgo/store"
)

// SetSyncStateSet installs the controller's SyncStateSet (the answer to an
// ALTER_SYNC_STATE_SET, REGISTER_BROKER, GET_REPLICA_INFO or a
// NOTIFY_BROKER_ROLE_CHANGED). It ends the proposal being synchronized
// and recomputes the confirm offset, as Java's setSyncStateSet.
func (s *Server) SetSyncStateSet(ids []int64) {
	s.hub.Mu.Lock()
	s.confirmed = make(map[int64]struct{}, len(ids)+1)
	for _, id := range ids {
		s.confirmed[id] = struct{}{}
	}
	s.confirmed[s.cfg.LocalBrokerID] = struct{}{}
	s.pending = nil
	s.applyLocked()
	s.hub.Mu.Unlock()
	s.updateQuorum()
}

// SyncStateSet is the set acknowledgements and the confirm offset wait
// for: the controller's set, joined while a proposal is synchronizing by
// the proposal (Java getSyncStateSet).
func (s *Server) SyncStateSet() []int64 {
	s.hub.Mu.Lock()
	defer s.hub.Mu.Unlock()
	return sorted(s.effectiveLocked())
}

// LocalSyncStateSet is the controller-confirmed set.
func (s *Server) LocalSyncStateSet() []int64 {
	s.hub.Mu.Lock()
	defer s.hub.Mu.Unlock()
	return sorted(s.confirmed)
}

// InSyncReplicasNums is Java's inSyncReplicasNums: the larger of the
// confirmed and the proposed set while synchronizing (the broker compares
// it with minInSyncReplicas before a put).
func (s *Server) InSyncReplicasNums() int {
	s.hub.Mu.Lock()
	defer s.hub.Mu.Unlock()
	return max(len(s.confirmed), len(s.pending))
}

// effectiveLocked is the confirmed set joined with the pending proposal
// (a fresh map). mu held.
func (s *Server) effectiveLocked() map[int64]struct{} {
	out := make(map[int64]struct{}, len(s.confirmed)+len(s.pending))
	for id := range s.confirmed {
		out[id] = struct{}{}
	}
	for id := range s.pending {
		out[id] = struct{}{}
	}
	return out
}

// members calls fn for each member of the effective set (confirmed, then
// pending members not confirmed) and returns their number; it allocates
// nothing. mu held.
func (s *Server) members(fn func(id int64) bool) int {
	n := 0
	for id := range s.confirmed {
		n++
		if fn != nil && !fn(id) {
			return -1
		}
	}
	for id := range s.pending {
		if _, dup := s.confirmed[id]; dup {
			continue
		}
		n++
		if fn != nil && !fn(id) {
			return -1
		}
	}
	return n
}

// memberLocked reports whether id is in the effective set. mu held.
func (s *Server) memberLocked(id int64) bool {
	_, a := s.confirmed[id]
	_, b := s.pending[id]
	return a || b
}

// ackOfLocked is the best acknowledgement of slave id over its
// connections (-1: none reported, -2: not connected). mu held.
func (s *Server) ackOfLocked(id int64) int64 {
	best := int64(-2)
	for hc := range s.hub.ConnsLocked() {
		if hc.S.id.Load() == id {
			best = max(best, hc.Acked())
		}
	}
	return best
}

// applyLocked recomputes the confirm offset (Java computeConfirmOffset)
// and sets the store's confirm limit and in-sync replica count. mu held.
func (s *Server) applyLocked() {
	if !s.cfg.AllAckInSyncStateSet {
		s.confirm = -1
		s.st.SetConfirmLimit(-1)
		return
	}
	if n := s.members(nil); n != s.lastISR {
		s.st.SetInSyncReplicas(n)
		s.lastISR = n
	}
	if len(s.confirmed) <= 1 {
		// compat: Java's getConfirmOffset is the max offset when the
		// local SyncStateSet is the master alone.
		s.confirm = -1
		s.st.SetConfirmLimit(-1)
		return
	}
	c := s.st.MaxPhyOffset()
	complete := s.members(func(id int64) bool {
		if id == s.cfg.LocalBrokerID {
			return true
		}
		a := s.ackOfLocked(id)
		c = min(c, a)
		return a >= 0
	}) >= 0
	if !complete {
		// A member without a connection or without a report yet: keep
		// the old value (apache/rocketmq#6662). Java skips a member that
		// has not reported; here it holds the offset too.
		if s.confirm < 0 {
			s.confirm = s.st.ConfirmOffset()
			s.st.SetConfirmLimit(s.confirm)
		}
		return
	}
	s.confirm = c
	s.st.SetConfirmLimit(c)
}

// updateQuorum reduces the acknowledgements into the store's replicated
// offset: with AllAckInSyncStateSet every member of SyncStateSet, else
// InSyncReplicas of any slaves. AckReplicated runs outside mu.
func (s *Server) updateQuorum() {
	s.hub.Mu.Lock()
	var need int
	s.acks = s.acks[:0]
	if s.cfg.AllAckInSyncStateSet {
		need = s.members(func(id int64) bool {
			if id != s.cfg.LocalBrokerID {
				if a := s.ackOfLocked(id); a >= 0 {
					s.acks = append(s.acks, a)
				}
			}
			return true
		})
	} else {
		need = int(s.isr.Load())
		s.ids = s.ids[:0]
		for hc := range s.hub.ConnsLocked() {
			id := hc.S.id.Load()
			if id < 0 || slices.Contains(s.ids, id) {
				continue
			}
			s.ids = append(s.ids, id)
			if a := s.ackOfLocked(id); a >= 0 {
				s.acks = append(s.acks, a)
			}
		}
	}
	q := store.QuorumOffset(s.acks, need)
	s.hub.Mu.Unlock()
	switch {
	case need <= 1 && s.cfg.AllAckInSyncStateSet:
		// compat: Java completes a waiting put once the set is the master
		// alone; release puts queued while it was larger.
		s.st.AckReplicated(s.st.RawEnd())
	case need > 1 && q > 0:
		s.st.AckReplicated(q)
	}
}

// proposeLocked hands set (the master added) to the notifier unless it
// is the proposal already delivered recently. mu held.
func (s *Server) proposeLocked(set map[int64]struct{}, why string) {
	set[s.cfg.LocalBrokerID] = struct{}{}
	ids := sorted(set)
	s.pending = set
	s.applyLocked()
	if equalIDs(ids, s.notified) && time.Since(s.notifiedAt) < s.cfg.CheckSyncStateSetPeriod {
		return
	}
	s.log.Info("autoswitch: SyncStateSet proposed", "set", ids, "why", why, "confirmed", sorted(s.confirmed))
	s.proposal = ids
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// notifier delivers proposals to the owner, one at a time.
func (s *Server) notifier() {
	defer s.wg.Done()
	for {
		select {
		case <-s.quit:
			return
		case <-s.kick:
		}
		s.hub.Mu.Lock()
		p := s.proposal
		s.proposal = nil
		if p != nil {
			s.notified, s.notifiedAt = p, time.Now()
			s.proposeCount++
		}
		s.hub.Mu.Unlock()
		if p != nil && s.cfg.OnSyncStateSetChanged != nil {
			s.cfg.OnSyncStateSetChanged(p)
		}
	}
}

// checker runs the shrink check every CheckSyncStateSetPeriod.
func (s *Server) checker() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.CheckSyncStateSetPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.shrink(time.Now())
	}
}

// shrink is Java's maybeShrinkSyncStateSet: members not caught up for
// MaxTimeSlaveNotCatchup, or never connected, leave the set; a proposal
// still unconfirmed is offered again.
func (s *Server) shrink(now time.Time) {
	s.hub.Mu.Lock()
	next := make(map[int64]struct{}, len(s.confirmed))
	changed := false
	for id := range s.confirmed {
		if id == s.cfg.LocalBrokerID {
			next[id] = struct{}{}
			continue
		}
		t, ok := s.caughtUp[id]
		if !ok || now.Sub(t) > s.cfg.MaxTimeSlaveNotCatchup {
			changed = true
			continue
		}
		next[id] = struct{}{}
	}
	switch {
	case changed:
		s.proposeLocked(next, "slave not caught up")
	case s.pending != nil && !equalIDs(sorted(s.pending), sorted(s.confirmed)):
		s.proposeLocked(s.pending, "proposal not confirmed yet")
	}
	s.hub.Mu.Unlock()
	s.updateQuorum()
}

// caughtUpLocked records that slave id was caught up at t. mu held.
func (s *Server) caughtUpLocked(id int64, t time.Time) {
	if old, ok := s.caughtUp[id]; !ok || t.After(old) {
		s.caughtUp[id] = t
	}
}

// onReport handles a slave's acknowledgement (Java
// maybeExpandInSyncStateSet, updateConfirmOffsetWhenSlaveAck).
func (s *Server) onReport(c *conn, ack int64) {
	id := c.id.Load()
	s.hub.Mu.Lock()
	if !c.learner.Load() && ack >= c.lastMasterMax.Load() {
		t := time.Unix(0, c.lastTransfer.Load())
		if s.st.MaxPhyOffset() == ack {
			t = time.Now()
		}
		s.caughtUpLocked(id, t)
		if _, in := s.confirmed[id]; !in {
			confirm := s.confirm
			if confirm < 0 {
				confirm = s.st.MaxPhyOffset()
			}
			last, _ := s.ep.Last()
			if ack >= confirm && ack >= last.StartOffset {
				next := make(map[int64]struct{}, len(s.confirmed)+1)
				for k := range s.confirmed {
					next[k] = struct{}{}
				}
				next[id] = struct{}{}
				s.proposeLocked(next, "slave caught up")
			}
		}
	}
	if s.memberLocked(id) {
		s.applyLocked()
	}
	s.hub.Mu.Unlock()
	s.updateQuorum()
}

// removed handles a closed connection (Java removeConnection): an in-sync
// slave with no other connection is proposed out of the set at once, but
// stays in the confirmed set (acks still wait for it) until the
// controller confirms, as in Java 5.3.3. Java 5.4.0 replaces its
// confirmed set here at once, so a master cut off from the controllers
// acks alone once its slaves leave it for the new master (acknowledged
// writes lost: conformance/FAILOVER-KINDS-5.4.md); we keep 5.3.3's way.
func (s *Server) removed(c *conn) {
	id := c.id.Load()
	s.hub.Mu.Lock()
	if _, in := s.confirmed[id]; in && id >= 0 && id != s.cfg.LocalBrokerID && s.ackOfLocked(id) == -2 && !s.done {
		next := make(map[int64]struct{}, len(s.confirmed))
		for k := range s.confirmed {
			if k != id {
				next[k] = struct{}{}
			}
		}
		s.proposeLocked(next, "in-sync slave disconnected")
	} else {
		s.applyLocked()
	}
	s.hub.Mu.Unlock()
	s.updateQuorum()
}

func sorted(m map[int64]struct{}) []int64 {
	out := make([]int64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
