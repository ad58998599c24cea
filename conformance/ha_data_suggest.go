package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/goclient"
)

// sendBodies stores the bodies prefix-0..n-1 on the master, spread over
// queues, with a few senders, and returns them.
func sendBodies(ctx context.Context, addr, topic, prefix string, queues, n int) ([]string, error) {
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = prefix + "-" + strconv.Itoa(i)
	}
	errc := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := w; i < n; i += 4 {
				if err := sendRetryBusy(ctx, addr, topic, i%queues, map[string]string{"KEYS": bodies[i]}, []byte(bodies[i])); err != nil {
					errc <- fmt.Errorf("send %s: %w", bodies[i], err)
					return
				}
			}
			errc <- nil
		}()
	}
	var first error
	for range 4 {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return bodies, first
}

// seedTopics copies the master's config/topics.json (which must name
// topic) into the slave's store before the slave's first start.
func seedTopics(masterStore, slaveStore, topic string) error {
	src := filepath.Join(masterStore, "config", "topics.json")
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("seed the slave's topics: %w", err)
	}
	if !strings.Contains(string(b), `"`+topic+`"`) {
		return fmt.Errorf("seed the slave's topics: the master's %s does not name %s yet", src, topic)
	}
	dir := filepath.Join(slaveStore, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "topics.json"), b, 0o644)
}

// gets is a broker's msgGetTotalTodayNow (messages it served to pulls).
func gets(ctx context.Context, addr string) (int64, error) {
	t, err := runtimeInfo(ctx, addr)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(t["msgGetTotalTodayNow"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("msgGetTotalTodayNow %q of %s: %w", t["msgGetTotalTodayNow"], addr, err)
	}
	return v, nil
}

// replSuggest: with slaveReadEnable on both brokers, a raw PULL_MESSAGE to
// the master for a queue with a backlog answers suggestWhichBrokerId 1 when
// accessMessageInMemoryMaxRatio is 0 (every backlog is "too far behind"),
// 0 with the default 40; with the lowered ratio a Go push consumer drains
// the backlog, served by the slave.
func replSuggest(lowered bool) func(ctx context.Context, h *HARun) error {
	return func(ctx context.Context, h *HARun) error {
		p := h.Pair
		topic := h.Name("sug")
		if err := createTopic(ctx, p, topic, 2); err != nil {
			return err
		}
		// A slave learns topics from its master's metadata a minute after it
		// starts (repl_metadata); until then it refuses pulls of an unknown
		// topic. Start it with the master's topics.json instead, as an
		// operator seeding a new slave would.
		if err := seedTopics(p.Master.StoreDir, p.Slave.StoreDir, topic); err != nil {
			return err
		}
		if err := p.Slave.Start(ctx); err != nil {
			return err
		}
		bodies, err := sendBodies(ctx, p.Master.Addr, topic, "sug", 2, 1000)
		if err != nil {
			return err
		}
		if _, err := p.WaitCaughtUp(ctx, 60*time.Second); err != nil {
			return err
		}
		want := "0"
		if lowered {
			want = "1"
		}
		for q := range 2 {
			code, ext, recs, err := pullOnce(ctx, p.Master.Addr, h.Name("sug_raw"), topic, q, 0, 32)
			if err != nil {
				return err
			}
			if code != 0 || len(recs) == 0 {
				return fmt.Errorf("raw pull %s/%d@0 from the master: code %d, %d records, ext %v", topic, q, code, len(recs), ext)
			}
			if got := ext["suggestWhichBrokerId"]; got != want {
				return fmt.Errorf("raw pull %s/%d@0 from the master (backlog 500): suggestWhichBrokerId %q, want %s; ext %v", topic, q, got, want, ext)
			}
		}
		if !lowered {
			h.Note("master suggested broker 0 for a 500-message backlog with the default ratio")
			return nil
		}
		s0, err := gets(ctx, p.Slave.Addr)
		if err != nil {
			return err
		}
		m0, err := gets(ctx, p.Master.Addr)
		if err != nil {
			return err
		}
		c0 := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		err = goclient.ConsumeBodies(cctx, p.NamesrvAddr, h.Name("sug_c"), topic, bodies)
		cancel()
		if err != nil {
			return fmt.Errorf("Go push consumer with the lowered ratio: %w", err)
		}
		took := time.Since(c0)
		s1, err := gets(ctx, p.Slave.Addr)
		if err != nil {
			return err
		}
		m1, err := gets(ctx, p.Master.Addr)
		if err != nil {
			return err
		}
		h.Note("master suggested broker 1; a Go push consumer got all %d messages in %v; msgGetTotalTodayNow grew by %d on the slave, %d on the master",
			len(bodies), took.Round(time.Millisecond), s1-s0, m1-m0)
		if s1-s0 <= 0 {
			return fmt.Errorf("the slave served no pulls (its msgGetTotalTodayNow %d → %d; the master's %d → %d): the consumer was not redirected", s0, s1, m0, m1)
		}
		return nil
	}
}
