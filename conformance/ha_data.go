package conformance

import (
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

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
			// A long transactionTimeOut: no check-back rewrites a half while
			// the logs are compared.
			return harness.PairOptions{SegmentSize: 8 << 20, Both: []string{"transactionTimeOut=600000"}}
		},
		Run:     replIdentical,
		Timeout: 5 * time.Minute,
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
}
