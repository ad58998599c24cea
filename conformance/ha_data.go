package conformance

import (
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// haLoadConf is both brokers' extra config under repl_identical's load: a
// long transactionTimeOut (no check-back rewrites a half while the logs are
// compared) and a send queue wait of 3 s instead of 200 ms (two cores shared
// by a JVM client, the brokers and the Go load; flow control is not what
// the scenario checks).
var haLoadConf = []string{"transactionTimeOut=600000", "waitTimeMillsInSendQueue=3000"}

// haDataScenarios are the replication scenarios on data and metadata
// (byte-identical logs, catch-up, metadata sync, redirects, haStatus).
var haDataScenarios = []HAScenario{
	{
		Name: "repl_identical",
		Desc: "≥ 200,000 Go-client messages of mixed kinds (keyed singles, batches, compressed > 4 KiB bodies, " +
			"transactional halves with their commit/rollback ops, delay levels 1–3) across ≥ 3 segment rolls " +
			"(8 MiB segments); after catch-up the master is stopped, the slave takes the master's last bytes and stops: " +
			"commit logs byte-identical up to the master's end, every consume queue of the master equal on the slave",
		Options: func(harness.PairKind) harness.PairOptions {
			return harness.PairOptions{SegmentSize: 8 << 20, Both: haLoadConf}
		},
		Run:     replIdentical,
		Timeout: 5 * time.Minute,
	},
	{
		Name: "repl_identical_java",
		Desc: "repl_identical with a Java client's HaTool producing 40,000 more messages (single, batch, keyed, " +
			"compressed, delay; async sends) into its own topic during the Go load",
		Clients: []scenario.Client{scenario.Java5, scenario.Java49},
		Options: func(harness.PairKind) harness.PairOptions {
			return harness.PairOptions{SegmentSize: 8 << 20, Both: haLoadConf}
		},
		Run:     replIdentical,
		Timeout: 6 * time.Minute,
		Long:    true,
	},
	{
		Name: "repl_catchup",
		Desc: "the slave stopped, 128 MiB written to the master (256 KiB raw SEND_MESSAGE bodies); the restarted slave " +
			"catches up (MB/s noted) and its commit log is byte-identical over the written range",
		Options: func(harness.PairKind) harness.PairOptions { return harness.PairOptions{SegmentSize: 32 << 20} },
		Run:     replCatchup(128 << 20),
		Timeout: 3 * time.Minute,
	},
	{
		Name:    "repl_catchup_1g",
		Desc:    "repl_catchup with ≥ 1 GiB missed by the slave (64 MiB segments)",
		Options: func(harness.PairKind) harness.PairOptions { return harness.PairOptions{SegmentSize: 64 << 20} },
		Run:     replCatchup(1 << 30),
		Timeout: 10 * time.Minute,
		Long:    true,
	},
	{
		Name: "repl_empty_slave",
		Desc: "a master with 3.5 segments (8 MiB) of history, then an empty slave: its first commit-log file is named by " +
			"the start of the master's last segment, commitLogMinOffset is that offset, it holds the master's bytes from there, " +
			"and later messages reach it",
		Options: func(harness.PairKind) harness.PairOptions {
			return harness.PairOptions{SegmentSize: 8 << 20, NoSlave: true}
		},
		Run:     replEmptySlave(8 << 20),
		Timeout: 3 * time.Minute,
	},
	{
		Name: "repl_metadata",
		Desc: "a topic (UPDATE_AND_CREATE_TOPIC), a subscription group, consumer offsets (UPDATE_CONSUMER_OFFSET) and a " +
			"delay offset (a delivered level-1 message) made on the master are served by the slave from its own tables " +
			"(GET_ALL_TOPIC_CONFIG, GET_ALL_SUBSCRIPTIONGROUP_CONFIG, GET_ALL_CONSUMER_OFFSET, QUERY_CONSUMER_OFFSET, " +
			"GET_ALL_DELAY_OFFSET) after Java's sync period (a full sync a minute after start, then every minute)",
		Run:     replMetadata,
		Timeout: 4 * time.Minute,
	},
	{
		Name: "repl_suggest_slave",
		Desc: "accessMessageInMemoryMaxRatio=0 and slaveReadEnable=true on both: a raw PULL_MESSAGE to the master for a " +
			"500-message backlog answers suggestWhichBrokerId=1, and a Go push consumer gets all 1,000 messages, the slave " +
			"serving pulls (its msgGetTotalTodayNow grows); the slave starts with the master's topics.json, so it knows " +
			"the topic before its first metadata sync",
		Options: func(harness.PairKind) harness.PairOptions {
			return harness.PairOptions{Both: []string{"accessMessageInMemoryMaxRatio=0", "slaveReadEnable=true"}, NoSlave: true}
		},
		Run:     replSuggest(true),
		Timeout: 3 * time.Minute,
	},
	{
		Name: "repl_suggest_default",
		Desc: "slaveReadEnable=true with the default accessMessageInMemoryMaxRatio (40): the same raw pull answers suggestWhichBrokerId=0",
		Options: func(harness.PairKind) harness.PairOptions {
			return harness.PairOptions{Both: []string{"slaveReadEnable=true"}, NoSlave: true}
		},
		Run:     replSuggest(false),
		Timeout: 2 * time.Minute,
	},
	{
		Name: "repl_hastatus",
		Desc: "after catch-up, Java 5.3.3's mqadmin haStatus and bin/mqadmin haStatus: -b master names one in-sync slave at " +
			"127.0.0.1 acknowledged at the master's max offset, -b slave names the master's HA address and the max offset; " +
			"the slave's GET_BROKER_RUNTIME_INFO has Java's keys (commitLogMaxOffset = master's, brokerActive=false, dispatchBehindBytes=0)",
		Run:     replHAStatus,
		Timeout: 3 * time.Minute,
	},
	{
		Name: "repl_slave_timeout",
		Desc: "SYNC_MASTER with totalReplicas=2 inSyncReplicas=2 slaveTimeout=1000: SEND_OK while the slave runs; slave stopped: " +
			"raw sends answer FLUSH_SLAVE_TIMEOUT (12) after ≈ 1 s and the Go client reports SendFlushSlaveTimeout, every " +
			"message stored on the master; slave restarted: SEND_OK again (recovery time noted)",
		Options: func(harness.PairKind) harness.PairOptions {
			return harness.PairOptions{
				Both:   []string{"totalReplicas=2", "inSyncReplicas=2", "slaveTimeout=" + strconv.Itoa(haSlaveTimeout)},
				Master: []string{"brokerRole=SYNC_MASTER"},
			}
		},
		Run:     replSlaveTimeout,
		Timeout: 3 * time.Minute,
	},
}
