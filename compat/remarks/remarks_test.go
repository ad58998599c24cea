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

// TestMovedRemarksMatchJava checks remarks moved out of the broker and the
// controller against the 5.3.3 sources they come from (the file each line
// was read in is named).
func TestMovedRemarksMatchJava(t *testing.T) {
	// AbstractSendMessageProcessor.java: String.format("request queueId[%d] is illegal, %s Producer: %s", …)
	require.Equal(t, "request queueId[9] is illegal, TopicConfig [topicName=T] Producer: 1.2.3.4:5", SendQueueIDIllegal(9, "TopicConfig [topicName=T]", "1.2.3.4:5"))
	require.Equal(t, "look message by offset failed, 42", LookMessageByOffsetFailed(42))
	// PullMessageProcessor.java
	require.Equal(t, "queueId[-1] is illegal, topic:[T] topicConfig.readQueueNums:[4] consumer:[1.2.3.4:5]", PullQueueIDIllegal(-1, "T", 4, "1.2.3.4:5"))
	require.Equal(t, "The broker's consumer filter data is not exist!Your expression may be wrong!", FilterDataNotExist)
	require.Equal(t, "subscription group no permission, G", SubscriptionGroupNoPermission("G"))
	require.Equal(t, "The broker does not support consumer to filter message by SQL92", FilterTypeNotSupported("SQL92"))
	// SendMessageProcessor.java
	require.Equal(t, "the message is illegal, maybe msg body or properties length not matched. msg body length limit 4194304B, msg properties length limit 32KB.", MessageIllegal(4194304))
	require.Equal(t, "service not available now. It may be caused by one of the following reasons: the broker's disk is full [CL:  0.90 CQ:  0.10 INDEX:  0.10], messages are put to the slave, message store has been shut down, etc.",
		ServiceNotAvailable("CL:  0.90 CQ:  0.10 INDEX:  0.10"))
	require.Equal(t, "message topic length too long 128", MessageTopicTooLong(128))
	require.Equal(t, "batch request does not support retry group %RETRY%G", BatchNotSupportRetry("%RETRY%G"))
	require.Equal(t, "timer message illegal, the delay time should not be bigger than the max delay 259200000ms; or if set del msg, the delay time should be bigger than the current time", TimerIllegal(259200000))
	require.Equal(t, "accurate timer message is not enabled, timerWheelEnable is false", TimerNotEnabled)
	// RecallMessageProcessor.java
	require.Equal(t, "recall failed, operation is forbidden", RecallForbidden)
	require.Equal(t, "recall failed, broker service not available", RecallNotAvailable)
	require.Equal(t, "recall failed, topic not match", RecallTopicNotMatch)
	require.Equal(t, "recall failed, timestamp invalid", RecallTimestampBad)
	require.Equal(t, "recall failed, execute error", RecallExecuteError)
	require.Equal(t, "recall failed, the topic[T] not exist", RecallTopicNotExist("T"))
	// ConsumerManageProcessor.java, QueryMessageProcessor.java, EndTransactionProcessor.java
	require.Equal(t, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first", OffsetNotFoundV306)
	require.Equal(t, "can not find message by the offset, 7", MessageNotFoundByOffset(7))
	require.Equal(t, "The transaction state table offset wrong", TxnStateTableOffsetWrong)
	// AdminBrokerProcessor.java
	require.Equal(t, "0@T is not exist!", QueueNotExist(0, "T"))
	require.Equal(t, "Index 5 of 0@T is not exist!", QueueIndexNotExist(5, 0, "T"))
	require.Equal(t, "The stats <TOPIC_PUT_NUMS> <T> not exist", StatsNotExist("TOPIC_PUT_NUMS", "T"))
	require.Equal(t, "The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic.", TopicConflictsWithSystem("SCHEDULE_TOPIC_XXXX"))
	require.Equal(t, "this request only for controllerMode ", OnlyForControllerMode)
	// NettyRemotingAbstract.java, BrokerFastFailure.java
	require.Equal(t, "[REJECTREQUEST]system busy, start flow control for a while", RejectRequest)
	require.Equal(t, "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: 250ms, size of queue: 3", TimeoutCleanQueue(250, 3))
	// ReplicasInfoManager.java
	require.Equal(t, "Rejecting alter syncStateSet request because the current master epoch is:{2}, not {1}", AlterSyncStateSetMasterEpoch(2, 1))
	require.Equal(t, "The old master 1 is still alive, not need to elect new master for broker b", OldMasterStillAlive(1, "b"))
	require.Equal(t, "Broker [b,  2] is still alive, clean up failure", CleanBrokerIDStillAlive("b", 2))
	require.Equal(t, "Broker b is not existed,clean broker data failure.", CleanBrokerNotExisted("b"))
}
