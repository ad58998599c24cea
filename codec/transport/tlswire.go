package transport

import (
	"fmt"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// WithTLS returns cfg serving tc's tls.server.mode, with PROXY protocol
// detection as Java's remoting server always does. A nil tc returns cfg
// unchanged (no detection: tests and embedders that configure nothing).
func (cfg ServerConfig) WithTLS(tc *tlsconf.Config) (ServerConfig, error) {
	if tc == nil {
		return cfg, nil
	}
	t, mode, err := tc.Server()
	if err != nil {
		return cfg, fmt.Errorf("transport: %s=%s: %w", tlsconf.KeyServerMode, tc.ServerMode, err)
	}
	cfg.TLSMode, cfg.TLS, cfg.ProxyProtocol = mode, t, true
	return cfg, nil
}

// WithTLS returns cfg dialing TLS when tc enables it (tls.enable).
func (cfg ClientConfig) WithTLS(tc *tlsconf.Config) (ClientConfig, error) {
	if tc == nil {
		return cfg, nil
	}
	t, on, err := tc.Client()
	if err != nil {
		return cfg, fmt.Errorf("transport: %s: %w", tlsconf.KeyEnable, err)
	}
	if on {
		cfg.TLS = t
	}
	return cfg, nil
}
