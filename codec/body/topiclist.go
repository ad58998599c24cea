package body

import (
	"fmt"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// TopicList is the body of the topic-list queries (206, 224, 304, 311–313):
// {"brokerAddr":"…","topicList":[…]}, brokerAddr omitted when empty.
type TopicList struct {
	Topics     []string
	BrokerAddr string
}

// AppendTopicList writes l.
func AppendTopicList(dst []byte, l *TopicList) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.OptStringField("brokerAddr", l.BrokerAddr)
	w.StringsField("topicList", l.Topics)
	w.ObjectEnd()
	return w.Buf
}

// DecodeTopicList reads a TopicList.
func DecodeTopicList(b []byte) (TopicList, error) {
	var l TopicList
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "brokerAddr":
			l.BrokerAddr = rd.String()
		case "topicList":
			l.Topics = readStrings(rd)
		default:
			rd.Skip()
		}
	}
	if err := rd.End(); err != nil {
		return l, fmt.Errorf("body: topic list: %w", err)
	}
	return l, nil
}
