package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/grpcsdk"
	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// Remoting codes of the admin_relay scenario (Java's RequestCode).
const (
	codeSendMessageV1           = 10
	codeGetConsumerListByGroup  = 38
	codeGetConsumerRunningInfo  = 307
	codeConsumeMessageDirectly  = 309
	relayWindow                 = 60 * time.Second
	relayJavaClusterModeMissing = "Apache's proxy in cluster mode does not relay these (ClusterProxyRelayService: \"not implement yet\"; the broker's call times out)"
)

// runAdminRelay runs the SDK's PushConsumer (admin_relay) and, while it
// is up, asks the broker as mqadmin consumerStatus -s and
// consumeMessageDirectly do: GET_CONSUMER_RUNNING_INFO with jstack must
// come back with the SDK's thread dump, CONSUME_MESSAGE_DIRECTLY of a
// stored message with CR_SUCCESS from its listener.
func runAdminRelay(ctx context.Context, srv *grpcServer, kind string, d *grpcsdk.Driver, prefix string, s grpcsdk.Scenario, logDir string) grpcsdk.Result {
	res := grpcsdk.Result{Scenario: s.Name, SDK: d.SDK, Server: kind}
	if d.SDK != grpcsdk.Java {
		res.Status, res.Detail = scenario.Skip, "Java SDK only (the driver scenario exists for it)"
		return res
	}
	topic, group := grpcsdk.Topic(prefix, s.Name), grpcsdk.Group(prefix, s.Name)
	doneFile := filepath.Join(logDir, prefix+"-relay.done")
	rctx, cancel := context.WithTimeout(ctx, relayWindow+30*time.Second)
	defer cancel()
	results := make(chan []grpcsdk.Result, 1)
	go func() {
		results <- d.Run(rctx, kind, []grpcsdk.Scenario{s}, grpcsdk.Options{Endpoint: srv.endpoint, Prefix: prefix,
			LogPath: filepath.Join(logDir, string(d.SDK)+"-relay.log"), JVMProps: []string{"-Drelay.done.file=" + doneFile}})
	}()
	detail, err := adminRelayCalls(rctx, srv.cluster.BrokerAddr, topic, group)
	if werr := os.WriteFile(doneFile, []byte("done\n"), 0o644); werr != nil && err == nil {
		err = werr
	}
	r := (<-results)[0]
	switch {
	case err != nil:
		r.Status, r.Detail = scenario.Fail, oneLine(err.Error(), 300)
		if kind == grpcJava {
			r.Detail += " — " + relayJavaClusterModeMissing
		}
	case r.Status == scenario.Pass:
		r.Detail = detail + "; " + r.Detail
	}
	return r
}

func adminRelayCalls(ctx context.Context, broker, topic, group string) (string, error) {
	if err := waitConsumerListed(ctx, broker, group, 60*time.Second); err != nil {
		return "", err
	}
	f, err := harness.Call(ctx, broker, codeGetConsumerListByGroup, map[string]string{"consumerGroup": group}, nil)
	if err != nil {
		return "", err
	}
	var ids struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}
	if err := json.Unmarshal(f.Body, &ids); err != nil || len(ids.ConsumerIDList) == 0 {
		return "", fmt.Errorf("consumer list of %s: %q (%v)", group, f.Body, err)
	}
	client := ids.ConsumerIDList[0]

	// mqadmin consumerStatus -s: the thread dump of the SDK.
	f, err = harness.Call(ctx, broker, codeGetConsumerRunningInfo,
		map[string]string{"consumerGroup": group, "clientId": client, "jstackEnable": "true"}, nil)
	if err != nil {
		return "", fmt.Errorf("GET_CONSUMER_RUNNING_INFO: %w", err)
	}
	if f.Code != 0 {
		return "", fmt.Errorf("GET_CONSUMER_RUNNING_INFO answered %d %q", f.Code, f.Remark)
	}
	var info struct {
		Jstack string `json:"jstack"`
	}
	if err := json.Unmarshal(f.Body, &info); err != nil {
		return "", fmt.Errorf("running info body %q: %w", f.Body, err)
	}
	if !strings.Contains(info.Jstack, "java.") {
		return "", fmt.Errorf("running info's jstack is no Java thread dump: %q", oneLine(info.Jstack, 200))
	}

	// mqadmin consumeMessageDirectly: a stored message through the listener.
	f, err = harness.Call(ctx, broker, codeSendMessageV1, map[string]string{
		"producerGroup": "relay_p", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": "0", "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": "", "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}, []byte("relay-direct"))
	if err != nil || f.Code != 0 {
		return "", fmt.Errorf("send for consumeMessageDirectly: %v %+v", err, f)
	}
	msgID := f.Ext["msgId"]
	f, err = harness.Call(ctx, broker, codeConsumeMessageDirectly,
		map[string]string{"consumerGroup": group, "clientId": client, "msgId": msgID, "topic": topic}, nil)
	if err != nil {
		return "", fmt.Errorf("CONSUME_MESSAGE_DIRECTLY: %w", err)
	}
	if f.Code != 0 {
		return "", fmt.Errorf("CONSUME_MESSAGE_DIRECTLY answered %d %q", f.Code, f.Remark)
	}
	var cm struct {
		ConsumeResult string `json:"consumeResult"`
		Remark        string `json:"remark"`
	}
	if err := json.Unmarshal(f.Body, &cm); err != nil || cm.ConsumeResult != "CR_SUCCESS" {
		return "", fmt.Errorf("consumeMessageDirectly result %q (%v)", f.Body, err)
	}
	return fmt.Sprintf("jstack %d bytes; direct consume %s (%s)", len(info.Jstack), cm.ConsumeResult, cm.Remark), nil
}
