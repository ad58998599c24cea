package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// StopMode is how RestartBroker takes the broker down.
type StopMode string

// Stop modes.
const (
	// Kill sends SIGKILL to the broker's process group: a crash. Mapped
	// store files survive it (the page cache keeps what was written), but
	// nothing the broker held only in its heap (offsets not yet persisted,
	// timer checkpoints) does.
	Kill StopMode = "kill"
	// Graceful sends SIGTERM and waits for the broker to shut down
	// (SIGKILL after GracefulTimeout).
	Graceful StopMode = "term"
)

// GracefulTimeout bounds a graceful stop before it turns into a kill.
const GracefulTimeout = 60 * time.Second

// codeGetBrokerRuntimeInfo probes the restarted broker (any answer will do).
const codeGetBrokerRuntimeInfo = 28

// RestartOptions tunes RestartBroker.
type RestartOptions struct {
	Mode StopMode
	// DownFor keeps the broker down at least this long after it stopped
	// (so timers can come due while it is away).
	DownFor time.Duration
	// Topics must be routed to the broker by the name server again before
	// RestartBroker returns (besides the broker being listed in the cluster).
	Topics       []string
	ReadyTimeout time.Duration // 0 = 180 s (Java start-up on a loaded box)
}

// Restarted describes one broker restart.
type Restarted struct {
	Stopped time.Time // the broker process (group) was gone
	Started time.Time // the new process was launched
	Ready   time.Time // it answered and the name server routed it again
	Killed  bool      // a graceful stop had to be escalated to SIGKILL
}

// ErrNoRestart means the cluster has no broker process of its own to restart
// (an attached external server).
var ErrNoRestart = errors.New("harness: cluster has no restartable broker")

// RestartBroker stops the broker of a running cluster (killing it or
// shutting it down gracefully), keeps it down for opt.DownFor, starts it
// again with the same store directory and ports, and waits until it answers
// and the name server routes it (cluster list and every topic in
// opt.Topics). For ours the broker process is rocketgo, which also hosts the
// name server: clients see both go away and come back. The previous log is
// kept as <name>.log.<n>.
func (c *Cluster) RestartBroker(ctx context.Context, opt RestartOptions) (Restarted, error) {
	var r Restarted
	c.mu.Lock()
	old, launch := c.broker, c.startBroker
	c.restarts++
	n := c.restarts
	c.mu.Unlock()
	if old == nil || launch == nil {
		return r, ErrNoRestart
	}
	if opt.ReadyTimeout == 0 {
		opt.ReadyTimeout = 180 * time.Second
	}
	switch opt.Mode {
	case Graceful:
		r.Killed = old.Stop(GracefulTimeout)
	case Kill, "":
		old.Kill()
	default:
		return r, fmt.Errorf("harness: unknown stop mode %q", opt.Mode)
	}
	r.Stopped = time.Now()
	if err := os.Rename(old.Log, old.Log+"."+strconv.Itoa(n)); err != nil {
		return r, fmt.Errorf("harness: keep broker log: %w", err)
	}
	if wait := time.Until(r.Stopped.Add(opt.DownFor)); wait > 0 {
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("harness: restart interrupted while down: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
	p, err := launch()
	if err != nil {
		return r, fmt.Errorf("harness: restart broker: %w", err)
	}
	r.Started = time.Now()
	c.mu.Lock()
	for i, q := range c.procs {
		if q == old {
			c.procs[i] = p
		}
	}
	c.broker = p
	c.mu.Unlock()
	if err := c.waitBrokerBack(ctx, opt.Topics, opt.ReadyTimeout); err != nil {
		return r, err
	}
	r.Ready = time.Now()
	return r, nil
}

// waitBrokerBack polls until the restarted broker answers a request on its
// own port, the name server lists it in the cluster, and every topic is
// routed to it. A name server that has not noticed the old broker leave may
// still list it; the broker answering first rules out a stale "ready".
func (c *Cluster) waitBrokerBack(ctx context.Context, topics []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := c.exitedEarly(); err != nil {
			return err
		}
		last = c.brokerBack(ctx, topics)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: broker not back after %v: %w\n%s", timeout, last, c.Logs(1500))
		case <-tick.C:
		}
	}
}

func (c *Cluster) brokerBack(ctx context.Context, topics []string) error {
	if _, err := Call(ctx, c.BrokerAddr, codeGetBrokerRuntimeInfo, nil, nil); err != nil {
		return fmt.Errorf("broker does not answer: %w", err)
	}
	f, err := Call(ctx, c.NamesrvAddr, codeGetBrokerClusterInfo, nil, nil)
	switch {
	case err != nil:
		return err
	case f.Code != 0:
		return fmt.Errorf("cluster info code %d %q", f.Code, f.Remark)
	case !strings.Contains(string(f.Body), c.BrokerAddr):
		return fmt.Errorf("broker %s not registered", c.BrokerAddr)
	}
	for _, t := range topics {
		f, err := Call(ctx, c.NamesrvAddr, codeGetRouteinfoByTopic, map[string]string{"topic": t}, nil)
		switch {
		case err != nil:
			return err
		case f.Code != 0:
			return fmt.Errorf("route %s: code %d %q", t, f.Code, f.Remark)
		case !strings.Contains(string(f.Body), c.BrokerAddr):
			return fmt.Errorf("route %s does not name %s", t, c.BrokerAddr)
		}
	}
	return nil
}
