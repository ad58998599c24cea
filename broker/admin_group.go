package broker

import (
	"sort"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// groupAdmin serves subscription groups, connection lists and who
// consumes what.
type groupAdmin struct {
	groups     *groupTable
	offsets    *offsetTable
	clients    *clientManager
	brokerAddr func() string // the advertised address (Broker.BrokerAddr)
	live       *liveConfig   // enableSplitMetadata, splitMetadataSize
}

func (a *groupAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqUpdateAndCreateSubscriptiongroup, pool, a.updateGroup)
	r.Handle(codec.ReqGetAllSubscriptiongroupConfig, pool, a.getAllGroups)
	r.Handle(codec.ReqGetSubscriptiongroupConfig, pool, a.getGroup)
	r.Handle(codec.ReqDeleteSubscriptiongroup, pool, a.deleteGroup)
	r.Handle(codec.ReqGetConsumerConnectionList, pool, a.consumerConnections)
	r.Handle(codec.ReqGetProducerConnectionList, pool, a.producerConnections)
	r.Handle(codec.ReqGetAllProducerInfo, pool, a.allProducers)
	r.Handle(codec.ReqQueryTopicConsumeByWho, pool, a.topicConsumedByWho)
	r.Handle(codec.ReqQueryTopicsByConsumer, pool, a.topicsByConsumer)
}

func (a *groupAdmin) updateGroup(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	sg, err := body.DecodeSubscriptionGroupConfig(req.Body)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	// Like Java 5.4.0 (TopicValidator.validateGroup).
	if remark := validateGroup(sg.GroupName); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
	}
	if err := a.groups.put(sg); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// getAllGroups answers GET_ALL_SUBSCRIPTIONGROUP_CONFIG: the whole table,
// or the page the request names (5.4.0, admin_paged.go); totalGroupNum
// either way.
func (a *groupAdmin) getAllGroups(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetAllSubscriptionGroupRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	v, groups := a.groups.snapshot()
	total := len(groups)
	page := newMetadataPage(h.HasGroupSeq(), h.GroupSeq, h.HasMaxGroupNum(), h.MaxGroupNum, h.DataVersion)
	groups = pageOf(page, groups, v, a.live)
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendSubscriptionGroupFile(nil, v, groups)
	resp.SetInt("totalGroupNum", int64(total))
	return resp
}

func (a *groupAdmin) getGroup(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetSubscriptionGroupConfigRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group := h.Group
	sg, ok := a.groups.get(group)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespSubscriptionGroupNotExist), remarks.NoGroupInBroker(group))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendSubscriptionGroupConfig(nil, &sg)
	return resp
}

func (a *groupAdmin) deleteGroup(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.DeleteSubscriptionGroupRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group := h.GroupName
	if _, err := a.groups.delete(group); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	if h.CleanOffset {
		a.offsets.removeGroup(group)
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (a *groupAdmin) consumerConnections(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetConsumerConnectionListRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group := h.ConsumerGroup
	cc, ok := a.clients.consumerConnection(group)
	if !ok || len(cc.Connections) == 0 {
		return codec.NewResponse(req, int32(codec.RespConsumerNotOnline), remarks.ConsumerGroupNotOnline(group))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendConsumerConnection(nil, &cc)
	return resp
}

func (a *groupAdmin) producerConnections(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetProducerConnectionListRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group := h.ProducerGroup
	cs := a.clients.producerConnection(group)
	if len(cs) == 0 {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProducerGroupNotExist(group))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendProducerConnection(nil, cs)
	return resp
}

// allProducers answers GET_ALL_PRODUCER_INFO (mqadmin producer) with every
// producer group's connections.
func (a *groupAdmin) allProducers(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendProducerTableInfo(nil, a.clients.producerTable())
	return resp
}

// topicConsumedByWho lists groups online on topic plus groups with stored
// offsets on it.
func (a *groupAdmin) topicConsumedByWho(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryTopicConsumeByWhoRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic := h.Topic
	set := map[string]bool{}
	for _, g := range a.clients.groupsSubscribedTo(topic) {
		set[g] = true
	}
	for _, g := range a.offsets.groupsOf(topic) {
		set[g] = true
	}
	groups := make([]string, 0, len(set))
	for g := range set {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendGroupList(nil, groups)
	return resp
}

// topicsByConsumer answers QUERY_TOPICS_BY_CONSUMER with a TopicList.
func (a *groupAdmin) topicsByConsumer(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryTopicsByConsumerRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topics := a.offsets.topicsOf(h.Group)
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	b := append([]byte(nil), `{"brokerAddr":`...)
	b = codec.AppendJSONString(b, a.brokerAddr())
	b = append(b, `,"topicList":[`...)
	for i, t := range topics {
		if i > 0 {
			b = append(b, ',')
		}
		b = codec.AppendJSONString(b, t)
	}
	resp.Body = append(b, "]}"...)
	return resp
}
