package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/controller"
)

// startController runs the controller node embedded in the name server
// (enableControllerInNamesrv=true), configured from the same file like
// Java's NamesrvStartup: ControllerConfig keys next to the name server's.
func startController(path string, log *slog.Logger) (*controller.Controller, error) {
	cfg := controller.Default()
	if home := os.Getenv("ROCKETMQ_HOME"); home != "" {
		cfg.RocketmqHome = home
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		p, err := javaprops.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		// The name server's own keys are not the controller's: no warnings.
		if _, err := cfg.Apply(p); err != nil {
			return nil, err
		}
	}
	tc, err := tlsconf.LoadFile(path)
	if err != nil {
		return nil, err
	}
	cfg.TLS = &tc
	c, err := controller.New(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	return c, nil
}
