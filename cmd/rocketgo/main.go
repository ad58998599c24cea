// Command rocketgo runs a name server and a broker in one process, and
// optionally a controller (Java's enableControllerInNamesrv=true):
//
//	rocketgo [-dataDir ./data] [-namesrvListen 127.0.0.1:9876] [-brokerListen 127.0.0.1:10911] [-c broker.conf]
//	         [-namesrvConf namesrv.conf] [-controller] [-controllerListen 127.0.0.1:9878]
//	         [-grpcListen 127.0.0.1:8081]
//
// The store lives under DIR/store, the name server's KV config under
// DIR/namesrv, the controller's Raft store under DIR/controller. Point
// clients at the name server address. With the controller on, a broker.conf
// with enableControllerMode=true and no controllerAddr uses the embedded
// controller. The gRPC endpoint for the RocketMQ 5 SDKs (proxy/grpcsvc,
// Java proxy's local mode) listens on -grpcListen, on by default.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/rocketgo/rocketgo/compat/javalog"
	"github.com/rocketgo/rocketgo/store/iolane"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/namesrv"
	"github.com/rocketgo/rocketgo/proxy/grpcsvc"
)

func main() {
	// Room for the store's blocking disk calls beside one P per core (store/iolane).
	iolane.Reserve(iolane.Lanes)
	log, closeLog, err := javalog.Logger(logHomeArg(os.Args[1:]), "broker", os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocketgo:", err)
		os.Exit(1)
	}
	defer closeLog()
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

// logHomeArg is -logHome's value in args ("" when absent): main needs the
// logger before start parses the rest.
func logHomeArg(args []string) string {
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if v, ok := strings.CutPrefix(a, "logHome="); ok {
			return v
		}
		if a == "logHome" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// start parses args, starts the name server and the broker, prints the
// ready line to out and returns the function that stops both.
func start(args []string, out io.Writer, log *slog.Logger) (func() error, error) {
	fs := flag.NewFlagSet("rocketgo", flag.ContinueOnError)
	dataDir := fs.String("dataDir", "./data", "data directory (store under DIR/store, name server KV under DIR/namesrv)")
	nsListen := fs.String("namesrvListen", "127.0.0.1:9876", "name server listen address")
	brokerListen := fs.String("brokerListen", "127.0.0.1:10911", "broker listen address (its IP is advertised)")
	confPath := fs.String("c", "", "optional broker.conf overrides (Java properties)")
	nsConfPath := fs.String("namesrvConf", "", "optional name server config (Java properties, as mqnamesrv -c): name server keys, enableControllerInNamesrv and the controller's keys")
	withCtl := fs.Bool("controller", false, "run the embedded controller (enableControllerInNamesrv=true): a single-node group on -controllerListen unless -namesrvConf sets controllerDLegerPeers")
	grpcListen := fs.String("grpcListen", "127.0.0.1:8081", "gRPC endpoint (apache.rocketmq.v2.MessagingService, for the RocketMQ 5 SDKs) in local mode; empty disables it. If the default port is taken the endpoint is skipped with a warning")
	ctlListen := fs.String("controllerListen", "127.0.0.1:9878", "embedded controller's remoting address (its Raft port is this port + 1); a fixed port")
	fs.String("logHome", "", "like Java's -Duser.home: log in Java's file layout under DIR/logs/rocketmqlogs (broker.log, store.log, remoting.log …, rolled at 128 MB); default: stderr (read by main before the servers start)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
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
			if !tlsconf.IsKey(k) && !grpcsvc.IsBrokerKey(k) {
				log.Warn("unknown broker.conf key ignored", "key", k)
			}
		}
	}

	nsCfg := namesrv.Default()
	nsCfg.BindAddress = nsHost
	nsCfg.ListenPort = nsPort
	nsCfg.KVConfigPath = filepath.Join(dir, "namesrv", "kvConfig.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "namesrv", "namesrv.properties")
	nsFile, err := readNamesrvFile(*nsConfPath)
	if err != nil {
		return nil, err
	}
	nsUnknown, err := nsFile.applyNamesrv(&nsCfg)
	if err != nil {
		return nil, err
	}
	for _, k := range nsFile.unknownKeys(nsUnknown) {
		if !tlsconf.IsKey(k) {
			log.Warn("unknown namesrv config key ignored", "key", k, "file", nsFile.path)
		}
	}
	if set["namesrvListen"] {
		// compat: like Java's startup, the command line wins over the file.
		nsCfg.BindAddress, nsCfg.ListenPort = nsHost, nsPort
	}
	if *withCtl {
		nsCfg.EnableControllerInNamesrv = true
	}
	var ctlCfg controller.Config
	if nsCfg.EnableControllerInNamesrv {
		if ctlCfg, err = controllerConfig(dir, *ctlListen, nsFile); err != nil {
			return nil, fmt.Errorf("controller config: %w", err)
		}
	}

	// Java's -Dtls.* system properties are the process's: here the keys of
	// both files (broker.conf's win), for all three servers.
	tlsProps := tlsconf.FromProps(nsFile.props)
	bTLS, err := tlsconf.FileProps(*confPath)
	if err != nil {
		return nil, err
	}
	maps.Copy(tlsProps, bTLS)
	tc, err := tlsconf.Load(tlsProps)
	if err != nil {
		return nil, err
	}
	cfg.TLS, nsCfg.TLS, ctlCfg.TLS = &tc, &tc, &tc

	// Start: name server, controller, broker; stop in the reverse order.
	ns, err := namesrv.New(nsCfg, log.With("component", "namesrv"))
	if err != nil {
		return nil, err
	}
	if err := ns.Start(); err != nil {
		return nil, err
	}
	var ctl *controller.Controller
	if nsCfg.EnableControllerInNamesrv {
		if ctl, err = startController(context.Background(), ctlCfg, log.With("component", "controller")); err != nil {
			return nil, errors.Join(err, ns.Close())
		}
		if cfg.EnableControllerMode && strings.TrimSpace(cfg.ControllerAddr) == "" {
			cfg.ControllerAddr = controllerDialAddr(ctl)
			log.Info("rocketgo: broker in controller mode uses the embedded controller", "controllerAddr", cfg.ControllerAddr)
		}
	}
	closeCtl := func() error {
		if ctl == nil {
			return nil
		}
		if err := ctl.Close(); err != nil {
			return fmt.Errorf("close controller: %w", err)
		}
		return nil
	}
	cfg.NamesrvAddr = ns.Addr()
	b, err := broker.New(cfg, broker.Deps{Logger: log.With("component", "broker")})
	if err != nil {
		return nil, errors.Join(err, closeCtl(), ns.Close())
	}
	if err := b.Start(); err != nil {
		return nil, errors.Join(err, b.Close(), closeCtl(), ns.Close())
	}
	var grpcEP *grpcsvc.Endpoint
	if *grpcListen != "" {
		gcfg := grpcsvc.Default()
		gcfg.GRPCPort = 0 // advertise the port the client dialed
		if err := grpcsvc.TuneFromBrokerConf(*confPath, &gcfg); err != nil {
			return nil, errors.Join(err, b.Close(), closeCtl(), ns.Close())
		}
		var signer func(*codec.Frame)
		if gcfg.Auth, gcfg.Authority, signer, err = grpcsvc.LocalAuth(b.Auth()); err != nil {
			return nil, errors.Join(err, b.Close(), closeCtl(), ns.Close())
		}
		gtls, err := grpcsvc.TLSFromBrokerConf(*confPath, tc.ServerMode)
		if err != nil {
			return nil, errors.Join(err, b.Close(), closeCtl(), ns.Close())
		}
		gcfg.TLS = &gtls
		grpcEP, err = grpcsvc.Start(grpcsvc.EndpointConfig{Listen: *grpcListen, NamesrvAddrs: []string{ns.Addr()},
			LocalBroker: cfg.BrokerName, TLS: cfg.TLS, Signer: signer, Service: gcfg, Logger: log.With("component", "grpc")})
		if err != nil {
			if set["grpcListen"] {
				return nil, errors.Join(err, b.Close(), closeCtl(), ns.Close())
			}
			log.Warn("rocketgo: gRPC endpoint not started", "err", err)
		}
	}
	addrs := []string{b.Addr()}
	if fa := b.FastAddr(); fa != "" {
		addrs = append(addrs, fa)
	}
	level, msg := brokerListenNotice(addrs...)
	log.Log(context.Background(), level, msg, "addrs", strings.Join(addrs, ","))
	ready := fmt.Sprintf("rocketgo ready namesrv=%s broker=%s data=%s", ns.Addr(), b.BrokerAddr(), dir)
	if ctl != nil {
		ready += " controller=" + ctl.Addr()
	}
	fmt.Fprintln(out, ready)
	if grpcEP != nil {
		// A line of its own: tools parse the ready line as it was.
		fmt.Fprintln(out, "rocketgo grpc="+grpcEP.Addr())
	}
	return func() error {
		// Broker first (it unregisters and stops heartbeating the
		// controller), then the controller, then the name server.
		var errs []error
		if grpcEP != nil {
			if err := grpcEP.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close gRPC endpoint: %w", err))
			}
		}
		if err := b.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close broker: %w", err))
		}
		log.Info("rocketgo: broker stopped")
		errs = append(errs, closeCtl())
		if err := ns.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close name server: %w", err))
		}
		return errors.Join(errs...)
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
