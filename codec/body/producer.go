package body

import (
	"strconv"

	"github.com/rocketgo/rocketgo/codec"
)

// ProducerInfo is one producer connection of GET_ALL_PRODUCER_INFO's
// ProducerTableInfo.
type ProducerInfo struct {
	ClientID   string
	RemoteIP   string // Java's Channel.remoteAddress().toString(): "/127.0.0.1:40000"
	Language   codec.LanguageCode
	Version    int32
	LastUpdate int64 // unix ms
}

// ProducerGroup is one group's producers, in the order written.
type ProducerGroup struct {
	Group     string
	Producers []ProducerInfo
}

// AppendProducerTableInfo writes the GET_ALL_PRODUCER_INFO (328) body as
// fastjson does: {"data":{"<group>":[{"clientId":…,"language":…,
// "lastUpdateTimestamp":…,"remoteIP":…,"version":…}]}}.
func AppendProducerTableInfo(dst []byte, groups []ProducerGroup) []byte {
	dst = append(dst, `{"data":{`...)
	for i, g := range groups {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, g.Group)
		dst = append(dst, ":["...)
		for j := range g.Producers {
			p := &g.Producers[j]
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"clientId":`...)
			dst = appendString(dst, p.ClientID)
			dst = append(dst, `,"language":"`...)
			dst = append(dst, p.Language.String()...)
			dst = append(dst, `","lastUpdateTimestamp":`...)
			dst = strconv.AppendInt(dst, p.LastUpdate, 10)
			dst = append(dst, `,"remoteIP":`...)
			dst = appendString(dst, p.RemoteIP)
			dst = append(dst, `,"version":`...)
			dst = strconv.AppendInt(dst, int64(p.Version), 10)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}"...)
}
