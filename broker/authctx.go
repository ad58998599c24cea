package broker

import (
	"fmt"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
)

// authTarget is one thing a request asks to do: actions on one resource.
// A request is allowed when each of its targets is.
type authTarget struct {
	typ     header.ResourceType
	name    string
	actions header.Action
}

// groupOf is Java's Resource.ofGroup: a retry topic names its group.
func groupOf(name string, actions header.Action) authTarget {
	if isRetryTopic(name) {
		name = strings.TrimPrefix(strings.TrimPrefix(name, RetryGroupPrefix), DLQGroupPrefix)
	}
	return authTarget{typ: header.ResourceGroup, name: name, actions: actions}
}

func topicOf(name string, actions header.Action) authTarget {
	return authTarget{typ: header.ResourceTopic, name: name, actions: actions}
}

// authTargets appends to dst the targets of req, as Java 5.3.3's
// DefaultAuthorizationContextBuilder builds them for a remoting request:
// its special cases for the client codes (sends to a retry topic act on
// the group; pulls, heartbeats and locks name groups and topics), and for
// every other code the header's @RocketMQAction/@RocketMQResource facts
// (header.AuthzOf), a cluster-wide code acting on cluster. A request with
// no extFields, or whose header is not annotated, has no targets. A body
// that does not decode is an error, as in Java ("parse authorization
// context error.").
func authTargets(dst []authTarget, req *codec.Frame, cluster string) ([]authTarget, error) {
	if len(req.Ext) == 0 {
		return dst, nil
	}
	v := func(k string) string { s, _ := req.Get(k); return s }
	switch codec.RequestCode(req.Code) {
	case codec.ReqGetRouteinfoByTopic:
		if t := v("topic"); isRetryTopic(t) {
			return append(dst, groupOf(t, header.ActionSub|header.ActionGet)), nil
		} else {
			return append(dst, topicOf(t, header.ActionPub|header.ActionSub|header.ActionGet)), nil
		}
	case codec.ReqSendMessage:
		return sendTarget(dst, v("topic"), v("producerGroup")), nil
	case codec.ReqSendMessageV2, codec.ReqSendBatchMessage:
		return sendTarget(dst, v("b"), v("a")), nil
	case codec.ReqRecallMessage:
		return append(dst, topicOf(v("topic"), header.ActionPub)), nil
	case codec.ReqEndTransaction:
		if t := v("topic"); t != "" {
			dst = append(dst, topicOf(t, header.ActionPub))
		}
		return dst, nil
	case codec.ReqConsumerSendMsgBack:
		return append(dst, groupOf(v("group"), header.ActionSub)), nil
	case codec.ReqPullMessage:
		if t := v("topic"); !isRetryTopic(t) {
			dst = append(dst, topicOf(t, header.ActionSub))
		}
		return append(dst, groupOf(v("consumerGroup"), header.ActionSub)), nil
	case codec.ReqQueryMessage:
		return append(dst, topicOf(v("topic"), header.ActionSub|header.ActionGet)), nil
	case codec.ReqHeartBeat:
		hb, err := body.DecodeHeartbeat(req.Body)
		if err != nil {
			return dst, fmt.Errorf("heartbeat body: %w", err)
		}
		for _, cd := range hb.ConsumerDataSet {
			dst = append(dst, groupOf(cd.GroupName, header.ActionSub))
			for _, s := range cd.SubscriptionDataSet {
				if !isRetryTopic(s.Topic) {
					dst = append(dst, topicOf(s.Topic, header.ActionSub))
				}
			}
		}
		return dst, nil
	case codec.ReqUnregisterClient:
		if g := v("consumerGroup"); g != "" {
			dst = append(dst, groupOf(g, header.ActionSub))
		}
		return dst, nil
	case codec.ReqGetConsumerListByGroup:
		return append(dst, groupOf(v("consumerGroup"), header.ActionSub|header.ActionGet)), nil
	case codec.ReqQueryConsumerOffset, codec.ReqUpdateConsumerOffset:
		acts := header.ActionSub | header.ActionGet
		if req.Code == int32(codec.ReqUpdateConsumerOffset) {
			acts = header.ActionSub | header.ActionUpdate
		}
		if t := v("topic"); !isRetryTopic(t) {
			dst = append(dst, topicOf(t, acts))
		}
		return append(dst, groupOf(v("consumerGroup"), acts)), nil
	case codec.ReqLockBatchMq, codec.ReqUnlockBatchMq:
		lb, err := body.DecodeLockBatchRequest(req.Body)
		if err != nil {
			return dst, fmt.Errorf("lock batch body: %w", err)
		}
		dst = append(dst, groupOf(lb.ConsumerGroup, header.ActionSub))
		for _, mq := range lb.MQSet {
			if !isRetryTopic(mq.Topic) {
				dst = append(dst, topicOf(mq.Topic, header.ActionSub))
			}
		}
		return dst, nil
	}
	return annotatedTargets(dst, req, cluster), nil
}

// sendTarget is a send's target: Pub on its topic, or Sub on the group of
// a retry topic (a consumer sending a message back).
func sendTarget(dst []authTarget, topic, group string) []authTarget {
	if !isRetryTopic(topic) {
		return append(dst, topicOf(topic, header.ActionPub))
	}
	if group == "" {
		group = topic
	}
	return append(dst, groupOf(group, header.ActionSub))
}

// annotatedTargets is Java's buildContextByAnnotation.
func annotatedTargets(dst []authTarget, req *codec.Frame, cluster string) []authTarget {
	az, ok := header.AuthzOf(codec.RequestCode(req.Code))
	if !ok {
		return dst
	}
	n := len(dst)
	for _, f := range az.Fields {
		val, ok := req.Get(f.Key)
		if !ok {
			continue
		}
		for _, name := range splitNames(val, f.Split) {
			if f.Type == header.ResourceTopic && isRetryTopic(name) {
				dst = append(dst, groupOf(name, az.Actions))
			} else {
				dst = append(dst, authTarget{typ: f.Type, name: name, actions: az.Actions})
			}
		}
	}
	if len(dst) == n && az.Resource == header.ResourceCluster {
		dst = append(dst, authTarget{typ: header.ResourceCluster, name: cluster, actions: az.Actions})
	}
	return dst
}

// splitNames is commons-lang StringUtils.split: empty pieces dropped.
func splitNames(s, sep string) []string {
	if sep == "" {
		return []string{s}
	}
	return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(sep, r) })
}
