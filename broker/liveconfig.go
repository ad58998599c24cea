package broker

import (
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/compat/blacklist"
)

// liveConfig holds the settings UPDATE_BROKER_CONFIG changes while the
// broker runs. Processors read them per use (one atomic load each); every
// other Config field is fixed once the broker starts, so reading it needs
// no lock.
type liveConfig struct {
	perm             atomic.Int32 // brokerPermission
	autoCreateTopic  atomic.Bool
	autoCreateGroup  atomic.Bool
	propertyFilter   atomic.Bool // enablePropertyFilter
	longPolling      atomic.Bool
	shortPollMs      atomic.Int64
	maxTransferCount atomic.Int64 // maxTransferCountOnMessageInMemory
	maxTransferBytes atomic.Int64 // maxTransferBytesOnMessageInMemory
	waitInQueueMs    atomic.Int64 // waitTimeMillsInSendQueue
	txnTimeoutMs     atomic.Int64 // transactionTimeOut
	txnCheckMax      atomic.Int64 // transactionCheckMax
	namesrvAddr      atomic.Pointer[string]
	slaveRead        atomic.Bool  // slaveReadEnable
	memRatio         atomic.Int64 // accessMessageInMemoryMaxRatio
	// enableSplitMetadata and splitMetadataSize (5.4.0): whether and by how
	// many entries GET_ALL_TOPIC_CONFIG/GET_ALL_SUBSCRIPTIONGROUP_CONFIG page.
	splitMetadata     atomic.Bool
	splitMetadataSize atomic.Int64
	// recallMessageEnable and allowRecallWhenBrokerNotWriteable: read per
	// RECALL_MESSAGE, as Java reads its BrokerConfig.
	recallEnable          atomic.Bool
	recallWhenNotWritable atomic.Bool
	physMem               int64 // the machine's RAM, read once
}

// runtimeKeys are the broker.conf keys liveConfig carries: an update takes
// effect at once. Other known keys are stored (and persisted) but apply at
// the next start, as most of them do on the Java broker too.
var runtimeKeys = map[string]bool{
	"brokerPermission":                  true,
	"autoCreateTopicEnable":             true,
	"autoCreateSubscriptionGroup":       true,
	"enablePropertyFilter":              true,
	"longPollingEnable":                 true,
	"shortPollingTimeMills":             true,
	"maxTransferCountOnMessageInMemory": true,
	"maxTransferBytesOnMessageInMemory": true,
	"waitTimeMillsInSendQueue":          true,
	"transactionTimeOut":                true,
	"transactionCheckMax":               true,
	"slaveReadEnable":                   true,
	"accessMessageInMemoryMaxRatio":     true,
	// Read per GET_ALL_TOPIC_CONFIG/GET_ALL_SUBSCRIPTIONGROUP_CONFIG, as 5.4.0.
	"enableSplitMetadata": true,
	"splitMetadataSize":   true,
	// Read per RECALL_MESSAGE, as Java.
	"recallMessageEnable":               true,
	"allowRecallWhenBrokerNotWriteable": true,
	// The store and the HA server take them (setInSyncReplicas,
	// setSlaveTimeout); Java reads both per put.
	"inSyncReplicas": true,
	"slaveTimeout":   true,
	// Read by the controller-mode send gate per send, as Java per put.
	"minInSyncReplicas": true,
	// Like Java's periodic updateNamesrvAddr: the next registration goes
	// to the new list (we register at once rather than within 2 minutes).
	// Only with refuseSensitiveRemoteConfig off (sensitiveKeys).
	"namesrvAddr": true,
}

// startupKeys are known keys the broker reads only while it starts and
// that UPDATE_BROKER_CONFIG refuses like configBlackList's (Java takes and
// persists them): who the broker is, where it listens and is reached, the
// mode and role it starts in, and the timer wheel's on-disk slot width.
// Stored for the next start they would give a broker that cannot bind,
// that registers as another broker, or that reads its store wrongly. They
// are changed in the config file, like compat/blacklist's keys.
var startupKeys = map[string]bool{
	"brokerClusterName":    true,
	"brokerName":           true,
	"brokerId":             true,
	"brokerRole":           true, // a running broker changes role only under a controller
	"brokerIP1":            true,
	"brokerIP2":            true,
	"listenPort":           true,
	"enableFastChannel":    true, // binds listenPort-2
	"haListenPort":         true,
	"haMasterAddress":      true,
	"controllerAddr":       true,
	"enableControllerMode": true,
	"timerPrecisionMs":     true, // the wheel file's slots are this wide
}

// sensitiveKeys are the keys refuseSensitiveRemoteConfig refuses besides
// the operator's sensitiveRemoteConfigKeys: taken remotely they would
// re-home the broker or change which role it may take, for whoever can
// reach its port. (Who the broker is, its addresses, ports and start role
// are startupKeys, refused whatever the policy says.) Keys we do not
// implement are listed too, so the answer says refused rather than
// ignored.
var sensitiveKeys = map[string]bool{
	// The broker registers with the new list at once: the caller's name
	// servers get its routes, its own ones lose them within 2 minutes.
	"namesrvAddr": true,
	// Java's other sources of the name server list (not implemented).
	"fetchNamesrvAddrByAddressServer": true,
	"fetchNameSrvAddrByDnsLookup":     true,
	// Java's other source of the controller list (controllerAddr is a
	// start-up key; not implemented).
	"fetchControllerAddrByDnsLookup": true,
	// Which broker the controller elects master, and whether this one may
	// ever be in the SyncStateSet (controller mode, read at start).
	"brokerElectionPriority": true,
	"asyncLearner":           true,
	// A slave serving as master when its master is gone (not implemented).
	"enableSlaveActingMaster": true,
	// Where Java's metrics go, with their credentials (not implemented).
	"metricsGrpcExporterTarget": true,
	"metricsGrpcExporterHeader": true,
	"metricsPromExporterHost":   true,
	"metricsPromExporterPort":   true,
}

// remotePolicy is the sensitive-key policy of c.
func (c *Config) remotePolicy() blacklist.Policy {
	return blacklist.Policy{Refuse: c.RefuseSensitiveRemoteConfig, Extra: c.SensitiveRemoteConfigKeys}
}

func newLiveConfig(c *Config) *liveConfig {
	l := &liveConfig{physMem: physicalMemory()}
	l.load(c)
	return l
}

// load copies the runtime settings of c.
func (l *liveConfig) load(c *Config) {
	l.perm.Store(c.BrokerPermission)
	l.autoCreateTopic.Store(c.AutoCreateTopicEnable)
	l.autoCreateGroup.Store(c.AutoCreateSubscriptionGroup)
	l.propertyFilter.Store(c.EnablePropertyFilter)
	l.longPolling.Store(c.LongPollingEnable)
	l.shortPollMs.Store(c.ShortPollingTimeMills)
	l.maxTransferCount.Store(int64(c.MaxTransferCountInMemory))
	l.maxTransferBytes.Store(int64(c.MaxTransferBytesInMemory))
	l.waitInQueueMs.Store(c.WaitTimeMillsInSendQueue)
	l.txnTimeoutMs.Store(c.TransactionTimeOut)
	l.txnCheckMax.Store(int64(c.TransactionCheckMax))
	l.slaveRead.Store(c.SlaveReadEnable)
	l.memRatio.Store(int64(c.AccessMessageInMemoryMaxRatio))
	l.splitMetadata.Store(c.EnableSplitMetadata)
	l.splitMetadataSize.Store(int64(c.SplitMetadataSize))
	l.recallEnable.Store(c.RecallMessageEnable)
	l.recallWhenNotWritable.Store(c.AllowRecallWhenBrokerNotWriteable)
	addr := c.NamesrvAddr
	l.namesrvAddr.Store(&addr)
}

// namesrvAddrs is the current name server list (namesrvAddr split on ';').
func (l *liveConfig) namesrvAddrs() []string {
	c := Config{NamesrvAddr: *l.namesrvAddr.Load()}
	return c.NamesrvAddrs()
}

// inMemoryWindow is accessMessageInMemoryMaxRatio of RAM (memoryWindow).
func (l *liveConfig) inMemoryWindow() int64 {
	return memoryWindow(l.physMem, int(l.memRatio.Load()))
}

func (l *liveConfig) waitInQueue() time.Duration {
	return time.Duration(l.waitInQueueMs.Load()) * time.Millisecond
}
