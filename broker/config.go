package broker

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// Config holds the broker settings. Field tags name the Java broker.conf
// key each one is read from.
type Config struct {
	// TLS is the tls.* settings (Java's -D system properties and its
	// tls.config.file; tlsconf.Load), set by the cmd, not a broker.conf
	// field. nil: no TLS and no PROXY protocol detection on the port.
	TLS               *tlsconf.Config
	BrokerClusterName string `conf:"brokerClusterName"`
	BrokerName        string `conf:"brokerName"`
	BrokerID          int64  `conf:"brokerId"`
	// BrokerIP1 is the address advertised to name servers and clients and
	// embedded in message ids.
	BrokerIP1 string `conf:"brokerIP1"`
	BrokerIP2 string `conf:"brokerIP2"`
	// ListenIP is the interface to bind ("" = all). Not a Java key.
	ListenIP    string `conf:"listenIP"`
	ListenPort  int    `conf:"listenPort"`
	NamesrvAddr string `conf:"namesrvAddr"`
	// FastListen enables the VIP port listenPort-2.
	FastListen bool `conf:"enableFastChannel"`

	StorePathRootDir        string `conf:"storePathRootDir"`
	StorePathCommitLog      string `conf:"storePathCommitLog"`
	FlushDiskType           string `conf:"flushDiskType"`
	BrokerRole              string `conf:"brokerRole"`
	MappedFileSizeCommitLog int64  `conf:"mappedFileSizeCommitLog"`
	FileReservedTime        int    `conf:"fileReservedTime"` // hours
	DeleteWhen              string `conf:"deleteWhen"`
	MaxMessageSize          int    `conf:"maxMessageSize"`

	// MappedFileSizeConsumeQueue is in bytes; like Java, it is rounded up
	// to whole 20-byte units.
	MappedFileSizeConsumeQueue int64 `conf:"mappedFileSizeConsumeQueue"`

	// Replication (Java MessageStoreConfig / BrokerConfig). brokerRole and
	// brokerId are the start values; the role component (role.go) holds
	// the run-time ones.
	//
	// HaListenPort is the HA port; <= 0 (default) is listenPort+1 (Java's
	// BrokerStartup), or any free port when listenPort is 0.
	HaListenPort            int    `conf:"haListenPort"`
	HaMasterAddress         string `conf:"haMasterAddress"`
	HaSendHeartbeatInterval int    `conf:"haSendHeartbeatInterval"` // ms
	HaHousekeepingInterval  int    `conf:"haHousekeepingInterval"`  // ms
	HaTransferBatchSize     int    `conf:"haTransferBatchSize"`
	HaMaxGapNotInSync       int64  `conf:"haMaxGapNotInSync"`
	SlaveReadEnable         bool   `conf:"slaveReadEnable"`
	TotalReplicas           int    `conf:"totalReplicas"`
	InSyncReplicas          int    `conf:"inSyncReplicas"`
	MinInSyncReplicas       int    `conf:"minInSyncReplicas"`
	SlaveTimeout            int    `conf:"slaveTimeout"` // ms
	// AccessMessageInMemoryMaxRatio (percent of RAM) bounds how far a
	// consumer may lag before the master suggests the slave.
	AccessMessageInMemoryMaxRatio int `conf:"accessMessageInMemoryMaxRatio"`
	// EnableSplitMetadata and SplitMetadataSize (Java 5.4.0): a request for
	// the topic or subscription group table that names a page gets at most
	// SplitMetadataSize entries; one that names none gets the whole table.
	EnableSplitMetadata bool `conf:"enableSplitMetadata"`
	SplitMetadataSize   int  `conf:"splitMetadataSize"`

	// Controller mode (RIP-44, controllermode.go): the controller assigns
	// the brokerId and the role; brokerRole/brokerId are then only the
	// start values (Java's sample conf: SLAVE and -1). Java's names and
	// defaults; periods in ms.
	EnableControllerMode            bool   `conf:"enableControllerMode"`
	ControllerAddr                  string `conf:"controllerAddr"` // "ip:port;ip:port"
	SyncBrokerMetadataPeriod        int64  `conf:"syncBrokerMetadataPeriod"`
	CheckSyncStateSetPeriod         int64  `conf:"checkSyncStateSetPeriod"`
	SyncControllerMetadataPeriod    int64  `conf:"syncControllerMetadataPeriod"`
	ControllerHeartBeatTimeoutMills int64  `conf:"controllerHeartBeatTimeoutMills"`
	BrokerElectionPriority          int32  `conf:"brokerElectionPriority"`
	BrokerHeartbeatInterval         int64  `conf:"brokerHeartbeatInterval"`
	SendHeartbeatTimeoutMillis      int64  `conf:"sendHeartbeatTimeoutMillis"`
	AllAckInSyncStateSet            bool   `conf:"allAckInSyncStateSet"`
	HaMaxTimeSlaveNotCatchup        int64  `conf:"haMaxTimeSlaveNotCatchup"`
	StorePathEpochFile              string `conf:"storePathEpochFile"`      // "" = <storePathRootDir>/epochFileCheckpoint
	StorePathBrokerIdentity         string `conf:"storePathBrokerIdentity"` // "" = <storePathRootDir>/brokerIdentity
	SyncFromLastFile                bool   `conf:"syncFromLastFile"`
	AsyncLearner                    bool   `conf:"asyncLearner"`

	AutoCreateTopicEnable       bool   `conf:"autoCreateTopicEnable"`
	AutoCreateSubscriptionGroup bool   `conf:"autoCreateSubscriptionGroup"`
	DefaultTopicQueueNums       int32  `conf:"defaultTopicQueueNums"`
	ClusterTopicEnable          bool   `conf:"clusterTopicEnable"`
	BrokerTopicEnable           bool   `conf:"brokerTopicEnable"`
	TraceTopicEnable            bool   `conf:"traceTopicEnable"`
	MsgTraceTopicName           string `conf:"msgTraceTopicName"`
	BrokerPermission            int32  `conf:"brokerPermission"`
	EnablePropertyFilter        bool   `conf:"enablePropertyFilter"`
	MessageDelayLevel           string `conf:"messageDelayLevel"`
	RegionID                    string `conf:"regionId"`
	TraceOn                     bool   `conf:"traceOn"`

	TransactionTimeOut       int64 `conf:"transactionTimeOut"`       // ms
	TransactionCheckInterval int64 `conf:"transactionCheckInterval"` // ms
	TransactionCheckMax      int   `conf:"transactionCheckMax"`

	// 5.x timer messages (Java MessageStoreConfig keys; restart-only).
	TimerWheelEnable       bool  `conf:"timerWheelEnable"`
	TimerMaxDelaySec       int64 `conf:"timerMaxDelaySec"`
	TimerPrecisionMs       int64 `conf:"timerPrecisionMs"`    // 100, 200, 500 or 1000 (rounded down like Java)
	TimerRollWindowSlot    int   `conf:"timerRollWindowSlot"` // slots; Java's spelling, singular
	MappedFileSizeTimerLog int64 `conf:"mappedFileSizeTimerLog"`
	TimerFlushIntervalMs   int64 `conf:"timerFlushIntervalMs"`

	// Message recall (5.3, BrokerConfig keys; read per request). Off by
	// default, as in Java: RECALL_MESSAGE then answers NO_PERMISSION.
	RecallMessageEnable               bool `conf:"recallMessageEnable"`
	AllowRecallWhenBrokerNotWriteable bool `conf:"allowRecallWhenBrokerNotWriteable"`

	SendMessageThreadPoolNums   int   `conf:"sendMessageThreadPoolNums"`
	SendThreadPoolQueueCapacity int   `conf:"sendThreadPoolQueueCapacity"`
	PullMessageThreadPoolNums   int   `conf:"pullMessageThreadPoolNums"`
	PullThreadPoolQueueCapacity int   `conf:"pullThreadPoolQueueCapacity"`
	AdminBrokerThreadPoolNums   int   `conf:"adminBrokerThreadPoolNums"`
	WaitTimeMillsInSendQueue    int64 `conf:"waitTimeMillsInSendQueue"`

	LongPollingEnable        bool  `conf:"longPollingEnable"`
	ShortPollingTimeMills    int64 `conf:"shortPollingTimeMills"`
	MaxTransferCountInMemory int   `conf:"maxTransferCountOnMessageInMemory"`
	MaxTransferBytesInMemory int   `conf:"maxTransferBytesOnMessageInMemory"`

	RegisterNameServerPeriod    int64 `conf:"registerNameServerPeriod"`    // ms
	FlushConsumerOffsetInterval int64 `conf:"flushConsumerOffsetInterval"` // ms
	ChannelExpiredTimeout       int64 `conf:"channelExpiredTimeout"`       // ms
	RebalanceLockMaxLiveTime    int64 `conf:"rebalanceLockMaxLiveTime"`    // ms

	// BrokerConfigPath is the file UPDATE_BROKER_CONFIG persists to (the
	// -c file); "" keeps updates in memory.
	BrokerConfigPath string `conf:"brokerConfigPath"`
	// ConfigBlackList lists, ';'-separated, keys UPDATE_BROKER_CONFIG
	// refuses (besides compat/blacklist's fixed rules: every path, store
	// layout, retention, code-loading and access-control key, listenIP).
	ConfigBlackList string `conf:"configBlackList"`
	// RefuseSensitiveRemoteConfig (ours, default true; stricter than Java)
	// makes UPDATE_BROKER_CONFIG refuse the keys that redirect or re-home
	// the broker (sensitiveKeys) and those SensitiveRemoteConfigKeys lists
	// (';'-separated, e.g. "brokerPermission"). Both are read from the
	// file only: a remote update refuses them (compat/blacklist.Policy).
	RefuseSensitiveRemoteConfig bool   `conf:"refuseSensitiveRemoteConfig"`
	SensitiveRemoteConfigKeys   string `conf:"sensitiveRemoteConfigKeys"`

	// MaxTopicQueueNums caps a topic's read and write queue numbers, on
	// every path that sets them (Java has no cap; each queue can cost a
	// consume-queue file).
	MaxTopicQueueNums int32 `conf:"maxTopicQueueNums"`

	// Disk usage checks of the store (Java MessageStoreConfig keys and
	// defaults; restart-only): see store.Config.
	DiskMaxUsedSpaceRatio       int   `conf:"diskMaxUsedSpaceRatio"`       // percent
	DiskSpaceWarningLevelRatio  int   `conf:"diskSpaceWarningLevelRatio"`  // percent
	DiskSpaceCleanForciblyRatio int   `conf:"diskSpaceCleanForciblyRatio"` // percent
	CleanFileForciblyEnable     bool  `conf:"cleanFileForciblyEnable"`
	CleanResourceInterval       int64 `conf:"cleanResourceInterval"` // ms

	// Network bounds of both listening ports (restart-only; see
	// transport.Limits and transport.ServerConfig). The first two are
	// Java's NettyServerConfig keys; the others are ours.
	WriteBufferHighWaterMark         int64 `conf:"writeBufferHighWaterMark"`
	WriteBufferLowWaterMark          int64 `conf:"writeBufferLowWaterMark"`
	MaxUnsentBytesPerConnection      int64 `conf:"maxUnsentBytesPerConnection"`
	MaxUnsentBytesTotal              int64 `conf:"maxUnsentBytesTotal"`
	MaxInflightRequestsPerConnection int   `conf:"maxInflightRequestsPerConnection"`
	MaxUnreadBytesPerConnection      int64 `conf:"maxUnreadBytesPerConnection"`
	MaxUnreadBytesTotal              int64 `conf:"maxUnreadBytesTotal"`
	FrameReadTimeoutMillis           int64 `conf:"frameReadTimeoutMillis"` // ms; negative disables
	MaxHeaderLength                  int   `conf:"maxHeaderLength"`
	WriteStallTimeoutMillis          int64 `conf:"writeStallTimeoutMillis"` // ms; negative disables

	// Held long-polling pulls (ours; Java holds any number, restart-only):
	// a pull that would be held past either bound is answered SYSTEM_BUSY
	// at once, which Java and Go push consumers retry after 3 s.
	MaxHeldPullsPerConnection int   `conf:"maxHeldPullsPerConnection"`
	MaxHeldPullBytes          int64 `conf:"maxHeldPullBytes"` // estimated, all connections
	// POP consumption (Java BrokerConfig keys and defaults; pop*.go).
	ReviveQueueNum          int   `conf:"reviveQueueNum"`
	ReviveInterval          int64 `conf:"reviveInterval"` // ms between revive rounds
	EnableRetryTopicV2      bool  `conf:"enableRetryTopicV2"`
	PopFromRetryProbability int   `conf:"popFromRetryProbability"` // percent
	PopPollingSize          int   `conf:"popPollingSize"`          // held per topic, group and queue
	MaxPopPollingSize       int   `conf:"maxPopPollingSize"`       // held in all
	// MaxMsgsNumBatch caps QUERY_MESSAGE's maxNum (Java MessageStoreConfig).
	MaxMsgsNumBatch int `conf:"maxMsgsNumBatch"`
	// BindAddress is Java's NettyServerConfig key for the interface both
	// ports bind ("" = all); when set it wins over listenIP (see BindIP).
	BindAddress string `conf:"bindAddress"`

	// ACL 2.0 (Java's AuthConfig keys and defaults, restart-only; see
	// broker/auth and authconf.go). The metadata provider keys name Java
	// classes: we only note that one is set (there is one provider, a bbolt
	// file under <storePathRootDir>/config/auth).
	AuthenticationEnabled                bool   `conf:"authenticationEnabled"`
	AuthorizationEnabled                 bool   `conf:"authorizationEnabled"`
	AuthenticationMetadataProvider       string `conf:"authenticationMetadataProvider"`
	AuthorizationMetadataProvider        string `conf:"authorizationMetadataProvider"`
	InitAuthenticationUser               string `conf:"initAuthenticationUser"`               // {"username":…,"password":…}
	InnerClientAuthenticationCredentials string `conf:"innerClientAuthenticationCredentials"` // {"accessKey":…,"secretKey":…}
	AuthenticationWhitelist              string `conf:"authenticationWhitelist"`              // request codes, comma-separated
	AuthorizationWhitelist               string `conf:"authorizationWhitelist"`
	MigrateAuthFromV1Enabled             bool   `conf:"migrateAuthFromV1Enabled"` // reads $ROCKETMQ_HOME/conf/plain_acl.yml

	// Metrics (Java's BrokerConfig keys and defaults, restart-only; see
	// broker/metrics and metrics.go): PROM serves /metrics on
	// metricsPromExporterHost (blank: brokerIP1):metricsPromExporterPort.
	MetricsExporterType     string `conf:"metricsExporterType"` // DISABLE | PROM | OTLP_GRPC | LOG
	MetricsPromExporterHost string `conf:"metricsPromExporterHost"`
	MetricsPromExporterPort int    `conf:"metricsPromExporterPort"`
	MetricsLabel            string `conf:"metricsLabel"` // k:v,k:v
	MetricsInDelta          bool   `conf:"metricsInDelta"`

	// MetricsPprofEnable (ours) adds Go's /debug/pprof/ handlers (CPU and
	// heap profiles, goroutine dumps, `go tool trace` captures) to the
	// metrics endpoint. Off by default: a profile costs CPU while it runs.
	MetricsPprofEnable bool `conf:"metricsPprofEnable"`
	// OTLP_GRPC (Java's keys): collector address ("http://host:4317" is
	// plaintext; without a scheme https), "k:v,k:v" request headers, the
	// export timeout and period (0: Java's 3 s and 60 s).
	MetricsGrpcExporterTarget         string `conf:"metricsGrpcExporterTarget"`
	MetricsGrpcExporterHeader         string `conf:"metricsGrpcExporterHeader"`
	MetricGrpcExporterTimeOutInMills  int64  `conf:"metricGrpcExporterTimeOutInMills"`
	MetricGrpcExporterIntervalInMills int64  `conf:"metricGrpcExporterIntervalInMills"`
}

// BindIP is the interface to bind: bindAddress when set, else listenIP
// ("" = every interface).
func (c *Config) BindIP() string {
	if c.BindAddress != "" {
		return c.BindAddress
	}
	return c.ListenIP
}

// DefaultConfig returns the Java broker's defaults.
func DefaultConfig() Config {
	home, _ := os.UserHomeDir()
	host, _ := os.Hostname()
	if host == "" {
		host = "DEFAULT_BROKER"
	}
	return Config{
		BrokerClusterName:           "DefaultCluster",
		BrokerName:                  host,
		BrokerIP1:                   defaultIP(),
		ListenPort:                  10911,
		FastListen:                  true,
		StorePathRootDir:            filepath.Join(home, "store"),
		FlushDiskType:               "ASYNC_FLUSH",
		BrokerRole:                  "ASYNC_MASTER",
		MappedFileSizeCommitLog:     1 << 30,
		MappedFileSizeConsumeQueue:  300000 * 20,
		FileReservedTime:            72,
		DeleteWhen:                  "04",
		MaxMessageSize:              4 << 20,
		AutoCreateTopicEnable:       true,
		AutoCreateSubscriptionGroup: true,
		DefaultTopicQueueNums:       8,
		ClusterTopicEnable:          true,
		BrokerTopicEnable:           true,
		MsgTraceTopicName:           "RMQ_SYS_TRACE_TOPIC",
		BrokerPermission:            6,
		MetricsExporterType:         "DISABLE",
		MetricsPromExporterPort:     5557,
		MessageDelayLevel:           "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h",
		RegionID:                    "DefaultRegion",
		TraceOn:                     true,
		TransactionTimeOut:          6000,
		TransactionCheckInterval:    30000,
		TransactionCheckMax:         15,
		TimerWheelEnable:            true,
		TimerMaxDelaySec:            3 * 24 * 3600,
		TimerPrecisionMs:            1000,
		TimerRollWindowSlot:         2 * 24 * 3600,
		MappedFileSizeTimerLog:      100 << 20,
		TimerFlushIntervalMs:        1000,

		AllowRecallWhenBrokerNotWriteable: true,

		SendMessageThreadPoolNums:   min(runtime.NumCPU(), 4),
		SendThreadPoolQueueCapacity: 10000,
		PullMessageThreadPoolNums:   16 + runtime.NumCPU()*2,
		PullThreadPoolQueueCapacity: 100000,
		AdminBrokerThreadPoolNums:   16,
		WaitTimeMillsInSendQueue:    200,
		LongPollingEnable:           true,
		ShortPollingTimeMills:       1000,
		MaxTransferCountInMemory:    32,
		MaxTransferBytesInMemory:    256 * 1024,
		RegisterNameServerPeriod:    30000,
		FlushConsumerOffsetInterval: 5000,
		ChannelExpiredTimeout:       120000,
		RebalanceLockMaxLiveTime:    60000,
		ConfigBlackList:             "configBlackList;brokerConfigPath",
		RefuseSensitiveRemoteConfig: true,
		MaxTopicQueueNums:           1024,
		EnableSplitMetadata:         true,
		SplitMetadataSize:           defaultSplitMetadataSize,
		DiskMaxUsedSpaceRatio:       75,
		DiskSpaceWarningLevelRatio:  90,
		DiskSpaceCleanForciblyRatio: 85,
		CleanFileForciblyEnable:     true,
		CleanResourceInterval:       10000,

		WriteBufferHighWaterMark:         transport.DefaultWriteHighWater,
		WriteBufferLowWaterMark:          transport.DefaultWriteLowWater,
		MaxUnsentBytesPerConnection:      transport.DefaultMaxUnsentPerConn,
		MaxUnsentBytesTotal:              transport.DefaultMaxUnsentTotal,
		MaxInflightRequestsPerConnection: transport.DefaultMaxInflightPerConn,
		MaxUnreadBytesPerConnection:      transport.DefaultMaxUnreadPerConn,
		MaxUnreadBytesTotal:              transport.DefaultMaxUnreadTotal,
		FrameReadTimeoutMillis:           transport.DefaultFrameReadTimeout.Milliseconds(),
		MaxHeaderLength:                  transport.DefaultMaxHeaderLength,
		WriteStallTimeoutMillis:          transport.DefaultWriteStallTimeout.Milliseconds(),

		MaxHeldPullsPerConnection: DefaultMaxHeldPullsPerConnection,
		MaxHeldPullBytes:          DefaultMaxHeldPullBytes,
		MaxMsgsNumBatch:           64,

		ReviveQueueNum:          8,
		ReviveInterval:          1000,
		PopFromRetryProbability: 20,
		PopPollingSize:          DefaultPopPollingSize,
		MaxPopPollingSize:       DefaultMaxPopPollingSize,

		// Replication (Java's defaults; haListenPort 0 = listenPort+1).
		HaListenPort:                  0,
		HaSendHeartbeatInterval:       5000,
		HaHousekeepingInterval:        20000,
		HaTransferBatchSize:           32 << 10,
		HaMaxGapNotInSync:             256 << 20,
		TotalReplicas:                 1,
		InSyncReplicas:                1,
		MinInSyncReplicas:             1,
		SlaveTimeout:                  3000,
		AccessMessageInMemoryMaxRatio: 40,

		// Controller mode (Java BrokerConfig / MessageStoreConfig defaults).
		SyncBrokerMetadataPeriod:        5000,
		CheckSyncStateSetPeriod:         5000,
		SyncControllerMetadataPeriod:    10000,
		ControllerHeartBeatTimeoutMills: 10000,
		BrokerElectionPriority:          math.MaxInt32,
		BrokerHeartbeatInterval:         1000,
		SendHeartbeatTimeoutMillis:      1000,
		HaMaxTimeSlaveNotCatchup:        15000,
	}
}

// transportLimits are the network bounds of the broker's servers.
func (c *Config) transportLimits() transport.Limits {
	return transport.Limits{
		WriteBufferHighWaterMark:         c.WriteBufferHighWaterMark,
		WriteBufferLowWaterMark:          c.WriteBufferLowWaterMark,
		MaxUnsentBytesPerConnection:      c.MaxUnsentBytesPerConnection,
		MaxUnsentBytesTotal:              c.MaxUnsentBytesTotal,
		MaxInflightRequestsPerConnection: c.MaxInflightRequestsPerConnection,
		MaxUnreadBytesPerConnection:      c.MaxUnreadBytesPerConnection,
		MaxUnreadBytesTotal:              c.MaxUnreadBytesTotal,
		FrameReadTimeoutMillis:           c.FrameReadTimeoutMillis,
		MaxHeaderLength:                  c.MaxHeaderLength,
		WriteStallTimeoutMillis:          c.WriteStallTimeoutMillis,
	}
}

// defaultIP is the first non-loopback IPv4 address, else 127.0.0.1.
func defaultIP() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil && !ipn.IP.IsLinkLocalUnicast() {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// Validate checks the settings and fills derived defaults.
func (c *Config) Validate() error {
	if c.BrokerName == "" {
		return errors.New("broker: brokerName is empty")
	}
	if c.BrokerClusterName == "" {
		return errors.New("broker: brokerClusterName is empty")
	}
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		return fmt.Errorf("broker: listenPort %d out of range", c.ListenPort)
	}
	if c.StorePathRootDir == "" {
		return errors.New("broker: storePathRootDir is empty")
	}
	if err := c.validateRole(); err != nil {
		return err
	}
	if c.StorePathCommitLog == "" {
		c.StorePathCommitLog = filepath.Join(c.StorePathRootDir, "commitlog")
	}
	if c.MaxMessageSize <= 0 {
		return fmt.Errorf("broker: maxMessageSize %d", c.MaxMessageSize)
	}
	if c.DefaultTopicQueueNums <= 0 {
		return fmt.Errorf("broker: defaultTopicQueueNums %d", c.DefaultTopicQueueNums)
	}
	if c.MaxTopicQueueNums <= 0 {
		return fmt.Errorf("broker: maxTopicQueueNums %d", c.MaxTopicQueueNums)
	}
	if c.DefaultTopicQueueNums > c.MaxTopicQueueNums {
		return fmt.Errorf("broker: defaultTopicQueueNums %d above maxTopicQueueNums %d", c.DefaultTopicQueueNums, c.MaxTopicQueueNums)
	}
	switch c.FlushDiskType {
	case "ASYNC_FLUSH", "SYNC_FLUSH":
	default:
		return fmt.Errorf("broker: flushDiskType %q", c.FlushDiskType)
	}
	if _, err := c.DelayLevels(); err != nil {
		return err
	}
	if c.SendMessageThreadPoolNums < 1 {
		c.SendMessageThreadPoolNums = 1
	}
	if c.PullMessageThreadPoolNums < 1 {
		c.PullMessageThreadPoolNums = 1
	}
	if c.AdminBrokerThreadPoolNums < 1 {
		c.AdminBrokerThreadPoolNums = 1
	}
	if c.BrokerIP1 == "" {
		c.BrokerIP1 = defaultIP()
	}
	if _, err := netip.ParseAddr(c.BrokerIP1); err != nil {
		return fmt.Errorf("broker: brokerIP1 %q: %w", c.BrokerIP1, err)
	}
	if err := c.checkRanges(); err != nil {
		return err
	}
	if err := c.metricsConfig().Validate(); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return c.checkCombinations()
}

// MaxMessageSizeLimit is the largest maxMessageSize the broker takes. A
// body of that size has to travel in one frame (codec.DefaultMaxFrameLength,
// 16 MiB, our transport's limit and Java's frameMaxLength) twice: in a send
// request beside its header, whose properties a JSON header may escape to
// six bytes a character, and in a pull reply as a stored record with the
// largest properties and topic. messageFrameReserve is room for either.
const MaxMessageSizeLimit = codec.DefaultMaxFrameLength - messageFrameReserve

const messageFrameReserve = 256 << 10 // > 6 × message.MaxPropertiesLen + header fields

// maxMillis is the longest period in milliseconds a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// Upper bounds of the worker pools: each queue slot and worker is
// allocated at start, so a huge value is a broker that cannot start.
const (
	maxPoolThreads = 1 << 12
	maxPoolQueue   = 1 << 22
)

// maxRecordOverhead is what a stored record adds to its body at most: the
// fixed fields with IPv6 hosts, the longest topic the broker accepts and
// the largest properties.
func maxRecordOverhead() int {
	v6 := netip.AddrPortFrom(netip.IPv6Loopback(), 0)
	m := message.Message{Topic: strings.Repeat("t", topicMaxLen), Properties: strings.Repeat("p", message.MaxPropertiesLen), BornHost: v6, StoreHost: v6}
	return m.RecordSize()
}

// checkRanges bounds every numeric setting the broker uses: sizes that
// must fit the frame and the store, periods that must be positive and fit
// a time.Duration, ratios in percent. (Java checks none of them: its
// broker takes maxMessageSize=999999999 or shortPollingTimeMills=-1.)
func (c *Config) checkRanges() error {
	for _, r := range []struct {
		key    string
		v      int64
		lo, hi int64
	}{
		{"maxMessageSize", int64(c.MaxMessageSize), 1, MaxMessageSizeLimit},
		{"brokerPermission", int64(c.BrokerPermission), 0, body.PermPriority | body.PermRead | body.PermWrite | body.PermInherit},
		{"accessMessageInMemoryMaxRatio", int64(c.AccessMessageInMemoryMaxRatio), 0, 100},
		{"splitMetadataSize", int64(c.SplitMetadataSize), 1, math.MaxInt32},
		{"maxTransferCountOnMessageInMemory", int64(c.MaxTransferCountInMemory), 1, math.MaxInt32},
		{"maxTransferBytesOnMessageInMemory", int64(c.MaxTransferBytesInMemory), 1, math.MaxInt32},
		{"transactionCheckMax", int64(c.TransactionCheckMax), 1, math.MaxInt32},
		{"haTransferBatchSize", int64(c.HaTransferBatchSize), 1, math.MaxInt32},
		{"haMaxGapNotInSync", c.HaMaxGapNotInSync, 0, math.MaxInt64},
		{"sendMessageThreadPoolNums", int64(c.SendMessageThreadPoolNums), 1, maxPoolThreads},
		{"pullMessageThreadPoolNums", int64(c.PullMessageThreadPoolNums), 1, maxPoolThreads},
		{"adminBrokerThreadPoolNums", int64(c.AdminBrokerThreadPoolNums), 1, maxPoolThreads},
		{"sendThreadPoolQueueCapacity", int64(c.SendThreadPoolQueueCapacity), 1, maxPoolQueue},
		{"pullThreadPoolQueueCapacity", int64(c.PullThreadPoolQueueCapacity), 1, maxPoolQueue},
		// Periods and timeouts, in ms (timerMaxDelaySec in s).
		{"shortPollingTimeMills", c.ShortPollingTimeMills, 1, maxMillis},
		{"waitTimeMillsInSendQueue", c.WaitTimeMillsInSendQueue, 1, maxMillis},
		{"transactionTimeOut", c.TransactionTimeOut, 1, maxMillis},
		{"transactionCheckInterval", c.TransactionCheckInterval, 1, maxMillis},
		{"registerNameServerPeriod", c.RegisterNameServerPeriod, 1, maxMillis},
		{"flushConsumerOffsetInterval", c.FlushConsumerOffsetInterval, 1, maxMillis},
		{"metricGrpcExporterTimeOutInMills", c.MetricGrpcExporterTimeOutInMills, 0, maxMillis},
		{"metricGrpcExporterIntervalInMills", c.MetricGrpcExporterIntervalInMills, 0, maxMillis},
		{"channelExpiredTimeout", c.ChannelExpiredTimeout, 1, maxMillis},
		{"rebalanceLockMaxLiveTime", c.RebalanceLockMaxLiveTime, 1, maxMillis},
		{"cleanResourceInterval", c.CleanResourceInterval, 1, maxMillis},
		{"slaveTimeout", int64(c.SlaveTimeout), 1, maxMillis},
		{"haSendHeartbeatInterval", int64(c.HaSendHeartbeatInterval), 1, maxMillis},
		{"haHousekeepingInterval", int64(c.HaHousekeepingInterval), 1, maxMillis},
		{"haMaxTimeSlaveNotCatchup", c.HaMaxTimeSlaveNotCatchup, 1, maxMillis},
		{"syncBrokerMetadataPeriod", c.SyncBrokerMetadataPeriod, 1, maxMillis},
		{"checkSyncStateSetPeriod", c.CheckSyncStateSetPeriod, 1, maxMillis},
		{"syncControllerMetadataPeriod", c.SyncControllerMetadataPeriod, 1, maxMillis},
		{"controllerHeartBeatTimeoutMills", c.ControllerHeartBeatTimeoutMills, 1, maxMillis},
		{"brokerHeartbeatInterval", c.BrokerHeartbeatInterval, 1, maxMillis},
		{"sendHeartbeatTimeoutMillis", c.SendHeartbeatTimeoutMillis, 1, maxMillis},
		{"timerPrecisionMs", c.TimerPrecisionMs, 1, maxMillis},
		{"timerFlushIntervalMs", c.TimerFlushIntervalMs, 1, maxMillis},
		{"timerMaxDelaySec", c.TimerMaxDelaySec, 1, maxMillis / 1000},
	} {
		if r.v < r.lo || r.v > r.hi {
			return fmt.Errorf("broker: %s=%d out of range [%d, %d]", r.key, r.v, r.lo, r.hi)
		}
	}
	return nil
}

// checkCombinations refuses settings that are each in range but
// contradict one another.
func (c *Config) checkCombinations() error {
	// The store writes a record and the end-of-segment marker into one
	// commit-log segment.
	if need := int64(c.MaxMessageSize) + int64(maxRecordOverhead()) + message.BlankLen; need > c.MappedFileSizeCommitLog {
		return fmt.Errorf("broker: maxMessageSize=%d does not fit a commit-log segment of mappedFileSizeCommitLog=%d (a record needs %d bytes)",
			c.MaxMessageSize, c.MappedFileSizeCommitLog, need)
	}
	// A master drops a slave silent for haHousekeepingInterval; the slave
	// reports every haSendHeartbeatInterval.
	if c.HaHousekeepingInterval <= c.HaSendHeartbeatInterval {
		return fmt.Errorf("broker: haHousekeepingInterval=%d must exceed haSendHeartbeatInterval=%d",
			c.HaHousekeepingInterval, c.HaSendHeartbeatInterval)
	}
	// The controller declares the broker dead after
	// controllerHeartBeatTimeoutMills (we send it), and we beat every
	// brokerHeartbeatInterval.
	if c.ControllerHeartBeatTimeoutMills <= c.BrokerHeartbeatInterval {
		return fmt.Errorf("broker: controllerHeartBeatTimeoutMills=%d must exceed brokerHeartbeatInterval=%d",
			c.ControllerHeartBeatTimeoutMills, c.BrokerHeartbeatInterval)
	}
	// SCHEDULE_TOPIC_XXXX has one queue per delay level.
	levels, err := c.DelayLevels()
	if err != nil {
		return err
	}
	if len(levels) > int(c.MaxTopicQueueNums) {
		return fmt.Errorf("broker: messageDelayLevel has %d levels, above maxTopicQueueNums=%d", len(levels), c.MaxTopicQueueNums)
	}
	return nil
}

// NamesrvAddrs splits namesrvAddr on ';'.
func (c *Config) NamesrvAddrs() []string {
	var out []string
	for _, a := range strings.Split(c.NamesrvAddr, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// BrokerAddr is the advertised "brokerIP1:listenPort".
func (c *Config) BrokerAddr() string {
	return net.JoinHostPort(c.BrokerIP1, strconv.Itoa(c.ListenPort))
}

// DelayLevels parses messageDelayLevel ("1s 5s … 2h") into durations,
// level 1 first.
func (c *Config) DelayLevels() ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Fields(c.MessageDelayLevel) {
		if len(f) < 2 {
			return nil, fmt.Errorf("broker: messageDelayLevel %q", f)
		}
		n, err := strconv.ParseInt(f[:len(f)-1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("broker: messageDelayLevel %q: %w", f, err)
		}
		if n <= 0 {
			return nil, fmt.Errorf("broker: messageDelayLevel %q is not positive", f)
		}
		var unit time.Duration
		switch f[len(f)-1] {
		case 's':
			unit = time.Second
		case 'm':
			unit = time.Minute
		case 'h':
			unit = time.Hour
		case 'd':
			unit = 24 * time.Hour
		default:
			return nil, fmt.Errorf("broker: messageDelayLevel unit in %q", f)
		}
		if n > math.MaxInt64/int64(unit) {
			return nil, fmt.Errorf("broker: messageDelayLevel %q too long", f)
		}
		out = append(out, time.Duration(n)*unit)
	}
	return out, nil
}

// Set assigns one broker.conf key. It reports false for a key the broker
// does not know (the caller logs it), and an error for a bad value.
func (c *Config) Set(key, value string) (bool, error) {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("conf") != key {
			continue
		}
		f := v.Field(i)
		value = strings.TrimSpace(value)
		switch f.Kind() {
		case reflect.String:
			f.SetString(value)
		case reflect.Bool:
			// compat: Java's Boolean.parseBoolean — "true" in any case, else false.
			f.SetBool(strings.EqualFold(value, "true"))
		case reflect.Int, reflect.Int32, reflect.Int64:
			// Java's fields are int or long: a value beyond the field fails
			// here (Java skips it silently) rather than being truncated.
			bits := 32
			if f.Kind() == reflect.Int64 {
				bits = 64
			}
			n, err := strconv.ParseInt(value, 10, bits)
			if err != nil {
				return true, fmt.Errorf("broker: %s=%q: %w", key, value, err)
			}
			f.SetInt(n)
		}
		return true, nil
	}
	return false, nil
}

// Properties lists every key with its current value, sorted by key (the
// GET_BROKER_CONFIG body and mqbroker -p).
func (c *Config) Properties() [][2]string {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	out := make([][2]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		key := t.Field(i).Tag.Get("conf")
		if key == "" {
			continue
		}
		out = append(out, [2]string{key, fmt.Sprint(v.Field(i).Interface())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// LoadFile applies a Java broker.conf to c. Unknown keys are returned, not
// fatal. Like the Java broker's -c, it makes path the brokerConfigPath
// that runtime config updates are written back to, unless the file names
// another.
func (c *Config) LoadFile(path string) (unknown []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("broker: config %s: %w", path, err)
	}
	props, err := javaprops.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("broker: config %s: %w", path, err)
	}
	for _, e := range props {
		known, err := c.Set(e.Key, e.Value)
		if err != nil {
			return unknown, err
		}
		if !known {
			unknown = append(unknown, e.Key)
		}
	}
	if _, ok := props.Get("brokerConfigPath"); !ok {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		c.BrokerConfigPath = path
	}
	return unknown, nil
}
