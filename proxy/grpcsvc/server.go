package grpcsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// Config bounds and tunes the service; Default gives Java's proxy defaults
// (ProxyConfig).
type Config struct {
	// GRPCPort is the port QueryRoute advertises with the host the client
	// dialed (Java: grpcServerPort, useEndpointPortFromRequest=false);
	// 0 advertises the port the client dialed.
	GRPCPort int
	// MaxMessageSize bounds one message body (maxMessageSize, 4 MiB):
	// larger ones answer MESSAGE_BODY_TOO_LARGE.
	MaxMessageSize int
	// MaxRecvMsgSize bounds one gRPC request message; larger ones fail
	// with gRPC ResourceExhausted before they are decoded.
	MaxRecvMsgSize int
	// MaxConcurrentStreams bounds the streams of one connection.
	MaxConcurrentStreams uint32
	// IdleTimeout closes a connection without streams after this long
	// (grpcClientIdleTimeMills, 120 s).
	IdleTimeout time.Duration
	// KeepaliveTime and KeepaliveTimeout are the server's pings.
	KeepaliveTime, KeepaliveTimeout time.Duration
	// MaxUserPropertySize and UserPropertyMaxNum bound user properties.
	MaxUserPropertySize, UserPropertyMaxNum int
	// MaxMessageGroupSize bounds a message group in bytes (exclusive).
	MaxMessageGroupSize int
	// MinInvisible (receive), MaxInvisible, MaxDelay bound durations.
	MinInvisible, MaxInvisible, MaxDelay time.Duration
	// MinLongPolling, MaxLongPolling clamp a receive's long polling.
	MinLongPolling, MaxLongPolling time.Duration
	// MaxTransactionRecovery bounds orphaned_transaction_recovery_duration.
	MaxTransactionRecovery time.Duration
	// RequestTimeout bounds one remoting request to a broker.
	RequestTimeout time.Duration
	// RelayTimeout bounds the wait for a client's answer to a broker's
	// GET_CONSUMER_RUNNING_INFO / CONSUME_MESSAGE_DIRECTLY (relay.go);
	// Java's grpcProxyRelayRequestTimeoutInSeconds, 0 means 5 s.
	RelayTimeout time.Duration
	// MaxClients bounds the clients the service keeps settings for.
	MaxClients int
	// TelemetryFirstCommand bounds the wait for a Telemetry stream's first
	// command (limits.go); 0 means 30 s, negative unbounded.
	TelemetryFirstCommand time.Duration
	// TLS is the gRPC port's TLS (tls.go); nil serves plaintext only.
	TLS *TLSConfig
	// Auth turns on the credential and ACL checks (auth.go).
	Auth AuthConfig
	// Authority holds the users and ACLs the checks read; nil with auth on
	// reads them from a broker of ClusterName (ClusterAuthority).
	Authority Authority
	// ClusterName is rocketMQClusterName (cluster mode's users and ACLs).
	ClusterName string
	// AuthorityCache tunes the cluster authority's cache (zero: Java's
	// defaults); its Cluster is ClusterName when empty.
	AuthorityCache ClusterAuthorityConfig
	// Renew is the receipt-handle auto-renew (renew.go).
	Renew RenewConfig
}

// Default returns Java's proxy defaults.
func Default() Config {
	return Config{
		GRPCPort:               8081,
		MaxMessageSize:         4 << 20,
		MaxRecvMsgSize:         16 << 20,
		MaxConcurrentStreams:   1024,
		IdleTimeout:            120 * time.Second,
		KeepaliveTime:          30 * time.Second,
		KeepaliveTimeout:       10 * time.Second,
		MaxUserPropertySize:    16 << 10,
		UserPropertyMaxNum:     128,
		MaxMessageGroupSize:    64,
		MinInvisible:           10 * time.Second,
		MaxInvisible:           12 * time.Hour,
		MaxDelay:               24 * time.Hour,
		MinLongPolling:         5 * time.Second,
		MaxLongPolling:         20 * time.Second,
		MaxTransactionRecovery: time.Hour,
		RequestTimeout:         3 * time.Second,
		MaxClients:             100000,
		Renew:                  DefaultRenew(),
	}
}

// Service implements apache.rocketmq.v2.MessagingService on a Backend.
type Service struct {
	v2.UnimplementedMessagingServiceServer

	cfg     Config
	backend Backend
	log     *slog.Logger
	clients *registry
	txns    *txnTable
	relay   *relays
	renew   *renewer // nil: auto-renew disabled
	rr      roundRobin
	authz   *authorizer                      // nil: no checks
	creds   credentials.TransportCredentials // nil: plaintext only

	mu   sync.Mutex
	srv  *grpc.Server // guarded by mu
	addr net.Addr     // guarded by mu
}

// New returns a service on backend. Register its callbacks on the router
// of the remoting client the backend uses (RegisterCallbacks) so
// transaction check-backs reach producers.
func New(cfg Config, backend Backend, log *slog.Logger) (*Service, error) {
	if backend == nil {
		return nil, errors.New("grpcsvc: nil backend")
	}
	if log == nil {
		log = slog.Default()
	}
	def := Default()
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = def.MaxMessageSize
	}
	if cfg.MaxRecvMsgSize <= 0 {
		cfg.MaxRecvMsgSize = def.MaxRecvMsgSize
	}
	if cfg.MaxConcurrentStreams == 0 {
		cfg.MaxConcurrentStreams = def.MaxConcurrentStreams
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = def.RequestTimeout
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = def.MaxClients
	}
	if cfg.TelemetryFirstCommand == 0 {
		cfg.TelemetryFirstCommand = defaultTelemetryFirstCommand
	}
	s := &Service{cfg: cfg, backend: backend, log: log, clients: newRegistry(cfg.MaxClients), txns: newTxnTable(100000),
		relay: newRelays(cfg.RelayTimeout)}
	if cfg.Auth.AuthenticationEnabled || cfg.Auth.AuthorizationEnabled {
		authority := cfg.Authority
		if authority == nil {
			ac := cfg.AuthorityCache
			if ac.Cluster == "" {
				ac.Cluster = cfg.ClusterName
			}
			authority = NewClusterAuthority(backend, ac)
		}
		var err error
		if s.authz, err = newAuthorizer(cfg.Auth, authority, log); err != nil {
			return nil, err
		}
	}
	// Always a handshake of ours: the PROXY protocol is detected on every
	// connection, with or without TLS (tls.go).
	tc := TLSConfig{Mode: tlsconf.Disabled}
	if cfg.TLS != nil {
		tc = *cfg.TLS
	}
	var err error
	if s.creds, err = tc.credentials(); err != nil {
		return nil, err
	}
	if !cfg.Renew.Disabled {
		s.cfg.Renew = cfg.Renew.withDefaults()
		s.renew = newRenewer(s.cfg.Renew, renewFuncs{change: s.changeHandle, online: s.clientOnline, backoff: s.clientBackoff}, log)
		s.renew.start()
	}
	return s, nil
}

// RegisterCallbacks routes the requests brokers send to the proxy's
// remoting connections (CHECK_TRANSACTION_STATE, GET_CONSUMER_RUNNING_INFO,
// CONSUME_MESSAGE_DIRECTLY) to the service. pool runs them off the
// connection's reader.
func (s *Service) RegisterCallbacks(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqCheckTransactionState, pool, s.checkTransactionState)
	r.Handle(codec.ReqGetConsumerRunningInfo, pool, s.consumerRunningInfo) // relay.go
	r.Handle(codec.ReqConsumeMessageDirectly, pool, s.consumeMessageDirectly)
}

// ServerOptions are the grpc.Server options that bound the endpoint.
func (s *Service) ServerOptions() []grpc.ServerOption {
	opts := append(limitOptions(), // limits.go
		grpc.MaxRecvMsgSize(s.cfg.MaxRecvMsgSize),
		grpc.MaxConcurrentStreams(s.cfg.MaxConcurrentStreams),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: s.cfg.IdleTimeout,
			Time:              s.cfg.KeepaliveTime,
			Timeout:           s.cfg.KeepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	)
	if s.creds != nil {
		hs := TLSConfig{}
		if s.cfg.TLS != nil {
			hs = *s.cfg.TLS
		}
		opts = append(opts, grpc.Creds(s.creds), grpc.ConnectionTimeout(hs.handshakeTimeout()))
	}
	if s.authz != nil {
		opts = append(opts, grpc.ChainUnaryInterceptor(s.authz.unary), grpc.ChainStreamInterceptor(s.authz.stream))
	}
	return opts
}

// Serve serves the service on ln until Close; it returns nil after Close.
func (s *Service) Serve(ln net.Listener) error {
	srv := grpc.NewServer(s.ServerOptions()...)
	v2.RegisterMessagingServiceServer(srv, s)
	s.mu.Lock()
	if s.srv != nil {
		s.mu.Unlock()
		return errors.New("grpcsvc: already serving")
	}
	s.srv, s.addr = srv, ln.Addr()
	s.mu.Unlock()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("grpcsvc: serve: %w", err)
	}
	return nil
}

// Listen binds addr and serves in the background; it returns the bound
// address.
func (s *Service) Listen(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("grpcsvc: listen %s: %w", addr, err)
	}
	go func() {
		if err := s.Serve(ln); err != nil {
			s.log.Error("grpc endpoint stopped", "err", err)
		}
	}()
	return ln.Addr(), nil
}

// Close stops the server: streams end, held receives return, and the
// handles under auto-renew are made visible soon.
func (s *Service) Close() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if s.renew != nil {
		defer s.renew.close()
	}
	if srv == nil {
		return
	}
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		srv.Stop()
	}
}

// meta is the client context Java's proxy reads from gRPC metadata.
type meta struct {
	clientID, language, version, namespace string
	remote                                 string
}

func clientMeta(ctx context.Context) meta {
	var m meta
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		get := func(k string) string {
			if v := md.Get(k); len(v) > 0 {
				return v[0]
			}
			return ""
		}
		m.clientID = get("x-mq-client-id")
		m.language = get("x-mq-language")
		m.version = get("x-mq-client-version")
		m.namespace = get("x-mq-namespace")
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		m.remote = p.Addr.String()
	}
	return m
}

// requireClient is Java's context check: a request without a client id
// fails with CLIENT_ID_REQUIRED.
func requireClient(m meta) error {
	if m.clientID == "" {
		return fail(v2.Code_CLIENT_ID_REQUIRED, "client id cannot be empty")
	}
	return nil
}

// rpcCtx bounds one broker request.
func (s *Service) rpcCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RequestTimeout)
}

// roundRobin picks indexes in turn.
type roundRobin struct {
	mu sync.Mutex
	n  uint64
}

func (r *roundRobin) next() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return r.n
}

// SetAdvertisedPort sets the port QueryRoute advertises (Config.GRPCPort),
// for an endpoint bound to a port chosen at listen time. Call it before
// clients arrive.
func (s *Service) SetAdvertisedPort(port int) { s.cfg.GRPCPort = port }
