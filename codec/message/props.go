package message

import (
	"sort"
	"strings"
)

// Separators of the properties string (Java MessageDecoder).
const (
	NameValueSeparator = '\x01'
	PropertySeparator  = '\x02'
)

// MaxPropertiesLen is the largest stored properties string (signed int16).
const MaxPropertiesLen = 32767

// Property keys, named after Java's MessageConst.
const (
	PropertyKeys                        = "KEYS"
	PropertyTags                        = "TAGS"
	PropertyWaitStoreMsgOK              = "WAIT"
	PropertyDelayTimeLevel              = "DELAY"
	PropertyDelayLevel                  = PropertyDelayTimeLevel
	PropertyRetryTopic                  = "RETRY_TOPIC"
	PropertyRealTopic                   = "REAL_TOPIC"
	PropertyRealQueueID                 = "REAL_QID"
	PropertyTransactionPrepared         = "TRAN_MSG"
	PropertyProducerGroup               = "PGROUP"
	PropertyMinOffset                   = "MIN_OFFSET"
	PropertyMaxOffset                   = "MAX_OFFSET"
	PropertyBuyerID                     = "BUYER_ID"
	PropertyOriginMessageID             = "ORIGIN_MESSAGE_ID"
	PropertyTransferFlag                = "TRANSFER_FLAG"
	PropertyCorrectionFlag              = "CORRECTION_FLAG"
	PropertyMQ2Flag                     = "MQ2_FLAG"
	PropertyReconsumeTime               = "RECONSUME_TIME"
	PropertyMsgRegion                   = "MSG_REGION"
	PropertyTraceSwitch                 = "TRACE_ON"
	PropertyUniqKey                     = "UNIQ_KEY"
	PropertyExtendUniqInfo              = "EXTEND_UNIQ_INFO"
	PropertyMaxReconsumeTimes           = "MAX_RECONSUME_TIMES"
	PropertyConsumeStartTimestamp       = "CONSUME_START_TIME"
	PropertyInnerNum                    = "INNER_NUM"
	PropertyInnerBase                   = "INNER_BASE"
	PropertyDupInfo                     = "DUP_INFO"
	PropertyCheckImmunityTimeInSeconds  = "CHECK_IMMUNITY_TIME_IN_SECONDS"
	PropertyTransactionPreparedQueueOff = "TRAN_PREPARED_QUEUE_OFFSET"
	PropertyTransactionID               = "__transactionId__"
	PropertyTransactionCheckTimes       = "TRANSACTION_CHECK_TIMES"
	PropertyInstanceID                  = "INSTANCE_ID"
	PropertyCorrelationID               = "CORRELATION_ID"
	PropertyMessageReplyToClient        = "REPLY_TO_CLIENT"
	PropertyMessageTTL                  = "TTL"
	PropertyReplyMessageArriveTime      = "ARRIVE_TIME"
	PropertyPushReplyTime               = "PUSH_REPLY_TIME"
	PropertyCluster                     = "CLUSTER"
	PropertyMessageType                 = "MSG_TYPE"
	PropertyPopCK                       = "POP_CK"
	PropertyPopCKOffset                 = "POP_CK_OFFSET"
	PropertyFirstPopTime                = "1ST_POP_TIME"
	PropertyShardingKey                 = "__SHARDINGKEY"
	PropertyForwardQueueID              = "PROPERTY_FORWARD_QUEUE_ID"
	PropertyRedirect                    = "REDIRECT"
	PropertyInnerMultiDispatch          = "INNER_MULTI_DISPATCH"
	PropertyInnerMultiQueueOffset       = "INNER_MULTI_QUEUE_OFFSET"
	PropertyTraceContext                = "TRACE_CONTEXT"
	PropertyTimerDelaySec               = "TIMER_DELAY_SEC"
	PropertyTimerDeliverMs              = "TIMER_DELIVER_MS"
	PropertyStartDeliverTime            = "__STARTDELIVERTIME" // the 4.x-era (OpenMessaging, Aliyun) absolute delivery time
	PropertyBornHost                    = "__BORNHOST"
	PropertyBornTimestamp               = "BORN_TIMESTAMP"
	PropertyTransientPrefix             = "__RMQ.TRANSIENT."
	PropertyTransientTopicConfig        = PropertyTransientPrefix + "TOPIC_SYS_FLAG"
	PropertyTransientGroupConfig        = PropertyTransientPrefix + "GROUP_SYS_FLAG"
	PropertyTimerEnqueueMs              = "TIMER_ENQUEUE_MS"
	PropertyTimerDequeueMs              = "TIMER_DEQUEUE_MS"
	PropertyTimerRollTimes              = "TIMER_ROLL_TIMES"
	PropertyTimerOutMs                  = "TIMER_OUT_MS"
	PropertyTimerDelUniqKey             = "TIMER_DEL_UNIQKEY"
	PropertyTimerDelayLevel             = "TIMER_DELAY_LEVEL"
	PropertyTimerDelayMs                = "TIMER_DELAY_MS"
	PropertyCRC32                       = "__CRC32#"
	PropertyDLQOriginTopic              = "DLQ_ORIGIN_TOPIC"
	PropertyDLQOriginMessageID          = "DLQ_ORIGIN_MESSAGE_ID"
	KeySeparator                        = " "
)

// PropertyIter walks a properties string without allocating. Entries that
// Java would drop (empty name, empty value, no separator) are skipped.
type PropertyIter struct {
	s string
}

// IterProperties returns an iterator over props.
func IterProperties(props string) PropertyIter { return PropertyIter{s: props} }

// Next returns the next name/value pair; ok is false at the end.
func (it *PropertyIter) Next() (name, value string, ok bool) {
	for len(it.s) > 0 {
		chunk := it.s
		if i := strings.IndexByte(it.s, PropertySeparator); i >= 0 {
			chunk, it.s = it.s[:i], it.s[i+1:]
		} else {
			it.s = ""
		}
		// compat: like Java, name and value must both be non-empty; the
		// value runs to the entry end and may itself contain 0x01.
		kv := strings.IndexByte(chunk, NameValueSeparator)
		if kv > 0 && kv < len(chunk)-1 {
			return chunk[:kv], chunk[kv+1:], true
		}
	}
	return "", "", false
}

// Property returns the value of key in props (the last occurrence wins, as
// with Java's HashMap parse). It does not allocate.
func Property(props, key string) (string, bool) {
	var (
		val   string
		found bool
	)
	it := IterProperties(props)
	for {
		n, v, ok := it.Next()
		if !ok {
			return val, found
		}
		if n == key {
			val, found = v, true
		}
	}
}

// AppendProperty appends one encoded name/value entry.
func AppendProperty(dst []byte, name, value string) []byte {
	dst = append(dst, name...)
	dst = append(dst, NameValueSeparator)
	dst = append(dst, value...)
	return append(dst, PropertySeparator)
}

// ParseProperties decodes props into a new map (non-hot paths).
func ParseProperties(props string) map[string]string {
	m := make(map[string]string, 8)
	it := IterProperties(props)
	for {
		n, v, ok := it.Next()
		if !ok {
			return m
		}
		m[n] = v
	}
}

// EncodeProperties encodes m with keys in sorted order (Java's order is a
// HashMap's and carries no meaning).
func EncodeProperties(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = AppendProperty(b, k, m[k])
	}
	return string(b)
}

// SetProperty returns props with key set to value (replacing every earlier
// occurrence). Allocates; for broker rewrites, not the send hot path.
func SetProperty(props, key, value string) string {
	b := make([]byte, 0, len(props)+len(key)+len(value)+2)
	b = appendWithout(b, props, key)
	return string(AppendProperty(b, key, value))
}

// DeleteProperty returns props without key.
func DeleteProperty(props, key string) string {
	if _, ok := Property(props, key); !ok {
		return props
	}
	return string(appendWithout(make([]byte, 0, len(props)), props, key))
}

func appendWithout(dst []byte, props, key string) []byte {
	it := IterProperties(props)
	for {
		n, v, ok := it.Next()
		if !ok {
			return dst
		}
		if n != key {
			dst = AppendProperty(dst, n, v)
		}
	}
}
