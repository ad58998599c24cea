package remarks

import "strconv"

// Java PopMessageProcessor / AckMessageProcessor / ChangeInvisibleTimeProcessor remarks.

// PopForbidden is POP's NO_PERMISSION when the broker is not readable.
func PopForbidden(brokerIP string) string {
	return "the broker[" + brokerIP + "] pop message is forbidden"
}

// PopTooMany is POP's INVALID_PARAMETER for maxMsgNums > 32.
func PopTooMany(brokerIP string) string {
	return "the broker[" + brokerIP + "] pop message's num is greater than 32"
}

// PopTopicForbidden is POP's NO_PERMISSION for an unreadable topic (Java says "peeking").
func PopTopicForbidden(topic string) string {
	return "the topic[" + topic + "] peeking message is forbidden"
}

// PopQueueIllegal is POP's INVALID_PARAMETER for a queueId past readQueueNums.
func PopQueueIllegal(queueID int32, topic string, readQueues int32, remote string) string {
	return "queueId[" + strconv.Itoa(int(queueID)) + "] is illegal, topic:[" + topic + "] topicConfig.readQueueNums:[" +
		strconv.Itoa(int(readQueues)) + "] consumer:[" + remote + "]"
}

// PopGroupNotExist is POP's SUBSCRIPTION_GROUP_NOT_EXIST remark.
func PopGroupNotExist(group string) string {
	return "subscription group [" + group + "] does not exist, " + SuggestTodo(FAQURL)
}

// PopGroupNoPermission is POP's NO_PERMISSION for a group that may not consume.
func PopGroupNoPermission(group string) string {
	return "subscription group no permission, " + group
}

// ParseSubscriptionFailedPop is POP's SUBSCRIPTION_PARSE_FAILED remark.
const ParseSubscriptionFailedPop = "parse the consumer's subscription failed"

// AckTopicNotExist is ACK's TOPIC_NOT_EXIST remark.
func AckTopicNotExist(topic string) string {
	return "topic[" + topic + "] not exist, apply first please! " + SuggestTodo(FAQURL)
}

// AckQueueIllegal is ACK's MESSAGE_ILLEGAL remark for a bad queueId.
func AckQueueIllegal(queueID int32, topic string, readQueues int32, remote string) string {
	return "queueId[" + strconv.Itoa(int(queueID)) + "] is illegal, topic:[" + topic + "] topicConfig.readQueueNums:[" +
		strconv.Itoa(int(readQueues)) + "] consumer:[" + remote + "]"
}

// AckOffsetIllegal is ACK's NO_MESSAGE remark for an offset outside the queue.
func AckOffsetIllegal(offset, min, max int64) string {
	return "offset is illegal, key:" + strconv.FormatInt(offset, 10) + ", minOffset:" + strconv.FormatInt(min, 10) +
		", maxOffset:" + strconv.FormatInt(max, 10)
}
