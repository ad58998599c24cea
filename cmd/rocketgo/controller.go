package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/namesrv"
)

// The embedded controller (Java's enableControllerInNamesrv=true): a
// controller node in the name server's process, on its own port. Without
// further keys it is the single-node group of Java's quick-start
// namesrv.conf (controllerDLegerGroup=group1,
// controllerDLegerPeers=n0-127.0.0.1:9878, controllerDLegerSelfId=n0),
// its Raft store under DIR/controller.

// Defaults of the single-node group (Java's quick-start namesrv.conf).
const (
	defaultControllerGroup  = "group1"
	defaultControllerSelfID = "n0"
)

// leaderWait bounds how long start waits for a single-node group to lead
// before it starts the broker (hashicorp/raft elects a lone voter after
// one to two election timeouts).
func leaderWait(cfg controller.Config) time.Duration {
	return max(10*time.Second, 4*cfg.RaftElectionTimeout)
}

// namesrvFile is a parsed -namesrvConf file.
type namesrvFile struct {
	path  string
	props javaprops.Props
}

func readNamesrvFile(path string) (namesrvFile, error) {
	if path == "" {
		return namesrvFile{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return namesrvFile{}, fmt.Errorf("-namesrvConf: %w", err)
	}
	p, err := javaprops.Parse(b)
	if err != nil {
		return namesrvFile{}, fmt.Errorf("-namesrvConf: parse %s: %w", path, err)
	}
	return namesrvFile{path: path, props: p}, nil
}

// applyNamesrv sets the file's name server keys on cfg and returns the
// keys the name server does not know.
func (f namesrvFile) applyNamesrv(cfg *namesrv.Config) ([]string, error) {
	if f.path == "" {
		return nil, nil
	}
	unknown, err := cfg.Apply(f.props)
	if err != nil {
		return nil, fmt.Errorf("-namesrvConf %s: %w", f.path, err)
	}
	// compat: like mqnamesrv -c, UPDATE_NAMESRV_CONFIG rewrites this file.
	cfg.ConfigStorePath = f.path
	return unknown, nil
}

// controllerConfig is the embedded controller's configuration: Java's
// defaults, ROCKETMQ_HOME, the single-node group on listen with its
// store under dir, then the file's ControllerConfig keys (as Java's
// NamesrvStartup reads them from the name server's file).
func controllerConfig(dir, listen string, f namesrvFile) (controller.Config, error) {
	cfg := controller.Default()
	if home := os.Getenv("ROCKETMQ_HOME"); home != "" {
		cfg.RocketmqHome = home
	}
	cfg.Group = defaultControllerGroup
	cfg.SelfID = defaultControllerSelfID
	cfg.Peers = defaultControllerSelfID + "-" + listen
	cfg.StorePath = filepath.Join(dir, "controller")
	cfg.ConfigStorePath = filepath.Join(dir, "controller", "controller.properties")
	if f.path != "" {
		// The name server's own keys are not the controller's: no warnings here.
		if _, err := cfg.Apply(f.props); err != nil {
			return cfg, fmt.Errorf("-namesrvConf %s: %w", f.path, err)
		}
	}
	if _, err := cfg.PeerList(); err != nil {
		if cfg.Peers == defaultControllerSelfID+"-"+listen {
			return cfg, fmt.Errorf("-controllerListen %s: %w (a fixed port is needed: Raft listens on port+1 and the Raft store keeps that address)", listen, err)
		}
		return cfg, err
	}
	return cfg, nil
}

// unknownKeys are the file's keys that neither the name server (nsUnknown)
// nor the controller knows.
func (f namesrvFile) unknownKeys(nsUnknown []string) []string {
	probe := controller.Default()
	ctlUnknown, _ := probe.Apply(f.props)
	var out []string
	for _, k := range nsUnknown {
		if slices.Contains(ctlUnknown, k) {
			out = append(out, k)
		}
	}
	return out
}

// startController starts the node; a single-node group is waited for
// until it leads (bounded), so a controller-mode broker started next
// registers at once instead of after its retry period.
func startController(ctx context.Context, cfg controller.Config, log *slog.Logger) (*controller.Controller, error) {
	c, err := controller.New(cfg, log)
	if err != nil {
		return nil, fmt.Errorf("start embedded %w", err)
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("start embedded %w", err)
	}
	peers, _ := cfg.PeerList()
	if len(peers) != 1 {
		return c, nil // the other nodes may start later, as with Java
	}
	wait := leaderWait(cfg)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !c.IsLeader() {
		select {
		case <-ctx.Done():
			log.Warn("rocketgo: the single-node controller does not lead yet; starting the broker anyway", "waited", wait)
			return c, nil
		case <-tick.C:
		}
	}
	return c, nil
}

// controllerDialAddr is the address the embedded broker gets as its
// controllerAddr: the node's own peer address, loopback when it listens
// on every interface.
func controllerDialAddr(c *controller.Controller) string {
	addr := c.Addr()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}
