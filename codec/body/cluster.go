package body

import (
	"fmt"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// ClusterBrokers is one clusterAddrTable entry.
type ClusterBrokers struct {
	Cluster     string
	BrokerNames []string
}

// ClusterInfo is the GET_BROKER_CLUSTER_INFO (106) body.
type ClusterInfo struct {
	BrokerAddrTable  []BrokerData // keyed by BrokerName on the wire
	ClusterAddrTable []ClusterBrokers
}

// AppendClusterInfo writes info as Java's default fastjson does: brokerAddrs
// keys are bare integers whatever the requester's version.
func AppendClusterInfo(dst []byte, info *ClusterInfo) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.Key("brokerAddrTable")
	w.ObjectStart()
	for i := range info.BrokerAddrTable {
		w.Key(info.BrokerAddrTable[i].BrokerName)
		writeBrokerData(&w, &info.BrokerAddrTable[i])
	}
	w.ObjectEnd()
	w.Key("clusterAddrTable")
	w.ObjectStart()
	for _, c := range info.ClusterAddrTable {
		w.StringsField(c.Cluster, c.BrokerNames)
	}
	w.ObjectEnd()
	w.ObjectEnd()
	return w.Buf
}

// DecodeClusterInfo reads a ClusterInfo in either key form.
func DecodeClusterInfo(b []byte) (ClusterInfo, error) {
	var info ClusterInfo
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "brokerAddrTable":
			for rd.ObjectStart(); rd.More(); {
				name := rd.Key()
				bd := readBrokerData(rd)
				if bd.BrokerName == "" {
					bd.BrokerName = name
				}
				info.BrokerAddrTable = append(info.BrokerAddrTable, bd)
			}
		case "clusterAddrTable":
			for rd.ObjectStart(); rd.More(); {
				c := ClusterBrokers{Cluster: rd.Key()}
				c.BrokerNames = readStrings(rd)
				info.ClusterAddrTable = append(info.ClusterAddrTable, c)
			}
		default:
			rd.Skip()
		}
	}
	if err := rd.End(); err != nil {
		return info, fmt.Errorf("body: cluster info: %w", err)
	}
	return info, nil
}

// AppendBrokerMemberGroupBody writes the GET_BROKER_MEMBER_GROUP (901)
// body: {"brokerMemberGroup":{"brokerAddrs":{0:"…"},"brokerName":…,"cluster":…}}.
func AppendBrokerMemberGroupBody(dst []byte, cluster, brokerName string, addrs []BrokerAddr) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.Key("brokerMemberGroup")
	w.ObjectStart()
	w.Key("brokerAddrs")
	w.ObjectStart()
	for _, a := range addrs {
		w.KeyInt(a.ID)
		w.String(a.Addr)
	}
	w.ObjectEnd()
	w.StringField("brokerName", brokerName)
	w.StringField("cluster", cluster)
	w.ObjectEnd()
	w.ObjectEnd()
	return w.Buf
}
