package body

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Permission bits of a topic or broker (Java PermName).
const (
	PermPriority = 1 << 3
	PermRead     = 1 << 2
	PermWrite    = 1 << 1
	PermInherit  = 1 << 0
)

// TopicConfig is one topic's configuration as the broker stores it in
// topics.json and registers it with name servers.
type TopicConfig struct {
	TopicName       string            `json:"topicName"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
	Perm            int32             `json:"perm"`
	TopicFilterType string            `json:"topicFilterType"` // SINGLE_TAG or MULTI_TAG
	TopicSysFlag    int32             `json:"topicSysFlag"`
	Order           bool              `json:"order"`
	Attributes      map[string]string `json:"attributes"`
}

// Java's TopicConfig constructor defaults.
const (
	DefaultReadQueueNums  = 16
	DefaultWriteQueueNums = 16
	DefaultPerm           = PermRead | PermWrite
	SingleTag             = "SINGLE_TAG"
	MultiTag              = "MULTI_TAG"
)

// NewTopicConfig returns a config with Java's constructor defaults.
func NewTopicConfig(topic string) TopicConfig {
	return TopicConfig{
		TopicName:       topic,
		ReadQueueNums:   DefaultReadQueueNums,
		WriteQueueNums:  DefaultWriteQueueNums,
		Perm:            DefaultPerm,
		TopicFilterType: SingleTag,
	}
}

// AppendTopicConfig writes t as fastjson does (5.x: with attributes).
func AppendTopicConfig(dst []byte, t *TopicConfig) []byte {
	dst = append(dst, `{"attributes":{`...)
	keys := make([]string, 0, len(t.Attributes))
	for k := range t.Attributes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, t.Attributes[k])
	}
	dst = append(dst, `},"order":`...)
	dst = strconv.AppendBool(dst, t.Order)
	dst = append(dst, `,"perm":`...)
	dst = strconv.AppendInt(dst, int64(t.Perm), 10)
	dst = append(dst, `,"readQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(t.ReadQueueNums), 10)
	dst = append(dst, `,"topicFilterType":`...)
	filter := t.TopicFilterType
	if filter == "" {
		filter = SingleTag
	}
	dst = appendString(dst, filter)
	dst = append(dst, `,"topicName":`...)
	dst = appendString(dst, t.TopicName)
	dst = append(dst, `,"topicSysFlag":`...)
	dst = strconv.AppendInt(dst, int64(t.TopicSysFlag), 10)
	dst = append(dst, `,"writeQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(t.WriteQueueNums), 10)
	return append(dst, '}')
}

// AppendTopicConfigTable writes {"<topic>":{TopicConfig},…} in the order given.
func AppendTopicConfigTable(dst []byte, topics []TopicConfig) []byte {
	dst = append(dst, '{')
	for i := range topics {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, topics[i].TopicName)
		dst = append(dst, ':')
		dst = AppendTopicConfig(dst, &topics[i])
	}
	return append(dst, '}')
}

// TopicVersion is the DataVersion as the broker's config files carry it.
type TopicVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
}

// AppendTopicVersion writes {"counter":N,"stateVersion":S,"timestamp":T}.
func AppendTopicVersion(dst []byte, v TopicVersion) []byte {
	dst = append(dst, `{"counter":`...)
	dst = strconv.AppendInt(dst, v.Counter, 10)
	dst = append(dst, `,"stateVersion":`...)
	dst = strconv.AppendInt(dst, v.StateVersion, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, v.Timestamp, 10)
	return append(dst, '}')
}

// TopicConfigFile is topics.json (and the GET_ALL_TOPIC_CONFIG body):
// {"dataVersion":{…},"topicConfigTable":{…}}.
type TopicConfigFile struct {
	DataVersion      TopicVersion           `json:"dataVersion"`
	TopicConfigTable map[string]TopicConfig `json:"topicConfigTable"`
}

// AppendTopicConfigFile writes the 5.x TopicConfigAndMappingSerializeWrapper
// shape with empty static-topic mapping sections.
func AppendTopicConfigFile(dst []byte, v TopicVersion, topics []TopicConfig) []byte {
	dst = append(dst, `{"dataVersion":`...)
	dst = AppendTopicVersion(dst, v)
	dst = append(dst, `,"mappingDataVersion":`...)
	dst = AppendTopicVersion(dst, TopicVersion{Timestamp: v.Timestamp})
	dst = append(dst, `,"topicConfigTable":`...)
	dst = AppendTopicConfigTable(dst, topics)
	return append(dst, `,"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}`...)
}

// DecodeTopicConfigFile parses topics.json as Java or we wrote it.
func DecodeTopicConfigFile(b []byte) (TopicConfigFile, error) {
	var f TopicConfigFile
	if err := fastjson.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("body: topic config: %w", err)
	}
	for name, t := range f.TopicConfigTable {
		if t.TopicName == "" {
			t.TopicName = name
			f.TopicConfigTable[name] = t
		}
	}
	return f, nil
}
