package broker

import (
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// adminProcessor serves the admin requests. It reaches into the broker's
// tables, so it holds the broker itself.
type adminProcessor struct {
	b *Broker
}

func (a *adminProcessor) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqUpdateAndCreateTopic, pool, a.updateAndCreateTopic)
	r.Handle(codec.ReqDeleteTopicInBroker, pool, a.deleteTopic)
	r.Handle(codec.ReqGetAllTopicConfig, pool, a.getAllTopicConfig)
	r.Handle(codec.ReqGetTopicConfig, pool, a.getTopicConfig)
	a.registerGroupAdmin(r, pool)
	a.registerStatsAdmin(r, pool)
	a.registerClientAdmin(r, pool)
	a.registerSyncAdmin(r, pool)
	a.registerBatchAdmin(r, pool)
	a.registerConfigAdmin(r, pool)
	a.registerConsumeAdmin(r, pool)
}

func (a *adminProcessor) updateAndCreateTopic(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.CreateTopicRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic := h.Topic
	if remark := validateTopic(topic); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
	}
	if notAllowedSend[topic] || topic == TopicAutoCreate {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), "The topic["+topic+"] is conflict with system topic.")
	}
	tc := body.NewTopicConfig(topic)
	tc.ReadQueueNums = h.ReadQueueNums
	tc.WriteQueueNums = h.WriteQueueNums
	if req.Value("perm") != "" {
		tc.Perm = h.Perm
	}
	if v, ok := req.Get("topicFilterType"); ok {
		tc.TopicFilterType = v
	}
	tc.TopicSysFlag = h.TopicSysFlag
	tc.Order = h.Order
	if attrs, ok := req.Get("attributes"); ok {
		tc.Attributes = parseAttributes(attrs)
	}
	if remark := a.b.topics.queueNumsRemark(&tc); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
	}
	if err := a.b.topics.put(tc); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// parseAttributes reads "+k=v,+k2=v2" (5.x attribute syntax).
func parseAttributes(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimPrefix(strings.TrimSpace(kv), "+")
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

func (a *adminProcessor) deleteTopic(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	topic := req.Value("topic")
	if remark := validateTopic(topic); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
	}
	if a.b.topics.isSystem(topic) {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), "The topic["+topic+"] is conflict with system topic.")
	}
	if _, err := a.b.topics.delete(topic); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	a.b.offsets.removeTopic(topic)
	if err := a.b.store.DeleteTopic(topic); err != nil {
		a.b.log.Warn("delete topic data", "topic", topic, "err", err)
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (a *adminProcessor) getAllTopicConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	v, topics := a.b.topics.snapshot()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendTopicConfigFile(nil, v, topics)
	resp.SetInt("totalTopicNum", int64(len(topics)))
	return resp
}

// getTopicConfig answers GET_TOPIC_CONFIG with TopicConfigAndQueueMapping
// (no static-topic mapping).
func (a *adminProcessor) getTopicConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	topic := req.Value("topic")
	tc, ok := a.b.topics.get(topic)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespTopicNotExist), "No topic in this broker. topic: "+topic)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendTopicConfig(nil, &tc)
	return resp
}

func (a *adminProcessor) registerSyncAdmin(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqGetAllConsumerOffset, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = a.b.offsets.encode()
		return resp
	})
	r.Handle(codec.ReqGetAllDelayOffset, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = a.b.delay.encode()
		return resp
	})
	r.Handle(codec.ReqGetSystemTopicListFromBroker, pool, a.systemTopics)
}

// systemTopics answers GET_SYSTEM_TOPIC_LIST_FROM_BROKER with a TopicList.
func (a *adminProcessor) systemTopics(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	_, topics := a.b.topics.snapshot()
	b := append([]byte(nil), `{"topicList":[`...)
	n := 0
	for _, tc := range topics {
		if !a.b.topics.isSystem(tc.TopicName) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = codec.AppendJSONString(b, tc.TopicName)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = append(b, "]}"...)
	return resp
}
