package grpcsvc

import (
	"context"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Java's PermName bits.
const (
	permWrite = 1 << 1
	permRead  = 1 << 2
)

func validateTopic(r *v2.Resource) error {
	if r == nil || strings.TrimSpace(r.GetName()) == "" {
		return fail(v2.Code_ILLEGAL_TOPIC, "topic name cannot be empty")
	}
	if len(r.GetName()) > 127 {
		return fail(v2.Code_ILLEGAL_TOPIC, "topic name cannot exceed 127 characters")
	}
	return nil
}

func validateGroup(r *v2.Resource) error {
	if r == nil || strings.TrimSpace(r.GetName()) == "" {
		return fail(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group cannot be empty")
	}
	if len(r.GetName()) > 255 {
		return fail(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group cannot exceed 255 characters")
	}
	return nil
}

// endpoints are what QueryRoute hands out for every broker: the addresses
// the client dialed, with our gRPC port (RouteActivity.convertToAddressList).
func (s *Service) endpoints(req *v2.Endpoints) *v2.Endpoints {
	out := &v2.Endpoints{Scheme: req.GetScheme()}
	for _, a := range req.GetAddresses() {
		port := a.GetPort()
		if s.cfg.GRPCPort > 0 {
			port = int32(s.cfg.GRPCPort)
		}
		out.Addresses = append(out.Addresses, &v2.Address{Host: a.GetHost(), Port: port})
	}
	return out
}

// QueryRoute implements MessagingService: every queue of the topic, each
// with this endpoint as its broker's address.
func (s *Service) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	r, mt, err := s.queryRoute(ctx, req)
	if err != nil {
		return &v2.QueryRouteResponse{Status: errStatus(err)}, nil
	}
	ep := s.endpoints(req.GetEndpoints())
	var mqs []*v2.MessageQueue
	for _, q := range r.QueueDatas {
		bd := brokerData(r, q.BrokerName)
		if bd == nil {
			break // compat: Java stops at the first queue data without broker data
		}
		for _, a := range bd.BrokerAddrs {
			broker := &v2.Broker{Name: q.BrokerName, Id: int32(a.ID), Endpoints: ep}
			mqs = append(mqs, queuesOf(q, req.GetTopic(), mt, broker)...)
		}
	}
	return &v2.QueryRouteResponse{Status: okStatus(), MessageQueues: mqs}, nil
}

func (s *Service) queryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*body.TopicRouteData, []v2.MessageType, error) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return nil, nil, err
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return nil, nil, err
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	r, err := s.backend.Route(c, req.GetTopic().GetName())
	if err != nil {
		return nil, nil, err
	}
	return r, s.topicMessageTypes(c, r, req.GetTopic().GetName()), nil
}

func brokerData(r *body.TopicRouteData, name string) *body.BrokerData {
	for i := range r.BrokerDatas {
		if r.BrokerDatas[i].BrokerName == name {
			return &r.BrokerDatas[i]
		}
	}
	return nil
}

// queuesOf is genMessageQueueFromQueueData: read-only, write-only,
// read-write queues, then inaccessible ones, numbered in that order.
func queuesOf(q body.QueueData, topic *v2.Resource, mt []v2.MessageType, broker *v2.Broker) []*v2.MessageQueue {
	var r, w, rw, n int32
	readable, writable := q.Perm&permRead != 0, q.Perm&permWrite != 0
	switch {
	case readable && writable:
		rw = min(q.WriteQueueNums, q.ReadQueueNums)
		r = q.ReadQueueNums - rw
		w = q.WriteQueueNums - rw
	case writable:
		w = q.WriteQueueNums
	case readable:
		r = q.ReadQueueNums
	default:
		n = max(1, max(q.WriteQueueNums, q.ReadQueueNums))
	}
	var out []*v2.MessageQueue
	id := int32(0)
	add := func(count int32, p v2.Permission) {
		for range count {
			out = append(out, &v2.MessageQueue{Topic: topic, Id: id, Permission: p, Broker: broker, AcceptMessageTypes: mt})
			id++
		}
	}
	add(r, v2.Permission_READ)
	add(w, v2.Permission_WRITE)
	add(rw, v2.Permission_READ_WRITE)
	add(n, v2.Permission_NONE)
	return out
}

// topicMessageTypes is the topic's message.type attribute as
// parseTopicMessageType maps it (NORMAL when the topic has none, as
// TopicConfig.getTopicMessageType defaults).
func (s *Service) topicMessageTypes(ctx context.Context, r *body.TopicRouteData, topic string) []v2.MessageType {
	switch s.topicMessageType(ctx, r, topic) {
	case "FIFO":
		return []v2.MessageType{v2.MessageType_FIFO}
	case "TRANSACTION":
		return []v2.MessageType{v2.MessageType_TRANSACTION}
	case "DELAY":
		return []v2.MessageType{v2.MessageType_DELAY}
	case "MIXED":
		return []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}
	case "UNSPECIFIED":
		return []v2.MessageType{v2.MessageType_MESSAGE_TYPE_UNSPECIFIED}
	}
	return []v2.MessageType{v2.MessageType_NORMAL}
}

// topicMessageType asks a broker of the route for the topic's config
// (GET_TOPIC_CONFIG, as ClusterMetadataService does).
func (s *Service) topicMessageType(ctx context.Context, r *body.TopicRouteData, topic string) string {
	for _, q := range r.QueueDatas {
		addr, ok := masterAddr(r, q.BrokerName)
		if !ok {
			continue
		}
		resp, err := s.backend.Invoke(ctx, addr, newRequest(codec.ReqGetTopicConfig, &header.GetTopicConfigRequest{Topic: topic}))
		if err != nil || resp.Code != int32(codec.RespSuccess) {
			continue
		}
		var tc body.TopicConfig // Java's TopicConfigAndQueueMapping: a flat TopicConfig
		if fastjson.Unmarshal(resp.Body, &tc) != nil {
			continue
		}
		attrs := tc.Attributes
		for _, k := range []string{"message.type", "+message.type"} {
			if v, ok := attrs[k]; ok && v != "" {
				return strings.ToUpper(v)
			}
		}
		return "NORMAL"
	}
	return "NORMAL"
}

// QueryAssignment implements MessagingService (RouteActivity): one
// assignment per readable master with queue id -1 (the broker pops all its
// queues), or one per queue for a FIFO group.
func (s *Service) QueryAssignment(ctx context.Context, req *v2.QueryAssignmentRequest) (*v2.QueryAssignmentResponse, error) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return &v2.QueryAssignmentResponse{Status: errStatus(err)}, nil
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.QueryAssignmentResponse{Status: errStatus(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.QueryAssignmentResponse{Status: errStatus(err)}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	r, err := s.backend.Route(c, req.GetTopic().GetName())
	if err != nil {
		return &v2.QueryAssignmentResponse{Status: errStatus(err)}, nil
	}
	gc := s.groupConfig(c, r, req.GetGroup().GetName())
	ep := s.endpoints(req.GetEndpoints())
	var as []*v2.Assignment
	for _, q := range r.QueueDatas {
		if q.Perm&permRead == 0 || q.ReadQueueNums <= 0 {
			continue
		}
		bd := brokerData(r, q.BrokerName)
		if bd == nil {
			continue
		}
		if _, ok := bd.Addr(0); !ok {
			continue
		}
		broker := &v2.Broker{Name: q.BrokerName, Id: 0, Endpoints: ep}
		perm := permission(q.Perm)
		if gc.ConsumeMessageOrderly {
			for i := int32(0); i < q.ReadQueueNums; i++ {
				as = append(as, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: i, Permission: perm, Broker: broker}})
			}
		} else {
			as = append(as, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: -1, Permission: perm, Broker: broker}})
		}
	}
	if len(as) == 0 {
		return &v2.QueryAssignmentResponse{Status: newStatus(v2.Code_FORBIDDEN, "no readable queue")}, nil
	}
	return &v2.QueryAssignmentResponse{Status: okStatus(), Assignments: as}, nil
}

func permission(p int32) v2.Permission {
	switch r, w := p&permRead != 0, p&permWrite != 0; {
	case r && w:
		return v2.Permission_READ_WRITE
	case r:
		return v2.Permission_READ
	case w:
		return v2.Permission_WRITE
	}
	return v2.Permission_NONE
}

// groupConfig is the consumer group's subscription group config from a
// master of route (GET_SUBSCRIPTIONGROUP_CONFIG), Java's defaults when no
// broker has it.
func (s *Service) groupConfig(ctx context.Context, r *body.TopicRouteData, group string) body.SubscriptionGroupConfig {
	def := body.NewSubscriptionGroupConfig(group)
	if r == nil {
		return def
	}
	for _, bd := range r.BrokerDatas {
		addr, ok := bd.Addr(0)
		if !ok {
			continue
		}
		resp, err := s.backend.Invoke(ctx, addr, newRequest(codec.ReqGetSubscriptiongroupConfig, &header.GetSubscriptionGroupConfigRequest{Group: group}))
		if err != nil || resp.Code != int32(codec.RespSuccess) {
			continue
		}
		gc, err := body.DecodeSubscriptionGroupConfig(resp.Body)
		if err != nil {
			continue
		}
		return gc
	}
	return def
}
