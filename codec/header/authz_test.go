package header

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// The facts of Java 5.3.3's @RocketMQAction / @RocketMQResource
// annotations, spot-checked per kind: a send (V1 and V2 keys), a pull (group
// and topic), a cluster-wide admin code, a split field, and an unannotated
// header.
func TestAuthzOfMatchesJavaAnnotations(t *testing.T) {
	a, ok := AuthzOf(codec.ReqSendMessage)
	require.True(t, ok)
	require.Equal(t, ActionPub, a.Actions)
	require.Equal(t, []ResourceField{{Key: "topic", Type: ResourceTopic}}, a.Fields)

	a, ok = AuthzOf(codec.ReqSendBatchMessage)
	require.True(t, ok)
	require.Equal(t, []ResourceField{{Key: "b", Type: ResourceTopic}}, a.Fields)

	a, ok = AuthzOf(codec.ReqPullMessage)
	require.True(t, ok)
	require.Equal(t, ActionSub, a.Actions)
	require.ElementsMatch(t, []ResourceField{{Key: "consumerGroup", Type: ResourceGroup}, {Key: "topic", Type: ResourceTopic}}, a.Fields)

	a, ok = AuthzOf(codec.ReqHeartBeat)
	require.True(t, ok)
	require.Equal(t, ActionPub|ActionSub, a.Actions)
	require.Equal(t, ResourceGroup, a.Resource)

	a, ok = AuthzOf(codec.ReqRegisterBroker)
	require.True(t, ok)
	require.Equal(t, ActionUpdate, a.Actions)
	require.Equal(t, ResourceCluster, a.Resource)

	a, ok = AuthzOf(codec.ReqUpdateAndCreateTopic)
	require.True(t, ok)
	require.Equal(t, ActionCreate, a.Actions)
	require.Equal(t, ResourceUnknown, a.Resource)

	var split int
	for code := codec.RequestCode(0); code < 5000; code++ {
		if a, ok := AuthzOf(code); ok {
			for _, f := range a.Fields {
				if f.Split != "" {
					split++
					require.Equal(t, ",", f.Split)
				}
			}
		}
	}
	require.Equal(t, 1, split, "Java 5.3.3 has one split resource field")

	_, ok = AuthzOf(codec.ReqGetBrokerConfig) // no header at all
	require.False(t, ok)
}
