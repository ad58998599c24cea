package conformance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/storecompat"
)

// replMetadata: a topic, a subscription group, consumer offsets and a
// delay offset made on the master are served by the slave from its own
// tables after its sync period (Java SlaveSynchronize: a full sync once a
// minute, the first about a minute after start).
func replMetadata(ctx context.Context, h *HARun) error {
	p := h.Pair
	m, s := p.Master.Addr, p.Slave.Addr
	topic, group := h.Name("meta"), h.Name("meta_g")
	if err := createTopic(ctx, p, topic, 3); err != nil {
		return err
	}
	g := storecompat.GroupConfig{GroupName: group, ConsumeEnable: true, ConsumeFromMinEnable: true,
		ConsumeBroadcastEnable: true, RetryQueueNums: 1, RetryMaxTimes: 7, WhichBrokerWhenSlowly: 1, NotifyIDsChanged: true}
	if err := storecompat.CreateGroup(ctx, m, g); err != nil {
		return err
	}
	for i := range 10 {
		for q := range 2 {
			if err := sendRetryBusy(ctx, m, topic, q, map[string]string{"KEYS": "meta" + strconv.Itoa(i)}, []byte("meta body "+strconv.Itoa(i))); err != nil {
				return fmt.Errorf("send to %s/%d: %w", topic, q, err)
			}
		}
	}
	commits := map[int]int64{0: 7, 1: 3}
	for q, off := range commits {
		if err := storecompat.CommitOffset(ctx, m, group, topic, q, off); err != nil {
			return err
		}
	}
	// A delayed message (level 1, 1 s): the master's delay offset of level 1
	// moves once it is delivered (and persisted: Java answers
	// GET_ALL_DELAY_OFFSET from delayOffset.json, flushed every 10 s).
	if err := sendRetryBusy(ctx, m, topic, 2, map[string]string{"DELAY": "1", "KEYS": "meta-delayed"}, []byte("delayed")); err != nil {
		return fmt.Errorf("delayed send: %w", err)
	}
	made := time.Now()
	var masterDelay int64
	if err := poll(ctx, 40*time.Second, "the master's delay offset of level 1", func() (bool, string, error) {
		d, err := delayOffsets(ctx, m)
		if err != nil {
			return false, err.Error(), nil
		}
		masterDelay = d["1"]
		return masterDelay >= 1, fmt.Sprintf("%v", d), nil
	}); err != nil {
		return err
	}
	delayAt := time.Since(made)

	type item struct {
		what string
		at   time.Duration
		ok   func() (bool, string, error)
	}
	items := []*item{
		{what: "topic config (GET_ALL_TOPIC_CONFIG)", ok: func() (bool, string, error) {
			ts, err := storecompat.Topics(ctx, s)
			if err != nil {
				return false, err.Error(), nil
			}
			t, ok := ts[topic]
			return ok && t.ReadQueueNums == 3 && t.WriteQueueNums == 3, fmt.Sprintf("%s: %+v (present %v)", topic, t, ok), nil
		}},
		{what: "subscription group (GET_ALL_SUBSCRIPTIONGROUP_CONFIG)", ok: func() (bool, string, error) {
			gs, err := storecompat.Groups(ctx, s)
			if err != nil {
				return false, err.Error(), nil
			}
			got, ok := gs[group]
			return ok && got.RetryMaxTimes == 7 && got.WhichBrokerWhenSlowly == 1, fmt.Sprintf("%s: %+v (present %v)", group, got, ok), nil
		}},
		{what: "consumer offsets (GET_ALL_CONSUMER_OFFSET)", ok: func() (bool, string, error) {
			t, err := consumerOffsets(ctx, s)
			if err != nil {
				return false, err.Error(), nil
			}
			got := t[topic+"@"+group]
			return got["0"] == commits[0] && got["1"] == commits[1], fmt.Sprintf("%s@%s: %v", topic, group, got), nil
		}},
		{what: "consumer offset (QUERY_CONSUMER_OFFSET)", ok: func() (bool, string, error) {
			var states []string
			for q, want := range commits {
				off, found, err := storecompat.QueryOffset(ctx, s, group, topic, q)
				if err != nil {
					return false, err.Error(), nil
				}
				if !found || off != want {
					states = append(states, fmt.Sprintf("queue %d: %d (found %v), want %d", q, off, found, want))
				}
			}
			return len(states) == 0, strings.Join(states, "; "), nil
		}},
		{what: "delay offsets (GET_ALL_DELAY_OFFSET)", ok: func() (bool, string, error) {
			d, err := delayOffsets(ctx, s)
			if err != nil {
				return false, err.Error(), nil
			}
			return d["1"] >= masterDelay, fmt.Sprintf("%v, master's level 1 at %d", d, masterDelay), nil
		}},
	}
	err := poll(ctx, 150*time.Second, "the slave serving the master's metadata", func() (bool, string, error) {
		var pending []string
		for _, it := range items {
			if it.at != 0 {
				continue
			}
			done, state, err := it.ok()
			if err != nil {
				return false, "", err
			}
			if done {
				it.at = time.Since(made)
			} else {
				pending = append(pending, it.what+": "+state)
			}
		}
		return len(pending) == 0, strings.Join(pending, "; "), nil
	})
	var got []string
	for _, it := range items {
		if it.at != 0 {
			got = append(got, fmt.Sprintf("%s after %v", it.what, it.at.Round(100*time.Millisecond)))
		}
	}
	h.Note("master's delay offset persisted after %v; slave served: %s", delayAt.Round(100*time.Millisecond), strings.Join(got, ", "))
	return err
}
