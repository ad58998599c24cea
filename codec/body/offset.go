package body

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// ConsumerOffsetFile is consumerOffset.json: next offset to consume per
// "topic@group" and queue id.
type ConsumerOffsetFile struct {
	DataVersion TopicVersion               `json:"dataVersion"`
	OffsetTable map[string]map[int32]int64 `json:"offsetTable"`
}

// AppendConsumerOffsetFile writes the file as fastjson does: queue-id keys
// unquoted ({"t@g":{0:5,1:7}}), plus the derived groupTopicMap getter.
func AppendConsumerOffsetFile(dst []byte, v TopicVersion, table map[string]map[int32]int64) []byte {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = append(dst, `{"dataVersion":`...)
	dst = AppendTopicVersion(dst, v)
	dst = append(dst, `,"offsetTable":{`...)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ":{"...)
		q := table[k]
		ids := make([]int, 0, len(q))
		for id := range q {
			ids = append(ids, int(id))
		}
		sort.Ints(ids)
		for j, id := range ids {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(id), 10) // compat: fastjson leaves Integer keys bare
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, q[int32(id)], 10)
		}
		dst = append(dst, '}')
	}
	return append(dst, "}}"...)
}

// DecodeConsumerOffsetFile parses consumerOffset.json in Java's form (bare
// integer keys) or standard JSON.
func DecodeConsumerOffsetFile(b []byte) (ConsumerOffsetFile, error) {
	var f ConsumerOffsetFile
	if err := fastjson.Unmarshal(QuoteBareKeys(b), &f); err != nil {
		return f, fmt.Errorf("body: consumer offsets: %w", err)
	}
	return f, nil
}

// QueueOffset is one MessageQueue → offset entry.
type QueueOffset struct {
	MQ     MessageQueue
	Offset int64
}

// AppendResetOffsetBody writes ResetOffsetBody in fastjson's object-key form,
// compact, which is the only form the Go client parses safely:
// {"offsetTable":{{"brokerName":"b","queueId":0,"topic":"t"}:100,…}}.
func AppendResetOffsetBody(dst []byte, offsets []QueueOffset) []byte {
	dst = append(dst, `{"offsetTable":{`...)
	for i, o := range offsets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendMessageQueue(dst, o.MQ)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, o.Offset, 10)
	}
	return append(dst, "}}"...)
}

// QuoteBareKeys turns fastjson's unquoted numeric object keys ({0:5}) into
// quoted ones ({"0":5}) so a standard decoder can read the document. Other
// input passes through unchanged.
func QuoteBareKeys(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	inStr, esc, expectKey := false, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr, expectKey = true, false
			out = append(out, c)
		case c == '{' || c == ',':
			expectKey = true
			out = append(out, c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			out = append(out, c)
		case expectKey && (c == '-' || (c >= '0' && c <= '9')):
			j := i + 1
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			k := j
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
				k++
			}
			if k < len(b) && b[k] == ':' {
				out = append(out, '"')
				out = append(out, b[i:j]...)
				out = append(out, '"')
			} else {
				out = append(out, b[i:j]...)
			}
			i = j - 1
			expectKey = false
		default:
			expectKey = false
			out = append(out, c)
		}
	}
	return out
}

// AppendDelayOffsetFile writes delayOffset.json: level -> offset with bare
// integer keys, as fastjson does.
func AppendDelayOffsetFile(dst []byte, v TopicVersion, table map[int32]int64) []byte {
	levels := make([]int, 0, len(table))
	for l := range table {
		levels = append(levels, int(l))
	}
	sort.Ints(levels)
	dst = append(dst, `{"dataVersion":`...)
	dst = AppendTopicVersion(dst, v)
	dst = append(dst, `,"offsetTable":{`...)
	for i, l := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(l), 10)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, table[int32(l)], 10)
	}
	return append(dst, "}}"...)
}

// DecodeDelayOffsetFile parses delayOffset.json.
func DecodeDelayOffsetFile(b []byte) (map[int32]int64, error) {
	var f struct {
		OffsetTable map[int32]int64 `json:"offsetTable"`
	}
	if err := fastjson.Unmarshal(QuoteBareKeys(b), &f); err != nil {
		return nil, fmt.Errorf("body: delay offsets: %w", err)
	}
	return f.OffsetTable, nil
}
