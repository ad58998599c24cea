package body

import (
	"strconv"

	"github.com/rocketgo/rocketgo/codec"
)

// AppendConsumerIDList writes the GET_CONSUMER_LIST_BY_GROUP (38) body
// {"consumerIdList":[…]}.
func AppendConsumerIDList(dst []byte, ids []string) []byte {
	dst = append(dst, `{"consumerIdList":[`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, id)
	}
	return append(dst, "]}"...)
}

// Connection is one client connection as admin bodies show it.
type Connection struct {
	ClientID   string
	ClientAddr string
	Language   codec.LanguageCode
	Version    int32
}

func appendConnection(dst []byte, c *Connection) []byte {
	dst = append(dst, `{"clientAddr":`...)
	dst = appendString(dst, c.ClientAddr)
	dst = append(dst, `,"clientId":`...)
	dst = appendString(dst, c.ClientID)
	dst = append(dst, `,"language":"`...)
	dst = append(dst, c.Language.String()...)
	dst = append(dst, `","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}')
}

func appendConnectionSet(dst []byte, cs []Connection) []byte {
	dst = append(dst, `"connectionSet":[`...)
	for i := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendConnection(dst, &cs[i])
	}
	return append(dst, ']')
}

// ConsumerConnection is the GET_CONSUMER_CONNECTION_LIST (203) body.
type ConsumerConnection struct {
	Connections      []Connection
	Subscriptions    []SubscriptionData // subscriptionTable, keyed by topic
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
}

// AppendConsumerConnection writes c as fastjson does.
func AppendConsumerConnection(dst []byte, c *ConsumerConnection) []byte {
	dst = append(dst, '{')
	dst = appendConnectionSet(dst, c.Connections)
	if c.ConsumeFromWhere != "" {
		dst = append(dst, `,"consumeFromWhere":`...)
		dst = appendString(dst, c.ConsumeFromWhere)
	}
	if c.ConsumeType != "" {
		dst = append(dst, `,"consumeType":`...)
		dst = appendString(dst, c.ConsumeType)
	}
	if c.MessageModel != "" {
		dst = append(dst, `,"messageModel":`...)
		dst = appendString(dst, c.MessageModel)
	}
	dst = append(dst, `,"subscriptionTable":{`...)
	for i := range c.Subscriptions {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, c.Subscriptions[i].Topic)
		dst = append(dst, ':')
		dst = AppendSubscriptionData(dst, &c.Subscriptions[i])
	}
	return append(dst, "}}"...)
}

// AppendProducerConnection writes the GET_PRODUCER_CONNECTION_LIST (204) body.
func AppendProducerConnection(dst []byte, cs []Connection) []byte {
	dst = append(dst, '{')
	dst = appendConnectionSet(dst, cs)
	return append(dst, '}')
}

// AppendGroupList writes the QUERY_TOPIC_CONSUME_BY_WHO (300) body
// {"groupList":[…]}.
func AppendGroupList(dst []byte, groups []string) []byte {
	dst = append(dst, `{"groupList":[`...)
	for i, g := range groups {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, g)
	}
	return append(dst, "]}"...)
}
