package controller

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// node is one Raft member: the log and stable store in
// <storePath>/raft.db (bbolt), snapshots in <storePath>/snapshots, the
// Raft transport on its own TCP port.
type node struct {
	raft  *raft.Raft
	store *raftboltdb.BoltStore
	trans *raft.NetworkTransport
}

// raftLogWriter hands hashicorp's log lines to slog.
type raftLogWriter struct{ log *slog.Logger }

func (w raftLogWriter) Write(p []byte) (int, error) {
	w.log.Log(context.Background(), slog.LevelInfo, "controller: raft", "line", string(bytes.TrimSpace(p)))
	return len(p), nil
}

func openNode(cfg *Config, peers []Peer, f raft.FSM, log *slog.Logger) (*node, error) {
	var self Peer
	for _, p := range peers {
		if p.ID == cfg.SelfID {
			self = p
		}
	}
	if err := os.MkdirAll(cfg.StorePath, 0o755); err != nil {
		return nil, fmt.Errorf("controller: store path: %w", err)
	}
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: raftLogWriter{log}, DisableTime: true})

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(self.ID)
	rc.Logger = hl
	rc.HeartbeatTimeout = cfg.RaftElectionTimeout
	rc.ElectionTimeout = cfg.RaftElectionTimeout
	rc.LeaderLeaseTimeout = cfg.RaftElectionTimeout / 2
	rc.CommitTimeout = 20 * time.Millisecond
	// The state is small: snapshot often so the log stays short.
	rc.SnapshotThreshold = 1024
	rc.SnapshotInterval = 30 * time.Second
	rc.TrailingLogs = 1024

	store, err := raftboltdb.NewBoltStore(filepath.Join(cfg.StorePath, "raft.db"))
	if err != nil {
		return nil, fmt.Errorf("controller: open raft.db: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.StorePath, 2, hl)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("controller: snapshot store: %w", err)
	}
	adv, err := net.ResolveTCPAddr("tcp", self.RaftAddr)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("controller: raft address %s: %w", self.RaftAddr, err)
	}
	var trans *raft.NetworkTransport
	if cfg.TLS != nil && cfg.TLS.Raft {
		var st *tlsStream
		if st, err = newTLSStream(cfg.TLS, self.RaftAddr, adv); err == nil {
			trans = raft.NewNetworkTransportWithLogger(st, 3, 5*time.Second, hl)
		}
	} else {
		trans, err = raft.NewTCPTransportWithLogger(self.RaftAddr, adv, 3, 5*time.Second, hl)
	}
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("controller: raft transport %s: %w", self.RaftAddr, err)
	}
	n := &node{store: store, trans: trans}
	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		n.close()
		return nil, fmt.Errorf("controller: raft state: %w", err)
	}
	if !existing {
		// Every node bootstraps with the same static membership (the
		// controllerDLegerPeers list); Raft accepts identical bootstraps.
		var conf raft.Configuration
		for _, p := range peers {
			conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr)})
		}
		if err := raft.BootstrapCluster(rc, store, store, snaps, trans, conf); err != nil {
			n.close()
			return nil, fmt.Errorf("controller: bootstrap: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, f, store, store, snaps, trans)
	if err != nil {
		n.close()
		return nil, fmt.Errorf("controller: start raft: %w", err)
	}
	n.raft = r
	return n, nil
}

func (n *node) close() error {
	var err error
	if n.raft != nil {
		err = n.raft.Shutdown().Error()
	}
	if n.trans != nil {
		n.trans.Close()
	}
	if n.store != nil {
		if e := n.store.Close(); err == nil {
			err = e
		}
	}
	return err
}
