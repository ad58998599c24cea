package popfmt

import (
	"errors"
	"strconv"
	"strings"
)

// ExtraInfo is the parsed POP_CK / extraInfo string.
type ExtraInfo struct {
	CKQueueOffset  int64
	PopTime        int64
	InvisibleTime  int64
	ReviveQid      int32
	Retry          byte // '0', '1', '2'
	BrokerName     string
	QueueID        int32
	MsgQueueOffset int64 // -1 when the string has 7 fields
}

// ErrExtraInfo is returned for a malformed extraInfo.
var ErrExtraInfo = errors.New("popfmt: malformed extraInfo")

// AppendExtraInfo appends ExtraInfoUtil.buildExtraInfo's 8-field string.
func AppendExtraInfo(dst []byte, ckOffset, popTime, invisible int64, reviveQid int32, topic, brokerName string, queueID int32, msgOffset int64) []byte {
	dst = strconv.AppendInt(dst, ckOffset, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, popTime, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, invisible, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(reviveQid), 10)
	dst = append(dst, ' ', RetryMark(topic), ' ')
	dst = append(dst, brokerName...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, msgOffset, 10)
}

// ParseExtraInfo parses an extraInfo of 7 or 8 fields (Java's split on " ").
func ParseExtraInfo(s string) (ExtraInfo, error) {
	var e ExtraInfo
	// The first 8 space-separated fields, as strings.Split would give them
	// (empty ones included), without allocating: the ack path's hot call.
	var f [8]string
	nf := 0
	for rest := s; nf < len(f); {
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			f[nf] = rest
			nf++
			break
		}
		f[nf] = rest[:i]
		nf++
		rest = rest[i+1:]
	}
	if nf < 7 {
		return e, ErrExtraInfo
	}
	var err error
	num := func(s string) int64 {
		v, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil && err == nil {
			err = ErrExtraInfo
		}
		return v
	}
	e.CKQueueOffset = num(f[0])
	e.PopTime = num(f[1])
	e.InvisibleTime = num(f[2])
	e.ReviveQid = int32(num(f[3]))
	if len(f[4]) != 1 {
		return e, ErrExtraInfo
	}
	e.Retry = f[4][0]
	e.BrokerName = f[5]
	e.QueueID = int32(num(f[6]))
	e.MsgQueueOffset = -1
	if nf > 7 {
		e.MsgQueueOffset = num(f[7])
	}
	return e, err
}

// AppendStartOffsetInfo is ExtraInfoUtil.buildStartOffsetInfo: "retry queueId startOffset", ';'-joined.
func AppendStartOffsetInfo(dst []byte, topic string, queueID int32, start int64) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = append(dst, RetryMark(topic), ' ')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, start, 10)
}

// AppendMsgOffsetInfo is ExtraInfoUtil.buildMsgOffsetInfo: "retry queueId o1,o2,…", ';'-joined.
func AppendMsgOffsetInfo(dst []byte, topic string, queueID int32, offsets []int64) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = append(dst, RetryMark(topic), ' ')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, ' ')
	for i, o := range offsets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, o, 10)
	}
	return dst
}

// AppendOrderCountInfo is ExtraInfoUtil.buildQueueIdOrderCountInfo.
func AppendOrderCountInfo(dst []byte, topic string, queueID int32, count int) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = append(dst, RetryMark(topic), ' ')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, int64(count), 10)
}

// ParseStartOffsetInfo is ExtraInfoUtil.parseStartOffsetInfo: key "retry@queueId".
func ParseStartOffsetInfo(s string) map[string]int64 {
	m := map[string]int64{}
	for _, one := range strings.Split(s, ";") {
		f := strings.Split(one, " ")
		if len(f) != 3 {
			continue
		}
		if v, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			m[f[0]+"@"+f[1]] = v
		}
	}
	return m
}

// ParseMsgOffsetInfo is ExtraInfoUtil.parseMsgOffsetInfo: key "retry@queueId".
func ParseMsgOffsetInfo(s string) map[string][]int64 {
	m := map[string][]int64{}
	for _, one := range strings.Split(s, ";") {
		f := strings.Split(one, " ")
		if len(f) != 3 {
			continue
		}
		var offs []int64
		for _, o := range strings.Split(f[2], ",") {
			if v, err := strconv.ParseInt(o, 10, 64); err == nil {
				offs = append(offs, v)
			}
		}
		m[f[0]+"@"+f[1]] = offs
	}
	return m
}
