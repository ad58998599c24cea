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
}
