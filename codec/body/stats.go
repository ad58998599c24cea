package body

import (
	"strconv"
)

// TopicOffset is one queue's bounds in a TopicStatsTable.
type TopicOffset struct {
	MQ                  MessageQueue
	MinOffset           int64
	MaxOffset           int64
	LastUpdateTimestamp int64
}

// AppendTopicStatsTable writes the GET_TOPIC_STATS_INFO (202) body in the
// fastjson object-key form: {"offsetTable":{{mq}:{…},…},"topicPutTps":0.0}.
func AppendTopicStatsTable(dst []byte, offsets []TopicOffset, putTps float64) []byte {
	dst = append(dst, `{"offsetTable":{`...)
	for i := range offsets {
		o := &offsets[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendMessageQueue(dst, o.MQ) // compat: fastjson writes bean keys unquoted
		dst = append(dst, `:{"lastUpdateTimestamp":`...)
		dst = strconv.AppendInt(dst, o.LastUpdateTimestamp, 10)
		dst = append(dst, `,"maxOffset":`...)
		dst = strconv.AppendInt(dst, o.MaxOffset, 10)
		dst = append(dst, `,"minOffset":`...)
		dst = strconv.AppendInt(dst, o.MinOffset, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `},"topicPutTps":`...)
	dst = AppendJavaDouble(dst, putTps)
	return append(dst, '}')
}

// OffsetWrapper is one queue's progress in ConsumeStats.
type OffsetWrapper struct {
	MQ             MessageQueue
	BrokerOffset   int64
	ConsumerOffset int64
	PullOffset     int64
	LastTimestamp  int64
}

// AppendConsumeStats writes the GET_CONSUME_STATS (208) body:
// {"consumeTps":0.0,"offsetTable":{{mq}:{…},…}}.
func AppendConsumeStats(dst []byte, consumeTps float64, offsets []OffsetWrapper) []byte {
	dst = append(dst, `{"consumeTps":`...)
	dst = AppendJavaDouble(dst, consumeTps)
	dst = append(dst, `,"offsetTable":{`...)
	for i := range offsets {
		o := &offsets[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendMessageQueue(dst, o.MQ)
		dst = append(dst, `:{"brokerOffset":`...)
		dst = strconv.AppendInt(dst, o.BrokerOffset, 10)
		dst = append(dst, `,"consumerOffset":`...)
		dst = strconv.AppendInt(dst, o.ConsumerOffset, 10)
		dst = append(dst, `,"lastTimestamp":`...)
		dst = strconv.AppendInt(dst, o.LastTimestamp, 10)
		dst = append(dst, `,"pullOffset":`...)
		dst = strconv.AppendInt(dst, o.PullOffset, 10)
		dst = append(dst, '}')
	}
	return append(dst, "}}"...)
}

// BrokerStatsItem is one window of VIEW_BROKER_STATS_DATA (315).
type BrokerStatsItem struct {
	Sum   int64
	Tps   float64
	Avgpt float64
}

func appendStatsItem(dst []byte, it BrokerStatsItem) []byte {
	dst = append(dst, `{"avgpt":`...)
	dst = AppendJavaDouble(dst, it.Avgpt)
	dst = append(dst, `,"sum":`...)
	dst = strconv.AppendInt(dst, it.Sum, 10)
	dst = append(dst, `,"tps":`...)
	dst = AppendJavaDouble(dst, it.Tps)
	return append(dst, '}')
}

// AppendBrokerStatsData writes {"statsDay":{…},"statsHour":{…},"statsMinute":{…}}.
func AppendBrokerStatsData(dst []byte, minute, hour, day BrokerStatsItem) []byte {
	dst = append(dst, `{"statsDay":`...)
	dst = appendStatsItem(dst, day)
	dst = append(dst, `,"statsHour":`...)
	dst = appendStatsItem(dst, hour)
	dst = append(dst, `,"statsMinute":`...)
	dst = appendStatsItem(dst, minute)
	return append(dst, '}')
}

// AppendJavaDouble writes v the way Java's Double.toString prints ordinary
// values: always with a fractional part (0.0, 1.5).
func AppendJavaDouble(dst []byte, v float64) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' || c == 'N' || c == 'I' {
			return dst
		}
	}
	return append(dst, ".0"...)
}
