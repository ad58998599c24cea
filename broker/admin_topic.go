package broker

import (
	"log/slog"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// adminHandlers is one group of admin requests (admin_*.go). Each group
// is a small struct holding exactly what its handlers use; the broker
// builds them (Broker.adminHandlers) and registers every group on both
// route tables.
type adminHandlers interface {
	register(r *transport.Router, pool *transport.Pool)
}

// topicStore is what the topic admin needs from the store.
type topicStore interface {
	DeleteTopic(topic string) error
}

// topicAdmin serves topic creation, deletion and lookups.
type topicAdmin struct {
	topics  *topicTable
	offsets *offsetTable // a deleted topic's offsets go too
	store   topicStore
	live    *liveConfig // enableSplitMetadata, splitMetadataSize
	log     *slog.Logger
}

func (a *topicAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqUpdateAndCreateTopic, pool, a.updateAndCreateTopic)
	r.Handle(codec.ReqDeleteTopicInBroker, pool, a.deleteTopic)
	r.Handle(codec.ReqGetAllTopicConfig, pool, a.getAllTopicConfig)
	r.Handle(codec.ReqGetTopicConfig, pool, a.getTopicConfig)
}

func (a *topicAdmin) updateAndCreateTopic(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.CreateTopicRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic := h.Topic
	if remark := validateTopic(topic); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
	}
	if notAllowedSend[topic] || topic == TopicAutoCreate {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remarks.TopicConflictsWithSystem(topic))
	}
	tc := body.NewTopicConfig(topic)
	tc.ReadQueueNums = h.ReadQueueNums
	tc.WriteQueueNums = h.WriteQueueNums
	// perm is required: a missing one reads as 0, as every missing
	// required field does (Java fails on it with a NullPointerException;
	// every client sends it). The hand read kept the default 6 instead.
	tc.Perm = h.Perm
	if h.TopicFilterType != "" {
		tc.TopicFilterType = h.TopicFilterType
	}
	tc.TopicSysFlag = h.TopicSysFlag
	tc.Order = h.Order
	if h.Attributes != "" {
		tc.Attributes = parseAttributes(h.Attributes)
	}
	if remark := a.topics.queueNumsRemark(&tc); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
	}
	if err := a.topics.put(tc); err != nil {
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

func (a *topicAdmin) deleteTopic(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.DeleteTopicRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic := h.Topic
	if remark := validateTopic(topic); remark != "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remark)
	}
	if a.topics.isSystem(topic) {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remarks.TopicConflictsWithSystem(topic))
	}
	if _, err := a.topics.delete(topic); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	a.offsets.removeTopic(topic)
	if err := a.store.DeleteTopic(topic); err != nil {
		a.log.Warn("delete topic data", "topic", topic, "err", err)
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// getAllTopicConfig answers GET_ALL_TOPIC_CONFIG: the whole table, or the
// page the request names (5.4.0, admin_paged.go); totalTopicNum either way.
func (a *topicAdmin) getAllTopicConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetAllTopicConfigRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	v, topics := a.topics.snapshot()
	total := len(topics)
	page := newMetadataPage(h.HasTopicSeq(), h.TopicSeq, h.HasMaxTopicNum(), h.MaxTopicNum, h.DataVersion)
	topics = pageOf(page, topics, v, a.live)
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendTopicConfigFile(nil, v, topics)
	resp.SetInt("totalTopicNum", int64(total))
	return resp
}

// getTopicConfig answers GET_TOPIC_CONFIG with TopicConfigAndQueueMapping
// (no static-topic mapping).
func (a *topicAdmin) getTopicConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetTopicConfigRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic := h.Topic
	tc, ok := a.topics.get(topic)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespTopicNotExist), remarks.NoTopicInBroker(topic))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendTopicConfig(nil, &tc)
	return resp
}
