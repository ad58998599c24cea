package body

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/codec"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// MessageQueue names one queue of a topic on one broker.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

// AppendMessageQueue writes mq as fastjson does:
// {"brokerName":"b","queueId":0,"topic":"t"}.
func AppendMessageQueue(dst []byte, mq MessageQueue) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = appendString(dst, mq.BrokerName)
	dst = append(dst, `,"queueId":`...)
	dst = strconv.AppendInt(dst, int64(mq.QueueID), 10)
	dst = append(dst, `,"topic":`...)
	dst = appendString(dst, mq.Topic)
	return append(dst, '}')
}

// LockBatchRequest is the body of LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42).
type LockBatchRequest struct {
	ConsumerGroup  string         `json:"consumerGroup"`
	ClientID       string         `json:"clientId"`
	MQSet          []MessageQueue `json:"mqSet"`
	OnlyThisBroker bool           `json:"onlyThisBroker"`
}

// DecodeLockBatchRequest parses a LOCK/UNLOCK_BATCH_MQ body.
func DecodeLockBatchRequest(b []byte) (LockBatchRequest, error) {
	var r LockBatchRequest
	if err := fastjson.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("body: lock batch: %w", err)
	}
	return r, nil
}

// AppendLockBatchResponse writes {"lockOKMQSet":[…]}.
func AppendLockBatchResponse(dst []byte, locked []MessageQueue) []byte {
	dst = append(dst, `{"lockOKMQSet":[`...)
	for i, mq := range locked {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendMessageQueue(dst, mq)
	}
	return append(dst, "]}"...)
}

func appendString(dst []byte, s string) []byte { return codec.AppendJSONString(dst, s) }
