package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// Mode is tls.server.mode: what a server does with TLS and plaintext
// connections on one port. The zero value is Disabled, so a transport
// configured with nothing does no TLS detection at all.
type Mode int

const (
	// Disabled refuses connections that start a TLS handshake.
	Disabled Mode = iota
	// Permissive serves TLS and plaintext on one port (Java's default).
	Permissive
	// Enforcing refuses plaintext connections.
	Enforcing
)

func (m Mode) String() string {
	switch m {
	case Disabled:
		return "disabled"
	case Enforcing:
		return "enforcing"
	default:
		return "permissive"
	}
}

// ParseMode reads tls.server.mode as Java's TlsMode.parse: exact lower-case
// names, anything else is permissive.
func ParseMode(s string) Mode {
	switch s {
	case "disabled":
		return Disabled
	case "enforcing":
		return Enforcing
	default:
		return Permissive
	}
}

// The keys, as Java's TlsSystemConfig names them.
const (
	KeyServerMode           = "tls.server.mode"
	KeyEnable               = "tls.enable"
	KeyConfigFile           = "tls.config.file"
	KeyTestModeEnable       = "tls.test.mode.enable"
	KeyServerNeedClientAuth = "tls.server.need.client.auth"
	KeyServerKeyPath        = "tls.server.keyPath"
	KeyServerKeyPassword    = "tls.server.keyPassword"
	KeyServerCertPath       = "tls.server.certPath"
	KeyServerAuthClient     = "tls.server.authClient"
	KeyServerTrustCertPath  = "tls.server.trustCertPath"
	KeyClientKeyPath        = "tls.client.keyPath"
	KeyClientKeyPassword    = "tls.client.keyPassword"
	KeyClientCertPath       = "tls.client.certPath"
	KeyClientAuthServer     = "tls.client.authServer"
	KeyClientTrustCertPath  = "tls.client.trustCertPath"

	// Ours: Java has no TLS on these ports.
	KeyHAEnable   = "rocketgo.tls.ha.enable"
	KeyRaftEnable = "rocketgo.tls.raft.enable"
)

// DefaultConfigFile is Java's default tls.config.file.
const DefaultConfigFile = "/etc/rocketmq/tls.properties"

// IsKey reports whether k is one of the keys Load reads (so a cmd does not
// warn about it as an unknown config key).
func IsKey(k string) bool {
	return strings.HasPrefix(k, "tls.") || k == KeyHAEnable || k == KeyRaftEnable
}

// ClientAuth is tls.server.need.client.auth.
type ClientAuth int

const (
	ClientAuthNone ClientAuth = iota
	ClientAuthOptional
	ClientAuthRequire
)

// parseClientAuth reads need.client.auth as Java's TlsHelper: case
// insensitive, anything unknown is none.
func parseClientAuth(s string) ClientAuth {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "OPTIONAL":
		return ClientAuthOptional
	case "REQUIRE":
		return ClientAuthRequire
	default:
		return ClientAuthNone
	}
}

// Config is the effective TLS settings (after the tls.config.file).
type Config struct {
	ServerMode     Mode
	Enable         bool // tls.enable: outbound remoting clients use TLS
	ConfigFile     string
	TestMode       bool
	NeedClientAuth ClientAuth

	ServerCertPath, ServerKeyPath, ServerKeyPassword string
	ServerAuthClient                                 bool
	ServerTrustCertPath                              string

	ClientCertPath, ClientKeyPath, ClientKeyPassword string
	ClientAuthServer                                 bool
	ClientTrustCertPath                              string

	HA, Raft bool // our opt-in keys
}

// Default is Java's defaults with no key set.
func Default() Config {
	return Config{ServerMode: Permissive, ConfigFile: DefaultConfigFile, TestMode: true}
}

// Load builds the effective configuration from props (Java's system
// properties: the cmds pass the tls.* keys of their -c file) and then the
// file named by tls.config.file, whose keys override, as Java's TlsHelper
// does. A missing file is not an error; an unreadable or malformed one is.
func Load(props map[string]string) (Config, error) {
	c := Default()
	if err := c.apply(props, true); err != nil {
		return c, err
	}
	data, err := os.ReadFile(c.ConfigFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c, nil
	case err != nil:
		return c, fmt.Errorf("tlsconf: read %s: %w", c.ConfigFile, err)
	}
	p, err := javaprops.Parse(data)
	if err != nil {
		return c, fmt.Errorf("tlsconf: %s: %w", c.ConfigFile, err)
	}
	file := make(map[string]string, len(p))
	for _, e := range p {
		file[e.Key] = e.Value
	}
	// compat: the file cannot change tls.server.mode, tls.enable or
	// tls.config.file (Java reads those from system properties only).
	if err := c.apply(file, false); err != nil {
		return c, fmt.Errorf("tlsconf: %s: %w", c.ConfigFile, err)
	}
	return c, nil
}

// apply sets the fields of the keys present in p; system also reads the
// keys only system properties set in Java.
func (c *Config) apply(p map[string]string, system bool) error {
	str := func(k string, dst *string) {
		if v, ok := p[k]; ok {
			*dst = v
		}
	}
	// compat: Boolean.parseBoolean: "true" in any case is true, anything else false.
	boolean := func(k string, dst *bool) {
		if v, ok := p[k]; ok {
			*dst = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	if system {
		if v, ok := p[KeyServerMode]; ok {
			c.ServerMode = ParseMode(v)
		}
		boolean(KeyEnable, &c.Enable)
		str(KeyConfigFile, &c.ConfigFile)
	}
	boolean(KeyTestModeEnable, &c.TestMode)
	if v, ok := p[KeyServerNeedClientAuth]; ok {
		c.NeedClientAuth = parseClientAuth(v)
	}
	str(KeyServerCertPath, &c.ServerCertPath)
	str(KeyServerKeyPath, &c.ServerKeyPath)
	str(KeyServerKeyPassword, &c.ServerKeyPassword)
	boolean(KeyServerAuthClient, &c.ServerAuthClient)
	str(KeyServerTrustCertPath, &c.ServerTrustCertPath)
	str(KeyClientCertPath, &c.ClientCertPath)
	str(KeyClientKeyPath, &c.ClientKeyPath)
	str(KeyClientKeyPassword, &c.ClientKeyPassword)
	boolean(KeyClientAuthServer, &c.ClientAuthServer)
	str(KeyClientTrustCertPath, &c.ClientTrustCertPath)
	boolean(KeyHAEnable, &c.HA)
	boolean(KeyRaftEnable, &c.Raft)
	return nil
}

// Server returns the server side's *tls.Config and mode. With Disabled it
// returns a nil config. In test mode the certificate is self-signed,
// generated now (ECDSA P-256) and client certificates are requested but
// not verified, as Java's test mode (ClientAuth.OPTIONAL, no trust store).
func (c Config) Server() (*tls.Config, Mode, error) {
	if c.ServerMode == Disabled {
		return nil, Disabled, nil
	}
	tc, err := c.ServerTLS()
	return tc, c.ServerMode, err
}

// ServerTLS is Server's *tls.Config whatever tls.server.mode says: for
// ports that are TLS-only when our opt-in keys turn TLS on (HA, Raft).
func (c Config) ServerTLS() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.TestMode {
		cert, err := SelfSigned()
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
		tc.ClientAuth = tls.RequestClientCert
		return tc, nil
	}
	cert, err := loadKeyPair(c.ServerCertPath, c.ServerKeyPath, c.ServerKeyPassword)
	if err != nil {
		return nil, fmt.Errorf("tlsconf: server certificate: %w", err)
	}
	tc.Certificates = []tls.Certificate{cert}
	if c.ServerAuthClient && c.ServerTrustCertPath != "" {
		if tc.ClientCAs, err = loadPool(c.ServerTrustCertPath); err != nil {
			return nil, fmt.Errorf("tlsconf: %s: %w", KeyServerTrustCertPath, err)
		}
	}
	// Without authClient Java trusts any client certificate
	// (InsecureTrustManagerFactory): requested or required, never verified.
	switch {
	case c.NeedClientAuth == ClientAuthRequire && c.ServerAuthClient:
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	case c.NeedClientAuth == ClientAuthRequire:
		tc.ClientAuth = tls.RequireAnyClientCert
	case c.NeedClientAuth == ClientAuthOptional && c.ServerAuthClient:
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	case c.NeedClientAuth == ClientAuthOptional:
		tc.ClientAuth = tls.RequestClientCert
	default:
		tc.ClientAuth = tls.NoClientCert
	}
	return tc, nil
}

// Client returns the dialing side's *tls.Config and whether outbound
// remoting clients use it (tls.enable). In test mode, or without
// tls.client.authServer, the server's certificate is not verified, as
// Java's InsecureTrustManagerFactory.
func (c Config) Client() (*tls.Config, bool, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.TestMode || !c.ClientAuthServer {
		tc.InsecureSkipVerify = true // compat: Java's client trusts any server unless authServer
	} else if c.ClientTrustCertPath != "" {
		pool, err := loadPool(c.ClientTrustCertPath)
		if err != nil {
			return nil, c.Enable, fmt.Errorf("tlsconf: %s: %w", KeyClientTrustCertPath, err)
		}
		tc.RootCAs = pool
	}
	if !c.TestMode && c.ClientCertPath != "" {
		cert, err := loadKeyPair(c.ClientCertPath, c.ClientKeyPath, c.ClientKeyPassword)
		if err != nil {
			return nil, c.Enable, fmt.Errorf("tlsconf: client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, c.Enable, nil
}

// loadKeyPair reads a PEM certificate chain and an unencrypted PEM key
// (PKCS#8, PKCS#1 or SEC 1). An encrypted key is refused with a clear
// error: Java's keyPassword decryption is not implemented.
func loadKeyPair(certPath, keyPath, password string) (tls.Certificate, error) {
	if certPath == "" || keyPath == "" {
		return tls.Certificate{}, errors.New("certPath and keyPath must both be set (or tls.test.mode.enable=true)")
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	if b, _ := pem.Decode(keyPEM); b != nil && (b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "") {
		return tls.Certificate{}, fmt.Errorf("%s: encrypted private keys are not supported (keyPassword set: %t); decrypt it, e.g. openssl pkcs8 -in key -out key.plain -nocrypt", keyPath, password != "")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s, %s: %w", certPath, keyPath, err)
	}
	return cert, nil
}

func loadPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}

// SelfSigned makes a self-signed ECDSA P-256 certificate valid for a year,
// for localhost and the loopback addresses (test mode, tests).
func SelfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: self-signed key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "rocketgo self-signed"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: self-signed certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// FromProps collects the keys IsKey accepts from a parsed properties
// file (a cmd's -c file).
func FromProps(p javaprops.Props) map[string]string {
	out := make(map[string]string)
	for _, e := range p {
		if IsKey(e.Key) {
			out[e.Key] = e.Value
		}
	}
	return out
}

// Listen listens on addr and, when tc is not nil, serves TLS on every
// accepted connection (HA, Raft: ports without a plaintext fallback).
func Listen(network, addr string, tc *tls.Config) (net.Listener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil || tc == nil {
		return ln, err
	}
	return tls.NewListener(ln, tc), nil
}

// Dial connects to addr within timeout and, when tc is not nil, completes
// a TLS handshake within the same timeout.
func Dial(network, addr string, timeout time.Duration, tc *tls.Config) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	if tc == nil {
		return d.Dial(network, addr)
	}
	return (&tls.Dialer{NetDialer: d, Config: WithServerName(tc, addr)}).Dial(network, addr)
}

// WithServerName returns tc with ServerName set to addr's host when it is
// empty and the peer is verified (a copy; tc is not changed).
func WithServerName(tc *tls.Config, addr string) *tls.Config {
	if tc == nil || tc.ServerName != "" || tc.InsecureSkipVerify {
		return tc
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	c := tc.Clone()
	c.ServerName = host
	return c
}

// LoadFile is Load with the keys IsKey accepts taken from the properties
// file at path (a cmd's -c file; "" for none), as Java takes them from
// -D system properties.
func LoadFile(path string) (Config, error) {
	props, err := FileProps(path)
	if err != nil {
		return Default(), err
	}
	return Load(props)
}

// FileProps returns the keys IsKey accepts of the properties file at path
// ("" for none: an empty map).
func FileProps(path string) (map[string]string, error) {
	if path == "" {
		return map[string]string{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tlsconf: %w", err)
	}
	p, err := javaprops.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("tlsconf: %s: %w", path, err)
	}
	return FromProps(p), nil
}
