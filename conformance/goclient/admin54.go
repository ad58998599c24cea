package goclient

import (
	"context"
	"encoding/json"
	"fmt"

	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/capture"
)

// Request and response codes of admin54 (Apache RocketMQ RequestCode /
// ResponseCode).
const (
	codeUpdateAndCreateTopic = 17
	codeGetAllTopicConfig    = 21
	codeUpdateAndCreateGroup = 200
	respSuccess              = 0
	respInvalidParameter     = 29
)

// admin54: the admin answers that changed between 5.3.3 and 5.4.0, each
// checked against the release t.BrokerRelease names.
func admin54(ctx context.Context, t Target) error {
	c, err := dial(ctx, t.Broker)
	if err != nil {
		return err
	}
	defer c.Close()
	v54 := t.BrokerRelease != "5.3.3"
	opaque := int32(500)
	call := func(code int32, ext map[string]string, body []byte) (*capture.Frame, error) {
		opaque++
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(capture.EncodeRequest(code, opaque, 0, ext, body)); err != nil {
			return nil, fmt.Errorf("write code %d: %w", code, err)
		}
		raw, err := capture.ReadFrame(c, 64<<20)
		if err != nil {
			return nil, fmt.Errorf("read the answer to code %d: %w", code, err)
		}
		f, err := capture.ParseFrame(raw)
		if err != nil {
			return nil, fmt.Errorf("decode the answer to code %d: %w", code, err)
		}
		if f.Opaque != opaque {
			return nil, fmt.Errorf("code %d: answer opaque %d, want %d", code, f.Opaque, opaque)
		}
		return f, nil
	}
	expect := func(what string, f *capture.Frame, code int32, remark string) error {
		if f.Code != code || (code != respSuccess && f.Remark != remark) {
			return fmt.Errorf("%s (broker %s): code %d remark %q, want code %d remark %q", what, t.BrokerRelease, f.Code, f.Remark, code, remark)
		}
		return nil
	}

	// Group names: 5.3.3 took any; 5.4.0 validates them.
	spaced := t.name("bad") + " group"
	long := t.name("long")
	long += strings.Repeat("g", 121-len(long))
	for _, g := range []struct{ name, remark string }{
		{spaced, "The specified group: " + spaced + ", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{long, "The specified group: " + long + ", is longer than group max length: 120"},
	} {
		b, _ := json.Marshal(map[string]any{"groupName": g.name})
		f, err := call(codeUpdateAndCreateGroup, nil, b)
		if err != nil {
			return err
		}
		want := int32(respSuccess)
		if v54 {
			want = respInvalidParameter
		}
		if err := expect("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP "+strconv.Itoa(len(g.name))+" chars", f, want, g.remark); err != nil {
			return err
		}
	}

	// Topic names: the remark names the topic from 5.4.0 on; %RETRY% and
	// %DLQ% topics may be up to 255 long.
	topicExt := func(topic string) map[string]string {
		return map[string]string{"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "1", "writeQueueNums": "1",
			"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}
	}
	badTopic := t.name("bad") + " topic"
	f, err := call(codeUpdateAndCreateTopic, topicExt(badTopic), nil)
	if err != nil {
		return err
	}
	remark := "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
	if v54 {
		remark = "The specified topic: " + badTopic + ", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
	}
	if err := expect("UPDATE_AND_CREATE_TOPIC with a space", f, respInvalidParameter, remark); err != nil {
		return err
	}
	retry := "%RETRY%" + t.name("r")
	retry += strings.Repeat("r", 200-len(retry))
	if f, err = call(codeUpdateAndCreateTopic, topicExt(retry), nil); err != nil {
		return err
	}
	want, remark := int32(respInvalidParameter), "The specified topic is longer than topic max length."
	if v54 {
		want = respSuccess
	}
	if err := expect("UPDATE_AND_CREATE_TOPIC of a 200-character %RETRY% topic", f, want, remark); err != nil {
		return err
	}

	// GET_ALL_TOPIC_CONFIG: whole without a header; paged from 5.4.0 on.
	whole, total, err := topicTable(call, nil)
	if err != nil {
		return err
	}
	if len(whole) < 3 {
		return fmt.Errorf("GET_ALL_TOPIC_CONFIG: %d topics, want at least 3", len(whole))
	}
	if v54 != (total >= 0) {
		return fmt.Errorf("GET_ALL_TOPIC_CONFIG (broker %s): totalTopicNum %d (-1: absent)", t.BrokerRelease, total)
	}
	if v54 && total != len(whole) {
		return fmt.Errorf("GET_ALL_TOPIC_CONFIG: totalTopicNum %d, table of %d", total, len(whole))
	}
	page, ptotal, err := topicTable(call, map[string]string{"topicSeq": "1", "maxTopicNum": "2", "dataVersion": ""})
	if err != nil {
		return err
	}
	if !v54 {
		if len(page) < len(whole) || ptotal >= 0 {
			return fmt.Errorf("GET_ALL_TOPIC_CONFIG topicSeq=1 maxTopicNum=2 (broker 5.3.3): %d topics, totalTopicNum %d; want the whole table (%d), none", len(page), ptotal, len(whole))
		}
		return nil
	}
	// compat: a blank dataVersion restarts at 0 in 5.4.0, so the page is
	// the first two names.
	if len(page) != 2 || ptotal < len(whole) || page[0] != whole[0] || page[1] != whole[1] {
		return fmt.Errorf("GET_ALL_TOPIC_CONFIG topicSeq=1 maxTopicNum=2 dataVersion=\"\": %v (totalTopicNum %d), want %v", page, ptotal, whole[:2])
	}
	return nil
}

// topicTable asks GET_ALL_TOPIC_CONFIG and returns the sorted topic names
// and totalTopicNum (-1 when absent).
func topicTable(call func(int32, map[string]string, []byte) (*capture.Frame, error), ext map[string]string) ([]string, int, error) {
	f, err := call(codeGetAllTopicConfig, ext, nil)
	if err != nil {
		return nil, 0, err
	}
	if f.Code != respSuccess {
		return nil, 0, fmt.Errorf("GET_ALL_TOPIC_CONFIG: code %d remark %q", f.Code, f.Remark)
	}
	var w struct {
		TopicConfigTable map[string]json.RawMessage `json:"topicConfigTable"`
	}
	if err := json.Unmarshal(f.Body, &w); err != nil {
		return nil, 0, fmt.Errorf("GET_ALL_TOPIC_CONFIG body: %w", err)
	}
	names := make([]string, 0, len(w.TopicConfigTable))
	for n := range w.TopicConfigTable {
		names = append(names, n)
	}
	sort.Strings(names)
	total := -1
	if v, ok := f.Ext["totalTopicNum"]; ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, 0, fmt.Errorf("totalTopicNum %q: %w", v, err)
		}
		total = n
	}
	return names, total, nil
}
