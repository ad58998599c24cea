// Command rocketgo runs a name server and a broker in one process:
//
//	rocketgo [-dataDir ./data] [-namesrvListen 127.0.0.1:9876] [-brokerListen 127.0.0.1:10911] [-c broker.conf]
//
// The store lives under DIR/store, the name server's KV config under
// DIR/namesrv. Point clients at the name server address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/namesrv"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	stop, err := start(os.Args[1:], os.Stdout, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocketgo:", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	log.Info("shutting down")
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "rocketgo:", err)
		os.Exit(1)
	}
}

// start parses args, starts the name server and the broker, prints the
// ready line to out and returns the function that stops both.
func start(args []string, out io.Writer, log *slog.Logger) (func() error, error) {
	fs := flag.NewFlagSet("rocketgo", flag.ContinueOnError)
	dataDir := fs.String("dataDir", "./data", "data directory (store under DIR/store, name server KV under DIR/namesrv)")
	nsListen := fs.String("namesrvListen", "127.0.0.1:9876", "name server listen address")
	brokerListen := fs.String("brokerListen", "127.0.0.1:10911", "broker listen address (its IP is advertised)")
	confPath := fs.String("c", "", "optional broker.conf overrides (Java properties)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		return nil, err
	}
	nsHost, nsPort, err := splitHostPort(*nsListen)
	if err != nil {
		return nil, fmt.Errorf("-namesrvListen: %w", err)
	}
	bHost, bPort, err := splitHostPort(*brokerListen)
	if err != nil {
		return nil, fmt.Errorf("-brokerListen: %w", err)
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
			return nil, err
		}
		for _, k := range unknown {
			log.Warn("unknown broker.conf key ignored", "key", k)
		}
	}

	nsCfg := namesrv.Default()
	nsCfg.BindAddress = nsHost
	nsCfg.ListenPort = nsPort
	nsCfg.KVConfigPath = filepath.Join(dir, "namesrv", "kvConfig.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "namesrv", "namesrv.properties")
	ns, err := namesrv.New(nsCfg, log.With("component", "namesrv"))
	if err != nil {
		return nil, err
	}
	if err := ns.Start(); err != nil {
		return nil, err
	}
	cfg.NamesrvAddr = ns.Addr()
	b, err := broker.New(cfg, broker.Deps{Logger: log.With("component", "broker")})
	if err != nil {
		ns.Close()
		return nil, err
	}
	if err := b.Start(); err != nil {
		b.Close()
		ns.Close()
		return nil, err
	}
	addrs := []string{b.Addr()}
	if fa := b.FastAddr(); fa != "" {
		addrs = append(addrs, fa)
	}
	level, msg := brokerListenNotice(addrs...)
	log.Log(context.Background(), level, msg, "addrs", strings.Join(addrs, ","))
	fmt.Fprintf(out, "rocketgo ready namesrv=%s broker=%s data=%s\n", ns.Addr(), b.BrokerAddr(), dir)
	return func() error {
		return errors.Join(b.Close(), ns.Close())
	}, nil
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
