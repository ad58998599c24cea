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

// POP_MESSAGE's remarks: the response's code says which.
const (
	PopNoMessageInQueue = "NO_MESSAGE_IN_QUEUE"
	PopFound            = "FOUND"
)

// AckCommitOffsetIllegal is ACK_MESSAGE's NO_MESSAGE for an offset outside
// the queue, in the form of the ack path that names the queue.
func AckCommitOffsetIllegal(topic string, queueID int32, offset, minOff, maxOff int64) string {
	return "offset is illegal, key:" + topic + "@" + strconv.Itoa(int(queueID)) +
		", commit:" + strconv.FormatInt(offset, 10) + ", store:" + strconv.FormatInt(minOff, 10) + "~" + strconv.FormatInt(maxOff, 10)
}

// ExtraInfoIllegal is the MESSAGE_ILLEGAL of an ack or change whose
// extraInfo does not parse.
func ExtraInfoIllegal(extraInfo string) string { return "extraInfo is illegal: " + extraInfo }

// PutAckMsgError is the SYSTEM_ERROR of an ack the revive log refused.
const PutAckMsgError = "put ack msg error"

// PeekForbidden is PEEK_MESSAGE's NO_PERMISSION when the broker is not readable.
func PeekForbidden(brokerIP string) string {
	return "the broker[" + brokerIP + "] peeking message is forbidden"
}

// QUERY_ASSIGNMENT and SET_MESSAGE_REQUEST_MODE remarks.
const (
	DecodeQueryAssignmentFailed = "decode QueryAssignmentRequestBody failed"
	DecodeSetRequestModeFailed  = "decode SetMessageRequestModeRequestBody failed"
	RetryTopicNoRequestMode     = "retry topic is not allowed to set mode"
	RequestModeGroupNotExist    = "subscription group does not exist"
	RequestModeInvalid          = "mode must be PULL or POP"
)

// RequestModeTopicNotExist is SET_MESSAGE_REQUEST_MODE's TOPIC_NOT_EXIST.
func RequestModeTopicNotExist(topic string) string { return "topic[" + topic + "] not exist" }
