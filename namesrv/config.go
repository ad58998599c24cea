package namesrv

import (
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/broker/auth"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/compat/blacklist"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/telemetry"
)

// Config is the name server's configuration: Java's NamesrvConfig plus the
// NettyServerConfig keys we honour, under the same property names.
type Config struct {
	// TLS is the tls.* settings (Java's -D system properties and its
	// tls.config.file; tlsconf.Load), set by the cmd, not a config-file
	// field. nil: no TLS and no PROXY protocol detection on the port.
	TLS *tlsconf.Config
	// Auth is the auth module's keys (authenticationEnabled,
	// innerClientAuthenticationCredentials, initAuthenticationUser …): with
	// authentication on, every write (namesrvWrites) needs a signed super
	// user. Read from the file; never printed nor updated remotely.
	Auth                                 auth.Config
	RocketmqHome                         string
	KVConfigPath                         string
	ConfigStorePath                      string
	ProductEnvName                       string
	ClusterTest                          bool
	OrderMessageEnable                   bool
	ReturnOrderTopicConfigToBroker       bool
	ClientRequestThreadPoolNums          int
	DefaultThreadPoolNums                int
	ClientRequestThreadPoolQueueCapacity int
	DefaultThreadPoolQueueCapacity       int
	ScanNotActiveBrokerInterval          time.Duration // property in ms
	// BrokerChannelExpiredTime is how long a broker may stay silent; Java
	// hard-codes 120 s (a broker's heartbeatTimeoutMillis overrides it).
	BrokerChannelExpiredTime          time.Duration // property in ms
	SupportActingMaster               bool
	EnableAllTopicList                bool
	EnableTopicList                   bool
	NeedWaitForService                bool
	WaitSecondsForService             int
	DeleteTopicWithBrokerRegistration bool
	ConfigBlackList                   string
	// RefuseSensitiveRemoteConfig (refuseSensitiveRemoteConfig, ours,
	// default true; stricter than Java) makes UPDATE_NAMESRV_CONFIG refuse
	// sensitiveKeys and the keys SensitiveRemoteConfigKeys lists
	// (sensitiveRemoteConfigKeys, ';'-separated). Read from the file only
	// (compat/blacklist.Policy).
	RefuseSensitiveRemoteConfig bool
	SensitiveRemoteConfigKeys   string
	// EnableControllerInNamesrv (Java's key, false) runs a controller node
	// in the name server process; cmd/mqnamesrv reads its keys from the
	// same file. The name server itself does nothing with it.
	EnableControllerInNamesrv bool

	BindAddress                     string
	ListenPort                      int
	ServerChannelMaxIdleTimeSeconds int

	// Network bounds (restart-only): transport.Limits, under its keys.
	Limits transport.Limits

	// Memory bounds of what clients can register (ours; Java has none).
	// A registration or KV put past one is refused whole, changing nothing.
	MaxTopicsPerBrokerRegistration int // topics (and static-topic mappings) in one REGISTER_BROKER
	MaxTopicRouteEntries           int // (topic, broker name) route entries of all brokers
	MaxBrokers                     int // live broker addresses
	MaxKVConfigBytes               int // namespace, key and value bytes of the KV table (+64 per entry)
	MaxKVConfigValueLength         int // one KV value
	// MaxRouteTableBytes bounds what the route table holds, estimated per
	// item (footprint.go): topic names, queue and broker data, mappings,
	// filter server lists, header strings.
	MaxRouteTableBytes int64

	// Metrics (ours: Java's name server has none; the broker's keys, off
	// by default, restart-only): PROM serves /metrics on
	// metricsPromExporterHost (blank: bindAddress):metricsPromExporterPort;
	// OTLP_GRPC pushes to metricsGrpcExporterTarget ("http://host:4317" is
	// plaintext, without a scheme https) with the "k:v,k:v" headers of
	// metricsGrpcExporterHeader, every metricGrpcExporterIntervalInMills
	// (0: 60 s), each export bounded by metricGrpcExporterTimeOutInMills
	// (0: 3 s).
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

// Default returns Java's defaults, with paths under the user's home.
func Default() Config {
	home, _ := os.UserHomeDir()
	return Config{
		RocketmqHome:                         os.Getenv("ROCKETMQ_HOME"),
		KVConfigPath:                         filepath.Join(home, "namesrv", "kvConfig.json"),
		ConfigStorePath:                      filepath.Join(home, "namesrv", "namesrv.properties"),
		ProductEnvName:                       "center",
		ReturnOrderTopicConfigToBroker:       true,
		ClientRequestThreadPoolNums:          8,
		DefaultThreadPoolNums:                16,
		ClientRequestThreadPoolQueueCapacity: 50000,
		DefaultThreadPoolQueueCapacity:       10000,
		ScanNotActiveBrokerInterval:          5 * time.Second,
		BrokerChannelExpiredTime:             120 * time.Second,
		EnableAllTopicList:                   true,
		EnableTopicList:                      true,
		WaitSecondsForService:                45,
		ConfigBlackList:                      "configBlackList;configStorePath;kvConfigPath",
		RefuseSensitiveRemoteConfig:          true,
		BindAddress:                          "0.0.0.0",
		ListenPort:                           9876,
		ServerChannelMaxIdleTimeSeconds:      120,
		Limits:                               transport.DefaultLimits(),

		MaxTopicsPerBrokerRegistration: DefaultMaxTopicsPerBrokerRegistration,
		MaxTopicRouteEntries:           DefaultMaxTopicRouteEntries,
		MaxBrokers:                     DefaultMaxBrokers,
		MaxKVConfigBytes:               DefaultMaxKVConfigBytes,
		MaxKVConfigValueLength:         DefaultMaxKVConfigValueLength,
		MaxRouteTableBytes:             DefaultMaxRouteTableBytes,
		MetricsExporterType:            "DISABLE",
		MetricsPromExporterPort:        DefaultMetricsPromPort,

		MetricGrpcExporterTimeOutInMills:  telemetry.DefaultOTLPTimeout,
		MetricGrpcExporterIntervalInMills: telemetry.DefaultOTLPInterval,
	}
}

// Defaults of the registration and KV bounds. A Java broker's plain
// registration carries every topic in one frame of at most 16 MiB, about
// 200 bytes a topic, so no real broker sends 100,000 topics; the KV table
// holds the order-topic configs (one short entry per ordered topic) and
// little else.
//
// maxRouteTableBytes: a (topic, broker) entry holds 40 bytes and a topic
// about 100 more than its name, so 96 MiB holds 10,000 topics on 200
// broker names twice over. The process holds about twice the table (Go's
// collector runs at GOGC=100) plus one register body being decoded:
// measured under the attack (25 registrations of 100,000 topics
// with 120-byte names) the name server stayed 223 MiB above idle RSS with
// this default (4 taken, 21 refused), where the count bounds alone let it
// grow by 793 MiB.
const (
	DefaultMaxTopicsPerBrokerRegistration = 100_000
	DefaultMaxTopicRouteEntries           = 2_000_000
	DefaultMaxBrokers                     = 4096
	DefaultMaxKVConfigBytes               = 16 << 20
	DefaultMaxKVConfigValueLength         = 64 << 10
	DefaultMaxRouteTableBytes             = 96 << 20
)

// Ranges of the pool settings: a pool's queue is allocated whole at start
// (about 50 bytes a slot).
const (
	maxThreadPoolNums     = 1024
	maxThreadPoolCapacity = 1_000_000
)

// Validate reports settings the server cannot run with. New checks them
// at start and UPDATE_NAMESRV_CONFIG before it applies or persists any.
func (c *Config) Validate() error {
	var errs []error
	if err := c.metricsConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		errs = append(errs, fmt.Errorf("listenPort %d out of range", c.ListenPort))
	}
	if c.ScanNotActiveBrokerInterval <= 0 {
		errs = append(errs, fmt.Errorf("scanNotActiveBrokerInterval must be positive"))
	}
	if c.BrokerChannelExpiredTime <= 0 {
		errs = append(errs, fmt.Errorf("brokerChannelExpiredTime must be positive"))
	}
	for _, p := range []struct {
		key    string
		v, max int
	}{
		{"clientRequestThreadPoolNums", c.ClientRequestThreadPoolNums, maxThreadPoolNums},
		{"defaultThreadPoolNums", c.DefaultThreadPoolNums, maxThreadPoolNums},
		{"clientRequestThreadPoolQueueCapacity", c.ClientRequestThreadPoolQueueCapacity, maxThreadPoolCapacity},
		{"defaultThreadPoolQueueCapacity", c.DefaultThreadPoolQueueCapacity, maxThreadPoolCapacity},
	} {
		if p.v < 1 || p.v > p.max {
			errs = append(errs, fmt.Errorf("%s %d out of range [1, %d]", p.key, p.v, p.max))
		}
	}
	if c.WaitSecondsForService < 0 {
		errs = append(errs, fmt.Errorf("waitSecondsForService %d is negative", c.WaitSecondsForService))
	}
	if c.ServerChannelMaxIdleTimeSeconds < 0 {
		errs = append(errs, fmt.Errorf("serverChannelMaxIdleTimeSeconds %d is negative", c.ServerChannelMaxIdleTimeSeconds))
	}
	// The bounds: 0 means the default; a negative one is a typo.
	for _, b := range []struct {
		key string
		v   int64
	}{
		{"maxTopicsPerBrokerRegistration", int64(c.MaxTopicsPerBrokerRegistration)},
		{"maxTopicRouteEntries", int64(c.MaxTopicRouteEntries)},
		{"maxBrokers", int64(c.MaxBrokers)},
		{"maxKVConfigBytes", int64(c.MaxKVConfigBytes)},
		{"maxKVConfigValueLength", int64(c.MaxKVConfigValueLength)},
		{"maxRouteTableBytes", c.MaxRouteTableBytes},
	} {
		if b.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d is negative", b.key, b.v))
		}
	}
	if c.KVConfigPath == "" {
		errs = append(errs, fmt.Errorf("kvConfigPath is empty"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("namesrv: config: %w", err)
	}
	return nil
}

// ListenAddr is "bindAddress:listenPort".
func (c *Config) ListenAddr() string {
	return c.BindAddress + ":" + strconv.Itoa(c.ListenPort)
}

// props lists every property in the order -p and GET_NAMESRV_CONFIG print them.
var props = javaprops.Fields[Config]{
	javaprops.String("rocketmqHome", func(c *Config) *string { return &c.RocketmqHome }),
	javaprops.String("kvConfigPath", func(c *Config) *string { return &c.KVConfigPath }),
	javaprops.String("configStorePath", func(c *Config) *string { return &c.ConfigStorePath }),
	javaprops.String("productEnvName", func(c *Config) *string { return &c.ProductEnvName }),
	javaprops.Bool("clusterTest", func(c *Config) *bool { return &c.ClusterTest }),
	javaprops.Bool("orderMessageEnable", func(c *Config) *bool { return &c.OrderMessageEnable }),
	javaprops.Bool("returnOrderTopicConfigToBroker", func(c *Config) *bool { return &c.ReturnOrderTopicConfigToBroker }),
	javaprops.Int("clientRequestThreadPoolNums", func(c *Config) *int { return &c.ClientRequestThreadPoolNums }),
	javaprops.Int("defaultThreadPoolNums", func(c *Config) *int { return &c.DefaultThreadPoolNums }),
	javaprops.Int("clientRequestThreadPoolQueueCapacity", func(c *Config) *int { return &c.ClientRequestThreadPoolQueueCapacity }),
	javaprops.Int("defaultThreadPoolQueueCapacity", func(c *Config) *int { return &c.DefaultThreadPoolQueueCapacity }),
	javaprops.Millis("scanNotActiveBrokerInterval", func(c *Config) *time.Duration { return &c.ScanNotActiveBrokerInterval }),
	javaprops.Millis("brokerChannelExpiredTime", func(c *Config) *time.Duration { return &c.BrokerChannelExpiredTime }),
	javaprops.Bool("supportActingMaster", func(c *Config) *bool { return &c.SupportActingMaster }),
	javaprops.Bool("enableAllTopicList", func(c *Config) *bool { return &c.EnableAllTopicList }),
	javaprops.Bool("enableTopicList", func(c *Config) *bool { return &c.EnableTopicList }),
	javaprops.Bool("needWaitForService", func(c *Config) *bool { return &c.NeedWaitForService }),
	javaprops.Int("waitSecondsForService", func(c *Config) *int { return &c.WaitSecondsForService }),
	javaprops.Bool("deleteTopicWithBrokerRegistration", func(c *Config) *bool { return &c.DeleteTopicWithBrokerRegistration }),
	javaprops.String("configBlackList", func(c *Config) *string { return &c.ConfigBlackList }),
	javaprops.Bool("refuseSensitiveRemoteConfig", func(c *Config) *bool { return &c.RefuseSensitiveRemoteConfig }),
	javaprops.String("sensitiveRemoteConfigKeys", func(c *Config) *string { return &c.SensitiveRemoteConfigKeys }),
	javaprops.Bool("enableControllerInNamesrv", func(c *Config) *bool { return &c.EnableControllerInNamesrv }),
	javaprops.String("bindAddress", func(c *Config) *string { return &c.BindAddress }),
	javaprops.Int("listenPort", func(c *Config) *int { return &c.ListenPort }),
	javaprops.Int("serverChannelMaxIdleTimeSeconds", func(c *Config) *int { return &c.ServerChannelMaxIdleTimeSeconds }),
	javaprops.Int64("writeBufferHighWaterMark", func(c *Config) *int64 { return &c.Limits.WriteBufferHighWaterMark }),
	javaprops.Int64("writeBufferLowWaterMark", func(c *Config) *int64 { return &c.Limits.WriteBufferLowWaterMark }),
	javaprops.Int64("maxUnsentBytesPerConnection", func(c *Config) *int64 { return &c.Limits.MaxUnsentBytesPerConnection }),
	javaprops.Int64("maxUnsentBytesTotal", func(c *Config) *int64 { return &c.Limits.MaxUnsentBytesTotal }),
	javaprops.Int("maxInflightRequestsPerConnection", func(c *Config) *int { return &c.Limits.MaxInflightRequestsPerConnection }),
	javaprops.Int64("maxUnreadBytesPerConnection", func(c *Config) *int64 { return &c.Limits.MaxUnreadBytesPerConnection }),
	javaprops.Int64("maxUnreadBytesTotal", func(c *Config) *int64 { return &c.Limits.MaxUnreadBytesTotal }),
	javaprops.Int64("frameReadTimeoutMillis", func(c *Config) *int64 { return &c.Limits.FrameReadTimeoutMillis }),
	javaprops.Int("maxHeaderLength", func(c *Config) *int { return &c.Limits.MaxHeaderLength }),
	javaprops.Int64("writeStallTimeoutMillis", func(c *Config) *int64 { return &c.Limits.WriteStallTimeoutMillis }),
	javaprops.Int("maxTopicsPerBrokerRegistration", func(c *Config) *int { return &c.MaxTopicsPerBrokerRegistration }),
	javaprops.Int("maxTopicRouteEntries", func(c *Config) *int { return &c.MaxTopicRouteEntries }),
	javaprops.Int("maxBrokers", func(c *Config) *int { return &c.MaxBrokers }),
	javaprops.Int("maxKVConfigBytes", func(c *Config) *int { return &c.MaxKVConfigBytes }),
	javaprops.Int("maxKVConfigValueLength", func(c *Config) *int { return &c.MaxKVConfigValueLength }),
	javaprops.Int64("maxRouteTableBytes", func(c *Config) *int64 { return &c.MaxRouteTableBytes }),
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

// Apply sets the properties p names. Unknown keys are returned (Java
// ignores them); a value that does not parse is an error and leaves that
// field unchanged, the others applied.
func (c *Config) Apply(p javaprops.Props) (unknown []string, err error) {
	var errs []error
	for _, e := range p {
		if auth.IsConfigKey(e.Key) {
			if err := c.Auth.SetConfigKey(e.Key, e.Value); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		f, ok := props.Find(e.Key)
		if !ok {
			unknown = append(unknown, e.Key)
			continue
		}
		if err := f.Set(c, e.Value); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return unknown, fmt.Errorf("namesrv: config: %w", err)
	}
	return unknown, nil
}

// Properties returns every setting as key/value pairs.
func (c *Config) Properties() javaprops.Props {
	return props.Properties(c)
}

// startOnlyKeys are read once, at start (the listener, the pools, the
// scanner, the embedded controller): a remote update of one would change
// only how the next start goes, which is how one bricked a restart
// (listenPort and enableControllerInNamesrv without controller peers).
var startOnlyKeys = map[string]bool{
	"listenPort":                           true,
	"bindAddress":                          true,
	"serverChannelMaxIdleTimeSeconds":      true,
	"clientRequestThreadPoolNums":          true,
	"defaultThreadPoolNums":                true,
	"clientRequestThreadPoolQueueCapacity": true,
	"defaultThreadPoolQueueCapacity":       true,
	"scanNotActiveBrokerInterval":          true, // the controller's too
	"enableControllerInNamesrv":            true,
	"metricsExporterType":                  true,
	"metricsPromExporterHost":              true,
	"metricsPromExporterPort":              true,
	"metricsLabel":                         true,
	"metricsInDelta":                       true,
	"metricsGrpcExporterTarget":            true,
	"metricsGrpcExporterHeader":            true,
	"metricGrpcExporterTimeOutInMills":     true,
	"metricGrpcExporterIntervalInMills":    true,
	// The embedded controller's keys without the controller prefix
	// (cmd/mqnamesrv's tests check every controller key is refused).
	"electMasterMaxRetryCount":   true,
	"enableElectUncleanMaster":   true,
	"isProcessReadEvent":         true,
	"notifyBrokerRoleChanged":    true,
	"scanInactiveMasterInterval": true,
}

// sensitiveKeys are the keys refuseSensitiveRemoteConfig refuses besides
// the operator's sensitiveRemoteConfigKeys. supportActingMaster makes
// routes present a slave as its set's master when the master is gone, a
// role change for every client; the name server's addresses and the
// embedded controller's peers are start-only keys, refused whatever the
// policy says.
var sensitiveKeys = map[string]bool{
	"supportActingMaster": true,
}

// protectionKeys are our bounds that compat/blacklist does not list yet.
var protectionKeys = map[string]bool{
	"maxRouteTableBytes": true,
}

// refusedKey returns the first key of update that UPDATE_NAMESRV_CONFIG
// may not change: Java's fixed keys (configBlackList, configStorePath,
// kvConfigPath, rocketmqHome) and configBlackList's, plus our fixed rules
// (compat/blacklist: every path, and bindAddress), the keys read only at
// start, the embedded controller's ("controller…") and, while
// refuseSensitiveRemoteConfig is on, the sensitive ones.
func (c *Config) refusedKey(update javaprops.Props) (key, why string, refused bool) {
	if key, why, refused := blacklist.Check(update, c.ConfigBlackList); refused {
		return key, why, true
	}
	for _, e := range update {
		if auth.IsConfigKey(e.Key) {
			return e.Key, blacklist.ReasonSensitive, true
		}
	}
	// Stricter than Java: the policy's keys and the operator's additions.
	policy := blacklist.Policy{Refuse: c.RefuseSensitiveRemoteConfig, Extra: c.SensitiveRemoteConfigKeys}
	if key, refused := policy.Check(update, sensitiveKeys); refused {
		return key, blacklist.ReasonSensitive, true
	}
	for _, e := range update {
		switch {
		case startOnlyKeys[e.Key]:
			return e.Key, "read only at start", true
		case strings.HasPrefix(e.Key, "controller"):
			return e.Key, "the embedded controller's, read only at start", true
		case protectionKeys[e.Key]:
			return e.Key, blacklist.ReasonProtection, true
		}
	}
	return "", "", false
}

// fromFile is the configuration the next start reads from a config file
// holding p: the defaults, then p, then the file's own path, as
// cmd/mqnamesrv loads it.
func fromFile(p javaprops.Props, path string) (Config, error) {
	c := Default()
	if _, err := c.Apply(p); err != nil {
		return c, err
	}
	c.ConfigStorePath = path
	return c, c.Validate()
}
