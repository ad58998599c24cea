package body

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// SubscriptionGroupConfig is one consumer group's broker-side settings
// (subscriptionGroup.json, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP body).
type SubscriptionGroupConfig struct {
	GroupName                      string            `json:"groupName"`
	ConsumeEnable                  bool              `json:"consumeEnable"`
	ConsumeFromMinEnable           bool              `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool              `json:"consumeBroadcastEnable"`
	ConsumeMessageOrderly          bool              `json:"consumeMessageOrderly"`
	RetryQueueNums                 int32             `json:"retryQueueNums"`
	RetryMaxTimes                  int32             `json:"retryMaxTimes"`
	GroupRetryPolicy               json.RawMessage   `json:"groupRetryPolicy,omitempty"`
	BrokerID                       int64             `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64             `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool              `json:"notifyConsumerIdsChangedEnable"`
	GroupSysFlag                   int32             `json:"groupSysFlag"`
	ConsumeTimeoutMinute           int32             `json:"consumeTimeoutMinute"`
	SubscriptionDataSet            json.RawMessage   `json:"subscriptionDataSet,omitempty"`
	Attributes                     map[string]string `json:"attributes"`
}

// NewSubscriptionGroupConfig returns Java's defaults for group.
func NewSubscriptionGroupConfig(group string) SubscriptionGroupConfig {
	return SubscriptionGroupConfig{
		GroupName:                      group,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		RetryQueueNums:                 1,
		RetryMaxTimes:                  16,
		WhichBrokerWhenConsumeSlowly:   1,
		NotifyConsumerIdsChangedEnable: true,
		ConsumeTimeoutMinute:           15,
	}
}

// DecodeSubscriptionGroupConfig parses a group config, starting from Java's
// defaults for keys that are absent.
func DecodeSubscriptionGroupConfig(b []byte) (SubscriptionGroupConfig, error) {
	g := NewSubscriptionGroupConfig("")
	if err := fastjson.Unmarshal(b, &g); err != nil {
		return g, fmt.Errorf("body: subscription group: %w", err)
	}
	return g, nil
}

// AppendSubscriptionGroupConfig writes g as fastjson does.
func AppendSubscriptionGroupConfig(dst []byte, g *SubscriptionGroupConfig) []byte {
	dst = append(dst, `{"attributes":{`...)
	first := true
	for k, v := range g.Attributes {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, v)
	}
	dst = append(dst, `},"brokerId":`...)
	dst = strconv.AppendInt(dst, g.BrokerID, 10)
	dst = append(dst, `,"consumeBroadcastEnable":`...)
	dst = strconv.AppendBool(dst, g.ConsumeBroadcastEnable)
	dst = append(dst, `,"consumeEnable":`...)
	dst = strconv.AppendBool(dst, g.ConsumeEnable)
	dst = append(dst, `,"consumeFromMinEnable":`...)
	dst = strconv.AppendBool(dst, g.ConsumeFromMinEnable)
	dst = append(dst, `,"consumeMessageOrderly":`...)
	dst = strconv.AppendBool(dst, g.ConsumeMessageOrderly)
	dst = append(dst, `,"consumeTimeoutMinute":`...)
	dst = strconv.AppendInt(dst, int64(g.ConsumeTimeoutMinute), 10)
	dst = append(dst, `,"groupName":`...)
	dst = appendString(dst, g.GroupName)
	dst = append(dst, `,"groupRetryPolicy":`...)
	if len(g.GroupRetryPolicy) > 0 {
		dst = append(dst, g.GroupRetryPolicy...)
	} else {
		dst = append(dst, `{"type":"CUSTOMIZED"}`...)
	}
	dst = append(dst, `,"groupSysFlag":`...)
	dst = strconv.AppendInt(dst, int64(g.GroupSysFlag), 10)
	dst = append(dst, `,"notifyConsumerIdsChangedEnable":`...)
	dst = strconv.AppendBool(dst, g.NotifyConsumerIdsChangedEnable)
	dst = append(dst, `,"retryMaxTimes":`...)
	dst = strconv.AppendInt(dst, int64(g.RetryMaxTimes), 10)
	dst = append(dst, `,"retryQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(g.RetryQueueNums), 10)
	if len(g.SubscriptionDataSet) > 0 && string(g.SubscriptionDataSet) != "null" {
		dst = append(dst, `,"subscriptionDataSet":`...)
		dst = append(dst, g.SubscriptionDataSet...)
	}
	dst = append(dst, `,"whichBrokerWhenConsumeSlowly":`...)
	dst = strconv.AppendInt(dst, g.WhichBrokerWhenConsumeSlowly, 10)
	return append(dst, '}')
}

// SubscriptionGroupFile is subscriptionGroup.json and the
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG body.
type SubscriptionGroupFile struct {
	DataVersion            TopicVersion                       `json:"dataVersion"`
	SubscriptionGroupTable map[string]SubscriptionGroupConfig `json:"subscriptionGroupTable"`
	ForbiddenTable         map[string]map[string]int32        `json:"forbiddenTable"`
}

// AppendSubscriptionGroupFile writes the file/body; forbiddenTable is always
// present (the dashboard needs it non-null).
func AppendSubscriptionGroupFile(dst []byte, v TopicVersion, groups []SubscriptionGroupConfig) []byte {
	dst = append(dst, `{"dataVersion":`...)
	dst = AppendTopicVersion(dst, v)
	dst = append(dst, `,"forbiddenTable":{},"subscriptionGroupTable":{`...)
	for i := range groups {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, groups[i].GroupName)
		dst = append(dst, ':')
		dst = AppendSubscriptionGroupConfig(dst, &groups[i])
	}
	return append(dst, "}}"...)
}

// DecodeSubscriptionGroupFile parses subscriptionGroup.json.
func DecodeSubscriptionGroupFile(b []byte) (SubscriptionGroupFile, error) {
	var f SubscriptionGroupFile
	if err := fastjson.Unmarshal(QuoteBareKeys(b), &f); err != nil {
		return f, fmt.Errorf("body: subscription groups: %w", err)
	}
	for name, g := range f.SubscriptionGroupTable {
		if g.GroupName == "" {
			g.GroupName = name
			f.SubscriptionGroupTable[name] = g
		}
	}
	return f, nil
}
