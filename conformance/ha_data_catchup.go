package conformance

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

const mib = 1 << 20

// replCatchup: the slave stopped, total bytes written to the master, the
// slave restarted catches up; the logs are identical over the range.
func replCatchup(total int64) func(ctx context.Context, h *HARun) error {
	return func(ctx context.Context, h *HARun) error {
		p := h.Pair
		topic := h.Name("fill")
		if err := createTopic(ctx, p, topic, 4); err != nil {
			return err
		}
		// A little history first: a slave that reports 0 would start at the
		// master's last segment instead of catching up (repl_empty_slave).
		if _, err := fillBytes(ctx, p.Master.Addr, topic, 4, 2, 1024, 64<<10); err != nil {
			return err
		}
		from, err := p.WaitCaughtUp(ctx, 60*time.Second)
		if err != nil {
			return err
		}
		p.Slave.Stop()
		w0 := time.Now()
		n, err := fillBytes(ctx, p.Master.Addr, topic, 4, 6, 256<<10, total)
		if err != nil {
			return err
		}
		wrote := time.Since(w0)
		to, err := p.Master.MaxPhyOffset(ctx)
		if err != nil {
			return err
		}
		missed := to - from
		s0 := time.Now()
		if err := p.Slave.Start(ctx); err != nil {
			return err
		}
		up := time.Since(s0)
		caught, err := p.WaitCaughtUp(ctx, catchupTimeout(missed))
		if err != nil {
			return fmt.Errorf("slave restarted after missing %d bytes: %w", missed, err)
		}
		took := time.Since(s0)
		if caught != to {
			return fmt.Errorf("slave caught up at %d, the master ended the writes at %d (nothing else writes)", caught, to)
		}
		lc, err := compareCommitLogs(p.Master.StoreDir, p.Slave.StoreDir, from, to)
		if err != nil {
			return err
		}
		h.Note("slave missed %d MiB (%d messages of 256 KiB written in %v, %.0f MB/s); restarted (up in %v), caught up in %v: %.0f MB/s including start-up, %.0f MB/s after it; logs identical over [%d, %d) in %d files",
			missed/mib, n, wrote.Round(time.Millisecond), mbps(missed, wrote), up.Round(time.Millisecond), took.Round(time.Millisecond),
			mbps(missed, took), mbps(missed, took-up), from, to, lc.Files)
		return nil
	}
}

// catchupTimeout allows 20 MB/s plus a minute for start-up and reports.
func catchupTimeout(bytes int64) time.Duration {
	return time.Minute + time.Duration(bytes/(20*mib))*time.Second
}

func mbps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / 1e6 / d.Seconds()
}

// replEmptySlave: a master with history over several segments; an empty
// slave starts at the start of the master's last segment (Java's
// DefaultHAConnection: masterOffset - masterOffset % mappedFileSizeCommitLog),
// holds the master's bytes from there, and gets what is sent afterwards.
func replEmptySlave(seg int64) func(ctx context.Context, h *HARun) error {
	return func(ctx context.Context, h *HARun) error {
		p := h.Pair
		topic := h.Name("hist")
		if err := createTopic(ctx, p, topic, 4); err != nil {
			return err
		}
		if _, err := fillBytes(ctx, p.Master.Addr, topic, 4, 4, 64<<10, 3*seg+seg/2); err != nil {
			return err
		}
		m, err := p.Master.MaxPhyOffset(ctx)
		if err != nil {
			return err
		}
		want := m - m%seg
		ms, err := segments(commitLogDir(p.Master.StoreDir))
		if err != nil {
			return err
		}
		s0 := time.Now()
		if err := p.Slave.Start(ctx); err != nil {
			return err
		}
		caught, err := p.WaitCaughtUp(ctx, 90*time.Second)
		if err != nil {
			return err
		}
		took := time.Since(s0)
		if caught != m {
			return fmt.Errorf("slave caught up at %d, the master stood at %d (nothing else writes)", caught, m)
		}
		ss, err := segments(commitLogDir(p.Slave.StoreDir))
		if err != nil {
			return err
		}
		if len(ss) == 0 || ss[0].base != want {
			return fmt.Errorf("empty slave's commit-log files %s; want the first named %020d (start of the master's last segment; master at %d, files %s)",
				segNames(ss), want, m, segNames(ms))
		}
		info, err := p.Slave.RuntimeInfo(ctx)
		if err != nil {
			return err
		}
		if got := info["commitLogMinOffset"]; got != strconv.FormatInt(want, 10) {
			return fmt.Errorf("slave's commitLogMinOffset %s, want %d", got, want)
		}
		if _, err := compareCommitLogs(p.Master.StoreDir, p.Slave.StoreDir, want, m); err != nil {
			return err
		}
		// Later messages reach the slave.
		n, err := fillBytes(ctx, p.Master.Addr, topic, 4, 2, 4<<10, 256<<10)
		if err != nil {
			return err
		}
		m2, err := p.WaitCaughtUp(ctx, 30*time.Second)
		if err != nil {
			return fmt.Errorf("after %d more messages: %w", n, err)
		}
		if _, err := compareCommitLogs(p.Master.StoreDir, p.Slave.StoreDir, want, m2); err != nil {
			return err
		}
		h.Note("master at %d over %d files; the empty slave started at %d (file %020d, commitLogMinOffset %s) and caught up in %v; %d later messages reached it (to %d), identical",
			m, len(ms), want, ss[0].base, info["commitLogMinOffset"], took.Round(time.Millisecond), n, m2)
		return nil
	}
}
