package broker

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/fastjson"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// Consumption reports for mqadmin: consumer status relayed from clients,
// time spans, correction offsets and the broker-wide consume stats.

// versionV3_0_7 is MQVersion.Version.V3_0_7_SNAPSHOT's ordinal: older
// clients cannot report their consume status.
const versionV3_0_7 = 28

// javaVersionNames are MQVersion.Version's names below versionV3_0_7.
var javaVersionNames = [versionV3_0_7]string{
	"V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1", "V3_0_0_BETA1", "V3_0_0_BETA2", "V3_0_0_BETA3", "V3_0_0_BETA4",
	"V3_0_0_BETA5", "V3_0_0_BETA6_SNAPSHOT", "V3_0_0_BETA6", "V3_0_0_BETA7_SNAPSHOT", "V3_0_0_BETA7",
	"V3_0_0_BETA8_SNAPSHOT", "V3_0_0_BETA8", "V3_0_0_BETA9_SNAPSHOT", "V3_0_0_BETA9", "V3_0_0_FINAL",
	"V3_0_1_SNAPSHOT", "V3_0_1", "V3_0_2_SNAPSHOT", "V3_0_2", "V3_0_3_SNAPSHOT", "V3_0_3",
	"V3_0_4_SNAPSHOT", "V3_0_4", "V3_0_5_SNAPSHOT", "V3_0_5", "V3_0_6_SNAPSHOT", "V3_0_6",
}

// consumerStatusTimeout is Broker2Client.getConsumeStatus's per-client timeout.
const consumerStatusTimeout = 5 * time.Second

// consumeStore is what the consume admin needs from the store.
type consumeStore interface {
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	StoreTime(topic string, queueID int32, offset int64) (int64, error)
	EarliestMessageTime(topic string, queueID int32) (int64, error)
	ConsumeQueueUnits(topic string, qid int32, from int64, max int, dst []store.CQUnit) ([]store.CQUnit, bool)
}

// consumeAdmin serves the consumption reports.
type consumeAdmin struct {
	brokerName string
	brokerAddr func() string // the advertised address (Broker.BrokerAddr)
	topics     *topicTable
	groups     *groupTable
	offsets    *offsetTable
	clients    *clientManager
	store      consumeStore
	stats      *brokerStats // consumeTps
	log        *slog.Logger
}

func (a *consumeAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqInvokeBrokerToGetConsumerStatus, pool, a.consumerStatus)
	r.Handle(codec.ReqQueryConsumeTimeSpan, pool, a.consumeTimeSpan)
	r.Handle(codec.ReqQueryCorrectionOffset, pool, a.correctionOffset)
	r.Handle(codec.ReqGetBrokerConsumeStats, pool, a.brokerConsumeStats)
	r.Handle(codec.ReqQueryConsumeQueue, pool, a.queryConsumeQueue)
}

// mqOffset is one entry of a fastjson Map<MessageQueue, Long>.
type mqOffset struct {
	topic, brokerName string
	queueID           int32
	offset            int64
}

// consumerStatus answers INVOKE_BROKER_TO_GET_CONSUMER_STATUS like Java's
// Broker2Client.getConsumeStatus: ask every member of the group (or only
// clientAddr, a client id) for its offsets on topic with
// GET_CONSUMER_STATUS_FROM_CLIENT and gather the answers by client id.
// Members that fail or do not answer SUCCESS are left out. Unlike Java we
// ask them in parallel.
func (a *consumeAdmin) consumerStatus(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetConsumerStatusRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic, group, origin := h.Topic, h.Group, h.ClientAddr
	members := a.clients.consumerChannels(group)
	if len(members) == 0 {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.NoConsumerOnline(group))
	}
	var ask []consumerChannel
	for _, m := range members {
		if m.version < versionV3_0_7 {
			return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ClientNotSupportFeature(javaVersionNames[max(m.version, 0)]))
		}
		if origin == "" || origin == m.clientID {
			ask = append(ask, m)
		}
	}
	tables := make([][]mqOffset, len(ask))
	ok := make([]bool, len(ask))
	var wg sync.WaitGroup
	for i, m := range ask {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fwd := &codec.Frame{Code: int32(codec.ReqGetConsumerStatusFromClient), Language: codec.LangJava, Version: codec.ServerVersion,
				Ext: []codec.KV{{Key: "topic", Value: topic}, {Key: "group", Value: group}}}
			ctx, cancel := context.WithTimeout(context.Background(), consumerStatusTimeout)
			defer cancel()
			resp, err := m.conn.Invoke(ctx, fwd)
			if err != nil {
				a.log.Warn("get consumer status from client failed", "group", group, "client", m.clientID, "err", err)
				return
			}
			if resp.Code != int32(codec.RespSuccess) || len(resp.Body) == 0 {
				return
			}
			t, err := decodeConsumerStatus(resp.Body)
			if err != nil {
				a.log.Warn("get consumer status from client: bad body", "group", group, "client", m.clientID, "err", err)
				return
			}
			tables[i], ok[i] = t, true
		}()
	}
	wg.Wait()

	w := fastjson.Writer{Buf: make([]byte, 0, 256)}
	w.ObjectStart()
	w.Key("consumerTable")
	w.ObjectStart()
	for i, m := range ask {
		if !ok[i] {
			continue
		}
		w.Key(m.clientID)
		appendMQOffsets(&w, tables[i])
	}
	w.ObjectEnd()
	w.EmptyObjectField("messageQueueTable")
	w.ObjectEnd()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = w.Bytes()
	return resp
}

// decodeConsumerStatus reads the messageQueueTable of a client's
// GetConsumerStatusBody.
func decodeConsumerStatus(b []byte) ([]mqOffset, error) {
	var out []mqOffset
	r := fastjson.NewReader(b)
	for r.ObjectStart(); r.More(); {
		if r.Key() != "messageQueueTable" {
			r.Skip()
			continue
		}
		for r.ObjectStart(); r.More(); {
			k := r.Key()
			off := r.Int()
			if r.Err() != nil {
				break
			}
			topic, bn, qid, err := fastjson.ParseMessageQueue(k)
			if err != nil {
				r.Fail("messageQueueTable key: " + err.Error())
				break
			}
			out = append(out, mqOffset{topic: topic, brokerName: bn, queueID: qid, offset: off})
		}
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := &out[i], &out[j]
		if x.topic != y.topic {
			return x.topic < y.topic
		}
		if x.brokerName != y.brokerName {
			return x.brokerName < y.brokerName
		}
		return x.queueID < y.queueID
	})
	return out, nil
}

func appendMQOffsets(w *fastjson.Writer, t []mqOffset) {
	w.ObjectStart()
	for _, e := range t {
		w.KeyMessageQueue(e.topic, e.brokerName, e.queueID)
		w.Int(e.offset)
	}
	w.ObjectEnd()
}

// javaStoreTime is getMessageStoreTimeStamp: -1 when unknown.
func (a *consumeAdmin) javaStoreTime(topic string, q int32, offset int64) int64 {
	if offset < 0 {
		return -1
	}
	ts, err := a.store.StoreTime(topic, q, offset)
	if err != nil {
		return -1
	}
	return ts
}

// javaOffset is ConsumerOffsetManager.queryOffset: -1 when none.
func (a *consumeAdmin) javaOffset(group, topic string, q int32) int64 {
	if off, ok := a.offsets.query(group, topic, q); ok {
		return off
	}
	return -1
}

// consumeTimeSpan answers QUERY_CONSUME_TIME_SPAN: per write queue the
// store times of the first and last message, of the last consumed one, and
// how long the next unconsumed one has waited.
func (a *consumeAdmin) consumeTimeSpan(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryConsumeTimeSpanRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic, group := h.Topic, h.Group
	tc, ok := a.topics.get(topic)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespTopicNotExist), remarks.TopicNotExist(topic))
	}
	st := a.store
	now := time.Now().UnixMilli()
	w := fastjson.Writer{Buf: make([]byte, 0, 256*int(max(tc.WriteQueueNums, 1)))}
	w.ObjectStart()
	w.Key("consumeTimeSpanSet")
	w.ArrayStart()
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		minTime, err := st.EarliestMessageTime(topic, q)
		if err != nil {
			minTime = -1
		}
		maxOffset := st.MaxOffset(topic, q)
		maxTime := a.javaStoreTime(topic, q, maxOffset-1)
		consumed := a.javaOffset(group, topic, q)
		consumeTime := minTime
		if consumed > 0 {
			consumeTime = a.javaStoreTime(topic, q, consumed-1)
		}
		var delay int64
		if consumed < maxOffset {
			// compat: Java subtracts whatever the lookup gives, -1 included.
			delay = now - a.javaStoreTime(topic, q, consumed)
		}
		// QueueTimeSpan's getters, in fastjson's (alphabetical) order.
		w.ObjectStart()
		w.IntField("consumeTimeStamp", consumeTime)
		w.StringField("consumeTimeStampStr", javaDateString(consumeTime))
		w.IntField("delayTime", delay)
		w.IntField("maxTimeStamp", maxTime)
		w.StringField("maxTimeStampStr", javaDateString(maxTime))
		w.Key("messageQueue")
		w.MessageQueue(topic, a.brokerName, q)
		w.IntField("minTimeStamp", minTime)
		w.StringField("minTimeStampStr", javaDateString(minTime))
		w.ObjectEnd()
	}
	w.ArrayEnd()
	w.ObjectEnd()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = w.Bytes()
	return resp
}

// javaDateString formats ms like UtilAll.formatDate with
// "yyyy-MM-dd#HH:mm:ss:SSS" in the local time zone.
func javaDateString(ms int64) string {
	t := time.UnixMilli(ms)
	b := t.AppendFormat(make([]byte, 0, 23), "2006-01-02#15:04:05")
	millis := t.Nanosecond() / int(time.Millisecond)
	return string(append(b, ':', byte('0'+millis/100), byte('0'+millis/10%10), byte('0'+millis%10)))
}

// correctionOffset answers QUERY_CORRECTION_OFFSET: per queue of topic the
// smallest committed offset over every group except filterGroups (only
// offsets the store still holds count), or Long.MAX_VALUE where
// compareGroup has consumed less than that minimum.
func (a *consumeAdmin) correctionOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryCorrectionOffset
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic, compare := h.Topic, h.CompareGroup
	excluded := map[string]bool{}
	if f := strings.TrimSpace(h.FilterGroups); f != "" {
		for _, g := range strings.Split(f, ",") {
			excluded[g] = true
		}
	}
	// compat: Java also deletes the filtered groups' offsets from its table
	// while computing this (it removes through a live key set); we only
	// leave them out.
	minOff := map[int32]int64{}
	for _, g := range a.offsets.groupsOf(topic) {
		if excluded[g] {
			continue
		}
		for q, off := range a.offsets.offsetsOf(g, topic) {
			if off < a.store.MinOffset(topic, q) {
				continue
			}
			if cur, ok := minOff[q]; !ok || off < cur {
				minOff[q] = off
			}
		}
	}
	for q, off := range a.offsets.offsetsOf(compare, topic) {
		// compat: Java fails with a NullPointerException on a queue no
		// other group has; we leave that queue out.
		if cur, ok := minOff[q]; ok && cur > off {
			minOff[q] = 1<<63 - 1
		}
	}
	queues := make([]int32, 0, len(minOff))
	for q := range minOff {
		queues = append(queues, q)
	}
	sort.Slice(queues, func(i, j int) bool { return queues[i] < queues[j] })
	w := fastjson.Writer{Buf: make([]byte, 0, 64+24*len(queues))}
	w.ObjectStart()
	w.Key("correctionOffsets")
	w.ObjectStart()
	for _, q := range queues {
		w.KeyInt(int64(q))
		w.Int(minOff[q])
	}
	w.ObjectEnd()
	w.ObjectEnd()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = w.Bytes()
	return resp
}

// brokerConsumeStats answers GET_BROKER_CONSUME_STATS (mqadmin
// brokerConsumeStats): for every subscription group, the ConsumeStats of
// each topic it has offsets on (only ordered topics when isOrder).
func (a *consumeAdmin) brokerConsumeStats(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetConsumeStatsInBroker
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	onlyOrder := h.IsOrder
	st := a.store
	var totalDiff, totalInflight int64
	w := fastjson.Writer{Buf: make([]byte, 0, 4096)}
	w.ObjectStart()
	w.StringField("brokerAddr", a.brokerAddr())
	w.Key("consumeStatsList")
	w.ArrayStart()
	for _, group := range a.groups.names() {
		w.ObjectStart()
		w.Key(group)
		w.ArrayStart()
		for _, topic := range a.offsets.topicsOf(group) {
			tc, ok := a.topics.get(topic)
			if !ok || (onlyOrder && !tc.Order) {
				continue
			}
			// Like Java: an online group is reported only for topics it subscribes.
			if _, found, _ := a.clients.subscription(group, topic); !found && a.clients.hasSubscriptions(group) {
				continue
			}
			w.ObjectStart()
			w.FloatField("consumeTps", a.stats.groupGetTps(group, topic))
			w.Key("offsetTable")
			w.ObjectStart()
			for q := int32(0); q < tc.WriteQueueNums; q++ {
				brokerOff := max(st.MaxOffset(topic, q), 0)
				consumerOff := max(a.javaOffset(group, topic, q), 0)
				var last int64
				if ts := a.javaStoreTime(topic, q, consumerOff-1); ts > 0 {
					last = ts
				}
				totalDiff += brokerOff - consumerOff
				// compat: Java leaves pullOffset at 0 here, so its
				// in-flight total is minus the consumer offsets.
				totalInflight -= consumerOff
				w.KeyMessageQueue(topic, a.brokerName, q)
				w.ObjectStart()
				w.IntField("brokerOffset", brokerOff)
				w.IntField("consumerOffset", consumerOff)
				w.IntField("lastTimestamp", last)
				w.IntField("pullOffset", 0)
				w.ObjectEnd()
			}
			w.ObjectEnd()
			w.ObjectEnd()
		}
		w.ArrayEnd()
		w.ObjectEnd()
	}
	w.ArrayEnd()
	w.IntField("totalDiff", totalDiff)
	w.IntField("totalInflightDiff", totalInflight)
	w.ObjectEnd()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = w.Bytes()
	return resp
}

// maxQueryConsumeQueue bounds QUERY_CONSUME_QUEUE's count (Java stops at
// the end of one consume-queue file).
const maxQueryConsumeQueue = 10000

// queryConsumeQueue answers QUERY_CONSUME_QUEUE (mqadmin queryCq): count
// raw units of one queue from index, with the group's subscription when
// consumerGroup is given.
func (a *consumeAdmin) queryConsumeQueue(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryConsumeQueueRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic, group := h.Topic, h.ConsumerGroup
	hasGroup := group != ""
	qid, index := h.QueueID, h.Index
	count := int(min(max(h.Count, 0), maxQueryConsumeQueue))
	st := a.store
	units, ok := st.ConsumeQueueUnits(topic, qid, index, count, nil)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.QueueNotExist(qid, topic))
	}
	if index < st.MinOffset(topic, qid) || index >= st.MaxOffset(topic, qid) {
		// compat: Java answers SUCCESS with no body here.
		return codec.NewResponse(req, int32(codec.RespSuccess), remarks.QueueIndexNotExist(index, qid, topic))
	}

	w := fastjson.Writer{Buf: make([]byte, 0, 256+80*len(units))}
	w.ObjectStart()
	var sub *body.SubscriptionData
	if hasGroup {
		if s, found, _ := a.clients.subscription(group, topic); found {
			sub = &s
			w.StringField("filterData", consumerFilterDataJSON(group, sub))
		} else {
			w.StringField("filterData", fmt.Sprintf("%s@%s is not online!", group, topic))
		}
	}
	w.IntField("maxQueueIndex", st.MaxOffset(topic, qid))
	w.IntField("minQueueIndex", st.MinOffset(topic, qid))
	w.Key("queueData")
	w.ArrayStart()
	for _, u := range units {
		// ConsumeQueueData without the consume-queue-ext fields, which
		// this store does not keep.
		w.ObjectStart()
		w.BoolField("eval", false)
		w.IntField("physicOffset", u.PhyOffset)
		w.IntField("physicSize", int64(u.Size))
		w.IntField("tagsCode", u.TagsCode)
		w.ObjectEnd()
	}
	w.ArrayEnd()
	if sub != nil {
		w.Key("subscriptionData")
		w.Raw(body.AppendSubscriptionData(nil, sub))
	}
	w.ObjectEnd()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = w.Bytes()
	return resp
}

// consumerFilterDataJSON is JSON.toJSONString(consumerFilterData, true):
// "null" for TAG subscriptions (Java keeps no filter data for them); for
// SQL92 the pretty-printed scalar fields of ConsumerFilterData (Java also
// prints its bloom filter and compiled expression, which we do not keep).
func consumerFilterDataJSON(group string, sub *body.SubscriptionData) string {
	if filter.IsTagType(sub.ExpressionType) {
		return "null"
	}
	b := []byte("{\n\t\"clientVersion\":")
	b = strconv.AppendInt(b, sub.SubVersion, 10)
	b = append(b, ",\n\t\"consumerGroup\":"...)
	b = fastjson.AppendString(b, group)
	b = append(b, ",\n\t\"deadTime\":0,\n\t\"expression\":"...)
	b = fastjson.AppendString(b, sub.SubString)
	b = append(b, ",\n\t\"expressionType\":"...)
	b = fastjson.AppendString(b, sub.ExpressionType)
	b = append(b, ",\n\t\"topic\":"...)
	b = fastjson.AppendString(b, sub.Topic)
	return string(append(b, "\n}"...))
}
