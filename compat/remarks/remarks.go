package remarks

import "strconv"

// FAQURL is Java's FAQUrl.DEFAULT_FAQ_URL.
const FAQURL = "https://rocketmq.apache.org/docs/bestPractice/06FAQ"

// SuggestTodo is Java's FAQUrl.suggestTodo(url): "\nSee <url> for further details."
func SuggestTodo(url string) string { return "\nSee " + url + " for further details." }

// RequestCodeNotSupported is the remark of REQUEST_CODE_NOT_SUPPORTED
// (note the leading space).
func RequestCodeNotSupported(code int32) string {
	return " request type " + strconv.Itoa(int(code)) + " not supported"
}

// Name server remarks.
const (
	CRC32NotMatch         = "crc32 not match"
	RegisterBrokerFailed  = "register broker failed"
	NameServerNotReady    = "name server not ready"
	Disable               = "disable"
	NamespaceOrKeyIsNull  = "namespace or key is null"
	ConfigInBlackList     = "Can not update config in black list."
	String2PropertiesFail = "string2Properties error"
)

// NoTopicRouteInfo is GET_ROUTEINFO_BY_TOPIC's TOPIC_NOT_EXIST remark.
func NoTopicRouteInfo(topic string) string {
	return "No topic route info in name server for the topic: " + topic + SuggestTodo(FAQURL)
}

// NoConfigItem is GET_KV_CONFIG's QUERY_NOT_FOUND remark.
func NoConfigItem(namespace, key string) string {
	return "No config item, Namespace: " + namespace + " Key: " + key
}

// NoConfigNamespace is GET_KVLIST_BY_NAMESPACE's QUERY_NOT_FOUND remark.
func NoConfigNamespace(namespace string) string {
	return "No config item, Namespace: " + namespace
}

// Broker send/pull validation remarks.
const (
	MsgBodyTooLarge         = "msg body must be less 64KB"
	PutMessageResultNull    = "putMessageResult is null"
	StorePutMessageNull     = "store putMessage return null"
	InSyncReplicasNotEnough = "in-sync replicas not enough"
	CreateMappedFileFailed  = "create mapped file failed, server is busy or broken."
	PageCacheBusy           = "[PC_SYNCHRONIZED]broker busy, start flow control for a while"
	// compat: Java's NettyRemotingAbstract answers a rejected execution with this remark.
	SystemBusyOverload            = "[OVERLOAD]system busy, start flow control for a while"
	UnknownError                  = "UNKNOWN_ERROR"
	TopicBlank                    = "The specified topic is blank."
	GroupBlank                    = "The specified group is blank."
	ConsumerSubscriptionNotLatest = "the consumer's subscription not latest"
	ParseSubscriptionFailed       = "parse the consumer's subscription failed"
)

// TopicNotExistApplyFirst is SEND's TOPIC_NOT_EXIST remark.
func TopicNotExistApplyFirst(topic string) string {
	return "topic[" + topic + "] not exist, apply first please!" + SuggestTodo(FAQURL)
}

// PullTopicNotExist is PULL's TOPIC_NOT_EXIST remark (note the space
// before the FAQ tip, which itself starts with a newline).
func PullTopicNotExist(topic string) string {
	return "topic[" + topic + "] not exist, apply first please! " + SuggestTodo(FAQURL)
}

// BrokerSendForbidden is NO_PERMISSION when the broker is not writable.
func BrokerSendForbidden(brokerIP string) string {
	return "the broker[" + brokerIP + "] sending message is forbidden"
}

// BrokerPullForbidden is NO_PERMISSION when the broker is not readable.
func BrokerPullForbidden(brokerIP string) string {
	return "the broker[" + brokerIP + "] pulling message is forbidden"
}

// TopicSendForbidden is NO_PERMISSION when the topic is not writable.
func TopicSendForbidden(topic string) string {
	return "the topic[" + topic + "] sending message is forbidden"
}

// TopicPullForbidden is NO_PERMISSION when the topic is not readable.
func TopicPullForbidden(topic string) string {
	return "the topic[" + topic + "] pulling message is forbidden"
}

// SendToTopicForbidden is NO_PERMISSION for system topics clients may not send to.
func SendToTopicForbidden(topic string) string {
	return "Sending message to topic[" + topic + "] is forbidden."
}

// SubscriptionGroupNotExistPull is PULL's SUBSCRIPTION_GROUP_NOT_EXIST remark.
func SubscriptionGroupNotExistPull(group string) string {
	return "subscription group [" + group + "] does not exist, " + SuggestTodo(FAQURL)
}

// SubscriptionGroupNotExistSend is SEND's (retry) SUBSCRIPTION_GROUP_NOT_EXIST remark.
func SubscriptionGroupNotExistSend(group string) string {
	return "subscription group not exist, " + group + " " + SuggestTodo(FAQURL)
}

// TopicIllegalCharacters is INVALID_PARAMETER for a badly named topic.
func TopicIllegalCharacters(topic string) string {
	return "The specified topic: " + topic + ", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
}

// TopicTooLong is INVALID_PARAMETER for a topic longer than max.
func TopicTooLong(topic string, max int) string {
	return "The specified topic: " + topic + ", is longer than topic max length: " + strconv.Itoa(max)
}

// GroupIllegalCharacters is INVALID_PARAMETER for a badly named group (5.4.0).
func GroupIllegalCharacters(group string) string {
	return "The specified group: " + group + ", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
}

// GroupTooLong is INVALID_PARAMETER for a group longer than max (5.4.0).
func GroupTooLong(group string, max int) string {
	return "The specified group: " + group + ", is longer than group max length: " + strconv.Itoa(max)
}

// RetryOrDLQTopicTooLong is INVALID_PARAMETER for a long %RETRY%/%DLQ% topic.
func RetryOrDLQTopicTooLong(topic string, max int) string {
	return "The specified topic is DLQ or Retry topic: " + topic + ", and it's longer than topic max length: " + strconv.Itoa(max)
}

// ConsumerSubscriptionNotExist is PULL's SUBSCRIPTION_NOT_EXIST remark.
func ConsumerSubscriptionNotExist() string {
	return "the consumer's subscription not exist" + SuggestTodo(FAQURL)
}

// ConsumerGroupInfoNotExist is PULL's SUBSCRIPTION_NOT_EXIST remark when
// the group has no registered consumers.
func ConsumerGroupInfoNotExist() string {
	return "the consumer's group info not exist" + SuggestTodo(FAQURL)
}

// Our name server's own refusals (bounds Java does not have).
const DecodeRegisterBrokerBodyFailed = "Failed to decode RegisterBrokerBody"

// RegisterBrokerTooManyTopics refuses a registration past maxTopicsPerBrokerRegistration.
func RegisterBrokerTooManyTopics(n, max int) string {
	return "register broker refused: " + strconv.Itoa(n) + " topics and mappings, more than maxTopicsPerBrokerRegistration " + strconv.Itoa(max)
}

// KVValueTooLong refuses a KV config value past maxKVConfigValueLength.
func KVValueTooLong(n, max int) string {
	return "put kv config refused: value of " + strconv.Itoa(n) + " bytes, more than maxKVConfigValueLength " + strconv.Itoa(max)
}

// KVConfigRefused refuses a KV config put for why (the KV table is full).
func KVConfigRefused(why string) string { return "put kv config refused: " + why }

// RouteEntriesFull refuses a topic past maxTopicRouteEntries.
func RouteEntriesFull(max int) string {
	return "register topic refused: the route table holds maxTopicRouteEntries " + strconv.Itoa(max) + " entries"
}

// RouteBytesFull refuses a topic past maxRouteTableBytes.
func RouteBytesFull(add, held, max int64) string {
	return "register topic refused: " + strconv.FormatInt(add, 10) + " more bytes on top of the " + strconv.FormatInt(held, 10) +
		" the route table holds pass maxRouteTableBytes " + strconv.FormatInt(max, 10)
}
