package grpcsdk

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Scenario is one gRPC SDK scenario and the resources it needs.
type Scenario struct {
	Name string
	// TopicType is the topic's message.type attribute (NORMAL, FIFO,
	// DELAY, TRANSACTION): the proxy refuses a send whose type differs.
	TopicType string
	// Orderly makes the group a FIFO group (consumeMessageOrderly).
	Orderly bool
	// RetryMax is the group's retryMaxTimes (deliveries before the DLQ - 1).
	RetryMax int
	Timeout  time.Duration
	What     string // one line for the matrix
	// SDKs, when set, are the only SDKs with the scenario's API; the
	// others report n/a.
	SDKs []SDK
}

// Supports reports whether sdk runs the scenario.
func (s Scenario) Supports(sdk SDK) bool {
	if len(s.SDKs) == 0 {
		return true
	}
	for _, x := range s.SDKs {
		if x == sdk {
			return true
		}
	}
	return false
}

// Scenarios is every scenario in matrix order.
var Scenarios = []Scenario{
	{Name: "send_normal", TopicType: "NORMAL", RetryMax: 16, Timeout: 60 * time.Second, What: "normal send, SimpleConsumer receives every message"},
	{Name: "send_fifo", TopicType: "FIFO", Orderly: true, RetryMax: 16, Timeout: 60 * time.Second, What: "FIFO send (message group), FIFO SimpleConsumer receives in order"},
	{Name: "send_delay", TopicType: "DELAY", RetryMax: 16, Timeout: 60 * time.Second, What: "delay send (delivery timestamp +4 s), not delivered early"},
	// Recall (RecallMessage, 5.3): rocketmq-client-java 5.0.8 has
	// Producer.recallMessage; the Python and Node.js drivers do not run it.
	{Name: "recall", TopicType: "DELAY", RetryMax: 16, Timeout: 60 * time.Second, SDKs: []SDK{Java},
		What: "delay send (+10 s) recalled with the receipt's recall handle is never received, the control and a sentinel 2 s later are; a malformed handle and one already due answer INTERNAL_SERVER_ERROR with Java's text"},
	{Name: "send_transaction", TopicType: "TRANSACTION", RetryMax: 16, Timeout: 60 * time.Second, What: "transactional send: commit delivered, rollback not"},
	{Name: "simple_ack", TopicType: "NORMAL", RetryMax: 16, Timeout: 90 * time.Second, What: "SimpleConsumer receive + ack: nothing back after the invisible time"},
	{Name: "simple_change_invisible", TopicType: "NORMAL", RetryMax: 16, Timeout: 60 * time.Second, What: "ChangeInvisibleDuration 60 s -> 2 s: back early, attempt 2"},
	{Name: "simple_redeliver", TopicType: "NORMAL", RetryMax: 16, Timeout: 60 * time.Second, What: "not acked: redelivered after its 3 s invisible time, attempt 2"},
	{Name: "push_retry_dlq", TopicType: "NORMAL", RetryMax: 2, Timeout: 120 * time.Second, What: "PushConsumer FAILURE: 3 deliveries (retryMaxTimes 2), then %DLQ%group"},
	{Name: "fifo_redeliver", TopicType: "FIFO", Orderly: true, RetryMax: 16, Timeout: 90 * time.Second, What: "FIFO PushConsumer: a failed message is delivered again before the next of its group; deliveries never go back"},
	{Name: "filter_tag", TopicType: "NORMAL", RetryMax: 16, Timeout: 60 * time.Second, What: "tag filter A||C"},
	{Name: "filter_sql", TopicType: "NORMAL", RetryMax: 16, Timeout: 60 * time.Second, What: "SQL92 filter on user properties"},
	{Name: "transaction_check", TopicType: "TRANSACTION", RetryMax: 16, Timeout: 90 * time.Second, What: "no commit: the broker's check-back reaches the checker through the telemetry stream"},
	{Name: "admin_relay", TopicType: "NORMAL", RetryMax: 16, Timeout: 90 * time.Second, What: "the broker's GET_CONSUMER_RUNNING_INFO (jstack) and CONSUME_MESSAGE_DIRECTLY reach a PushConsumer through the telemetry stream (Java SDK)"},
	{Name: "shared_4x", TopicType: "NORMAL", RetryMax: 16, Timeout: 90 * time.Second, What: "a group shared by a gRPC PushConsumer and a 4.x remoting push consumer: none lost"},
}

// Lookup returns the named scenarios (all when names is empty).
func Lookup(names []string) ([]Scenario, error) {
	if len(names) == 0 {
		return Scenarios, nil
	}
	var out []Scenario
	for _, n := range names {
		found := false
		for _, s := range Scenarios {
			if s.Name == n {
				out, found = append(out, s), true
			}
		}
		if !found {
			return nil, fmt.Errorf("grpcsdk: unknown scenario %q", n)
		}
	}
	return out, nil
}

// Topic is the scenario's topic under prefix (every driver derives the same).
func Topic(prefix, name string) string { return prefix + "_" + name }

// Group is the scenario's consumer group under prefix.
func Group(prefix, name string) string { return prefix + "_" + name + "_g" }

// Remoting request codes of the setup (Java's RequestCode).
const (
	codeUpdateAndCreateTopic = 17
	codeUpdateAndCreateGroup = 200
)

// groupConfig is Java's SubscriptionGroupConfig as UPDATE_AND_CREATE_SUBSCRIPTIONGROUP takes it.
type groupConfig struct {
	GroupName                      string `json:"groupName"`
	ConsumeEnable                  bool   `json:"consumeEnable"`
	ConsumeFromMinEnable           bool   `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool   `json:"consumeBroadcastEnable"`
	ConsumeMessageOrderly          bool   `json:"consumeMessageOrderly"`
	RetryQueueNums                 int    `json:"retryQueueNums"`
	RetryMaxTimes                  int    `json:"retryMaxTimes"`
	BrokerID                       int    `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int    `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool   `json:"notifyConsumerIdsChangedEnable"`
}

// Setup creates, on the broker at brokerAddr, each scenario's topic (with
// its message.type attribute, 4 queues) and groups (the scenario's and a
// second one for reading its DLQ), then waits until the name server routes
// every topic.
func Setup(ctx context.Context, c *harness.Cluster, prefix string, scs []Scenario) error {
	for _, s := range scs {
		topic := Topic(prefix, s.Name)
		ext := map[string]string{
			"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4",
			"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
			"attributes": "+message.type=" + s.TopicType,
		}
		f, err := harness.Call(ctx, c.BrokerAddr, codeUpdateAndCreateTopic, ext, nil)
		if err != nil {
			return fmt.Errorf("grpcsdk: create topic %s: %w", topic, err)
		}
		if f.Code != 0 {
			return fmt.Errorf("grpcsdk: create topic %s: code %d %q", topic, f.Code, f.Remark)
		}
		for _, g := range []groupConfig{
			{GroupName: Group(prefix, s.Name), ConsumeMessageOrderly: s.Orderly, RetryMaxTimes: s.RetryMax},
			{GroupName: Group(prefix, s.Name) + "_dlq", RetryMaxTimes: 16},
		} {
			g.ConsumeEnable, g.ConsumeFromMinEnable, g.ConsumeBroadcastEnable = true, true, true
			g.RetryQueueNums, g.WhichBrokerWhenConsumeSlowly, g.NotifyConsumerIdsChangedEnable = 1, 1, true
			body, err := json.Marshal(g)
			if err != nil {
				return fmt.Errorf("grpcsdk: group %s: %w", g.GroupName, err)
			}
			f, err := harness.Call(ctx, c.BrokerAddr, codeUpdateAndCreateGroup, nil, body)
			if err != nil {
				return fmt.Errorf("grpcsdk: create group %s: %w", g.GroupName, err)
			}
			if f.Code != 0 {
				return fmt.Errorf("grpcsdk: create group %s: code %d %q", g.GroupName, f.Code, f.Remark)
			}
		}
	}
	for _, s := range scs {
		if err := c.WaitRoute(ctx, Topic(prefix, s.Name), 30*time.Second); err != nil {
			return err
		}
	}
	return nil
}
