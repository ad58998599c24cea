package broker

import (
	"sort"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

func (a *adminProcessor) registerGroupAdmin(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqUpdateAndCreateSubscriptiongroup, pool, a.updateGroup)
	r.Handle(codec.ReqGetAllSubscriptiongroupConfig, pool, a.getAllGroups)
	r.Handle(codec.ReqGetSubscriptiongroupConfig, pool, a.getGroup)
	r.Handle(codec.ReqDeleteSubscriptiongroup, pool, a.deleteGroup)
	r.Handle(codec.ReqGetConsumerConnectionList, pool, a.consumerConnections)
	r.Handle(codec.ReqGetProducerConnectionList, pool, a.producerConnections)
	r.Handle(codec.ReqQueryTopicConsumeByWho, pool, a.topicConsumedByWho)
	r.Handle(codec.ReqQueryTopicsByConsumer, pool, a.topicsByConsumer)
}

func (a *adminProcessor) updateGroup(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	sg, err := body.DecodeSubscriptionGroupConfig(req.Body)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	if remark := validateTopic(sg.GroupName); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), "the group name is illegal: "+sg.GroupName)
	}
	if err := a.b.groups.put(sg); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (a *adminProcessor) getAllGroups(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = a.b.groups.encode()
	a.b.groups.mu.RLock()
	n := len(a.b.groups.groups)
	a.b.groups.mu.RUnlock()
	resp.SetInt("totalGroupNum", int64(n))
	return resp
}

func (a *adminProcessor) getGroup(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	group := req.Value("group")
	sg, ok := a.b.groups.get(group)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespSubscriptionGroupNotExist), "No group in this broker. group: "+group)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendSubscriptionGroupConfig(nil, &sg)
	return resp
}

func (a *adminProcessor) deleteGroup(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	group := req.Value("groupName")
	if _, err := a.b.groups.delete(group); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	if strings.EqualFold(req.Value("cleanOffset"), "true") {
		a.b.offsets.removeGroup(group)
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (a *adminProcessor) consumerConnections(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	group := req.Value("consumerGroup")
	cc, ok := a.b.clients.consumerConnection(group)
	if !ok || len(cc.Connections) == 0 {
		return codec.NewResponse(req, int32(codec.RespConsumerNotOnline), "the consumer group["+group+"] not online")
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendConsumerConnection(nil, &cc)
	return resp
}

func (a *adminProcessor) producerConnections(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	group := req.Value("producerGroup")
	cs := a.b.clients.producerConnection(group)
	if len(cs) == 0 {
		return codec.NewResponse(req, int32(codec.RespSystemError), "the producer group["+group+"] not exist")
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendProducerConnection(nil, cs)
	return resp
}

// topicConsumedByWho lists groups online on topic plus groups with stored
// offsets on it.
func (a *adminProcessor) topicConsumedByWho(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	topic := req.Value("topic")
	set := map[string]bool{}
	for _, g := range a.b.clients.groupsSubscribedTo(topic) {
		set[g] = true
	}
	for _, g := range a.b.offsets.groupsOf(topic) {
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
func (a *adminProcessor) topicsByConsumer(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	topics := a.b.offsets.topicsOf(req.Value("group"))
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	b := append([]byte(nil), `{"brokerAddr":`...)
	b = codec.AppendJSONString(b, a.b.cfg.BrokerAddr())
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
