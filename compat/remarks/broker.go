package remarks

import "strconv"

// Broker send, pull, retry and transaction remarks (Java's
// SendMessageProcessor, PullMessageProcessor, EndTransactionProcessor …).
const (
	// compat: PullMessageProcessor's remark when the group's filter data
	// is missing, the missing space after "!" included.
	FilterDataNotExist       = "The broker's consumer filter data is not exist!Your expression may be wrong!"
	StoreGetMessageNull      = "store getMessage return null"
	FindPreparedTxnFailed    = "Find prepared transaction message failed"
	ProducerGroupWrong       = "The producer group wrong"
	TxnStateTableOffsetWrong = "The transaction state table offset wrong"
	CommitLogOffsetWrong     = "The commit log offset wrong"
	// compat: ConsumerManageProcessor's QUERY_NOT_FOUND remarks.
	OffsetNotFoundGroupBootFirst = "Not found, do not set to zero, maybe this group boot first"
	OffsetNotFoundV306           = "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"
	MessageNotFoundTimeRange     = "can not find message, maybe time range not correct"
	// OnlyForControllerMode keeps Java's trailing space.
	OnlyForControllerMode = "this request only for controllerMode "
)

// ServiceNotAvailable is SEND's SERVICE_NOT_AVAILABLE remark; diskUtil
// is Java's diskUtil() ("CL: … CQ: … INDEX: …").
func ServiceNotAvailable(diskUtil string) string {
	return "service not available now. It may be caused by one of the following reasons: the broker's disk is full [" +
		diskUtil + "], messages are put to the slave, message store has been shut down, etc."
}

// MessageIllegal is SEND's MESSAGE_ILLEGAL remark for a body or
// properties over the limits.
func MessageIllegal(maxBodySize int) string {
	return "the message is illegal, maybe msg body or properties length not matched. msg body length limit " +
		strconv.Itoa(maxBodySize) + "B, msg properties length limit 32KB."
}

// SendQueueIDIllegal is SEND's INVALID_PARAMETER for a queue id out of
// range; topicConfig is TopicConfig.toString.
func SendQueueIDIllegal(queueID int32, topicConfig, producer string) string {
	return "request queueId[" + strconv.Itoa(int(queueID)) + "] is illegal, " + topicConfig + " Producer: " + producer
}

// PullQueueIDIllegal is PULL's INVALID_PARAMETER for a queue id out of range.
func PullQueueIDIllegal(queueID int32, topic string, readQueueNums int32, consumer string) string {
	return "queueId[" + strconv.Itoa(int(queueID)) + "] is illegal, topic:[" + topic +
		"] topicConfig.readQueueNums:[" + strconv.Itoa(int(readQueueNums)) + "] consumer:[" + consumer + "]"
}

// MessageTopicTooLong is SEND's MESSAGE_ILLEGAL for a topic over 127 bytes.
func MessageTopicTooLong(n int) string { return "message topic length too long " + strconv.Itoa(n) }

// BatchNotSupportRetry is SEND_BATCH's MESSAGE_ILLEGAL for a retry topic.
func BatchNotSupportRetry(topic string) string {
	return "batch request does not support retry group " + topic
}

// SubscriptionGroupNoPermission is PULL's NO_PERMISSION for a group
// that may not consume.
func SubscriptionGroupNoPermission(group string) string {
	return "subscription group no permission, " + group
}

// FilterTypeNotSupported is the SYSTEM_ERROR remark for an expression
// type the broker does not evaluate (property filtering off).
func FilterTypeNotSupported(typ string) string {
	return "The broker does not support consumer to filter message by " + typ
}

// LookMessageByOffsetFailed is CONSUMER_SEND_MSG_BACK's SYSTEM_ERROR
// when the message to retry is not found.
func LookMessageByOffsetFailed(offset int64) string {
	return "look message by offset failed, " + strconv.FormatInt(offset, 10)
}

// MessageNotFoundByOffset is VIEW_MESSAGE_BY_ID's SYSTEM_ERROR.
func MessageNotFoundByOffset(offset int64) string {
	return "can not find message by the offset, " + strconv.FormatInt(offset, 10)
}

// NumberFormat is the text of the NumberFormatException Java's
// Integer.parseInt / Long.parseLong throw for v (what
// UtilAll.exceptionSimpleDesc puts first in a remark; the stack frame it
// appends names JDK internals and is left out).
func NumberFormat(v string) string {
	return `java.lang.NumberFormatException: For input string: "` + v + `"`
}

// ReplyToClientNull is SEND_REPLY_MESSAGE's remark when the reply has no
// REPLY_TO_CLIENT property (key is that property's name).
func ReplyToClientNull(key string) string { return "reply message properties[" + key + "] is null" }

// PushReplyChannelNotFound is the reply remark when the requester is gone.
func PushReplyChannelNotFound(client string) string {
	return "push reply message fail, channel of <" + client + "> not found."
}

// PushReplyFailed is the reply remark when pushing to the requester
// failed (compat: Java has no space before "fail.").
func PushReplyFailed(client string) string { return "push reply message to " + client + "fail." }

// TopicQueueNumsIllegal is our INVALID_PARAMETER for a topic with more
// queues than maxTopicQueueNums allows. Worded like Java's other queue
// checks; Java itself has no cap.
func TopicQueueNumsIllegal(topic string, read, write, max int32) string {
	return "topic[" + topic + "] readQueueNums[" + strconv.Itoa(int(read)) + "] writeQueueNums[" +
		strconv.Itoa(int(write)) + "] is illegal, the broker allows at most " + strconv.Itoa(int(max)) +
		" queues per topic (maxTopicQueueNums)"
}

// RejectRequest answers a request the broker's role refuses outright
// (Java's processor rejectRequest, answered by NettyRemotingAbstract).
const RejectRequest = "[REJECTREQUEST]system busy, start flow control for a while"

// TimerNotEnabled is SYSTEM_ERROR for a timer message when the timer
// wheel is off (Java formats timerWheelEnable, always false here).
const TimerNotEnabled = "accurate timer message is not enabled, timerWheelEnable is false"

// TimerIllegal is MESSAGE_ILLEGAL for a timer message delayed past the
// maximum, or a deletion already due.
func TimerIllegal(maxDelayMs int64) string {
	return "timer message illegal, the delay time should not be bigger than the max delay " + strconv.FormatInt(maxDelayMs, 10) +
		"ms; or if set del msg, the delay time should be bigger than the current time"
}

// HeldPullsPerConnectionFull is our SYSTEM_BUSY for a pull that would park
// past maxHeldPullsPerConnection (Java holds without a bound).
func HeldPullsPerConnectionFull(max int) string {
	return "[OVERLOAD]this connection already holds " + strconv.Itoa(max) +
		" long-polling pulls (maxHeldPullsPerConnection), pull again later"
}

// HeldPullBytesFull is our SYSTEM_BUSY for a pull that would park past
// maxHeldPullBytes.
func HeldPullBytesFull(max int64) string {
	return "[OVERLOAD]held long-polling pulls pin " + strconv.FormatInt(max, 10) +
		" bytes (maxHeldPullBytes), pull again later"
}

// RECALL_MESSAGE remarks (RecallMessageProcessor). A bad handle answers
// the decoder's own text (recall.ErrInvalid).
const (
	RecallForbidden     = "recall failed, operation is forbidden"       // NO_PERMISSION: recallMessageEnable=false
	RecallNotAvailable  = "recall failed, broker service not available" // slave, not writeable, or another broker's handle
	RecallTopicNotMatch = "recall failed, topic not match"              // ILLEGAL_OPERATION
	RecallTimestampBad  = "recall failed, timestamp invalid"            // ILLEGAL_OPERATION: due, or past timerMaxDelaySec
	RecallExecuteError  = "recall failed, execute error"                // SYSTEM_ERROR: the delete marker was not stored
)

// RecallTopicNotExist is TOPIC_NOT_EXIST for a recall of an unknown topic.
func RecallTopicNotExist(topic string) string {
	return "recall failed, the topic[" + topic + "] not exist"
}
