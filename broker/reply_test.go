package broker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

func TestReplyPushedToRequester(t *testing.T) {
	tb := startBroker(t, nil)
	pushed := make(chan *codec.Frame, 1)
	r := transport.NewRouter()
	r.Handle(codec.ReqPushReplyMessageToClient, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		pushed <- req
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
	requester := transport.NewClient(transport.ClientConfig{Logger: testLogger(), Router: r, DialTimeout: 2 * time.Second})
	defer requester.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"req@1","producerDataSet":[{"groupName":"rpg"}],"consumerDataSet":[]}`)
	resp, err := requester.Invoke(ctx, tb.addr, hb)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)

	reply := sendV1("DefaultCluster_REPLY_TOPIC", -1, props("REPLY_TO_CLIENT", "req@1", "CORRELATION_ID", "c1", "MSG_TYPE", "reply"), []byte("answer"))
	reply.Code = int32(codec.ReqSendReplyMessage)
	resp = tb.invoke(t, reply)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	p := <-pushed
	require.Equal(t, "answer", string(p.Body))
	require.Contains(t, p.Value("properties"), "PUSH_REPLY_TIME")
	require.Equal(t, "DefaultCluster_REPLY_TOPIC", p.Value("topic"))

	reply.Set("properties", props("REPLY_TO_CLIENT", "gone@9"))
	resp = tb.invoke(t, reply)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "push reply message fail, channel of <gone@9> not found.", resp.Remark)
}
