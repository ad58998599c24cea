package broker

import (
	"log/slog"
	"strconv"
	"sync"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// clientProcessor serves HEART_BEAT, UNREGISTER_CLIENT,
// GET_CONSUMER_LIST_BY_GROUP and CHECK_CLIENT_CONFIG.
type clientProcessor struct {
	live    *liveConfig
	clients *clientManager
	groups  *groupTable
	topics  *topicTable
	filters *filter.Cache
	log     *slog.Logger
	// registerNow, when set, registers with the name servers and waits
	// (bounded): called after a heartbeat created its group's retry topic.
	registerNow func()

	fpMu         sync.Mutex
	fingerprints map[string]int32 // group -> last heartbeat fingerprint; guarded by fpMu
}

func (p *clientProcessor) heartbeat(c *transport.Conn, req *codec.Frame) *codec.Frame {
	hb, err := body.DecodeHeartbeat(req.Body)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	ch := clientChannel{conn: c, clientID: hb.ClientID, language: req.Language, version: req.Version}
	// Heartbeat V2 (5.x): a non-zero fingerprint; the subscriptions may be
	// left out while the fingerprint is unchanged.
	v2 := hb.HeartbeatFingerprint != 0
	subChange := !v2
	created := false // a retry topic the name servers must learn before the reply
	for i := range hb.ConsumerDataSet {
		cd := &hb.ConsumerDataSet[i]
		p.fpMu.Lock()
		if old, ok := p.fingerprints[cd.GroupName]; v2 && ok && old != hb.HeartbeatFingerprint {
			subChange = true
		}
		if p.fingerprints == nil {
			p.fingerprints = make(map[string]int32)
		}
		p.fingerprints[cd.GroupName] = hb.HeartbeatFingerprint
		p.fpMu.Unlock()
		if v2 && hb.WithoutSub && !p.clients.hasSubscriptions(cd.GroupName) {
			subChange = true // we lost the subscriptions (restart): ask for them
		}
		sg, ok := p.groups.find(cd.GroupName)
		if ok {
			var sysFlag int32
			if cd.UnitMode {
				sysFlag = 2 // compat: TopicSysFlag.buildSysFlag(false, true)
			}
			queues := sg.RetryQueueNums
			if queues <= 0 {
				queues = 1
			}
			retry := RetryGroupPrefix + cd.GroupName
			if _, had := p.topics.get(retry); !had {
				p.topics.createIfAbsent(retry, queues, body.PermWrite|body.PermRead, sysFlag)
				created = true
			}
		}
		if p.clients.registerConsumer(cd, ch, v2 && hb.WithoutSub) {
			p.log.Info("consumer registered", "group", cd.GroupName, "client", hb.ClientID, "remote", c.RemoteAddr())
			if !ok || sg.NotifyConsumerIdsChangedEnable {
				p.clients.notifyChanged(cd.GroupName)
			}
		}
	}
	for _, pd := range hb.ProducerDataSet {
		p.clients.registerProducer(pd.GroupName, ch)
	}
	if created && p.registerNow != nil {
		p.registerNow()
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Ext = []codec.KV{{Key: "IS_SUPPORT_HEART_BEAT_V2", Value: "true"}, {Key: "IS_SUB_CHANGE", Value: strconv.FormatBool(subChange)}}
	return resp
}

func (p *clientProcessor) unregisterClient(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.UnregisterClientRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	changed := p.clients.unregister(c, h.ProducerGroup, h.ConsumerGroup)
	p.clients.notifyChanged(changed...)
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (p *clientProcessor) consumerList(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetConsumerListByGroupRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group := h.ConsumerGroup
	ids := p.clients.consumerIDs(group)
	if len(ids) == 0 {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.NoConsumerForGroup(group))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendConsumerIDList(nil, ids)
	return resp
}

// checkClientConfig accepts TAG subscriptions, and SQL92 ones that compile
// when property filtering is on (ClientManageProcessor.checkClientConfig).
func (p *clientProcessor) checkClientConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var r struct {
		SubscriptionData body.SubscriptionData `json:"subscriptionData"`
	}
	if err := fastjson.Unmarshal(req.Body, &r); err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.BodyCheckClientConfig(err.Error()))
	}
	t := r.SubscriptionData.ExpressionType
	if filter.IsTagType(t) {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	if !p.live.propertyFilter.Load() {
		// compat: Java's remark when the broker cannot filter by this type.
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.FilterTypeNotSupported(t))
	}
	// The shared cache: the pulls that follow find the expression compiled.
	if _, err := p.filters.Subscription(t, r.SubscriptionData.SubString); err != nil {
		return codec.NewResponse(req, int32(codec.RespSubscriptionParseFailed), err.Error())
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}
