package scenario

import (
	"strings"
	"time"
)

// Client names a driver column of the matrix.
type Client string

// The clients of the matrix.
const (
	GoV2   Client = "go-v2"      // github.com/apache/rocketmq-client-go/v2 (+ raw frames for bad_input)
	Java49 Client = "java-4.9.8" // org.apache.rocketmq:rocketmq-client 4.9.8 (+ tools)
	Java5  Client = "java-5"     // org.apache.rocketmq:rocketmq-client 5.3.3 (+ tools)
)

// Clients is every client in matrix order.
var Clients = []Client{GoV2, Java49, Java5}

// Scenario is one named behaviour checked end to end by a real client.
type Scenario struct {
	Name string
	Desc string
	Go   bool // implemented by the Go driver
	Java bool // implemented by the Java driver (both profiles)
	// Restart scenarios stop and restart the broker in their middle. They
	// run after all the others, side by side, sharing one restart
	// (package restart) announced in advance.
	Restart bool
	Timeout time.Duration
}

// MaxTimeout bounds a scenario's deadline: 90 s, or 150 s for a restart
// scenario (which may wait out a Java broker start-up).
func (s Scenario) MaxTimeout() time.Duration {
	if s.Restart {
		return 150 * time.Second
	}
	return 90 * time.Second
}

// Supports reports whether client implements the scenario.
func (s Scenario) Supports(c Client) bool {
	if c == GoV2 {
		return s.Go
	}
	return s.Java
}

// Table lists every scenario, cheapest and most basic first. The Java driver
// implements the same names (Driver.java); keep them in step.
var Table = []Scenario{
	{Name: "admin_route", Desc: "topic route, cluster list, create topic, topic list (Java: DefaultMQAdminExt updateTopic/topicList/topicRoute/topicStatus/clusterList/brokerStatus)", Go: true, Java: true, Timeout: 30 * time.Second},
	{Name: "send_push", Desc: "send sync/async/oneway/batch, consume with a clustering push consumer; every body arrives with its keys, tag and properties", Go: true, Java: true, Timeout: 60 * time.Second},
	{Name: "pull", Desc: "send then pull every queue from offset 0 (Go NewPullConsumer.PullFrom, Java lite-pull assign)", Go: true, Java: true, Timeout: 45 * time.Second},
	{Name: "tag_filter", Desc: "subscription 'TagA || TagB' receives A and B, never C", Go: true, Java: true, Timeout: 45 * time.Second},
	{Name: "broadcast", Desc: "two broadcasting consumers of one group each receive every message", Go: true, Java: true, Timeout: 60 * time.Second},
	{Name: "orderly", Desc: "queue-selector send by order id, orderly consume sees each order's steps in sequence", Go: true, Java: true, Timeout: 60 * time.Second},
	{Name: "bad_input", Desc: "garbage frame, oversize length, unknown request code (REQUEST_CODE_NOT_SUPPORTED); then a normal send still works", Go: true, Timeout: 30 * time.Second},
	{Name: "query", Desc: "query message by key and by id (Java queryMessage / viewMessage)", Java: true, Timeout: 45 * time.Second},
	{Name: "admin_group", Desc: "updateSubGroup, consumerProgress, resetOffsetByTime (DefaultMQAdminExt)", Java: true, Timeout: 60 * time.Second},
	{Name: "offset_resume", Desc: "consumer stops after N, restarts in the same group and receives only the new messages", Go: true, Java: true, Timeout: 90 * time.Second},
	{Name: "delay", Desc: "delay level 1 (1 s) is delivered, and not early", Go: true, Java: true, Timeout: 45 * time.Second},
	{Name: "retry", Desc: "consumer answers retry-later once; the message is redelivered with reconsumeTimes 1", Go: true, Java: true, Timeout: 90 * time.Second},
	{Name: "transaction", Desc: "transactional send: commit delivered, rollback never, unknown resolved by check-back commit", Go: true, Java: true, Timeout: 75 * time.Second},
	// Go: false — rocketmq-client-go v2 sends the reply (SEND_REPLY_MESSAGE)
	// without its body; the Java 5.3 broker answers SYSTEM_ERROR (NPE in
	// buildMsgContext). The Go implementation stays in goclient for when
	// the client is fixed.
	{Name: "request_reply", Desc: "producer request() answered by a consumer reply message", Java: true, Timeout: 45 * time.Second},
	{Name: "sql92", Desc: "SQL92 subscription 'a > 5' receives only matching properties", Go: true, Java: true, Timeout: 45 * time.Second},
	// Java 4.9.8 has no setDeliverTimeMs: the driver sets TIMER_DELIVER_MS by hand.
	{Name: "timer", Desc: "5.x timer message (TIMER_DELIVER_MS = now+3 s) is consumed, never before its tick-rounded deliver time; lateness reported", Go: true, Java: true, Timeout: 45 * time.Second},
	{Name: "rebalance", Desc: "clustering group on an 8-queue topic: 2 members, a 3rd joins, one leaves; after each change every queue has exactly one live owner (averaging spread) and every probe arrives", Go: true, Java: true, Timeout: 60 * time.Second},
	{Name: "admin_tools", Desc: "DefaultMQAdminExt calls beyond admin_route/admin_group/query: getBrokerConfig, topicClusterList, producerConnection, consumerConnection, consumerStatus (running info), queryMsgByUniqueKey, deleteSubGroup, deleteTopic", Java: true, Timeout: 60 * time.Second},
	{Name: "dlq", Desc: "always RECONSUME_LATER with maxReconsumeTimes 1: after 2 attempts the message is in %DLQ%<group> (query by key) with body, tag, keys, user property and RETRY_TOPIC", Go: true, Java: true, Timeout: 45 * time.Second},
	// The restart scenarios: one broker restart (kill -9 by default, see
	// conformance/doc.go) shared by all of them, announced to the clients
	// ahead of time so the pending work straddles the outage.
	{Name: "delay_restart", Desc: "delay levels 2-4 (5 s, 10 s, 30 s) sent just before the broker is killed and restarted: every message arrives (at least once), none before send time + level; lateness min/p50/max reported", Go: true, Java: true, Restart: true, Timeout: 150 * time.Second},
	// Go and Java 4.9.8 have no timer API: they set TIMER_DELIVER_MS / TIMER_DELAY_SEC as properties.
	{Name: "timer_restart", Desc: "timer messages (TIMER_DELIVER_MS and TIMER_DELAY_SEC) due before the kill, while the broker is down and after it is back: every one arrives, none before its tick-rounded time; lateness min/p50/max reported", Go: true, Java: true, Restart: true, Timeout: 150 * time.Second},
	{Name: "txn_restart", Desc: "half messages left UNKNOW across a broker restart: check-back after the restart reaches the reconnected producer, committed ones are consumed once exactly as sent, rolled-back ones never; a commit sent before the restart is delivered once", Go: true, Java: true, Restart: true, Timeout: 150 * time.Second},
}

// NotYetTable is the one ledger of scenarios our server does not pass yet, with
// the reason. Scenarios listed here are reported as not-yet (and not run)
// against every server kind that includes one of our processes, unless
// CONFORMANCE_RUN_NOTYET=1. Mirror it into compat/UNSUPPORTED.md; delete a
// line as soon as the feature lands (a run with CONFORMANCE_RUN_NOTYET=1
// tells which ones pass).
//
// A key is a scenario name (every client) or "scenario@client" (one client).
// A reason starting "broker:" applies only where our broker runs, "namesrv:"
// only where our name server runs; any other reason wherever ours runs.
var NotYetTable = map[string]string{}

// NotYetFor returns the not-yet reason for scenario name with client c
// against a server whose broker and/or name server are ours.
func NotYetFor(name string, c Client, ourBroker, ourNamesrv bool) (string, bool) {
	for _, key := range []string{name, name + "@" + string(c)} {
		r, ok := NotYetTable[key]
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(r, "broker:"):
			ok = ourBroker
		case strings.HasPrefix(r, "namesrv:"):
			ok = ourNamesrv
		default:
			ok = ourBroker || ourNamesrv
		}
		if ok {
			return r, true
		}
	}
	return "", false
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range Table {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}
