package namesrv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/blacklist"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// Config is the name server's configuration: Java's NamesrvConfig plus the
// NettyServerConfig keys we honour, under the same property names.
type Config struct {
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
		BindAddress:                          "0.0.0.0",
		ListenPort:                           9876,
		ServerChannelMaxIdleTimeSeconds:      120,
		Limits:                               transport.DefaultLimits(),

		MaxTopicsPerBrokerRegistration: DefaultMaxTopicsPerBrokerRegistration,
		MaxTopicRouteEntries:           DefaultMaxTopicRouteEntries,
		MaxBrokers:                     DefaultMaxBrokers,
		MaxKVConfigBytes:               DefaultMaxKVConfigBytes,
		MaxKVConfigValueLength:         DefaultMaxKVConfigValueLength,
	}
}

// Defaults of the registration and KV bounds. A Java broker's plain
// registration carries every topic in one frame of at most 16 MiB, about
// 200 bytes a topic, so no real broker sends 100,000 topics; each route
// entry retains about 100 bytes, so the route table stays near 200 MiB at
// most; the KV table holds the order-topic configs (one short entry per
// ordered topic) and little else.
const (
	DefaultMaxTopicsPerBrokerRegistration = 100_000
	DefaultMaxTopicRouteEntries           = 2_000_000
	DefaultMaxBrokers                     = 4096
	DefaultMaxKVConfigBytes               = 16 << 20
	DefaultMaxKVConfigValueLength         = 64 << 10
)

// Validate reports settings the server cannot run with.
func (c *Config) Validate() error {
	var errs []error
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		errs = append(errs, fmt.Errorf("listenPort %d out of range", c.ListenPort))
	}
	if c.ScanNotActiveBrokerInterval <= 0 {
		errs = append(errs, fmt.Errorf("scanNotActiveBrokerInterval must be positive"))
	}
	if c.BrokerChannelExpiredTime <= 0 {
		errs = append(errs, fmt.Errorf("brokerChannelExpiredTime must be positive"))
	}
	if c.ClientRequestThreadPoolNums < 1 || c.DefaultThreadPoolNums < 1 {
		errs = append(errs, fmt.Errorf("thread pool sizes must be at least 1"))
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
	javaprops.Int("maxTopicsPerBrokerRegistration", func(c *Config) *int { return &c.MaxTopicsPerBrokerRegistration }),
	javaprops.Int("maxTopicRouteEntries", func(c *Config) *int { return &c.MaxTopicRouteEntries }),
	javaprops.Int("maxBrokers", func(c *Config) *int { return &c.MaxBrokers }),
	javaprops.Int("maxKVConfigBytes", func(c *Config) *int { return &c.MaxKVConfigBytes }),
	javaprops.Int("maxKVConfigValueLength", func(c *Config) *int { return &c.MaxKVConfigValueLength }),
}

// Apply sets the properties p names. Unknown keys are returned (Java
// ignores them); a value that does not parse is an error and leaves that
// field unchanged, the others applied.
func (c *Config) Apply(p javaprops.Props) (unknown []string, err error) {
	var errs []error
	for _, e := range p {
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

// refusedKey returns the first key of update that UPDATE_NAMESRV_CONFIG
// may not change: Java's fixed keys (configBlackList, configStorePath,
// kvConfigPath, rocketmqHome) and configBlackList's, plus our fixed rules
// (compat/blacklist: every path, and bindAddress).
func (c *Config) refusedKey(update javaprops.Props) (key, why string, refused bool) {
	return blacklist.Check(update, c.ConfigBlackList)
}
