package main

import (
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// consumeOffset is one queue of a ConsumeStats body.
type consumeOffset struct {
	mq                     body.MessageQueue
	brokerOffset, consumer int64
	lastTimestamp          int64
}

// decodeConsumeStats reads {"consumeTps":d,"offsetTable":{{mq}:{…}}}.
func decodeConsumeStats(b []byte) (tps float64, rows []consumeOffset, err error) {
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "consumeTps":
			tps = rd.Float()
		case "offsetTable":
			for rd.ObjectStart(); rd.More(); {
				t, bn, q, err := fastjson.ParseMessageQueue(rd.Key())
				if err != nil {
					return 0, nil, err
				}
				o := consumeOffset{mq: body.MessageQueue{Topic: t, BrokerName: bn, QueueID: q}}
				for rd.ObjectStart(); rd.More(); {
					switch rd.Key() {
					case "brokerOffset":
						o.brokerOffset = rd.Int()
					case "consumerOffset":
						o.consumer = rd.Int()
					case "lastTimestamp":
						o.lastTimestamp = rd.Int()
					default:
						rd.Skip()
					}
				}
				rows = append(rows, o)
			}
		default:
			rd.Skip()
		}
	}
	return tps, rows, rd.End()
}

func setupConsumerProgress(fs *flag.FlagSet) func(*admin) error {
	group := fs.String("g", "", "consumer group name")
	topic := fs.String("t", "", "topic whose brokers to ask (default: the group's %RETRY% topic)")
	return func(a *admin) error {
		if err := need("g", *group); err != nil {
			return err
		}
		routeTopic := *topic
		if routeTopic == "" {
			routeTopic = "%RETRY%" + *group
		}
		r, err := a.route(routeTopic)
		if err != nil {
			return err
		}
		var rows []consumeOffset
		tps := 0.0
		for _, bd := range r.BrokerDatas {
			addr, ok := bd.Addr(0)
			if !ok {
				continue
			}
			req := request(codec.ReqGetConsumeStats)
			(&header.GetConsumeStatsRequest{ConsumerGroup: *group, Topic: *topic}).Encode(req)
			resp, err := a.call(addr, req)
			if err != nil {
				return err
			}
			t, rs, err := decodeConsumeStats(resp.Body)
			if err != nil {
				return fmt.Errorf("consume stats from %s: %w", addr, err)
			}
			tps += t
			rows = append(rows, rs...)
		}
		sort.Slice(rows, func(i, j int) bool { return sortMQ(rows[i].mq, rows[j].mq) })
		a.printf("%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s %s\n",
			"#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Client IP", "#Diff", "#LastTime")
		var diffTotal int64
		for _, o := range rows {
			diff := o.brokerOffset - o.consumer
			diffTotal += diff
			last := "N/A"
			if o.lastTimestamp > 0 {
				last = time.UnixMilli(o.lastTimestamp).Format("2006-01-02 15:04:05")
			}
			a.printf("%-64s  %-32s  %-4d  %-20d  %-20d  %-20s %-20d %s\n",
				o.mq.Topic, o.mq.BrokerName, o.mq.QueueID, o.brokerOffset, o.consumer, "N/A", diff, last)
		}
		a.printf("\nConsume TPS: %.2f\nConsume Diff Total: %d\n", tps, diffTotal)
		return nil
	}
}

func setupUpdateSubGroup(fs *flag.FlagSet) func(*admin) error {
	broker := fs.String("b", "", "create subscription group to which broker")
	cluster := fs.String("c", "", "create subscription group to which cluster")
	group := fs.String("g", "", "consumer group name")
	consumeEnable := fs.Bool("s", true, "consume enable")
	fromMin := fs.Bool("m", false, "from min enable")
	broadcast := fs.Bool("d", false, "broadcast")
	orderly := fs.Bool("o", false, "consume message orderly")
	retryQueues := fs.Int("q", 1, "retry queue nums")
	retryMax := fs.Int("r", 16, "retry max times")
	brokerID := fs.Int64("i", 0, "consumer from which broker id")
	slowly := fs.Int64("w", 1, "which broker id when consume slowly")
	notify := fs.Bool("a", true, "notify consumerId changed")
	return func(a *admin) error {
		if err := need("g", *group); err != nil {
			return err
		}
		addrs, err := a.targets(*broker, *cluster)
		if err != nil {
			return err
		}
		g := body.NewSubscriptionGroupConfig(*group)
		g.ConsumeEnable, g.ConsumeFromMinEnable, g.ConsumeBroadcastEnable = *consumeEnable, *fromMin, *broadcast
		g.ConsumeMessageOrderly = *orderly
		g.RetryQueueNums, g.RetryMaxTimes = int32(*retryQueues), int32(*retryMax)
		g.BrokerID, g.WhichBrokerWhenConsumeSlowly = *brokerID, *slowly
		g.NotifyConsumerIdsChangedEnable = *notify
		for _, addr := range addrs {
			req := request(codec.ReqUpdateAndCreateSubscriptiongroup)
			req.Body = body.AppendSubscriptionGroupConfig(nil, &g)
			if _, err := a.call(addr, req); err != nil {
				return err
			}
			a.printf("create subscription group to %s success.\n", addr)
		}
		a.printf("SubscriptionGroupConfig [groupName=%s, consumeEnable=%t, consumeFromMinEnable=%t, consumeBroadcastEnable=%t, consumeMessageOrderly=%t, retryQueueNums=%d, retryMaxTimes=%d, brokerId=%d, whichBrokerWhenConsumeSlowly=%d, notifyConsumerIdsChangedEnable=%t]\n",
			g.GroupName, g.ConsumeEnable, g.ConsumeFromMinEnable, g.ConsumeBroadcastEnable, g.ConsumeMessageOrderly,
			g.RetryQueueNums, g.RetryMaxTimes, g.BrokerID, g.WhichBrokerWhenConsumeSlowly, g.NotifyConsumerIdsChangedEnable)
		return nil
	}
}

// parseJavaTimestamp accepts "now", epoch milliseconds, or Java mqadmin's
// "yyyy-MM-dd#HH:mm:ss:SSS" (local time).
func parseJavaTimestamp(s string) (int64, error) {
	if s == "now" {
		return time.Now().UnixMilli(), nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	bad := fmt.Errorf("bad timestamp %q: want now, epoch millis or yyyy-MM-dd#HH:mm:ss:SSS", s)
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return 0, bad
	}
	t, err := time.ParseInLocation("2006-01-02#15:04:05", s[:i], time.Local)
	millis, merr := strconv.Atoi(s[i+1:])
	if err != nil || merr != nil || millis < 0 || millis > 999 {
		return 0, bad
	}
	return t.UnixMilli() + int64(millis), nil
}

// decodeResetOffsetBody reads {"offsetTable":{{mq}:offset,…}}.
func decodeResetOffsetBody(b []byte) (map[body.MessageQueue]int64, error) {
	out := map[body.MessageQueue]int64{}
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		if rd.Key() != "offsetTable" {
			rd.Skip()
			continue
		}
		for rd.ObjectStart(); rd.More(); {
			t, bn, q, err := fastjson.ParseMessageQueue(rd.Key())
			if err != nil {
				return nil, err
			}
			out[body.MessageQueue{Topic: t, BrokerName: bn, QueueID: q}] = rd.Int()
		}
	}
	return out, rd.End()
}

func setupResetOffsetByTime(fs *flag.FlagSet) func(*admin) error {
	group := fs.String("g", "", "set the consumer group")
	topic := fs.String("t", "", "set the topic")
	stamp := fs.String("s", "", "set the timestamp[now|currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	force := fs.Bool("f", true, "set the force rollback by timestamp switch[true|false]")
	return func(a *admin) error {
		if err := need("g", *group, "t", *topic, "s", *stamp); err != nil {
			return err
		}
		ms, err := parseJavaTimestamp(*stamp)
		if err != nil {
			return err
		}
		r, err := a.route(*topic)
		if err != nil {
			return err
		}
		all := map[body.MessageQueue]int64{}
		for _, bd := range r.BrokerDatas {
			addr, ok := bd.Addr(0)
			if !ok {
				continue
			}
			req := request(codec.ReqInvokeBrokerToResetOffset)
			(&header.ResetOffsetRequest{Group: *group, Topic: *topic, QueueID: -1, Timestamp: ms, IsForce: *force}).Encode(req)
			resp, err := a.call(addr, req)
			if err != nil {
				return err
			}
			offs, err := decodeResetOffsetBody(resp.Body)
			if err != nil {
				return fmt.Errorf("reset offset reply from %s: %w", addr, err)
			}
			for mq, o := range offs {
				all[mq] = o
			}
		}
		a.printf("rollback consumer offset by specified group[%s], topic[%s], force[%t], timestamp(string)[%s], timestamp(long)[%d]\n",
			*group, *topic, *force, *stamp, ms)
		a.printf("%-40s  %-40s  %-40s\n", "#brokerName", "#queueId", "#offset")
		mqs := make([]body.MessageQueue, 0, len(all))
		for mq := range all {
			mqs = append(mqs, mq)
		}
		sort.Slice(mqs, func(i, j int) bool { return sortMQ(mqs[i], mqs[j]) })
		for _, mq := range mqs {
			a.printf("%-40s  %-40d  %-40d\n", mq.BrokerName, mq.QueueID, all[mq])
		}
		return nil
	}
}
