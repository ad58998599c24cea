package grpcsvc

import (
	"context"
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// A broker's GET_CONSUMER_RUNNING_INFO (jstack) and CONSUME_MESSAGE_DIRECTLY
// for a gRPC consumer reach it as PrintThreadStackTrace / VerifyMessage
// commands on its telemetry stream, and its answers go back to the caller
// in Java's bodies; an answer from another client, or none, does not
// complete the request (it times out SYSTEM_BUSY); running info without
// jstack is refused at once.
func TestRelayRunningInfoAndVerify(t *testing.T) {
	c := startCluster(t, func(_ *broker.Config, g *Config) { g.RelayTimeout = 500 * time.Millisecond })
	c.createTopic(t, "RelayT", "NORMAL", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pctx, cctx, octx := as(ctx, "relay-producer"), as(ctx, "relay-consumer"), as(ctx, "relay-other")
	c.telemetry(t, pctx, producerSettings("RelayT"))
	tc, _ := c.telemetry(t, cctx, consumerSettings("RelayG", "RelayT"))
	other, _ := c.telemetry(t, octx, consumerSettings("RelayG", "RelayT"))
	hb, err := c.cli.Heartbeat(cctx, &v2.HeartbeatRequest{Group: &v2.Resource{Name: "RelayG"}, ClientType: v2.ClientType_PUSH_CONSUMER})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, hb.GetStatus().GetCode(), hb.GetStatus().GetMessage())
	sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{newMessage("RelayT", "RELAY-MSG-1", "verify me")}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())

	invoke := func(code codec.RequestCode, h encoder) chan *codec.Frame {
		done := make(chan *codec.Frame, 1)
		go func() {
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
			defer rcancel()
			resp, err := c.admin.Invoke(rctx, c.broker, newRequest(code, h))
			if err != nil {
				resp = &codec.Frame{Code: -1, Remark: err.Error()}
			}
			done <- resp
		}()
		return done
	}
	next := func() *v2.TelemetryCommand {
		cmd, err := tc.Recv()
		require.NoError(t, err)
		return cmd
	}

	// Thread dump.
	done := invoke(codec.ReqGetConsumerRunningInfo, &header.GetConsumerRunningInfoRequest{ConsumerGroup: "RelayG", ClientID: "relay-consumer", JstackEnable: true})
	cmd := next()
	pt := cmd.GetPrintThreadStackTraceCommand()
	require.NotNil(t, pt, "got %v", cmd)
	// The other client answering with this nonce completes nothing.
	require.NoError(t, other.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_OK},
		Command: &v2.TelemetryCommand_ThreadStackTrace{ThreadStackTrace: &v2.ThreadStackTrace{Nonce: pt.GetNonce(), ThreadStackTrace: new("forged")}}}))
	require.NoError(t, tc.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_OK},
		Command: &v2.TelemetryCommand_ThreadStackTrace{ThreadStackTrace: &v2.ThreadStackTrace{Nonce: pt.GetNonce(), ThreadStackTrace: new("\"main\" RUNNABLE")}}}))
	resp := <-done
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var info map[string]any
	require.NoError(t, json.Unmarshal(resp.Body, &info))
	require.Equal(t, "\"main\" RUNNABLE", info["jstack"])
	require.Equal(t, `{"jstack":"\"main\" RUNNABLE","mqPopTable":{},"mqTable":{},"properties":{},"statusTable":{},"subscriptionSet":[],"userConsumerInfo":{}}`, string(resp.Body))

	// Without jstack: refused at once.
	resp = <-invoke(codec.ReqGetConsumerRunningInfo, &header.GetConsumerRunningInfoRequest{ConsumerGroup: "RelayG", ClientID: "relay-consumer"})
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "only answers running info with jstack")

	// Verify a stored message: its client's listener failed it (CR_LATER).
	msgID := message.OffsetMsgID(netip.MustParseAddrPort(c.broker), 0)
	done = invoke(codec.ReqConsumeMessageDirectly, &header.ConsumeMessageDirectlyResultRequest{ConsumerGroup: "RelayG", ClientID: "relay-consumer", MsgID: msgID, Topic: "RelayT"})
	cmd = next()
	vm := cmd.GetVerifyMessageCommand()
	require.NotNil(t, vm, "got %v", cmd)
	require.Equal(t, "RELAY-MSG-1", vm.GetMessage().GetSystemProperties().GetMessageId())
	require.Equal(t, "verify me", string(vm.GetMessage().GetBody()))
	require.Equal(t, "RelayT", vm.GetMessage().GetTopic().GetName())
	require.NoError(t, tc.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_FAILED_TO_CONSUME_MESSAGE},
		Command: &v2.TelemetryCommand_VerifyMessageResult{VerifyMessageResult: &v2.VerifyMessageResult{Nonce: vm.GetNonce()}}}))
	resp = <-done
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, `{"autoCommit":true,"consumeResult":"CR_LATER","order":false,"remark":"from gRPC client","spentTimeMills":0}`, string(resp.Body))

	// No answer: SYSTEM_BUSY once the relay times out.
	start := time.Now()
	done = invoke(codec.ReqGetConsumerRunningInfo, &header.GetConsumerRunningInfoRequest{ConsumerGroup: "RelayG", ClientID: "relay-consumer", JstackEnable: true})
	require.NotNil(t, next().GetPrintThreadStackTraceCommand())
	resp = <-done
	require.Equal(t, int32(codec.RespSystemBusy), resp.Code, resp.Remark)
	require.Equal(t, "call remote timeout", resp.Remark)
	require.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond)
	require.Zero(t, c.ep.svc.relay.waiting(), "nothing left waiting")
}
