package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

const ctlTimeout = 5 * time.Second

// topicRoute is the part of TopicRouteData mqbench uses.
type topicRoute struct {
	BrokerDatas []struct {
		BrokerName  string            `json:"brokerName"`
		Cluster     string            `json:"cluster"`
		BrokerAddrs map[string]string `json:"brokerAddrs"`
	} `json:"brokerDatas"`
	QueueDatas []struct {
		BrokerName     string `json:"brokerName"`
		ReadQueueNums  int    `json:"readQueueNums"`
		WriteQueueNums int    `json:"writeQueueNums"`
		Perm           int    `json:"perm"`
	} `json:"queueDatas"`
}

// brokerQueues is one broker of a broker group and the queue ids mqbench
// uses on it: the master, or for reads a slave when the route has no master.
type brokerQueues struct {
	Name   string
	Addr   string
	Slave  bool // Addr is a slave's (reads only)
	Queues []int
}

var bareKey = regexp.MustCompile(`([{,])(-?[0-9]+):`)

// unmarshalFastjson parses JSON that may use fastjson's unquoted integer
// map keys ({0:"addr"}).
func unmarshalFastjson(b []byte, v any) error {
	if err := fastjson.Unmarshal(b, v); err == nil {
		return nil
	}
	return fastjson.Unmarshal(bareKey.ReplaceAll(b, []byte(`$1"$2":`)), v)
}

func newRequest(code codec.RequestCode, kv ...string) *codec.Frame {
	f := &codec.Frame{Code: int32(code), Language: codec.LangGo, Version: clientVersion}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Ext = append(f.Ext, codec.KV{Key: kv[i], Value: kv[i+1]})
	}
	return f
}

// invokeOnce dials addr, sends one request and returns a copy of the reply.
func invokeOnce(addr string, req *codec.Frame) (*codec.Frame, error) {
	c, err := dialRPC(addr)
	if err != nil {
		return nil, err
	}
	defer c.close()
	cl := newCall()
	if err := c.invoke(req, cl, ctlTimeout); err != nil {
		return nil, err
	}
	resp := cl.resp
	resp.Ext = append([]codec.KV(nil), cl.resp.Ext...)
	return &resp, nil // strings alias cl.buf, which is not reused
}

func respError(what string, f *codec.Frame) error {
	return fmt.Errorf("%s: %s (%d) %q", what, codec.ResponseCode(f.Code), f.Code, f.Remark)
}

// queryRoute asks the name server for topic's route. A missing topic
// returns (nil, nil).
func queryRoute(ns, topic string) (*topicRoute, error) {
	resp, err := invokeOnce(ns, newRequest(codec.ReqGetRouteinfoByTopic, "topic", topic))
	if err != nil {
		return nil, fmt.Errorf("route of %s: %w", topic, err)
	}
	if resp.Code == int32(codec.RespTopicNotExist) {
		return nil, nil
	}
	if resp.Code != 0 {
		return nil, respError("route of "+topic, resp)
	}
	var r topicRoute
	if err := unmarshalFastjson(resp.Body, &r); err != nil {
		return nil, fmt.Errorf("route of %s: %w", topic, err)
	}
	return &r, nil
}

// queues lists the writable (or readable) queues per broker group, sorted
// by broker name, as clients build their publish/subscribe lists. Sends go
// to the master only; reads go to the master, or, like the Java client's
// findBrokerAddressInSubscribe when the master is absent, to the slave
// with the lowest id (a slave with slaveReadEnable serves pulls).
func (r *topicRoute) queues(write bool) []brokerQueues {
	var out []brokerQueues
	for _, q := range r.QueueDatas {
		n, perm := q.ReadQueueNums, 4
		if write {
			n, perm = q.WriteQueueNums, 2
		}
		if q.Perm&perm == 0 || n == 0 {
			continue
		}
		for _, b := range r.BrokerDatas {
			if b.BrokerName != q.BrokerName {
				continue
			}
			id, addr := int64(masterID), b.BrokerAddrs["0"]
			if addr == "" && !write {
				id, addr = lowestSlave(b.BrokerAddrs)
			}
			if addr == "" {
				continue
			}
			bq := brokerQueues{Name: b.BrokerName, Addr: addr, Slave: id != masterID}
			for i := 0; i < n; i++ {
				bq.Queues = append(bq.Queues, i)
			}
			out = append(out, bq)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// masterID is Java's MixAll.MASTER_ID.
const masterID = 0

// lowestSlave picks the slave with the lowest broker id from brokerAddrs
// (ids are decimal strings); (-1, "") when there is none.
func lowestSlave(addrs map[string]string) (int64, string) {
	best, bestAddr := int64(-1), ""
	for k, a := range addrs {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil || id <= masterID || a == "" {
			continue
		}
		if best < 0 || id < best {
			best, bestAddr = id, a
		}
	}
	return best, bestAddr
}

// clusterMasters returns brokerName → master address from the name server.
func clusterMasters(ns string) (map[string]string, error) {
	resp, err := invokeOnce(ns, newRequest(codec.ReqGetBrokerClusterInfo))
	if err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	if resp.Code != 0 {
		return nil, respError("cluster info", resp)
	}
	var ci struct {
		BrokerAddrTable map[string]struct {
			BrokerAddrs map[string]string `json:"brokerAddrs"`
		} `json:"brokerAddrTable"`
	}
	if err := unmarshalFastjson(resp.Body, &ci); err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	out := make(map[string]string)
	for name, b := range ci.BrokerAddrTable {
		if a := b.BrokerAddrs["0"]; a != "" {
			out[name] = a
		}
	}
	return out, nil
}

// createTopic sends UPDATE_AND_CREATE_TOPIC to one broker.
func createTopic(addr, topic string, queues int, perm int) error {
	q := strconv.Itoa(queues)
	req := newRequest(codec.ReqUpdateAndCreateTopic,
		"topic", topic, "defaultTopic", "TBW102", "readQueueNums", q, "writeQueueNums", q,
		"perm", strconv.Itoa(perm), "topicFilterType", "SINGLE_TAG", "topicSysFlag", "0", "order", "false")
	resp, err := invokeOnce(addr, req)
	if err != nil {
		return fmt.Errorf("create topic %s on %s: %w", topic, addr, err)
	}
	if resp.Code != 0 {
		return respError("create topic "+topic+" on "+addr, resp)
	}
	return nil
}

// ensureTopic creates topic on every master known to the name server (or
// on broker when given) and waits until the name server routes it.
func ensureTopic(ns, broker, topic string, queues int) error {
	if broker != "" {
		return createTopic(broker, topic, queues, 6)
	}
	masters, err := clusterMasters(ns)
	if err != nil {
		return err
	}
	if len(masters) == 0 {
		return fmt.Errorf("create topic %s: no broker registered at %s", topic, ns)
	}
	for _, addr := range masters {
		if err := createTopic(addr, topic, queues, 6); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, err := queryRoute(ns, topic)
		if err == nil && r != nil && len(r.queues(true)) == len(masters) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("create topic %s: name server has no route after 15s (last error %v)", topic, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the name server, bounded above
	}
}

// resolveQueues finds where to send or pull: the broker given directly
// (queues 0..n-1), or the route from the name server.
func resolveQueues(ns, broker, topic string, queues int, write bool) ([]brokerQueues, error) {
	if broker != "" {
		bq := brokerQueues{Addr: broker}
		for i := 0; i < queues; i++ {
			bq.Queues = append(bq.Queues, i)
		}
		return []brokerQueues{bq}, nil
	}
	r, err := queryRoute(ns, topic)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("topic %s has no route at %s (use -create)", topic, ns)
	}
	out := r.queues(write)
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %s: route has no usable queues", topic)
	}
	return out, nil
}
