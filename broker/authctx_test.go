package broker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
)

func frameWith(code codec.RequestCode, body []byte, kv ...string) *codec.Frame {
	f := &codec.Frame{Code: int32(code), Body: body}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Ext = append(f.Ext, codec.KV{Key: kv[i], Value: kv[i+1]})
	}
	return f
}

// The targets of Java 5.3.3's DefaultAuthorizationContextBuilder, case by
// case.
func TestAuthTargetsAsJava(t *testing.T) {
	cases := []struct {
		name string
		req  *codec.Frame
		want []authTarget
	}{
		{"send", frameWith(codec.ReqSendMessage, nil, "topic", "T", "producerGroup", "PG"),
			[]authTarget{{header.ResourceTopic, "T", header.ActionPub}}},
		{"send v2 to retry topic acts on the group", frameWith(codec.ReqSendMessageV2, nil, "b", "%RETRY%CG", "a", ""),
			[]authTarget{{header.ResourceGroup, "CG", header.ActionSub}}},
		{"send back", frameWith(codec.ReqConsumerSendMsgBack, nil, "group", "CG"),
			[]authTarget{{header.ResourceGroup, "CG", header.ActionSub}}},
		{"pull", frameWith(codec.ReqPullMessage, nil, "topic", "T", "consumerGroup", "CG"),
			[]authTarget{{header.ResourceTopic, "T", header.ActionSub}, {header.ResourceGroup, "CG", header.ActionSub}}},
		{"pull of a retry topic names the group only", frameWith(codec.ReqPullMessage, nil, "topic", "%RETRY%CG", "consumerGroup", "CG"),
			[]authTarget{{header.ResourceGroup, "CG", header.ActionSub}}},
		{"update offset", frameWith(codec.ReqUpdateConsumerOffset, nil, "topic", "T", "consumerGroup", "CG"),
			[]authTarget{{header.ResourceTopic, "T", header.ActionSub | header.ActionUpdate}, {header.ResourceGroup, "CG", header.ActionSub | header.ActionUpdate}}},
		{"route of a topic", frameWith(codec.ReqGetRouteinfoByTopic, nil, "topic", "T"),
			[]authTarget{{header.ResourceTopic, "T", header.ActionPub | header.ActionSub | header.ActionGet}}},
		{"heartbeat", frameWith(codec.ReqHeartBeat, []byte(`{"clientID":"c","consumerDataSet":[{"groupName":"CG","subscriptionDataSet":[{"topic":"T"},{"topic":"%RETRY%CG"}]}],"producerDataSet":[{"groupName":"PG"}]}`), "x", "y"),
			[]authTarget{{header.ResourceGroup, "CG", header.ActionSub}, {header.ResourceTopic, "T", header.ActionSub}}},
		{"lock", frameWith(codec.ReqLockBatchMq, []byte(`{"consumerGroup":"CG","clientId":"c","mqSet":[{"topic":"T","brokerName":"b","queueId":0}]}`), "x", "y"),
			[]authTarget{{header.ResourceGroup, "CG", header.ActionSub}, {header.ResourceTopic, "T", header.ActionSub}}},
		{"annotated admin: create topic", frameWith(codec.ReqUpdateAndCreateTopic, nil, "topic", "T"),
			[]authTarget{{header.ResourceTopic, "T", header.ActionCreate}}},
		{"cluster-wide admin", frameWith(codec.ReqGetBrokerConsumeStats, nil, "isOrder", "false"),
			[]authTarget{{header.ResourceCluster, "C1", header.ActionGet}}},
		{"no extFields: nothing to check", frameWith(codec.ReqUpdateAndCreateTopic, nil), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := authTargets(nil, tc.req, "C1")
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := authTargets(nil, frameWith(codec.ReqHeartBeat, []byte("{broken"), "x", "y"), "C1")
	require.Error(t, err)
}
