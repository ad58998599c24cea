package popfmt

import "strings"

// Java's constants (PopAckConstants, KeyBuilder, MixAll).
const (
	RetryPrefix      = "%RETRY%"
	ReviveTopicPref  = "rmq_sys_REVIVE_LOG_"
	ReviveGroup      = "CID_RMQ_SYS_REVIVE_GROUP"
	CKTag            = "ck"
	AckTag           = "ack"
	BatchAckTag      = "bAck"
	Split            = "@"
	OrderReviveQueue = 999 // KeyBuilder.POP_ORDER_REVIVE_QUEUE
	// AckTimeInterval is PopAckConstants.ackTimeInterval (ms): a checkpoint
	// is due this long before its revive time.
	AckTimeInterval = 1000
)

// ReviveTopic is the cluster's revive log (PopAckConstants.buildClusterReviveTopic).
func ReviveTopic(cluster string) string { return ReviveTopicPref + cluster }

// RetryTopic is KeyBuilder.buildPopRetryTopic: %RETRY%group_topic, or
// %RETRY%group+topic with enableRetryTopicV2.
func RetryTopic(topic, group string, v2 bool) string {
	if v2 {
		return RetryPrefix + group + "+" + topic
	}
	return RetryPrefix + group + "_" + topic
}

// RetryMark is ExtraInfoUtil.getRetry: "0" normal, "1" retry v1, "2" retry v2.
func RetryMark(topic string) byte {
	if !strings.HasPrefix(topic, RetryPrefix) {
		return '0'
	}
	if strings.IndexByte(topic, '+') >= 0 {
		return '2'
	}
	return '1'
}

// RealTopic is ExtraInfoUtil.getRealTopic: the topic an ExtraInfo's retry
// mark names for the request's topic and group.
func RealTopic(topic, group string, mark byte) string {
	switch mark {
	case '1':
		return RetryTopic(topic, group, false)
	case '2':
		return RetryTopic(topic, group, true)
	}
	return topic
}

// NormalTopic is KeyBuilder.parseNormalTopic(topic, cid).
func NormalTopic(topic, group string) string {
	if !strings.HasPrefix(topic, RetryPrefix) {
		return topic
	}
	if p := RetryPrefix + group + "+"; strings.HasPrefix(topic, p) {
		return topic[len(p):]
	}
	if p := RetryPrefix + group + "_"; strings.HasPrefix(topic, p) {
		return topic[len(p):]
	}
	return topic
}

// AppendRealTopic appends RealTopic(topic, group, mark) to dst.
func AppendRealTopic(dst []byte, topic, group string, mark byte) []byte {
	switch mark {
	case '1', '2':
		dst = append(dst, RetryPrefix...)
		dst = append(dst, group...)
		if mark == '2' {
			dst = append(dst, '+')
		} else {
			dst = append(dst, '_')
		}
	}
	return append(dst, topic...)
}
