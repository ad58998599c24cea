package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/rocketgo/rocketgo/compat/javalog"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/namesrv"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run is main without the process: stop, when non-nil, replaces the
// signal channel (tests).
func run(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fs := flag.NewFlagSet("mqnamesrv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	confPath := fs.String("c", "", "name server config file (Java .properties)")
	printCfg := fs.Bool("p", false, "print the effective configuration and exit")
	logHome := fs.String("logHome", "", "like Java's -Duser.home: log in Java's file layout under DIR/logs/rocketmqlogs (broker.log, store.log, remoting.log …, rolled at 128 MB); default: stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	log, closeLog, err := javalog.Logger(*logHome, "namesrv", stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mqnamesrv:", err)
		return 1
	}
	defer closeLog()

	cfg, err := loadConfig(*confPath, log)
	if err != nil {
		log.Error("mqnamesrv: config", "err", err)
		return 1
	}
	if *confPath != "" {
		fmt.Fprintf(stdout, "load config properties file OK, %s\n", *confPath)
	}
	if *printCfg {
		if _, err := stdout.Write(javaprops.AppendPlain(nil, cfg.Properties())); err != nil {
			return 1
		}
		return 0
	}

	s, err := namesrv.New(cfg, log)
	if err != nil {
		log.Error("mqnamesrv: init", "err", err)
		return 1
	}
	if err := s.Start(); err != nil {
		log.Error("mqnamesrv: start", "err", err)
		return 1
	}
	fmt.Fprintf(stdout, "The Name Server boot success. serializeType=JSON, address %s\n", s.Addr())
	if cfg.EnableControllerInNamesrv {
		ctl, err := startController(*confPath, log)
		if err != nil {
			log.Error("mqnamesrv: controller", "err", err)
			_ = s.Close()
			return 1
		}
		defer ctl.Close()
		fmt.Fprintf(stdout, "The Controller Server boot success. serializeType=JSON, address %s\n", ctl.Addr())
	}
	if stop == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(ch)
		stop = ch
	}
	sig := <-stop
	log.Info("mqnamesrv: shutting down", "signal", sig.String())
	if err := s.Close(); err != nil {
		log.Error("mqnamesrv: close", "err", err)
		return 1
	}
	return 0
}

// loadConfig starts from the defaults, takes ROCKETMQ_HOME, then the file.
func loadConfig(path string, log *slog.Logger) (namesrv.Config, error) {
	cfg := namesrv.Default()
	if home := os.Getenv("ROCKETMQ_HOME"); home != "" {
		cfg.RocketmqHome = home
	}
	// Java's -Dtls.* system properties: here keys of the -c file.
	tc, err := tlsconf.LoadFile(path)
	if err != nil {
		return cfg, err
	}
	cfg.TLS = &tc
	if path == "" {
		return cfg, cfg.Validate()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("read %s: %w", path, err)
	}
	p, err := javaprops.Parse(b)
	if err != nil {
		return cfg, fmt.Errorf("parse %s: %w", path, err)
	}
	unknown, err := cfg.Apply(p)
	for _, k := range unknown {
		if !tlsconf.IsKey(k) {
			log.Warn("mqnamesrv: unknown config key ignored", "key", k, "file", path)
		}
	}
	if err != nil {
		return cfg, err
	}
	// compat: like Java, UPDATE_NAMESRV_CONFIG then rewrites the -c file.
	cfg.ConfigStorePath = path
	log.Info("mqnamesrv: loaded config file", "file", path, "keys", len(p))
	return cfg, cfg.Validate()
}
