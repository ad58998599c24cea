// Command mqbroker runs a RocketMQ broker: mqbroker -c broker.conf [-n addr] [-p].
// With enableGrpcProxy=true in broker.conf it also serves the RocketMQ 5
// gRPC endpoint (Java proxy's local mode) on grpcServerPort (8081).
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/rocketgo/rocketgo/compat/javalog"
	"github.com/rocketgo/rocketgo/store/iolane"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/proxy/grpcsvc"
)

func main() {
	// Room for the store's blocking disk calls beside one P per core (store/iolane).
	iolane.Reserve(iolane.Lanes)
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mqbroker:", err)
		os.Exit(1)
	}
}

func run() error {
	confPath := flag.String("c", "", "broker.conf (Java properties)")
	namesrv := flag.String("n", "", "name server address list, ';'-separated")
	printConf := flag.Bool("p", false, "print the effective configuration and exit")
	logHome := flag.String("logHome", "", "like Java's -Duser.home: log in Java's file layout under DIR/logs/rocketmqlogs (broker.log, store.log, remoting.log …, rolled at 128 MB); default: stderr")
	flag.Parse()

	log, closeLog, err := javalog.Logger(*logHome, "broker", os.Stderr)
	if err != nil {
		return err
	}
	defer closeLog()
	cfg := broker.DefaultConfig()
	if v := os.Getenv("NAMESRV_ADDR"); v != "" {
		cfg.NamesrvAddr = v
	}
	if *confPath != "" {
		unknown, err := cfg.LoadFile(*confPath)
		if err != nil {
			return err
		}
		for _, k := range unknown {
			if !tlsconf.IsKey(k) && !grpcsvc.IsBrokerKey(k) {
				log.Warn("unknown broker.conf key ignored", "key", k)
			}
		}
	}
	// Java's -Dtls.* system properties: here keys of broker.conf.
	tc, err := tlsconf.LoadFile(*confPath)
	if err != nil {
		return err
	}
	cfg.TLS = &tc
	if *namesrv != "" {
		cfg.NamesrvAddr = *namesrv
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if *printConf {
		for _, kv := range cfg.Properties() {
			fmt.Printf("%s=%s\n", kv[0], kv[1])
		}
		return nil
	}
	grpcOn, grpcPort, err := grpcsvc.BrokerKeys(*confPath)
	if err != nil {
		return err
	}
	b, err := broker.New(cfg, broker.Deps{Logger: log})
	if err != nil {
		return err
	}
	if err := b.Start(); err != nil {
		b.Close()
		return err
	}
	addrs := boundAddrs(b.Addr(), b.FastAddr())
	if ha := b.HAAddr(); ha != "" {
		addrs = append(addrs, ha) // the HA port, bound like the main one
	}
	if grpcOn {
		// Local mode: the endpoint fronts this broker only, reaching it
		// through its own remoting port (so its pipeline applies).
		host := cfg.ListenIP
		gcfg := grpcsvc.Default()
		gcfg.GRPCPort = grpcPort
		if err := grpcsvc.TuneFromBrokerConf(*confPath, &gcfg); err != nil {
			b.Close()
			return err
		}
		var signer func(*codec.Frame)
		if gcfg.Auth, gcfg.Authority, signer, err = grpcsvc.LocalAuth(b.Auth()); err != nil {
			b.Close()
			return err
		}
		gtls, err := grpcsvc.TLSFromBrokerConf(*confPath, tc.ServerMode)
		if err != nil {
			b.Close()
			return err
		}
		gcfg.TLS = &gtls
		ep, err := grpcsvc.Start(grpcsvc.EndpointConfig{Listen: net.JoinHostPort(host, strconv.Itoa(grpcPort)),
			NamesrvAddrs: []string{cfg.NamesrvAddr}, LocalBroker: cfg.BrokerName, TLS: cfg.TLS, Signer: signer,
			Service: gcfg, Logger: log.With("component", "grpc")})
		if err != nil {
			b.Close()
			return err
		}
		defer ep.Close()
		addrs = append(addrs, ep.Addr())
	}
	level, msg := listenNotice(addrs...)
	log.Log(context.Background(), level, msg, "addrs", strings.Join(addrs, ","))
	fmt.Printf("The broker[%s, %s] boot success. serializeType=JSON and name server is %s\n", cfg.BrokerName, b.BrokerAddr(), cfg.NamesrvAddr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	log.Info("shutting down")
	return b.Close()
}
