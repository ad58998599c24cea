package controller

import (
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/broker/auth"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/telemetry"
)

// Config is the controller's configuration: Java's ControllerConfig keys
// (DLedger flavour) plus the few of our own that the Raft layer needs.
type Config struct {
	// TLS is the tls.* settings (Java's -D system properties and its
	// tls.config.file; tlsconf.Load), set by the cmd, not a config-file
	// field. nil: no TLS and no PROXY protocol detection on the port.
	TLS *tlsconf.Config
	// Auth is the auth module's keys (authenticationEnabled,
	// innerClientAuthenticationCredentials, initAuthenticationUser …): with
	// authentication on, every request needs a signed super user, and the
	// controller signs its calls to brokers with the inner credentials.
	// Read from the file; never printed nor updated remotely.
	Auth            auth.Config
	RocketmqHome    string // rocketmqHome
	ConfigStorePath string // configStorePath: UPDATE_CONTROLLER_CONFIG writes every key there ("" = memory only)
	ControllerType  string // controllerType: "DLedger" (Java's default) or "jRaft"; both mean our Raft

	Group     string // controllerDLegerGroup
	Peers     string // controllerDLegerPeers "n0-127.0.0.1:9878;n1-127.0.0.1:9868"
	SelfID    string // controllerDLegerSelfId
	RaftPeers string // controllerRaftPeers (ours): same syntax; default each peer's port + 1
	StorePath string // controllerStorePath; Java's default ~/DLedgerController

	ScanNotActiveBrokerInterval time.Duration // scanNotActiveBrokerInterval (5 s)
	ScanInactiveMasterInterval  time.Duration // scanInactiveMasterInterval (5 s)
	ThreadPoolNums              int           // controllerThreadPoolNums (16)
	RequestQueueCapacity        int           // controllerRequestThreadPoolQueueCapacity (50000)
	ElectMasterMaxRetryCount    int           // electMasterMaxRetryCount (3)
	EnableElectUncleanMaster    bool          // enableElectUncleanMaster (false)
	ProcessReadEvent            bool          // isProcessReadEvent (false): reads pass a Raft barrier first
	NotifyBrokerRoleChanged     bool          // notifyBrokerRoleChanged (true)
	ConfigBlackList             string        // configBlackList ("configBlackList;configStorePath")
	MappedFileSize              int           // mappedFileSize (accepted for Java compatibility; unused)

	// ElectGrace (controllerElectGraceMillis, ours, 10 s = Java's default
	// broker heartbeat timeout): a new Raft leader triggers no election for
	// a master it has not heard from until it has led for this long.
	ElectGrace time.Duration
	// RaftElectionTimeout (controllerRaftElectionTimeoutMillis, ours, 3 s):
	// Raft heartbeat and election timeout; the leader lease is half of it.
	// Like DLedger's defaults (2 s heartbeats, 3 missed), a loaded machine
	// does not make the leader step down.
	RaftElectionTimeout time.Duration
	// MaxLiveBrokers (controllerMaxLiveBrokers, ours, 10000) bounds the
	// heartbeat table; heartbeats of further brokers are refused.
	MaxLiveBrokers int
	// MaxBrokerSets (controllerMaxBrokerSets, ours, 10000) and
	// MaxBrokersPerSet (controllerMaxBrokersPerSet, ours, 64) bound the
	// replicated state against a flood of forged registrations.
	MaxBrokerSets    int
	MaxBrokersPerSet int
	// AllowAdminOnLiveBrokers (controllerAllowAdminOnLiveBrokers, ours,
	// false): mqadmin electMaster may replace a live master and
	// cleanBrokerMetadata -l may remove live brokers, as in Java. Read
	// from the local configuration only: UPDATE_CONTROLLER_CONFIG refuses
	// it (see doc.go).
	AllowAdminOnLiveBrokers bool
	// RefuseSensitiveRemoteConfig (refuseSensitiveRemoteConfig, ours,
	// default true; stricter than Java) makes UPDATE_CONTROLLER_CONFIG
	// refuse the keys SensitiveRemoteConfigKeys lists
	// (sensitiveRemoteConfigKeys, ';'-separated) besides sensitiveKeys.
	// Read from the file only (compat/blacklist.Policy).
	RefuseSensitiveRemoteConfig bool
	SensitiveRemoteConfigKeys   string

	// Metrics (Java's ControllerConfig keys and defaults, read at start;
	// see metrics.go): PROM serves /metrics on metricsPromExporterHost
	// (blank: the remoting address's host):metricsPromExporterPort.
	// OTLP_GRPC pushes to metricsGrpcExporterTarget ("http://host:4317" is
	// plaintext, without a scheme https) with metricsGrpcExporterHeader's
	// "k:v,k:v" headers every metricGrpcExporterIntervalInMills (60 s),
	// each export bounded by metricGrpcExporterTimeOutInMills (3 s).
	MetricsExporterType               string // DISABLE | PROM | OTLP_GRPC | LOG
	MetricsPromExporterHost           string
	MetricsPromExporterPort           int
	MetricsLabel                      string // k:v,k:v
	MetricsInDelta                    bool
	MetricsGrpcExporterTarget         string
	MetricsGrpcExporterHeader         string
	MetricGrpcExporterTimeOutInMills  time.Duration
	MetricGrpcExporterIntervalInMills time.Duration
}

// sensitiveKeys are the keys refuseSensitiveRemoteConfig refuses besides
// the operator's list: Java's controller keys that name its jRaft group
// and addresses, or where its metrics go (jRaft is not implemented here;
// the metrics keys are read at start only, so an update is refused rather
// than ignored). The DLedger group's
// membership and addresses (controllerDLegerGroup, controllerDLegerPeers,
// controllerDLegerSelfId, controllerRaftPeers, controllerType) are
// refused whatever the policy says, being read only at start.
var sensitiveKeys = map[string]bool{
	"jRaftGroupId":              true,
	"jRaftServerId":             true,
	"jRaftInitConf":             true,
	"jRaftControllerRPCAddr":    true,
	"metricsGrpcExporterTarget": true,
	"metricsGrpcExporterHeader": true,
	"metricsPromExporterHost":   true,
	"metricsPromExporterPort":   true,
}

// Default returns Java's defaults.
func Default() Config {
	home, _ := os.UserHomeDir()
	return Config{
		ConfigStorePath:             filepath.Join(home, "controller", "controller.properties"),
		ControllerType:              "DLedger",
		StorePath:                   filepath.Join(home, "DLedgerController"),
		ScanNotActiveBrokerInterval: 5 * time.Second,
		ScanInactiveMasterInterval:  5 * time.Second,
		ThreadPoolNums:              16,
		RequestQueueCapacity:        50000,
		ElectMasterMaxRetryCount:    3,
		NotifyBrokerRoleChanged:     true,
		ConfigBlackList:             "configBlackList;configStorePath",
		MappedFileSize:              1 << 30,
		ElectGrace:                  10 * time.Second,
		RaftElectionTimeout:         3 * time.Second,
		MaxLiveBrokers:              10000,
		MaxBrokerSets:               10000,
		MaxBrokersPerSet:            64,
		RefuseSensitiveRemoteConfig: true,
		MetricsExporterType:         "DISABLE",
		MetricsPromExporterPort:     5557,

		MetricGrpcExporterTimeOutInMills:  telemetry.DefaultOTLPTimeout,
		MetricGrpcExporterIntervalInMills: telemetry.DefaultOTLPInterval,
	}
}

// Peer is one member of the controller group.
type Peer struct {
	ID       string // DLedger self id, also the Raft server id
	Addr     string // remoting address (brokers and mqadmin connect here)
	RaftAddr string // Raft transport address
}

// ParsePeers reads DLedger's peer syntax "id-host:port;id-host:port". Like
// DLedger, the id ends at the first '-'.
func ParsePeers(s string) ([]Peer, error) {
	var out []Peer
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, addr, ok := strings.Cut(part, "-")
		if !ok || id == "" || addr == "" {
			return nil, fmt.Errorf("controller: peer %q: want id-host:port", part)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("controller: peer %q: %w", part, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("controller: peer id %q twice", id)
		}
		seen[id] = true
		out = append(out, Peer{ID: id, Addr: addr})
	}
	if len(out) == 0 {
		return nil, errors.New("controller: controllerDLegerPeers is empty")
	}
	return out, nil
}

// PeerList resolves Peers and RaftPeers. The Raft address of a peer is
// its controllerRaftPeers entry, else its remoting host with port + 1.
func (c *Config) PeerList() ([]Peer, error) {
	peers, err := ParsePeers(c.Peers)
	if err != nil {
		return nil, err
	}
	var raft map[string]string
	if strings.TrimSpace(c.RaftPeers) != "" {
		rp, err := ParsePeers(c.RaftPeers)
		if err != nil {
			return nil, fmt.Errorf("controllerRaftPeers: %w", err)
		}
		raft = make(map[string]string, len(rp))
		for _, p := range rp {
			raft[p.ID] = p.Addr
		}
	}
	for i := range peers {
		p := &peers[i]
		if a, ok := raft[p.ID]; ok {
			p.RaftAddr = a
			continue
		}
		host, port, _ := net.SplitHostPort(p.Addr)
		n, err := strconv.Atoi(port)
		if err != nil || n <= 0 || n >= 65535 {
			return nil, fmt.Errorf("controller: peer %s: port %q", p.ID, port)
		}
		p.RaftAddr = net.JoinHostPort(host, strconv.Itoa(n+1))
	}
	return peers, nil
}

// Validate checks what Java's ControllerManager.initialize checks and our bounds.
func (c *Config) Validate() error {
	if strings.TrimSpace(c.Peers) == "" {
		return errors.New("controller: Attribute value controllerDLegerPeers of ControllerConfig is null or empty")
	}
	if strings.TrimSpace(c.SelfID) == "" {
		return errors.New("controller: Attribute value controllerDLegerSelfId of ControllerConfig is null or empty")
	}
	peers, err := c.PeerList()
	if err != nil {
		return err
	}
	found := false
	for _, p := range peers {
		found = found || p.ID == c.SelfID
	}
	if !found {
		return fmt.Errorf("controller: self id %q is not among the peers %q", c.SelfID, c.Peers)
	}
	if c.StorePath == "" {
		return errors.New("controller: controllerStorePath is empty")
	}
	switch {
	case c.ScanNotActiveBrokerInterval <= 0, c.ScanInactiveMasterInterval <= 0:
		return errors.New("controller: scan intervals must be positive")
	case c.ThreadPoolNums <= 0, c.RequestQueueCapacity <= 0:
		return errors.New("controller: thread pool size and queue capacity must be positive")
	case c.RaftElectionTimeout <= 0, c.ElectGrace < 0:
		return errors.New("controller: raft timeouts must be positive")
	case c.MaxLiveBrokers <= 0, c.MaxBrokerSets <= 0, c.MaxBrokersPerSet <= 0:
		return errors.New("controller: bounds must be positive")
	}
	if err := c.metricsConfig().Validate(); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}

// props lists every key we read, in the order GET_CONTROLLER_CONFIG prints them.
var props = javaprops.Fields[Config]{
	javaprops.String("rocketmqHome", func(c *Config) *string { return &c.RocketmqHome }),
	javaprops.String("configStorePath", func(c *Config) *string { return &c.ConfigStorePath }),
	javaprops.String("controllerType", func(c *Config) *string { return &c.ControllerType }),
	javaprops.Millis("scanNotActiveBrokerInterval", func(c *Config) *time.Duration { return &c.ScanNotActiveBrokerInterval }),
	javaprops.Int("controllerThreadPoolNums", func(c *Config) *int { return &c.ThreadPoolNums }),
	javaprops.Int("controllerRequestThreadPoolQueueCapacity", func(c *Config) *int { return &c.RequestQueueCapacity }),
	javaprops.String("controllerDLegerGroup", func(c *Config) *string { return &c.Group }),
	javaprops.String("controllerDLegerPeers", func(c *Config) *string { return &c.Peers }),
	javaprops.String("controllerDLegerSelfId", func(c *Config) *string { return &c.SelfID }),
	javaprops.Int("mappedFileSize", func(c *Config) *int { return &c.MappedFileSize }),
	javaprops.String("controllerStorePath", func(c *Config) *string { return &c.StorePath }),
	javaprops.Int("electMasterMaxRetryCount", func(c *Config) *int { return &c.ElectMasterMaxRetryCount }),
	javaprops.Bool("enableElectUncleanMaster", func(c *Config) *bool { return &c.EnableElectUncleanMaster }),
	javaprops.Bool("isProcessReadEvent", func(c *Config) *bool { return &c.ProcessReadEvent }),
	javaprops.Bool("notifyBrokerRoleChanged", func(c *Config) *bool { return &c.NotifyBrokerRoleChanged }),
	javaprops.Millis("scanInactiveMasterInterval", func(c *Config) *time.Duration { return &c.ScanInactiveMasterInterval }),
	javaprops.String("configBlackList", func(c *Config) *string { return &c.ConfigBlackList }),
	javaprops.String("controllerRaftPeers", func(c *Config) *string { return &c.RaftPeers }),
	javaprops.Millis("controllerElectGraceMillis", func(c *Config) *time.Duration { return &c.ElectGrace }),
	javaprops.Millis("controllerRaftElectionTimeoutMillis", func(c *Config) *time.Duration { return &c.RaftElectionTimeout }),
	javaprops.Int("controllerMaxLiveBrokers", func(c *Config) *int { return &c.MaxLiveBrokers }),
	javaprops.Int("controllerMaxBrokerSets", func(c *Config) *int { return &c.MaxBrokerSets }),
	javaprops.Int("controllerMaxBrokersPerSet", func(c *Config) *int { return &c.MaxBrokersPerSet }),
	javaprops.Bool("controllerAllowAdminOnLiveBrokers", func(c *Config) *bool { return &c.AllowAdminOnLiveBrokers }),
	javaprops.Bool("refuseSensitiveRemoteConfig", func(c *Config) *bool { return &c.RefuseSensitiveRemoteConfig }),
	javaprops.String("sensitiveRemoteConfigKeys", func(c *Config) *string { return &c.SensitiveRemoteConfigKeys }),
	javaprops.String("metricsExporterType", func(c *Config) *string { return &c.MetricsExporterType }),
	javaprops.String("metricsPromExporterHost", func(c *Config) *string { return &c.MetricsPromExporterHost }),
	javaprops.Int("metricsPromExporterPort", func(c *Config) *int { return &c.MetricsPromExporterPort }),
	javaprops.String("metricsLabel", func(c *Config) *string { return &c.MetricsLabel }),
	javaprops.Bool("metricsInDelta", func(c *Config) *bool { return &c.MetricsInDelta }),
	javaprops.String("metricsGrpcExporterTarget", func(c *Config) *string { return &c.MetricsGrpcExporterTarget }),
	javaprops.String("metricsGrpcExporterHeader", func(c *Config) *string { return &c.MetricsGrpcExporterHeader }),
	javaprops.Millis("metricGrpcExporterTimeOutInMills", func(c *Config) *time.Duration { return &c.MetricGrpcExporterTimeOutInMills }),
	javaprops.Millis("metricGrpcExporterIntervalInMills", func(c *Config) *time.Duration { return &c.MetricGrpcExporterIntervalInMills }),
}

// Apply sets the keys of p that Config knows and returns the others.
func (c *Config) Apply(p javaprops.Props) (unknown []string, err error) {
	for _, e := range p {
		if auth.IsConfigKey(e.Key) {
			if err := c.Auth.SetConfigKey(e.Key, e.Value); err != nil {
				return unknown, fmt.Errorf("controller: %w", err)
			}
			continue
		}
		f, ok := props.Find(e.Key)
		if !ok {
			unknown = append(unknown, e.Key)
			continue
		}
		if err := f.Set(c, e.Value); err != nil {
			return unknown, fmt.Errorf("controller: %w", err)
		}
	}
	return unknown, nil
}

// Properties returns the configuration as key/value pairs.
func (c *Config) Properties() javaprops.Props {
	return props.Properties(c)
}
