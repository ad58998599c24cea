package broker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// Java 5.4.0's TopicValidator.validateGroup on UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// and its list form: INVALID_PARAMETER with the remark naming the group;
// the list form stores nothing when one name is bad.
func TestGroupNameValidation(t *testing.T) {
	tb := startBroker(t, nil)
	long := strings.Repeat("g", groupMaxLen+1)
	for _, c := range []struct{ name, remark string }{
		{"", "The specified group is blank."},
		{"  ", "The specified group is blank."},
		{"bad group", "The specified group: bad group, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"grüppe", "The specified group: grüppe, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{long, "The specified group: " + long + ", is longer than group max length: 120"},
	} {
		g := request(codec.ReqUpdateAndCreateSubscriptiongroup)
		g.Body = []byte(`{"groupName":` + string(codec.AppendJSONString(nil, c.name)) + `}`)
		resp := tb.invoke(t, g)
		require.Equal(t, int32(codec.RespInvalidParameter), resp.Code, c.name)
		require.Equal(t, c.remark, resp.Remark)
		_, ok := tb.groups.get(c.name)
		require.False(t, ok)
	}
	ok120 := strings.Repeat("g", groupMaxLen)
	for _, name := range []string{ok120, "%RETRY%|a-b_C9"} {
		g := request(codec.ReqUpdateAndCreateSubscriptiongroup)
		g.Body = []byte(`{"groupName":"` + name + `"}`)
		resp := tb.invoke(t, g)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}

	list := request(codec.ReqUpdateAndCreateSubscriptiongroupList)
	list.Body = []byte(`{"groupConfigList":[{"groupName":"ListOK"},{"groupName":"list bad"}]}`)
	resp := tb.invoke(t, list)
	require.Equal(t, int32(codec.RespInvalidParameter), resp.Code)
	require.Equal(t, "The specified group: list bad, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$", resp.Remark)
	_, ok := tb.groups.get("ListOK")
	require.False(t, ok, "nothing stored when one name is bad")
	list.Body = []byte(`{"groupConfigList":[{"groupName":"ListOK"},{"groupName":"ListOK2"}]}`)
	resp = tb.invoke(t, list)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	_, ok = tb.groups.get("ListOK2")
	require.True(t, ok)
}

// Java 5.4.0's TopicValidator.validateTopic: the remarks name the topic,
// and %RETRY%/%DLQ% topics may be up to 255 long.
func TestTopicNameValidation(t *testing.T) {
	tb := startBroker(t, nil)
	create := func(topic string) *codec.Frame {
		return tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", topic, "readQueueNums", "1", "writeQueueNums", "1", "perm", "6"))
	}
	long := strings.Repeat("t", topicMaxLen+1)
	retry := RetryGroupPrefix + strings.Repeat("r", retryOrDLQTopicMax-len(RetryGroupPrefix))
	for _, c := range []struct{ topic, remark string }{
		{"bad topic", "The specified topic: bad topic, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{long, "The specified topic: " + long + ", is longer than topic max length: 127"},
		{retry + "x", "The specified topic is DLQ or Retry topic: " + retry + "x, and it's longer than topic max length: 255"},
	} {
		resp := create(c.topic)
		require.Equal(t, int32(codec.RespInvalidParameter), resp.Code, c.topic)
		require.Equal(t, c.remark, resp.Remark)
	}
	resp := create(retry)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	dlq := DLQGroupPrefix + strings.Repeat("d", 200)
	resp = create(dlq)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}
