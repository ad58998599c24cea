package storecompat

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Request and response codes used here (values from Apache RocketMQ's
// RequestCode / ResponseCode; kept independent of rocketgo's codec).
const (
	codePullMessage                      = 11
	codeQueryMessage                     = 12
	codeQueryConsumerOffset              = 14
	codeUpdateConsumerOffset             = 15
	codeGetAllTopicConfig                = 21
	codeGetMaxOffset                     = 30
	codeViewMessageByID                  = 33
	codeGetBrokerClusterInfo             = 106
	codeUpdateAndCreateSubscriptionGroup = 200
	codeGetAllSubscriptionGroupConfig    = 201

	codeSuccess              = 0
	codePullNotFound         = 19
	codePullRetryImmediately = 20
	codeQueryNotFound        = 22
)

// pull flags (PullSysFlag): the subscription travels in the request, so no
// heartbeat is needed first.
const flagSubscription = 1 << 2

func call(ctx context.Context, addr string, code int32, ext map[string]string, body []byte) (codeOut int32, remark string, outExt map[string]string, outBody []byte, err error) {
	f, err := harness.Call(ctx, addr, code, ext, body)
	if err != nil {
		return 0, "", nil, nil, err
	}
	return f.Code, f.Remark, f.Ext, f.Body, nil
}

// MaxOffset is GET_MAX_OFFSET of one queue.
func MaxOffset(ctx context.Context, broker, topic string, qid int) (int64, error) {
	code, remark, ext, _, err := call(ctx, broker, codeGetMaxOffset,
		map[string]string{"topic": topic, "queueId": strconv.Itoa(qid)}, nil)
	if err != nil {
		return 0, err
	}
	if code != codeSuccess {
		return 0, fmt.Errorf("storecompat: GET_MAX_OFFSET %s/%d: code %d %q", topic, qid, code, remark)
	}
	v, err := strconv.ParseInt(ext["offset"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("storecompat: GET_MAX_OFFSET %s/%d: offset %q", topic, qid, ext["offset"])
	}
	return v, nil
}

// WaitMaxOffset polls GET_MAX_OFFSET until it reaches want (dispatch is
// asynchronous on both brokers) or timeout passes; it returns the last value.
func WaitMaxOffset(ctx context.Context, broker, topic string, qid int, want int64, timeout time.Duration) (int64, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, err := MaxOffset(ctx, broker, topic, qid)
		if err == nil && got >= want {
			return got, nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return got, err
			}
			return got, fmt.Errorf("storecompat: %s/%d max offset %d, want %d after %v", topic, qid, got, want, timeout)
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// PullRaw reads queue (topic, qid) from offset 0 up to end with PULL_MESSAGE
// and subscription sub ("*" or "tagA || tagB": the broker filters by the
// consume queue's tag hash codes) and returns the raw records in order. A
// bounded number of pulls.
func PullRaw(ctx context.Context, broker, group, topic string, qid int, end int64, sub string) ([][]byte, error) {
	return PullRange(ctx, broker, group, topic, qid, 0, end, sub)
}

// PullRange is PullRaw from queue offset from instead of 0.
func PullRange(ctx context.Context, broker, group, topic string, qid int, from, end int64, sub string) ([][]byte, error) {
	var out [][]byte
	off := from
	for range 2000 {
		if off >= end {
			return out, nil
		}
		code, remark, ext, body, err := call(ctx, broker, codePullMessage, map[string]string{
			"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(qid),
			"queueOffset": strconv.FormatInt(off, 10), "maxMsgNums": "32",
			"sysFlag": strconv.Itoa(flagSubscription), "commitOffset": "0",
			"suspendTimeoutMillis": "0", "subscription": sub, "subVersion": "0",
			"expressionType": "TAG",
		}, nil)
		if err != nil {
			return out, fmt.Errorf("storecompat: pull %s/%d@%d: %w", topic, qid, off, err)
		}
		next, perr := strconv.ParseInt(ext["nextBeginOffset"], 10, 64)
		switch code {
		case codeSuccess:
			recs, err := SplitRecords(body)
			if err != nil {
				return out, fmt.Errorf("storecompat: pull %s/%d@%d: %w", topic, qid, off, err)
			}
			if len(recs) == 0 {
				return out, fmt.Errorf("storecompat: pull %s/%d@%d: FOUND with no records", topic, qid, off)
			}
			out = append(out, recs...)
		case codePullRetryImmediately:
		default:
			return out, fmt.Errorf("storecompat: pull %s/%d@%d (end %d): code %d %q next %q", topic, qid, off, end, code, remark, ext["nextBeginOffset"])
		}
		if perr != nil || next <= off {
			return out, fmt.Errorf("storecompat: pull %s/%d@%d: nextBeginOffset %q does not advance", topic, qid, off, ext["nextBeginOffset"])
		}
		off = next
	}
	return out, fmt.Errorf("storecompat: pull %s/%d: too many pulls", topic, qid)
}

// SplitRecords cuts a PULL/QUERY body into stored records (each starts
// with its int32 total size).
func SplitRecords(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return out, fmt.Errorf("storecompat: %d trailing bytes", len(b))
		}
		n := int(int32(binary.BigEndian.Uint32(b)))
		if n < 4 || n > len(b) {
			return out, fmt.Errorf("storecompat: record size %d with %d bytes left", n, len(b))
		}
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return out, nil
}

// QueryByKey is QUERY_MESSAGE (by KEYS, or by UNIQ_KEY when uniq) over all
// time; it returns the raw records, none on QUERY_NOT_FOUND.
func QueryByKey(ctx context.Context, broker, topic, key string, uniq bool) ([][]byte, error) {
	ext := map[string]string{
		"topic": topic, "key": key, "maxNum": "32",
		"beginTimestamp": "0", "endTimestamp": strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10),
	}
	if uniq {
		ext["_UNIQUE_KEY_QUERY"] = "true"
	}
	code, remark, _, body, err := call(ctx, broker, codeQueryMessage, ext, nil)
	if err != nil {
		return nil, err
	}
	switch code {
	case codeSuccess:
		return SplitRecords(body)
	case codeQueryNotFound:
		return nil, nil
	}
	return nil, fmt.Errorf("storecompat: QUERY_MESSAGE %s %q: code %d %q", topic, key, code, remark)
}

// ViewByOffset is VIEW_MESSAGE_BY_ID for a commit-log offset.
func ViewByOffset(ctx context.Context, broker string, phy int64) ([]byte, error) {
	code, remark, _, body, err := call(ctx, broker, codeViewMessageByID,
		map[string]string{"offset": strconv.FormatInt(phy, 10)}, nil)
	if err != nil {
		return nil, err
	}
	if code != codeSuccess {
		return nil, fmt.Errorf("storecompat: VIEW_MESSAGE_BY_ID %d: code %d %q", phy, code, remark)
	}
	return body, nil
}

// CommitOffset is UPDATE_CONSUMER_OFFSET.
func CommitOffset(ctx context.Context, broker, group, topic string, qid int, off int64) error {
	code, remark, _, _, err := call(ctx, broker, codeUpdateConsumerOffset, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(qid), "commitOffset": strconv.FormatInt(off, 10),
	}, nil)
	if err != nil {
		return err
	}
	if code != codeSuccess {
		return fmt.Errorf("storecompat: UPDATE_CONSUMER_OFFSET %s %s/%d: code %d %q", group, topic, qid, code, remark)
	}
	return nil
}

// QueryOffset is QUERY_CONSUMER_OFFSET; found is false on QUERY_NOT_FOUND.
func QueryOffset(ctx context.Context, broker, group, topic string, qid int) (off int64, found bool, err error) {
	code, remark, ext, _, err := call(ctx, broker, codeQueryConsumerOffset, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(qid),
	}, nil)
	if err != nil {
		return 0, false, err
	}
	switch code {
	case codeSuccess:
		v, err := strconv.ParseInt(ext["offset"], 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("storecompat: QUERY_CONSUMER_OFFSET: offset %q", ext["offset"])
		}
		return v, true, nil
	case codeQueryNotFound:
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("storecompat: QUERY_CONSUMER_OFFSET %s %s/%d: code %d %q", group, topic, qid, code, remark)
}

// GroupConfig is the part of SubscriptionGroupConfig the test sets and
// checks (JSON names are Java's field names).
type GroupConfig struct {
	GroupName              string `json:"groupName"`
	ConsumeEnable          bool   `json:"consumeEnable"`
	ConsumeFromMinEnable   bool   `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable bool   `json:"consumeBroadcastEnable"`
	RetryQueueNums         int    `json:"retryQueueNums"`
	RetryMaxTimes          int    `json:"retryMaxTimes"`
	BrokerID               int64  `json:"brokerId"`
	WhichBrokerWhenSlowly  int64  `json:"whichBrokerWhenConsumeSlowly"`
	NotifyIDsChanged       bool   `json:"notifyConsumerIdsChangedEnable"`
}

// CreateGroup is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP.
func CreateGroup(ctx context.Context, broker string, g GroupConfig) error {
	body, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("storecompat: encode group: %w", err)
	}
	code, remark, _, _, err := call(ctx, broker, codeUpdateAndCreateSubscriptionGroup, nil, body)
	if err != nil {
		return err
	}
	if code != codeSuccess {
		return fmt.Errorf("storecompat: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP %s: code %d %q", g.GroupName, code, remark)
	}
	return nil
}

// Groups is GET_ALL_SUBSCRIPTIONGROUP_CONFIG, by group name.
func Groups(ctx context.Context, broker string) (map[string]GroupConfig, error) {
	code, remark, _, body, err := call(ctx, broker, codeGetAllSubscriptionGroupConfig, nil, nil)
	if err != nil {
		return nil, err
	}
	if code != codeSuccess {
		return nil, fmt.Errorf("storecompat: GET_ALL_SUBSCRIPTIONGROUP_CONFIG: code %d %q", code, remark)
	}
	var w struct {
		SubscriptionGroupTable map[string]GroupConfig `json:"subscriptionGroupTable"`
	}
	if err := json.Unmarshal(LenientJSON(body), &w); err != nil {
		return nil, fmt.Errorf("storecompat: decode groups: %w", err)
	}
	return w.SubscriptionGroupTable, nil
}

// TopicConfig is the part of TopicConfig the test checks.
type TopicConfig struct {
	TopicName      string `json:"topicName"`
	ReadQueueNums  int    `json:"readQueueNums"`
	WriteQueueNums int    `json:"writeQueueNums"`
	Perm           int    `json:"perm"`
}

// Topics is GET_ALL_TOPIC_CONFIG, by topic name.
func Topics(ctx context.Context, broker string) (map[string]TopicConfig, error) {
	code, remark, _, body, err := call(ctx, broker, codeGetAllTopicConfig, nil, nil)
	if err != nil {
		return nil, err
	}
	if code != codeSuccess {
		return nil, fmt.Errorf("storecompat: GET_ALL_TOPIC_CONFIG: code %d %q", code, remark)
	}
	var w struct {
		TopicConfigTable map[string]TopicConfig `json:"topicConfigTable"`
	}
	if err := json.Unmarshal(LenientJSON(body), &w); err != nil {
		return nil, fmt.Errorf("storecompat: decode topics: %w", err)
	}
	return w.TopicConfigTable, nil
}

var bareIntKey = regexp.MustCompile(`([{,])(-?\d+):`)

// LenientJSON quotes fastjson's unquoted integer map keys ({0:12}) so
// encoding/json accepts the text.
func LenientJSON(b []byte) []byte { return bareIntKey.ReplaceAll(b, []byte(`$1"$2":`)) }
