// Command rocketgo runs a name server and a broker in one process:
//
//	rocketgo [-dataDir ./data] [-namesrvListen 127.0.0.1:9876] [-brokerListen 127.0.0.1:10911] [-c broker.conf]
//
// The store lives under DIR/store, the name server's KV config under
// DIR/namesrv. Point clients at the name server address.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/namesrv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rocketgo:", err)
		os.Exit(1)
	}
}

func run() error {
	dataDir := flag.String("dataDir", "./data", "data directory (store under DIR/store, name server KV under DIR/namesrv)")
	nsListen := flag.String("namesrvListen", "127.0.0.1:9876", "name server listen address")
	brokerListen := flag.String("brokerListen", "127.0.0.1:10911", "broker listen address (its IP is advertised)")
	confPath := flag.String("c", "", "optional broker.conf overrides (Java properties)")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		return err
	}

	nsHost, nsPort, err := splitHostPort(*nsListen)
	if err != nil {
		return fmt.Errorf("-namesrvListen: %w", err)
	}
	nsCfg := namesrv.Default()
	nsCfg.BindAddress = nsHost
	nsCfg.ListenPort = nsPort
	nsCfg.KVConfigPath = filepath.Join(dir, "namesrv", "kvConfig.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "namesrv", "namesrv.properties")
	ns, err := namesrv.New(nsCfg, log.With("component", "namesrv"))
	if err != nil {
		return err
	}
	if err := ns.Start(); err != nil {
		return err
	}

	bHost, bPort, err := splitHostPort(*brokerListen)
	if err != nil {
		ns.Close()
		return fmt.Errorf("-brokerListen: %w", err)
	}
	cfg := broker.DefaultConfig()
	cfg.BrokerName = "broker-a"
	cfg.StorePathRootDir = filepath.Join(dir, "store")
	cfg.ListenIP = bHost
	cfg.ListenPort = bPort
	if bHost != "" && bHost != "0.0.0.0" && bHost != "::" {
		cfg.BrokerIP1 = bHost
	}
	if *confPath != "" {
		unknown, err := cfg.LoadFile(*confPath)
		if err != nil {
			ns.Close()
			return err
		}
		for _, k := range unknown {
			log.Warn("unknown broker.conf key ignored", "key", k)
		}
	}
	cfg.NamesrvAddr = ns.Addr()
	b, err := broker.New(cfg, broker.Deps{Logger: log.With("component", "broker")})
	if err != nil {
		ns.Close()
		return err
	}
	if err := b.Start(); err != nil {
		b.Close()
		ns.Close()
		return err
	}
	fmt.Printf("rocketgo ready namesrv=%s broker=%s data=%s\n", ns.Addr(), b.BrokerAddr(), dir)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	log.Info("shutting down")
	berr := b.Close()
	nerr := ns.Close()
	if berr != nil {
		return berr
	}
	return nerr
}

func splitHostPort(s string) (string, int, error) {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return h, n, nil
}
