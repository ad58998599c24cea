package remarks

import "strconv"

// Broker admin remarks (Java's AdminBrokerProcessor, ClientManageProcessor,
// QueryMessageProcessor …).
const (
	ResetOffsetInSlave    = "Can not reset offset in slave broker"
	CheckpointNull        = "The checkpoint is null"
	TimerMessageStoreNull = "The timer message store is null"
)

// TopicConflictsWithSystem is INVALID_PARAMETER for creating or deleting
// a system topic.
func TopicConflictsWithSystem(topic string) string {
	return "The topic[" + topic + "] is conflict with system topic."
}

// TopicNotExist is the admin TOPIC_NOT_EXIST remark (no FAQ tip).
func TopicNotExist(topic string) string { return "topic[" + topic + "] not exist" }

// NoTopicInBroker is GET_TOPIC_CONFIG's TOPIC_NOT_EXIST remark.
func NoTopicInBroker(topic string) string { return "No topic in this broker. topic: " + topic }

// NoGroupInBroker is GET_SUBSCRIPTIONGROUP_CONFIG's remark.
func NoGroupInBroker(group string) string { return "No group in this broker. group: " + group }

// ConsumerGroupNotOnline is CONSUMER_NOT_ONLINE for GET_CONSUMER_CONNECTION_LIST.
func ConsumerGroupNotOnline(group string) string {
	return "the consumer group[" + group + "] not online"
}

// ProducerGroupNotExist is GET_PRODUCER_CONNECTION_LIST's SYSTEM_ERROR.
func ProducerGroupNotExist(group string) string {
	return "the producer group[" + group + "] not exist"
}

// ResetOffsetNoTopic is INVOKE_BROKER_TO_RESET_OFFSET's SYSTEM_ERROR for
// an unknown topic.
func ResetOffsetNoTopic(topic string) string {
	return "[reset-offset] reset offset failed, no topic in this broker. topic=" + topic
}

// ResetOffsetGroupNotExist is the reset-offset SYSTEM_ERROR for a group
// without offsets (compat: Java's "THe").
func ResetOffsetGroupNotExist(group string) string {
	return "THe consumer group <" + group + "> not exist"
}

// ResetOffsetConsumerNotOnline is the reset-offset CONSUMER_NOT_ONLINE remark.
func ResetOffsetConsumerNotOnline(group, topic string, timestamp int64) string {
	return "Consumer not online, so can not reset offset, Group: " + group + " Topic: " + topic +
		" Timestamp: " + strconv.FormatInt(timestamp, 10)
}

// ConsumerNotOnline is the SYSTEM_ERROR of a request forwarded to a
// consumer that is not connected.
func ConsumerNotOnline(group, clientID string) string {
	return "The Consumer <" + group + "> <" + clientID + "> not online"
}

// ConsumerTimeout is CONSUME_MSG_TIMEOUT of a request forwarded to a consumer.
func ConsumerTimeout(group, clientID, err string) string {
	return "consumer <" + group + "> <" + clientID + "> Timeout: " + err
}

// InvokeConsumerException is the SYSTEM_ERROR of a forwarded request that failed.
func InvokeConsumerException(group, clientID, err string) string {
	return "invoke consumer <" + group + "> <" + clientID + "> Exception: " + err
}

// NoConsumerOnline is the SYSTEM_ERROR when no consumer of group is connected.
func NoConsumerOnline(group string) string {
	return "No Any Consumer online in the consumer group: [" + group + "]"
}

// ClientNotSupportFeature is the SYSTEM_ERROR for a client too old for a request.
func ClientNotSupportFeature(version string) string {
	return "the client does not support this feature. version=" + version
}

// QueueNotExist is QUERY_CONSUME_QUEUE's SYSTEM_ERROR ("0@T is not exist!").
func QueueNotExist(queueID int32, topic string) string {
	return strconv.Itoa(int(queueID)) + "@" + topic + " is not exist!"
}

// QueueIndexNotExist is QUERY_CONSUME_QUEUE's remark for an index out of
// range (answered with SUCCESS, like Java).
func QueueIndexNotExist(index int64, queueID int32, topic string) string {
	return "Index " + strconv.FormatInt(index, 10) + " of " + strconv.Itoa(int(queueID)) + "@" + topic + " is not exist!"
}

// StatsNotExist is VIEW_BROKER_STATS_DATA's SYSTEM_ERROR.
func StatsNotExist(name, key string) string {
	return "The stats <" + name + "> <" + key + "> not exist"
}

// NoConsumerForGroup is UNLOCK/LOCK_BATCH_MQ's remark when the group has
// no consumer.
func NoConsumerForGroup(group string) string { return "no consumer for this group, " + group }

// BodyTopicList is our SYSTEM_ERROR for a topic list body that does not decode.
func BodyTopicList(err string) string { return "body: topic list: " + err }

// BodyGroupList is our SYSTEM_ERROR for a group list body that does not decode.
func BodyGroupList(err string) string { return "body: group list: " + err }

// BodyCheckClientConfig is our SYSTEM_ERROR for a CHECK_CLIENT_CONFIG body
// that does not decode.
func BodyCheckClientConfig(err string) string { return "body: check client config: " + err }
