package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
)

// decodeRecords splits a pull/query body into stored messages.
func decodeRecords(b []byte) ([]message.Ext, error) {
	var out []message.Ext
	for len(b) > 0 {
		var e message.Ext
		if err := message.Decode(b, &e); err != nil {
			return out, err
		}
		out = append(out, e)
		b = b[e.TotalSize:]
	}
	return out, nil
}

// msgID is what clients show: UNIQ_KEY if present, else the offset id.
func msgID(e *message.Ext) string {
	if u, ok := message.Property(e.Properties, message.PropertyUniqKey); ok && u != "" {
		return u
	}
	return message.OffsetMsgID(e.StoreHost, e.PhysicalOffset)
}

func (a *admin) printMessage(e *message.Ext) {
	tags, _ := message.Property(e.Properties, message.PropertyTags)
	keys, _ := message.Property(e.Properties, message.PropertyKeys)
	row := func(k, v string) { a.printf("%-20s %s\n", k, v) }
	row("OffsetID:", message.OffsetMsgID(e.StoreHost, e.PhysicalOffset))
	row("Topic:", e.Topic)
	row("Tags:", "["+tags+"]")
	row("Keys:", "["+keys+"]")
	row("Queue ID:", itoa(e.QueueID))
	row("Queue Offset:", strconv.FormatInt(e.QueueOffset, 10))
	row("CommitLog Offset:", strconv.FormatInt(e.PhysicalOffset, 10))
	row("Reconsume Times:", itoa(e.ReconsumeTimes))
	row("Born Timestamp:", javaTime(e.BornTimestamp))
	row("Store Timestamp:", javaTime(e.StoreTimestamp))
	row("Born Host:", e.BornHost.String())
	row("Store Host:", e.StoreHost.String())
	row("System Flag:", itoa(e.SysFlag))
	props := message.ParseProperties(e.Properties)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "=" + props[k]
	}
	row("Properties:", "{"+strings.Join(parts, ", ")+"}")
	b, err := message.Decompress(e.Body, e.SysFlag, 0)
	if err != nil {
		row("Message Body:", "<"+err.Error()+">")
		return
	}
	row("Message Body:", string(b))
}

func setupQueryMsgByID(fs *flag.FlagSet) func(*admin) error {
	id := fs.String("i", "", "Message Id")
	topic := fs.String("t", "", "topic name (needed to look up a client message id / UNIQ_KEY)")
	return func(a *admin) error {
		if err := need("i", *id); err != nil {
			return err
		}
		var viewErr error
		if host, off, err := message.DecodeOffsetMsgID(*id); err == nil {
			req := request(codec.ReqViewMessageById)
			(&header.ViewMessageRequest{Topic: *topic, Offset: off}).Encode(req)
			resp, err := a.call(host.String(), req)
			if err == nil {
				msgs, derr := decodeRecords(resp.Body)
				if derr == nil && len(msgs) == 1 {
					a.printMessage(&msgs[0])
					return nil
				}
				err = fmt.Errorf("view message %s: bad body: %v", *id, derr)
			}
			viewErr = err
		} else {
			viewErr = err
		}
		if *topic == "" {
			return fmt.Errorf("query message by id %s: %w (give -t to look it up as a client message id)", *id, viewErr)
		}
		msgs, err := a.queryByKey(*topic, *id, 32, true)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return fmt.Errorf("query message by id %s: not found", *id)
		}
		for i := range msgs {
			a.printMessage(&msgs[i])
		}
		return nil
	}
}

// queryByKey asks every master of topic for messages indexed under key
// (a KEYS entry, or a UNIQ_KEY when unique) and keeps, as Java's client
// does, only the exact matches.
func (a *admin) queryByKey(topic, key string, maxNum int, unique bool) ([]message.Ext, error) {
	r, err := a.route(topic)
	if err != nil {
		return nil, err
	}
	var out []message.Ext
	for _, bd := range r.BrokerDatas {
		addr, ok := bd.Addr(0)
		if !ok {
			continue
		}
		req := request(codec.ReqQueryMessage)
		(&header.QueryMessageRequest{Topic: topic, Key: key, MaxNum: int32(maxNum), BeginTimestamp: 0,
			EndTimestamp: time.Now().UnixMilli() + 60_000, UniqueKeyQuery: unique}).Encode(req)
		resp, err := a.invoke(addr, req)
		if err != nil {
			return nil, err
		}
		if resp.Code == int32(codec.RespQueryNotFound) {
			continue
		}
		if resp.Code != int32(codec.RespSuccess) {
			return nil, &respError{req: codec.ReqQueryMessage, addr: addr, code: resp.Code, remark: resp.Remark}
		}
		msgs, err := decodeRecords(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("query reply from %s: %w", addr, err)
		}
		for _, m := range msgs {
			if unique {
				if u, _ := message.Property(m.Properties, message.PropertyUniqKey); u == key {
					out = append(out, m)
				}
				continue
			}
			keys, _ := message.Property(m.Properties, message.PropertyKeys)
			for _, k := range strings.Fields(keys) {
				if k == key {
					out = append(out, m)
					break
				}
			}
		}
	}
	return out, nil
}

func setupQueryMsgByKey(fs *flag.FlagSet) func(*admin) error {
	topic := fs.String("t", "", "topic name")
	key := fs.String("k", "", "Message Key")
	maxNum := fs.Int("c", 64, "The maximum number of messages returned by the query")
	return func(a *admin) error {
		if err := need("t", *topic, "k", *key); err != nil {
			return err
		}
		msgs, err := a.queryByKey(*topic, *key, *maxNum, false)
		if err != nil {
			return err
		}
		a.printf("%-50s %4s %40s\n", "#Message ID", "#QID", "#Offset")
		for i := range msgs {
			a.printf("%-50s %4d %40d\n", msgID(&msgs[i]), msgs[i].QueueID, msgs[i].QueueOffset)
		}
		return nil
	}
}

// sendStatus names a successful send code as Java's SendStatus.
func sendStatus(code int32) (string, bool) {
	switch code {
	case int32(codec.RespSuccess):
		return "SEND_OK", true
	case int32(codec.RespFlushDiskTimeout):
		return "FLUSH_DISK_TIMEOUT", true
	case int32(codec.RespSlaveNotAvailable):
		return "SLAVE_NOT_AVAILABLE", true
	case int32(codec.RespFlushSlaveTimeout):
		return "FLUSH_SLAVE_TIMEOUT", true
	}
	return "", false
}

func setupSendMessage(fs *flag.FlagSet) func(*admin) error {
	topic := fs.String("t", "", "Topic name")
	bodyText := fs.String("p", "", "UTF-8 string format of the message body")
	keys := fs.String("k", "", "Message keys")
	tags := fs.String("c", "", "Message tags")
	brokerName := fs.String("b", "", "Send message to target broker")
	queueID := fs.Int("i", -1, "Send message to target queue")
	return func(a *admin) error {
		if err := need("t", *topic, "p", *bodyText); err != nil {
			return err
		}
		r, err := a.route(*topic)
		if err != nil {
			return err
		}
		type target struct {
			name   string
			queues int32
		}
		var ts []target
		for _, q := range r.QueueDatas {
			if q.Perm&2 != 0 && q.WriteQueueNums > 0 && (*brokerName == "" || q.BrokerName == *brokerName) {
				ts = append(ts, target{q.BrokerName, q.WriteQueueNums})
			}
		}
		if len(ts) == 0 {
			return fmt.Errorf("send to %s: no writable queue", *topic)
		}
		t := ts[rand.IntN(len(ts))]
		qid := int32(rand.IntN(int(t.queues)))
		if *queueID >= 0 {
			qid = int32(*queueID)
		}
		addr, ok := masterOf(&r, t.name)
		if !ok {
			return fmt.Errorf("send to %s: broker %s has no master", *topic, t.name)
		}
		uniq := string(message.NewUniqIDGen(netip.AddrFrom4([4]byte{127, 0, 0, 1}), os.Getpid(), rand.Int32(), nil).Append(nil, time.Now()))
		var props []byte
		if *tags != "" {
			props = message.AppendProperty(props, message.PropertyTags, *tags)
		}
		if *keys != "" {
			props = message.AppendProperty(props, message.PropertyKeys, *keys)
		}
		props = message.AppendProperty(props, message.PropertyWaitStoreMsgOK, "true")
		props = message.AppendProperty(props, message.PropertyUniqKey, uniq)
		req := request(codec.ReqSendMessageV2)
		(&header.SendMessageRequestV2{ProducerGroup: "PID_MQADMIN", Topic: *topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: qid, BornTimestamp: time.Now().UnixMilli(),
			Properties: string(props), BrokerName: t.name}).Encode(req)
		req.Body = []byte(*bodyText)
		resp, err := a.invoke(addr, req)
		if err != nil {
			return err
		}
		status, ok := sendStatus(resp.Code)
		if !ok {
			return &respError{req: codec.ReqSendMessageV2, addr: addr, code: resp.Code, remark: resp.Remark}
		}
		a.printf("%-32s  %-4s  %-20s    %s\n", "#Broker Name", "#QID", "#Send Result", "#MsgId")
		a.printf("%-32s  %-4s  %-20s    %s\n", t.name, resp.Value("queueId"), status, uniq)
		return nil
	}
}

func setupConsumeMessage(fs *flag.FlagSet) func(*admin) error {
	topic := fs.String("t", "", "Topic name")
	brokerName := fs.String("b", "", "Broker name")
	queueID := fs.Int("i", -1, "Queue Id")
	offset := fs.Int64("o", -1, "Queue Offset (default: the queue's min offset)")
	group := fs.String("g", "TOOLS_CONSUMER", "Consumer group name")
	count := fs.Int("c", 128, "The number of messages to consume")
	return func(a *admin) error {
		if err := need("t", *topic); err != nil {
			return err
		}
		if *count < 1 {
			return errors.New("-c must be >= 1")
		}
		r, err := a.route(*topic)
		if err != nil {
			return err
		}
		var mqs []body.MessageQueue
		for _, q := range r.QueueDatas {
			if q.Perm&4 == 0 || (*brokerName != "" && q.BrokerName != *brokerName) {
				continue
			}
			for i := int32(0); i < q.ReadQueueNums; i++ {
				if *queueID < 0 || int32(*queueID) == i {
					mqs = append(mqs, body.MessageQueue{Topic: *topic, BrokerName: q.BrokerName, QueueID: i})
				}
			}
		}
		sort.Slice(mqs, func(i, j int) bool { return sortMQ(mqs[i], mqs[j]) })
		left := *count
		for _, mq := range mqs {
			if left == 0 {
				break
			}
			addr, ok := masterOf(&r, mq.BrokerName)
			if !ok {
				continue
			}
			n, err := a.pullQueue(addr, *group, mq, *offset, left)
			if err != nil {
				return err
			}
			left -= n
		}
		a.printf("Consumed %d message(s)\n", *count-left)
		return nil
	}
}

// pullQueue prints up to limit messages of mq from offset (-1: min offset)
// without long polling and returns how many it printed.
func (a *admin) pullQueue(addr, group string, mq body.MessageQueue, offset int64, limit int) (int, error) {
	if offset < 0 {
		req := request(codec.ReqGetMinOffset)
		(&header.GetMinOffsetRequest{Topic: mq.Topic, QueueID: mq.QueueID}).Encode(req)
		resp, err := a.call(addr, req)
		if err != nil {
			return 0, err
		}
		if offset, err = strconv.ParseInt(resp.Value("offset"), 10, 64); err != nil {
			return 0, fmt.Errorf("min offset of %s/%d: %w", mq.BrokerName, mq.QueueID, err)
		}
	}
	printed := 0
	for printed < limit {
		req := request(codec.ReqPullMessage)
		(&header.PullMessageRequest{ConsumerGroup: group, Topic: mq.Topic, QueueID: mq.QueueID, QueueOffset: offset,
			MaxMsgNums: int32(min(32, limit-printed)), SysFlag: 0x4, Subscription: "*", ExpressionType: "TAG"}).Encode(req)
		resp, err := a.invoke(addr, req)
		if err != nil {
			return printed, err
		}
		switch resp.Code {
		case int32(codec.RespSuccess):
		case int32(codec.RespPullNotFound), int32(codec.RespPullRetryImmediately), int32(codec.RespPullOffsetMoved):
			return printed, nil
		default:
			return printed, &respError{req: codec.ReqPullMessage, addr: addr, code: resp.Code, remark: resp.Remark}
		}
		msgs, err := decodeRecords(resp.Body)
		if err != nil {
			return printed, fmt.Errorf("pull reply from %s: %w", addr, err)
		}
		for i := range msgs {
			m := &msgs[i]
			b, _ := message.Decompress(m.Body, m.SysFlag, 0)
			a.printf("MSGID: %s BROKER: %s QID: %d OFFSET: %d BODY: %s\n", msgID(m), mq.BrokerName, m.QueueID, m.QueueOffset, b)
			printed++
		}
		next, err := strconv.ParseInt(resp.Value("nextBeginOffset"), 10, 64)
		if err != nil || next <= offset || len(msgs) == 0 {
			return printed, nil
		}
		offset = next
	}
	return printed, nil
}
