package body

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// HeartbeatData is the body of HEART_BEAT (34): who a client is and which
// producer and consumer groups it runs.
type HeartbeatData struct {
	ClientID        string         `json:"clientID"`
	ProducerDataSet []ProducerData `json:"producerDataSet"`
	ConsumerDataSet []ConsumerData `json:"consumerDataSet"`
	// 5.x heartbeat V2: a fingerprint of the subscriptions, and whether this
	// heartbeat omitted them because the fingerprint did not change.
	HeartbeatFingerprint int32 `json:"heartbeatFingerprint"`
	WithoutSub           bool  `json:"withoutSub"`
}

// ProducerData names one producer group of a client.
type ProducerData struct {
	GroupName string `json:"groupName"`
}

// ConsumerData describes one consumer group of a client.
type ConsumerData struct {
	GroupName           string             `json:"groupName"`
	ConsumeType         string             `json:"consumeType"`      // CONSUME_ACTIVELY, CONSUME_PASSIVELY, CONSUME_POP
	MessageModel        string             `json:"messageModel"`     // CLUSTERING, BROADCASTING
	ConsumeFromWhere    string             `json:"consumeFromWhere"` // CONSUME_FROM_LAST_OFFSET …
	SubscriptionDataSet []SubscriptionData `json:"subscriptionDataSet"`
	UnitMode            bool               `json:"unitMode"`
}

// SubscriptionData is one topic subscription of a consumer group.
type SubscriptionData struct {
	Topic           string    `json:"topic"`
	SubString       string    `json:"subString"`
	TagsSet         []string  `json:"tagsSet"`
	CodeSet         Int32List `json:"codeSet"`
	SubVersion      int64     `json:"subVersion"`
	ExpressionType  string    `json:"expressionType"`
	ClassFilterMode bool      `json:"classFilterMode"`
}

// Int32List decodes a JSON array of integers given either as numbers (Java)
// or as decimal strings (the Go client writes codeSet entries as strings).
type Int32List []int32

// UnmarshalJSON implements json.Unmarshaler.
func (l *Int32List) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := fastjson.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make([]int32, 0, len(raw))
	for _, r := range raw {
		s := string(r)
		if len(s) >= 2 && s[0] == '"' {
			if err := fastjson.Unmarshal(r, &s); err != nil {
				return err
			}
		}
		if s == "null" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("body: code %q: %w", s, err)
		}
		out = append(out, int32(v)) // compat: Java ints; wrap like a Java cast
	}
	*l = out
	return nil
}

// DecodeHeartbeat parses a HEART_BEAT body.
func DecodeHeartbeat(b []byte) (HeartbeatData, error) {
	var h HeartbeatData
	if err := fastjson.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("body: heartbeat: %w", err)
	}
	return h, nil
}

// AppendSubscriptionData writes s as fastjson does (keys sorted).
func AppendSubscriptionData(dst []byte, s *SubscriptionData) []byte {
	dst = append(dst, `{"classFilterMode":`...)
	dst = strconv.AppendBool(dst, s.ClassFilterMode)
	dst = append(dst, `,"codeSet":[`...)
	for i, c := range s.CodeSet {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(c), 10)
	}
	dst = append(dst, ']')
	if s.ExpressionType != "" {
		dst = append(dst, `,"expressionType":`...)
		dst = appendString(dst, s.ExpressionType)
	}
	dst = append(dst, `,"subString":`...)
	dst = appendString(dst, s.SubString)
	dst = append(dst, `,"subVersion":`...)
	dst = strconv.AppendInt(dst, s.SubVersion, 10)
	dst = append(dst, `,"tagsSet":[`...)
	for i, t := range s.TagsSet {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, t)
	}
	dst = append(dst, `],"topic":`...)
	dst = appendString(dst, s.Topic)
	return append(dst, '}')
}
