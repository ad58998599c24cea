package broker

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/fastjson"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
	"golang.org/x/sys/unix"
)

// statsStore is what the stats admin needs from the store.
type statsStore interface {
	AwaitDispatched(timeout time.Duration) bool
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	StoreTime(topic string, queueID int32, offset int64) (int64, error)
	MinPhyOffset() int64
	MaxPhyOffset() int64
}

// statsAdmin serves topic and consume stats, the runtime info and the
// stats counters.
type statsAdmin struct {
	brokerName string
	topics     *topicTable
	offsets    *offsetTable
	clients    *clientManager
	store      statsStore
	stats      *brokerStats
	role       *roleState // brokerActive: master-only services run

	// Runtime info: the send queue's length, the timer's lag
	// (timerService.behind) and the fixed pool capacities.
	sendQueueLen                         func() int
	delayStats                           func(kv map[string]string) // the delay levels' offsets; may be nil
	timerBehind                          func(nowMs int64) (readSec, offsets int64)
	sendQueueCapacity, pullQueueCapacity int
	// storeRoot and commitLogDir: commitLogDirCapacity (the root's file
	// system) and commitLogDiskRatio_<commitLogDir>.
	storeRoot, commitLogDir string
}

// The capacities Java's broker reports for pools we have no separate
// queue for (BrokerConfig's defaults; their queues report 0 waiting).
const (
	javaLitePullQueueCapacity = 100000
	javaQueryQueueCapacity    = 20000
	javaAckQueueCapacity      = 100000
	javaEndTxQueueCapacity    = 100000
)

func (a *statsAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqGetTopicStatsInfo, pool, a.topicStats)
	r.Handle(codec.ReqGetConsumeStats, pool, a.consumeStats)
	r.Handle(codec.ReqGetBrokerRuntimeInfo, pool, a.runtimeInfo)
	r.Handle(codec.ReqViewBrokerStatsData, pool, a.viewStats)
}

func (a *statsAdmin) topicStats(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetTopicStatsInfoRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic := h.Topic
	tc, ok := a.topics.get(topic)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespTopicNotExist), remarks.TopicNotExist(topic))
	}
	st := a.store
	st.AwaitDispatched(dispatchWait)
	offsets := make([]body.TopicOffset, 0, tc.WriteQueueNums)
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		o := body.TopicOffset{
			MQ:        body.MessageQueue{Topic: topic, BrokerName: a.brokerName, QueueID: q},
			MinOffset: st.MinOffset(topic, q),
			MaxOffset: st.MaxOffset(topic, q),
		}
		if o.MaxOffset > 0 {
			if ts, err := st.StoreTime(topic, q, o.MaxOffset-1); err == nil {
				o.LastUpdateTimestamp = ts
			}
		}
		offsets = append(offsets, o)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendTopicStatsTable(nil, offsets, a.stats.topicPutTps(topic))
	return resp
}

// consumeStats answers GET_CONSUME_STATS for one topic, a ';' list, or
// every topic the group consumes.
func (a *statsAdmin) consumeStats(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetConsumeStatsRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group := h.ConsumerGroup
	var topics []string
	if h.Topic != "" {
		topics = []string{h.Topic}
	} else if h.TopicList != "" {
		topics = strings.Split(h.TopicList, ";")
	} else {
		topics = a.offsets.topicsOf(group)
	}
	st := a.store
	st.AwaitDispatched(dispatchWait)
	var offsets []body.OffsetWrapper
	var consumeTps float64
	for _, topic := range topics {
		tc, ok := a.topics.get(topic)
		if !ok {
			continue
		}
		// Like Java: an online group is reported only for topics it subscribes.
		if _, found, known := a.clients.subscription(group, topic); known && !found {
			continue
		}
		for q := int32(0); q < tc.ReadQueueNums; q++ {
			w := body.OffsetWrapper{
				MQ:           body.MessageQueue{Topic: topic, BrokerName: a.brokerName, QueueID: q},
				BrokerOffset: st.MaxOffset(topic, q),
			}
			if off, ok := a.offsets.query(group, topic, q); ok {
				w.ConsumerOffset = off
				if off > 0 {
					if ts, err := st.StoreTime(topic, q, off-1); err == nil {
						w.LastTimestamp = ts
					}
				}
			}
			if off, ok := a.offsets.pullOffset(group, topic, q); ok {
				w.PullOffset = off
			} else {
				w.PullOffset = w.ConsumerOffset
			}
			offsets = append(offsets, w)
		}
		consumeTps += a.stats.groupGetTps(group, topic)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendConsumeStats(nil, consumeTps, offsets)
	return resp
}

// runtimeInfo answers GET_BROKER_RUNTIME_INFO with a KVTable.
func (a *statsAdmin) runtimeInfo(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	s := a.stats
	st := a.store
	now := s.clock.Now()
	timerRead, timerOffsets := a.timerBehind(now.UnixMilli())
	rates := s.rates()
	daily := s.daily()
	kv := map[string]string{
		"brokerVersionDesc": codec.ServerVersionName,
		// compat: Java 5.4.0 no longer puts brokerVersion (5.3.3 did); kept,
		// as rocketmq-exporter 4.9.4 parses it.
		"brokerVersion":                        strconv.Itoa(int(codec.ServerVersion)),
		"brokerActive":                         strconv.FormatBool(!a.role.IsSlave()),
		"bootTimestamp":                        strconv.FormatInt(s.boot.UnixMilli(), 10),
		"runtime":                              runtimeString(now.Sub(s.boot)),
		"putTps":                               rates.put,
		"getFoundTps":                          rates.found,
		"getMissTps":                           rates.miss,
		"getTotalTps":                          rates.total,
		"getTransferredTps":                    rates.transferred,
		"putMessageFailedTimes":                strconv.FormatInt(s.putFailed.Load(), 10),
		"commitLogMinOffset":                   strconv.FormatInt(st.MinPhyOffset(), 10),
		"commitLogMaxOffset":                   strconv.FormatInt(st.MaxPhyOffset(), 10),
		"commitLogDiskRatio":                   "0.0",
		"consumeQueueDiskRatio":                "0.0",
		"msgPutTotalTodayNow":                  strconv.FormatInt(daily.putNow, 10),
		"msgGetTotalTodayNow":                  strconv.FormatInt(daily.getNow, 10),
		"msgPutTotalYesterdayMorning":          strconv.FormatInt(daily.putYesterdayMorning, 10),
		"msgPutTotalTodayMorning":              strconv.FormatInt(daily.putTodayMorning, 10),
		"msgGetTotalYesterdayMorning":          strconv.FormatInt(daily.getYesterdayMorning, 10),
		"msgGetTotalTodayMorning":              strconv.FormatInt(daily.getTodayMorning, 10),
		"sendThreadPoolQueueSize":              strconv.Itoa(a.sendQueueLen()),
		"sendThreadPoolQueueCapacity":          strconv.Itoa(a.sendQueueCapacity),
		"pullThreadPoolQueueSize":              "0",
		"pullThreadPoolQueueCapacity":          strconv.Itoa(a.pullQueueCapacity),
		"sendThreadPoolQueueHeadWaitTimeMills": "0",
		"pullThreadPoolQueueHeadWaitTimeMills": "0",
		// clusterList prints the ack pool's figures in #OutTPS ("null"
		// without them) and brokerStatus every pool's.
		"litePullThreadPoolQueueSize":              "0",
		"litePullThreadPoolQueueCapacity":          strconv.Itoa(javaLitePullQueueCapacity),
		"litePullThreadPoolQueueHeadWaitTimeMills": "0",
		"queryThreadPoolQueueSize":                 "0",
		"queryThreadPoolQueueCapacity":             strconv.Itoa(javaQueryQueueCapacity),
		"queryThreadPoolQueueHeadWaitTimeMills":    "0",
		"ackThreadPoolQueueSize":                   "0",
		"ackThreadPoolQueueCapacity":               strconv.Itoa(javaAckQueueCapacity),
		"ackThreadPoolQueueHeadWaitTimeMills":      "0",
		"EndTransactionQueueSize":                  "0",
		"EndTransactionThreadPoolQueueCapacity":    strconv.Itoa(javaEndTxQueueCapacity),
		"startAcceptSendRequestTimeStamp":          "0",
		// Java's StoreStatsService never raises it from 0.
		"dispatchMaxBuffer":               "0",
		"pageCacheLockTimeMills":          "0",
		"earliestMessageTimeStamp":        "0",
		"dispatchBehindBytes":             "0",
		"remainTransientStoreBufferNumbs": "0",
		"remainHowManyDataToFlush":        humanBytes(0),
		"timerReadBehind":                 strconv.FormatInt(timerRead, 10),
		"timerOffsetBehind":               strconv.FormatInt(timerOffsets, 10),
		"timerCongestNum":                 "0",
		"timerEnqueueTps":                 "0.0",
		"timerDequeueTps":                 "0.0",
	}
	if d, ok := st.(diskRatios); ok {
		// Java's String.valueOf(double) of each store path's used ratio.
		cl, cq, _ := d.DiskUsedRatios()
		kv["commitLogDiskRatio"] = javaDouble(cl)
		if a.commitLogDir != "" {
			kv["commitLogDiskRatio_"+a.commitLogDir] = javaDouble(cl)
		}
		kv["consumeQueueDiskRatio"] = javaDouble(cq)
	}
	if a.delayStats != nil {
		a.delayStats(kv)
	}
	if l, ok := st.(latencyStore); ok {
		putLatencyKeys(kv, l.LatencyStats())
	} else {
		// A store that times nothing: Java's keys with nothing counted
		// (rocketmq-exporter's runtime collector fails on a missing key).
		putLatencyKeys(kv, store.LatencyFigures{Ended: true})
	}
	if e, ok := st.(interface{ EarliestStoreTime() int64 }); ok {
		// clusterList's #Hour is (now - this) in hours.
		kv["earliestMessageTimeStamp"] = strconv.FormatInt(e.EarliestStoreTime(), 10)
	}
	if ps, ok := st.(interface{ PutStats() (int64, int64) }); ok {
		// Java's StoreStatsService: local puts on a master, replicated
		// records as the slave dispatches them.
		n, size := ps.PutStats()
		// compat: Java reports a put count of 0 as 1 (and divides by it).
		n = max(n, 1)
		kv["putMessageTimesTotal"] = strconv.FormatInt(n, 10)
		kv["putMessageSizeTotal"] = strconv.FormatInt(size, 10)
		kv["putMessageAverageSize"] = javaDouble(float64(size) / float64(n))
	}
	if f, ok := st.(interface{ FlushBehind() int64 }); ok {
		kv["remainHowManyDataToFlush"] = humanBytes(f.FlushBehind())
	}
	if a.storeRoot != "" {
		var fs unix.Statfs_t
		if err := unix.Statfs(a.storeRoot, &fs); err == nil {
			// Java's File.getTotalSpace / getFreeSpace: blocks and free blocks.
			bs := uint64(fs.Bsize)
			kv["commitLogDirCapacity"] = "Total : " + humanBytes(int64(fs.Blocks*bs)) + ", Free : " + humanBytes(int64(fs.Bfree*bs)) + "."
		}
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = appendKVTable(nil, kv)
	return resp
}

// javaDouble formats v as Java's String.valueOf(double) ("0.0", "254.9",
// "1.0E7", "NaN").
func javaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	var buf [32]byte
	return string(fastjson.AppendDouble(buf[:0], v))
}

// humanBytes is Java's MixAll.humanReadableByteCount(n, false): "512 B",
// "1.5 KiB", "97.9 GiB".
func humanBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	exp := int(math.Log(float64(n)) / math.Log(1024))
	exp = min(exp, 6)
	return strconv.FormatFloat(float64(n)/math.Pow(1024, float64(exp)), 'f', 1, 64) + " " + string("KMGTPE"[exp-1]) + "iB"
}

// runtimeString is Java's "[ d days, h hours, m minutes, s seconds ]".
func runtimeString(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]", s/86400, s/3600%24, s/60%60, s%60)
}

// appendKVTable writes {"table":{…}} with keys sorted.
func appendKVTable(dst []byte, kv map[string]string) []byte {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = append(dst, `{"table":{`...)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = codec.AppendJSONString(dst, k)
		dst = append(dst, ':')
		dst = codec.AppendJSONString(dst, kv[k])
	}
	return append(dst, "}}"...)
}

// viewStats answers VIEW_BROKER_STATS_DATA: the minute, hour and day
// windows of one statistic (BrokerStatsData, fastjson's field order).
func (a *statsAdmin) viewStats(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ViewBrokerStatsDataRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	name, key := h.StatsName, h.StatsKey
	it := a.stats.item(name, key)
	if it == nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.StatsNotExist(name, key))
	}
	w := fastjson.Writer{Buf: make([]byte, 0, 192)}
	w.ObjectStart()
	for _, win := range [...]struct {
		name string
		ss   statsSnapshot
	}{{"statsDay", it.inDay()}, {"statsHour", it.inHour()}, {"statsMinute", it.inMinute()}} {
		// BrokerStatsItem's getters: avgpt, sum, tps.
		w.Key(win.name)
		w.ObjectStart()
		w.FloatField("avgpt", win.ss.Avgpt)
		w.IntField("sum", win.ss.Sum)
		w.FloatField("tps", win.ss.Tps)
		w.ObjectEnd()
	}
	w.ObjectEnd()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = w.Bytes()
	return resp
}
