package broker

import (
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/store"
)

// retentionWatcher is told by the store about every commit-log segment
// retention deletes. For a segment deleted before fileReservedTime (the
// disk is nearly full and cleanFileForciblyEnable is on, as in Java) it
// logs at WARN how many of its messages each consumer group had not yet
// consumed: those are gone for good.
type retentionWatcher struct {
	offsets *offsetTable
	log     *slog.Logger
}

// deletionReporter is the part of store.Store retention reports through.
type deletionReporter interface {
	OnDeleteSegment(func(store.DeletedSegment))
}

// watchRetention installs the watcher on stores that report deletions
// (store.Store does; test doubles may not).
func watchRetention(st MessageStore, offsets *offsetTable, log *slog.Logger) {
	if s, ok := st.(deletionReporter); ok {
		w := &retentionWatcher{offsets: offsets, log: log}
		s.OnDeleteSegment(w.deleted)
	}
}

// groupLoss is how many messages of one topic a group had not consumed.
type groupLoss struct {
	group, topic string
	n            int64
}

func (w *retentionWatcher) deleted(d store.DeletedSegment) {
	if !d.Forced {
		return
	}
	losses := w.unconsumed(d.Queues)
	if len(losses) == 0 {
		return
	}
	var total int64
	var sb strings.Builder
	for i, l := range losses {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(l.group + " on " + l.topic + ": " + strconv.FormatInt(l.n, 10))
		total += l.n
	}
	w.log.Warn("retention deleted messages consumer groups had not consumed (disk nearly full, cleanFileForciblyEnable)",
		"start", d.Start, "end", d.End, "unconsumed", total, "groups", sb.String())
}

// unconsumed counts, per group with an offset on the topic, the units of
// each range at or past the group's committed offset for that queue (a
// group without an offset on the queue has consumed none of it).
func (w *retentionWatcher) unconsumed(qs []store.QueueRange) []groupLoss {
	per := make(map[[2]string]int64)
	groups := make(map[string][]string)
	for _, q := range qs {
		gs, ok := groups[q.Topic]
		if !ok {
			gs = w.offsets.groupsOf(q.Topic)
			groups[q.Topic] = gs
		}
		for _, g := range gs {
			from := q.From
			if off, ok := w.offsets.query(g, q.Topic, q.QueueID); ok {
				from = max(from, off)
			}
			if n := q.To - from; n > 0 {
				per[[2]string{g, q.Topic}] += n
			}
		}
	}
	out := make([]groupLoss, 0, len(per))
	for k, n := range per {
		out = append(out, groupLoss{group: k[0], topic: k[1], n: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].group != out[j].group {
			return out[i].group < out[j].group
		}
		return out[i].topic < out[j].topic
	})
	return out
}
