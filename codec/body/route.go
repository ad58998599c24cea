package body

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// QueueData is one broker's queues of a topic in a route.
type QueueData struct {
	BrokerName     string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32
	TopicSysFlag   int32
}

// BrokerAddr is one brokerAddrs entry: broker id (0 = master) → "ip:port".
type BrokerAddr struct {
	ID   int64
	Addr string
}

// BrokerData is one broker group (master and slaves) in a route or in
// ClusterInfo.
type BrokerData struct {
	Cluster            string
	BrokerName         string
	BrokerAddrs        []BrokerAddr // ascending by ID, as Java's HashMap<Long,…> iterates
	ZoneName           string       // omitted when empty
	EnableActingMaster bool
}

// Addr returns the address of broker id.
func (b *BrokerData) Addr(id int64) (string, bool) {
	for _, a := range b.BrokerAddrs {
		if a.ID == id {
			return a.Addr, true
		}
	}
	return "", false
}

// SortAddrs orders BrokerAddrs by id.
func (b *BrokerData) SortAddrs() {
	sort.Slice(b.BrokerAddrs, func(i, j int) bool { return b.BrokerAddrs[i].ID < b.BrokerAddrs[j].ID })
}

// FilterServers is one filterServerTable entry.
type FilterServers struct {
	BrokerAddr string
	Servers    []string
}

// MappingInfo is one topicQueueMappingByBroker entry (5.x static topics),
// kept as the raw TopicQueueMappingInfo JSON the broker registered.
type MappingInfo struct {
	BrokerName string
	JSON       []byte
}

// TopicRouteData is the GET_ROUTEINFO_BY_TOPIC (105) body.
type TopicRouteData struct {
	OrderTopicConf    string // omitted when empty
	QueueDatas        []QueueData
	BrokerDatas       []BrokerData
	FilterServerTable []FilterServers
	MappingByBroker   []MappingInfo // omitted when nil (clients switch to static-topic routing otherwise)
}

// AppendTopicRouteData writes r. browser selects Java's encoding for
// requesters at version >= V4_9_4 (BrowserCompatible: quoted brokerAddrs
// keys); otherwise brokerAddrs keys are bare integers as fastjson's default.
func AppendTopicRouteData(dst []byte, r *TopicRouteData, browser bool) []byte {
	w := fastjson.Writer{Buf: dst, Browser: browser}
	w.ObjectStart()
	w.Key("brokerDatas")
	w.ArrayStart()
	for i := range r.BrokerDatas {
		writeBrokerData(&w, &r.BrokerDatas[i])
	}
	w.ArrayEnd()
	w.Key("filterServerTable")
	w.ObjectStart()
	for _, fs := range r.FilterServerTable {
		w.StringsField(fs.BrokerAddr, fs.Servers)
	}
	w.ObjectEnd()
	w.OptStringField("orderTopicConf", r.OrderTopicConf)
	w.Key("queueDatas")
	w.ArrayStart()
	for i := range r.QueueDatas {
		writeQueueData(&w, &r.QueueDatas[i])
	}
	w.ArrayEnd()
	if r.MappingByBroker != nil {
		w.Key("topicQueueMappingByBroker")
		w.ObjectStart()
		for _, m := range r.MappingByBroker {
			w.Key(m.BrokerName)
			w.Raw(m.JSON)
		}
		w.ObjectEnd()
	}
	w.ObjectEnd()
	return w.Buf
}

func writeQueueData(w *fastjson.Writer, q *QueueData) {
	w.ObjectStart()
	w.StringField("brokerName", q.BrokerName)
	w.IntField("perm", int64(q.Perm))
	w.IntField("readQueueNums", int64(q.ReadQueueNums))
	w.IntField("topicSysFlag", int64(q.TopicSysFlag))
	w.IntField("writeQueueNums", int64(q.WriteQueueNums))
	w.ObjectEnd()
}

func writeBrokerData(w *fastjson.Writer, b *BrokerData) {
	w.ObjectStart()
	w.Key("brokerAddrs")
	w.ObjectStart()
	for _, a := range b.BrokerAddrs {
		w.KeyInt(a.ID)
		w.String(a.Addr)
	}
	w.ObjectEnd()
	w.StringField("brokerName", b.BrokerName)
	w.StringField("cluster", b.Cluster)
	w.BoolField("enableActingMaster", b.EnableActingMaster)
	w.OptStringField("zoneName", b.ZoneName)
	w.ObjectEnd()
}

// DecodeTopicRouteData reads a route in either key form.
func DecodeTopicRouteData(b []byte) (TopicRouteData, error) {
	var r TopicRouteData
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "orderTopicConf":
			r.OrderTopicConf = rd.String()
		case "queueDatas":
			for rd.ArrayStart(); rd.More(); {
				r.QueueDatas = append(r.QueueDatas, readQueueData(rd))
			}
		case "brokerDatas":
			for rd.ArrayStart(); rd.More(); {
				r.BrokerDatas = append(r.BrokerDatas, readBrokerData(rd))
			}
		case "filterServerTable":
			for rd.ObjectStart(); rd.More(); {
				fs := FilterServers{BrokerAddr: rd.Key()}
				fs.Servers = readStrings(rd)
				r.FilterServerTable = append(r.FilterServerTable, fs)
			}
		case "topicQueueMappingByBroker":
			r.MappingByBroker = []MappingInfo{}
			for rd.ObjectStart(); rd.More(); {
				k := rd.Key()
				r.MappingByBroker = append(r.MappingByBroker, MappingInfo{BrokerName: k, JSON: append([]byte(nil), rd.Raw()...)})
			}
		default:
			rd.Skip()
		}
	}
	if err := rd.End(); err != nil {
		return r, fmt.Errorf("body: topic route data: %w", err)
	}
	return r, nil
}

func readQueueData(rd *fastjson.Reader) QueueData {
	var q QueueData
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "brokerName":
			q.BrokerName = rd.String()
		case "perm":
			q.Perm = int32(rd.Int())
		case "readQueueNums":
			q.ReadQueueNums = int32(rd.Int())
		case "writeQueueNums":
			q.WriteQueueNums = int32(rd.Int())
		case "topicSysFlag", "topicSynFlag": // compat: the Go client's tag is misspelt
			q.TopicSysFlag = int32(rd.Int())
		default:
			rd.Skip()
		}
	}
	return q
}

func readBrokerData(rd *fastjson.Reader) BrokerData {
	var b BrokerData
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "cluster":
			b.Cluster = rd.String()
		case "brokerName":
			b.BrokerName = rd.String()
		case "zoneName":
			b.ZoneName = rd.String()
		case "enableActingMaster":
			b.EnableActingMaster = rd.Bool()
		case "brokerAddrs":
			for rd.ObjectStart(); rd.More(); {
				k := rd.Key()
				id, err := strconv.ParseInt(k, 10, 64)
				if err != nil {
					rd.Fail("brokerAddrs key is not a number")
				}
				b.BrokerAddrs = append(b.BrokerAddrs, BrokerAddr{ID: id, Addr: rd.String()})
			}
		default:
			rd.Skip()
		}
	}
	b.SortAddrs()
	return b
}

func readStrings(rd *fastjson.Reader) []string {
	out := []string{}
	for rd.ArrayStart(); rd.More(); {
		out = append(out, rd.String())
	}
	return out
}
