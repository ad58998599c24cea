package controller

import "slices"

// elect is Java's DefaultElectPolicy: try the in-sync set, then (when
// unclean election is on, all != nil) every member. Returns 0 for none.
func elect(bs *brokerSet, live Liveness, inSync, all []int64, old, prefer int64) int64 {
	if m := tryElect(bs, live, inSync, old, prefer); m != 0 {
		return m
	}
	if all != nil {
		return tryElect(bs, live, all, old, prefer)
	}
	return 0
}

// tryElect picks among the alive candidates: the old master if it is alive
// and nobody is preferred (or it is the preferred one); else the preferred
// broker or nobody; else the best by (epoch desc, maxOffset desc,
// electionPriority asc), ties broken by the smaller id so every run of the
// policy gives the same answer (Java's TreeSet keeps an arbitrary one).
func tryElect(bs *brokerSet, live Liveness, candidates []int64, old, prefer int64) int64 {
	type cand struct {
		id   int64
		info LiveInfo
	}
	var alive []cand
	for _, id := range candidates {
		if _, member := bs.Brokers[id]; !member {
			continue
		}
		if !live.Alive(bs.Cluster, bs.Name, id) {
			continue
		}
		info, _ := live.Info(bs.Cluster, bs.Name, id)
		alive = append(alive, cand{id, info})
	}
	if len(alive) == 0 {
		return 0
	}
	has := func(id int64) bool {
		return slices.ContainsFunc(alive, func(c cand) bool { return c.id == id })
	}
	if old != 0 && has(old) && (prefer == 0 || prefer == old) {
		return old
	}
	if prefer != 0 {
		if has(prefer) {
			return prefer
		}
		return 0
	}
	best := alive[0]
	for _, c := range alive[1:] {
		if better(c.info, c.id, best.info, best.id) {
			best = c
		}
	}
	return best.id
}

func better(a LiveInfo, aID int64, b LiveInfo, bID int64) bool {
	switch {
	case a.Epoch != b.Epoch:
		return a.Epoch > b.Epoch
	case a.MaxOffset != b.MaxOffset:
		return a.MaxOffset > b.MaxOffset
	case a.Priority != b.Priority:
		return a.Priority < b.Priority
	}
	return aID < bID
}
