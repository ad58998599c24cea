package grpcsvc

import (
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// EndpointConfig is what a running endpoint needs: where to listen, the
// name servers, and (local mode) the broker it fronts.
type EndpointConfig struct {
	// Listen is the gRPC address ("127.0.0.1:8081", ":8081").
	Listen string
	// NamesrvAddrs are the name servers (';'-separated lists allowed).
	NamesrvAddrs []string
	// LocalBroker, when set, restricts routes to this broker name (local
	// mode); empty is cluster mode.
	LocalBroker string
	// TLS, when set, is the remoting client's TLS to name servers and
	// brokers (Java's tls.* client keys, as the broker's own client uses).
	TLS *tlsconf.Config
	// Signer, when set, signs every request the endpoint sends to name
	// servers and brokers (transport.ClientConfig.BeforeRequest): the
	// identity it forwards with once a gRPC client has passed the
	// endpoint's own checks, as Java's proxy signs with its
	// innerClientAuthenticationCredentials (cluster mode with
	// enableAclRpcHookForClusterMode).
	Signer func(*codec.Frame)
	// Service tunes the service; zero fields take Default's values.
	Service Config
	Logger  *slog.Logger
}

// Endpoint is a serving Service with its remoting client.
type Endpoint struct {
	svc     *Service
	backend *RemotingBackend
	client  *transport.Client
	pool    *transport.Pool
	addr    net.Addr
}

// Start builds the remoting backend and serves the service on cfg.Listen.
func Start(cfg EndpointConfig) (*Endpoint, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	router := transport.NewRouter()
	pool := transport.NewPool("grpc-proxy-callback", 2, 1024)
	cc, err := transport.ClientConfig{Logger: log, Router: router, BeforeRequest: cfg.Signer}.WithTLS(cfg.TLS)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("grpcsvc: remoting client TLS: %w", err)
	}
	client := transport.NewClient(cc)
	backend, err := NewRemotingBackend(RemotingConfig{NamesrvAddrs: cfg.NamesrvAddrs, LocalBroker: cfg.LocalBroker, Client: client, Logger: log})
	if err != nil {
		pool.Close()
		return nil, errors.Join(err, client.Close())
	}
	svc, err := New(cfg.Service, backend, log)
	if err != nil {
		pool.Close()
		return nil, errors.Join(err, client.Close())
	}
	svc.RegisterCallbacks(router, pool)
	addr, err := svc.Listen(cfg.Listen)
	if err != nil {
		pool.Close()
		return nil, errors.Join(err, client.Close())
	}
	backend.StartWatch() // follows master changes (watch.go)
	return &Endpoint{svc: svc, backend: backend, client: client, pool: pool, addr: addr}, nil
}

// Addr is the bound gRPC address.
func (e *Endpoint) Addr() string { return e.addr.String() }

// Service is the endpoint's service.
func (e *Endpoint) Service() *Service { return e.svc }

// Close stops serving and closes the remoting client.
func (e *Endpoint) Close() error {
	e.svc.Close()
	e.backend.Close()
	err := e.client.Close()
	e.pool.Close()
	return err
}
