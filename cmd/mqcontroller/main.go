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
	"github.com/rocketgo/rocketgo/controller"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run is main without the process: stop, when non-nil, replaces the
// signal channel (tests).
func run(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fs := flag.NewFlagSet("mqcontroller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	confPath := fs.String("c", "", "controller config file (Java .properties)")
	printCfg := fs.Bool("p", false, "print the effective configuration and exit")
	logHome := fs.String("logHome", "", "like Java's -Duser.home: log in Java's file layout under DIR/logs/rocketmqlogs (broker.log, store.log, remoting.log …, rolled at 128 MB); default: stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	log, closeLog, err := javalog.Logger(*logHome, "controller", stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mqcontroller:", err)
		return 1
	}
	defer closeLog()

	cfg, err := LoadConfig(*confPath, log)
	if err != nil {
		log.Error("mqcontroller: config", "err", err)
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
	c, err := controller.New(cfg, log)
	if err != nil {
		log.Error("mqcontroller: init", "err", err)
		return 1
	}
	if err := c.Start(); err != nil {
		log.Error("mqcontroller: start", "err", err)
		return 1
	}
	fmt.Fprintf(stdout, "The Controller Server boot success. serializeType=JSON, address %s\n", c.Addr())
	if stop == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(ch)
		stop = ch
	}
	sig := <-stop
	log.Info("mqcontroller: shutting down", "signal", sig.String())
	if err := c.Close(); err != nil {
		log.Error("mqcontroller: close", "err", err)
		return 1
	}
	return 0
}

// LoadConfig starts from Java's defaults, takes ROCKETMQ_HOME, then the file.
func LoadConfig(path string, log *slog.Logger) (controller.Config, error) {
	cfg := controller.Default()
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
			log.Warn("mqcontroller: unknown config key ignored", "key", k, "file", path)
		}
	}
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}
