package remoting

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// Config configures a Server.
type Config struct {
	// Listen is the remoting address ("127.0.0.1:8080", ":8080");
	// port 0 picks a free one.
	Listen string
	// AccessAddr is the host the routes hand out (Java's
	// remotingAccessAddr); empty: Listen's host, or this machine's first
	// non-loopback IPv4 address when Listen binds every interface.
	AccessAddr string
	// NamesrvAddrs are the name servers (';'-separated lists allowed).
	NamesrvAddrs []string
	// RegionID and TraceOn go into every response's MSG_REGION and
	// TRACE_ON ext fields (Java's regionId, traceOn: "" and false).
	RegionID string
	TraceOn  bool
	// IdleTimeout closes a client connection silent this long (Java's
	// serverChannelMaxIdleTimeSeconds, 120 s); 0 means that default.
	IdleTimeout time.Duration
	// MaxInflight bounds the requests being forwarded at once over all
	// client connections (each waits on its broker in a goroutine); past
	// it a request answers SYSTEM_BUSY. 0 means DefaultMaxInflight.
	MaxInflight int
	// RouteTTL is how long cluster info and the routes used to choose a
	// broker are reused; 0 means 3 s.
	RouteTTL time.Duration
	// TLS, when set, is the client side to name servers and brokers
	// (Java's tls.* client keys).
	TLS    *tlsconf.Config
	Logger *slog.Logger
}

// DefaultMaxInflight is Config.MaxInflight's default.
const DefaultMaxInflight = 16384

// Server serves remoting clients in front of the brokers of a cluster.
type Server struct {
	cfg    Config
	log    *slog.Logger
	srv    *transport.Server
	ns     *transport.Client // name servers
	cb     *transport.Pool   // broker → client relays
	table  *brokerTable
	txns   *txnTable
	access string // host:port the routes hand out

	inflight atomic.Int64
	region   string
	trace    string
}

// Start listens on cfg.Listen and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 120 * time.Second
	}
	if cfg.MaxInflight <= 0 {
		cfg.MaxInflight = DefaultMaxInflight
	}
	if cfg.RouteTTL <= 0 {
		cfg.RouteTTL = 3 * time.Second
	}
	var ns []string
	for _, a := range cfg.NamesrvAddrs {
		for _, s := range strings.Split(a, ";") {
			if s = strings.TrimSpace(s); s != "" {
				ns = append(ns, s)
			}
		}
	}
	if len(ns) == 0 {
		return nil, errors.New("proxy remoting: no name server address")
	}
	cc, err := transport.ClientConfig{Logger: cfg.Logger}.WithTLS(cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("proxy remoting: client TLS: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, region: cfg.RegionID, trace: strconv.FormatBool(cfg.TraceOn),
		cb: transport.NewPool("proxy-remoting-relay", 4, 4096), txns: newTxnTable(100000)}
	s.ns = transport.NewClient(cc)
	s.table = newBrokerTable(s.ns, ns, cfg.RouteTTL)
	s.srv = transport.NewServer(transport.ServerConfig{Addr: cfg.Listen, IdleTimeout: cfg.IdleTimeout, Logger: cfg.Logger,
		OnConnect: s.onConnect, OnClose: s.onClose}, s.router())
	if err := s.srv.Start(); err != nil {
		s.cb.Close()
		return nil, errors.Join(fmt.Errorf("proxy remoting: listen %s: %w", cfg.Listen, err), s.ns.Close())
	}
	access, err := accessAddr(cfg.AccessAddr, cfg.Listen, s.srv.Addr())
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.access = access
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() string { return s.srv.Addr() }

// AccessAddr is the broker address the routes hand out.
func (s *Server) AccessAddr() string { return s.access }

// Close stops serving: every client connection closes, and with it its
// connections to the brokers (which drop its registrations, as when a
// client goes away).
func (s *Server) Close() error {
	err := s.srv.Close()
	err = errors.Join(err, s.ns.Close())
	s.cb.Close()
	return err
}

// accessAddr is host:port for the routes: access, else the listen host,
// else (every interface) the first non-loopback IPv4 address.
func accessAddr(access, listen, bound string) (string, error) {
	_, port, err := net.SplitHostPort(bound)
	if err != nil {
		return "", fmt.Errorf("proxy remoting: bound address %q: %w", bound, err)
	}
	host := access
	if host == "" {
		host, _, _ = net.SplitHostPort(listen)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = localIPv4()
	}
	return net.JoinHostPort(host, port), nil
}

// localIPv4 is Java's NetworkUtil.getLocalAddress in short: the first
// up, non-loopback IPv4 address, else 127.0.0.1.
func localIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

func (s *Server) onConnect(c *transport.Conn) { c.SetValue(newSession(s, c)) }

func (s *Server) onClose(c *transport.Conn) {
	if ss, ok := c.Value().(*session); ok {
		ss.close()
	}
}

// sessionOf is c's session (made on connect).
func sessionOf(c *transport.Conn) *session {
	ss, _ := c.Value().(*session)
	return ss
}
