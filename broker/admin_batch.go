package broker

import (
	"encoding/json"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// batchAdmin serves the list forms of topic and group updates, the
// subscription query and CLONE_GROUP_OFFSET.
type batchAdmin struct {
	topics  *topicTable
	groups  *groupTable
	offsets *offsetTable
	clients *clientManager
}

func (a *batchAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqUpdateAndCreateTopicList, pool, a.updateTopicList)
	r.Handle(codec.ReqUpdateAndCreateSubscriptiongroupList, pool, a.updateGroupList)
	r.Handle(codec.ReqQuerySubscriptionByConsumer, pool, a.subscriptionByConsumer)
	r.Handle(codec.ReqCloneGroupOffset, pool, a.cloneGroupOffset)
}

// updateTopicList serves UPDATE_AND_CREATE_TOPIC_LIST:
// body {"topicConfigList":[TopicConfig…]}.
func (a *batchAdmin) updateTopicList(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var b struct {
		TopicConfigList []body.TopicConfig `json:"topicConfigList"`
	}
	if err := fastjson.Unmarshal(req.Body, &b); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.BodyTopicList(err.Error()))
	}
	for _, tc := range b.TopicConfigList {
		if remark := validateTopic(tc.TopicName); remark != "" {
			return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
		}
		if notAllowedSend[tc.TopicName] || tc.TopicName == TopicAutoCreate {
			return codec.NewResponse(req, int32(codec.RespInvalidParameter), remarks.TopicConflictsWithSystem(tc.TopicName))
		}
		if remark := a.topics.queueNumsRemark(&tc); remark != "" {
			return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
		}
	}
	for _, tc := range b.TopicConfigList {
		if tc.TopicFilterType == "" {
			tc.TopicFilterType = body.SingleTag
		}
		if err := a.topics.put(tc); err != nil {
			return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
		}
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// updateGroupList serves UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST:
// body {"groupConfigList":[SubscriptionGroupConfig…]}.
func (a *batchAdmin) updateGroupList(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var b struct {
		GroupConfigList []json.RawMessage `json:"groupConfigList"`
	}
	if err := fastjson.Unmarshal(req.Body, &b); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.BodyGroupList(err.Error()))
	}
	// Like Java 5.4.0: every name is checked before any group is stored.
	list := make([]body.SubscriptionGroupConfig, 0, len(b.GroupConfigList))
	for _, raw := range b.GroupConfigList {
		sg, err := body.DecodeSubscriptionGroupConfig(raw)
		if err != nil {
			return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
		}
		if remark := validateGroup(sg.GroupName); remark != "" {
			return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
		}
		list = append(list, sg)
	}
	for _, sg := range list {
		if err := a.groups.put(sg); err != nil {
			return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
		}
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// subscriptionByConsumer serves QUERY_SUBSCRIPTION_BY_CONSUMER:
// {"group":…,"subscriptionData":{…},"topic":…}.
func (a *batchAdmin) subscriptionByConsumer(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QuerySubscriptionByConsumerRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group, topic := h.Group, h.Topic
	sub, found, _ := a.clients.subscription(group, topic)
	b := append([]byte(nil), `{"group":`...)
	b = codec.AppendJSONString(b, group)
	if found {
		b = append(b, `,"subscriptionData":`...)
		b = body.AppendSubscriptionData(b, &sub)
	}
	b = append(b, `,"topic":`...)
	b = codec.AppendJSONString(b, topic)
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = append(b, '}')
	return resp
}

// cloneGroupOffset serves CLONE_GROUP_OFFSET: copy srcGroup's offsets on
// topic (or on every topic it has, when topic is empty) to destGroup.
func (a *batchAdmin) cloneGroupOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.CloneGroupOffsetRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	src, dst, topic := h.SrcGroup, h.DestGroup, h.Topic
	topics := []string{topic}
	if topic == "" {
		topics = a.offsets.topicsOf(src)
	}
	for _, t := range topics {
		if strings.HasPrefix(t, RetryGroupPrefix) {
			continue
		}
		tc, ok := a.topics.get(t)
		if !ok {
			continue
		}
		for q := int32(0); q < max(tc.ReadQueueNums, tc.WriteQueueNums); q++ {
			if off, ok := a.offsets.query(src, t, q); ok {
				a.offsets.commit(dst, t, q, off)
			}
		}
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}
