package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// permName renders PermName.perm2String: "RW-", "R--", "-W-" …
func permName(perm int) string {
	b := []byte("---")
	if perm&4 != 0 {
		b[0] = 'R'
	}
	if perm&2 != 0 {
		b[1] = 'W'
	}
	if perm&1 != 0 {
		b[2] = 'X'
	}
	return string(b)
}

func setupUpdateTopic(fs *flag.FlagSet) func(*admin) error {
	broker := fs.String("b", "", "create topic to which broker")
	cluster := fs.String("c", "", "create topic to which cluster")
	topic := fs.String("t", "", "topic name")
	r := fs.Int("r", 8, "set read queue nums")
	w := fs.Int("w", 8, "set write queue nums")
	perm := fs.Int("p", 6, "set topic's permission(2|4|6), intro[2:W 4:R; 6:RW]")
	order := fs.Bool("o", false, "set topic's order(true|false)")
	attrs := fs.String("a", "", "attribute(+a=b,+c=d,-e)")
	return func(a *admin) error {
		if err := need("t", *topic); err != nil {
			return err
		}
		addrs, err := a.targets(*broker, *cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrs {
			req := request(codec.ReqUpdateAndCreateTopic)
			(&header.CreateTopicRequest{
				Topic: *topic, DefaultTopic: "TBW102", ReadQueueNums: int32(*r), WriteQueueNums: int32(*w),
				Perm: int32(*perm), TopicFilterType: "SINGLE_TAG", Order: *order, Attributes: *attrs,
			}).Encode(req)
			if _, err := a.call(addr, req); err != nil {
				return err
			}
			a.printf("create topic to %s success.\n", addr)
		}
		a.printf("TopicConfig [topicName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%s, topicFilterType=SINGLE_TAG, topicSysFlag=0, order=%t, attributes={%s}]\n",
			*topic, *r, *w, permName(*perm), *order, *attrs)
		return nil
	}
}

func setupDeleteTopic(fs *flag.FlagSet) func(*admin) error {
	cluster := fs.String("c", "", "delete topic from which cluster")
	topic := fs.String("t", "", "topic name")
	return func(a *admin) error {
		if err := need("t", *topic, "c", *cluster); err != nil {
			return err
		}
		addrs, err := a.masterAddrs(*cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrs {
			req := request(codec.ReqDeleteTopicInBroker)
			(&header.DeleteTopicRequest{Topic: *topic}).Encode(req)
			if _, err := a.call(addr, req); err != nil {
				return err
			}
		}
		a.printf("delete topic [%s] from cluster [%s] success.\n", *topic, *cluster)
		for _, ns := range a.ns {
			req := request(codec.ReqDeleteTopicInNamesrv)
			(&header.DeleteTopicFromNamesrvRequest{Topic: *topic, ClusterName: *cluster}).Encode(req)
			if _, err := a.call(ns, req); err != nil {
				return err
			}
		}
		a.printf("delete topic [%s] from NameServer success.\n", *topic)
		return nil
	}
}

func setupTopicList(fs *flag.FlagSet) func(*admin) error {
	return func(a *admin) error {
		resp, err := a.nsCall(request(codec.ReqGetAllTopicListFromNameserver))
		if err != nil {
			return err
		}
		l, err := body.DecodeTopicList(resp.Body)
		if err != nil {
			return fmt.Errorf("topic list: %w", err)
		}
		sort.Strings(l.Topics)
		for _, t := range l.Topics {
			a.printf("%s\n", t)
		}
		return nil
	}
}

func setupTopicRoute(fs *flag.FlagSet) func(*admin) error {
	topic := fs.String("t", "", "topic name")
	return func(a *admin) error {
		if err := need("t", *topic); err != nil {
			return err
		}
		resp, err := a.nsCall(request(codec.ReqGetRouteinfoByTopic, "topic", *topic))
		if err != nil {
			return err
		}
		// Java prints the route with fastjson's pretty format; indent the
		// standard-JSON form.
		var buf bytes.Buffer
		if err := json.Indent(&buf, body.QuoteBareKeys(resp.Body), "", "\t"); err != nil {
			return fmt.Errorf("route of %s: %w", *topic, err)
		}
		a.printf("%s\n", buf.String())
		return nil
	}
}

// topicOffset is one row of a TopicStatsTable.
type topicOffset struct {
	mq                     body.MessageQueue
	min, max, lastUpdateMs int64
}

// decodeTopicStats reads {"offsetTable":{{mq}:{…},…},"topicPutTps":d}.
func decodeTopicStats(b []byte) ([]topicOffset, error) {
	var out []topicOffset
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		if rd.Key() != "offsetTable" {
			rd.Skip()
			continue
		}
		for rd.ObjectStart(); rd.More(); {
			var o topicOffset
			t, bn, q, err := fastjson.ParseMessageQueue(rd.Key())
			if err != nil {
				return nil, err
			}
			o.mq = body.MessageQueue{Topic: t, BrokerName: bn, QueueID: q}
			for rd.ObjectStart(); rd.More(); {
				switch rd.Key() {
				case "minOffset":
					o.min = rd.Int()
				case "maxOffset":
					o.max = rd.Int()
				case "lastUpdateTimestamp":
					o.lastUpdateMs = rd.Int()
				default:
					rd.Skip()
				}
			}
			out = append(out, o)
		}
	}
	if err := rd.End(); err != nil {
		return nil, err
	}
	return out, nil
}

func sortMQ(a, b body.MessageQueue) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	if a.BrokerName != b.BrokerName {
		return a.BrokerName < b.BrokerName
	}
	return a.QueueID < b.QueueID
}

// javaTime formats epoch milliseconds as Java's UtilAll.formatDate
// "yyyy-MM-dd HH:mm:ss,SSS" in local time.
func javaTime(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05,000")
}

func setupTopicStatus(fs *flag.FlagSet) func(*admin) error {
	topic := fs.String("t", "", "topic name")
	return func(a *admin) error {
		if err := need("t", *topic); err != nil {
			return err
		}
		r, err := a.route(*topic)
		if err != nil {
			return err
		}
		var rows []topicOffset
		for _, bd := range r.BrokerDatas {
			addr, ok := bd.Addr(0)
			if !ok {
				continue
			}
			resp, err := a.call(addr, request(codec.ReqGetTopicStatsInfo, "topic", *topic))
			if err != nil {
				return err
			}
			offs, err := decodeTopicStats(resp.Body)
			if err != nil {
				return fmt.Errorf("topic stats from %s: %w", addr, err)
			}
			rows = append(rows, offs...)
		}
		sort.Slice(rows, func(i, j int) bool { return sortMQ(rows[i].mq, rows[j].mq) })
		a.printf("%-32s  %-4s  %-20s  %-20s    %s\n", "#Broker Name", "#QID", "#Min Offset", "#Max Offset", "#Last Updated")
		for _, o := range rows {
			a.printf("%-32s  %-4d  %-20d  %-20d    %s\n", o.mq.BrokerName, o.mq.QueueID, o.min, o.max, javaTime(o.lastUpdateMs))
		}
		return nil
	}
}

// itoa is strconv.Itoa for int32.
func itoa(v int32) string { return strconv.Itoa(int(v)) }
