package remarks

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRemarksMatchJava(t *testing.T) {
	require.Equal(t, " request type 9999 not supported", RequestCodeNotSupported(9999))
	require.Equal(t, "No topic route info in name server for the topic: T1\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.", NoTopicRouteInfo("T1"))
	require.Equal(t, "No config item, Namespace: ns Key: k", NoConfigItem("ns", "k"))
	require.Equal(t, "No config item, Namespace: ns", NoConfigNamespace("ns"))
	require.Equal(t, "topic[T] not exist, apply first please!\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.", TopicNotExistApplyFirst("T"))
	require.Equal(t, "topic[T] not exist, apply first please! \nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.", PullTopicNotExist("T"))
	require.Equal(t, "The specified topic: a b, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$", TopicIllegalCharacters("a b"))
}
