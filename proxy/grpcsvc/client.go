package grpcsvc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	gstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// client is one SDK instance (x-mq-client-id) the service knows.
type client struct {
	id       string
	settings *v2.Settings // as the client sent them, merged with the server's
	out      chan *v2.TelemetryCommand
	seen     time.Time
}

// registry holds the clients' settings and telemetry streams.
type registry struct {
	mu      sync.Mutex
	max     int
	clients map[string]*client // guarded by mu
}

func newRegistry(max int) *registry {
	return &registry{max: max, clients: map[string]*client{}}
}

func (r *registry) put(id string, st *v2.Settings, out chan *v2.TelemetryCommand) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.clients[id]
	if !ok {
		if len(r.clients) >= r.max {
			r.expire(time.Now().Add(-3 * time.Minute))
			if len(r.clients) >= r.max {
				return fail(v2.Code_TOO_MANY_REQUESTS, "too many clients")
			}
		}
		c = &client{id: id}
		r.clients[id] = c
	}
	c.settings, c.seen = st, time.Now()
	if out != nil {
		c.out = out
	}
	return nil
}

// expire drops clients unseen since before; mu held.
func (r *registry) expire(before time.Time) {
	for id, c := range r.clients {
		if c.seen.Before(before) && c.out == nil {
			delete(r.clients, id)
		}
	}
}

func (r *registry) settings(id string) *v2.Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[id]; ok {
		c.seen = time.Now()
		return c.settings
	}
	return nil
}

// online reports a client known with a telemetry stream, or seen since
// before (Java: the channel the consumer manager still finds).
func (r *registry) online(id string, before time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.clients[id]
	return ok && (c.out != nil || !c.seen.Before(before))
}

// clientOnline is the renewer's check of a client (renew.go): gone once
// terminated, or without a telemetry stream for the idle time.
func (s *Service) clientOnline(id string) bool {
	idle := s.cfg.IdleTimeout
	if idle <= 0 {
		idle = Default().IdleTimeout
	}
	return s.clients.online(id, time.Now().Add(-idle))
}

// clientBackoff is the retry delay of a client's group after attempt+1
// deliveries (its merged BackoffPolicy).
func (s *Service) clientBackoff(id string, attempt int32) time.Duration {
	r := s.clients.peek(id)
	if r == nil {
		return backoffDelay(nil, attempt)
	}
	return backoffDelay(r.GetBackoffPolicy(), attempt)
}

// peek is id's settings without marking it seen.
func (r *registry) peek(id string) *v2.Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[id]; ok {
		return c.settings
	}
	return nil
}

// detach forgets out as id's telemetry stream, if it still is.
func (r *registry) detach(id string, out chan *v2.TelemetryCommand) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[id]; ok && c.out == out {
		c.out = nil
	}
}

func (r *registry) remove(id string) *v2.Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.clients[id]
	if !ok {
		return nil
	}
	delete(r.clients, id)
	return c.settings
}

// stream is the telemetry stream of client id, nil when it has none.
func (r *registry) stream(id string) chan *v2.TelemetryCommand {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[id]; ok {
		return c.out
	}
	return nil
}

// producerStream is the telemetry stream of a producer publishing topic
// (Java's proxy uses the topic as the producer group).
func (r *registry) producerStream(topic string) chan *v2.TelemetryCommand {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		if c.out == nil || c.settings.GetPublishing() == nil {
			continue
		}
		for _, t := range c.settings.GetPublishing().GetTopics() {
			if t.GetName() == topic {
				return c.out
			}
		}
	}
	return nil
}

// Telemetry implements MessagingService: the client sends its Settings and
// gets them back merged with the server's (GrpcClientSettingsManager);
// the server pushes transaction check-backs on it.
func (s *Service) Telemetry(stream grpc.BidiStreamingServer[v2.TelemetryCommand, v2.TelemetryCommand]) error {
	ctx := stream.Context()
	m := clientMeta(ctx)
	// The writer (and its queue) start with the first Settings: a stream
	// that never sends any costs only its own goroutine.
	var out chan *v2.TelemetryCommand
	writeErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	startWriter := func() {
		out = make(chan *v2.TelemetryCommand, 64)
		go func() {
			for {
				select {
				case cmd := <-out:
					if err := stream.Send(cmd); err != nil {
						writeErr <- err
						return
					}
				case <-done:
					return
				}
			}
		}()
	}
	defer func() {
		if m.clientID != "" && out != nil {
			s.clients.detach(m.clientID, out)
		}
	}()
	for first := true; ; first = false {
		var cmd *v2.TelemetryCommand
		var err error
		if first {
			cmd, err = s.firstCommand(stream) // bounded (limits.go)
		} else {
			cmd, err = stream.Recv()
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case err := <-writeErr:
			return err
		default:
		}
		switch c := cmd.GetCommand().(type) {
		case *v2.TelemetryCommand_Settings:
			if m.clientID == "" {
				return gstatus.Error(codes.InvalidArgument, "client id cannot be empty")
			}
			if out == nil {
				startWriter()
			}
			resp, err := s.telemetrySettings(ctx, m, c.Settings, out)
			if err != nil {
				return gstatus.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.Error())
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				return ctx.Err()
			}
		case *v2.TelemetryCommand_ThreadStackTrace:
			s.answerJstack(m.clientID, cmd.GetStatus(), c.ThreadStackTrace) // relay.go
		case *v2.TelemetryCommand_VerifyMessageResult:
			s.answerVerify(m.clientID, cmd.GetStatus(), c.VerifyMessageResult)
		}
	}
}

// telemetrySettings is processAndWriteClientSettings.
func (s *Service) telemetrySettings(ctx context.Context, m meta, st *v2.Settings, out chan *v2.TelemetryCommand) (*v2.TelemetryCommand, error) {
	switch {
	case st.GetPublishing() != nil:
		for _, t := range st.GetPublishing().GetTopics() {
			if err := validateTopic(t); err != nil {
				return nil, err
			}
		}
	case st.GetSubscription() != nil:
		if err := validateGroup(st.GetSubscription().GetGroup()); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("there is no publishing or subscription data in settings")
	}
	// Kept merged: receives read the group's max attempts from them, as
	// Java's getClientSettings merges on every read.
	merged := s.mergedSettings(ctx, st)
	if err := s.clients.put(m.clientID, merged, out); err != nil {
		return nil, err
	}
	s.heartbeatBrokers(ctx, m.clientID, st)
	return &v2.TelemetryCommand{Status: okStatus(), Command: &v2.TelemetryCommand_Settings{Settings: merged}}, nil
}

// customizedNext is CustomizedRetryPolicy's default delays.
var customizedNext = []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute, 6 * time.Minute,
	7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour}

// mergedSettings is GrpcClientSettingsManager.getClientSettings: the
// client's settings with the server's retry policy, limits and (for
// consumers) the group's config; metrics off.
func (s *Service) mergedSettings(ctx context.Context, st *v2.Settings) *v2.Settings {
	out := proto.Clone(st).(*v2.Settings)
	if out.BackoffPolicy == nil {
		out.BackoffPolicy = &v2.RetryPolicy{}
	}
	switch {
	case out.GetPublishing() != nil:
		out.BackoffPolicy.MaxAttempts = 3
		out.BackoffPolicy.Strategy = &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
			Initial: durationpb.New(10 * time.Millisecond), Max: durationpb.New(time.Second), Multiplier: 2}}
		out.GetPublishing().ValidateMessageType = true
		out.GetPublishing().MaxBodySize = int32(s.cfg.MaxMessageSize)
	case out.GetSubscription() != nil:
		sub := out.GetSubscription()
		gc := s.subscriptionGroupConfig(ctx, sub)
		sub.ReceiveBatchSize = new(int32(32))
		sub.LongPollingTimeout = durationpb.New(s.cfg.MaxLongPolling)
		sub.Fifo = new(gc.ConsumeMessageOrderly)
		out.BackoffPolicy.MaxAttempts = gc.RetryMaxTimes + 1
		applyRetryPolicy(out.BackoffPolicy, gc.GroupRetryPolicy)
	}
	out.Metric = &v2.Metric{On: false}
	return out
}

// retryStrategy is the group's retry policy (CUSTOMIZED with Java's
// default delays unless the group says EXPONENTIAL).
func applyRetryPolicy(rp *v2.RetryPolicy, raw json.RawMessage) {
	var p struct {
		Type        string `json:"type"`
		Exponential *struct {
			Initial    int64 `json:"initial"`
			Max        int64 `json:"max"`
			Multiplier int32 `json:"multiplier"`
		} `json:"exponentialRetryPolicy"`
		Customized *struct {
			Next []int64 `json:"next"`
		} `json:"customizedRetryPolicy"`
	}
	if len(raw) > 0 {
		_ = fastjson.Unmarshal(raw, &p)
	}
	if p.Type == "EXPONENTIAL" {
		initial, mx, mul := int64(5000), int64(7200000), int32(2)
		if e := p.Exponential; e != nil {
			initial, mx, mul = e.Initial, e.Max, e.Multiplier
		}
		rp.Strategy = &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
			Initial: durationpb.New(time.Duration(initial) * time.Millisecond), Max: durationpb.New(time.Duration(mx) * time.Millisecond), Multiplier: float32(mul)}}
		return
	}
	next := customizedNext
	if c := p.Customized; c != nil && len(c.Next) > 0 {
		next = nil
		for _, ms := range c.Next {
			next = append(next, time.Duration(ms)*time.Millisecond)
		}
	}
	cb := &v2.CustomizedBackoff{}
	for _, d := range next {
		cb.Next = append(cb.Next, durationpb.New(d))
	}
	rp.Strategy = &v2.RetryPolicy_CustomizedBackoff{CustomizedBackoff: cb}
}

// subscriptionGroupConfig is the group config of sub's group, asked from
// a broker of its first subscribed topic.
func (s *Service) subscriptionGroupConfig(ctx context.Context, sub *v2.Subscription) body.SubscriptionGroupConfig {
	group := sub.GetGroup().GetName()
	for _, e := range sub.GetSubscriptions() {
		c, cancel := s.rpcCtx(ctx)
		r, err := s.backend.Route(c, e.GetTopic().GetName())
		if err == nil {
			gc := s.groupConfig(c, r, group)
			cancel()
			return gc
		}
		cancel()
	}
	return body.NewSubscriptionGroupConfig(group)
}

// heartbeatData is the HEART_BEAT body Java's proxy sends for a gRPC
// client: producers under their topics as group, consumers with their
// subscriptions.
func heartbeatData(clientID string, st *v2.Settings) (body.HeartbeatData, []string) {
	hb := body.HeartbeatData{ClientID: clientID, ProducerDataSet: []body.ProducerData{}, ConsumerDataSet: []body.ConsumerData{}}
	var topics []string
	if p := st.GetPublishing(); p != nil {
		for _, t := range p.GetTopics() {
			hb.ProducerDataSet = append(hb.ProducerDataSet, body.ProducerData{GroupName: t.GetName()})
			topics = append(topics, t.GetName())
		}
	}
	if sub := st.GetSubscription(); sub != nil {
		ct := "CONSUME_ACTIVELY"
		if st.GetClientType() == v2.ClientType_PUSH_CONSUMER {
			ct = "CONSUME_PASSIVELY"
		}
		cd := body.ConsumerData{GroupName: sub.GetGroup().GetName(), ConsumeType: ct, MessageModel: "CLUSTERING",
			ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET", SubscriptionDataSet: []body.SubscriptionData{}}
		for _, e := range sub.GetSubscriptions() {
			cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, subscriptionData(e.GetTopic().GetName(), e.GetExpression()))
			topics = append(topics, e.GetTopic().GetName())
		}
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, cd)
	}
	return hb, topics
}

// expression is a filter as the remoting headers carry it.
func expression(f *v2.FilterExpression) (typ, exp string) {
	typ, exp = "TAG", strings.TrimSpace(f.GetExpression())
	if f.GetType() == v2.FilterType_SQL {
		typ = "SQL92"
	}
	if exp == "" {
		exp = "*"
	}
	return typ, exp
}

// subscriptionData is FilterAPI.build.
func subscriptionData(topic string, f *v2.FilterExpression) body.SubscriptionData {
	typ, exp := expression(f)
	sd := body.SubscriptionData{Topic: topic, SubString: exp, ExpressionType: typ, TagsSet: []string{}, CodeSet: body.Int32List{},
		SubVersion: time.Now().UnixMilli()}
	if typ == "TAG" && exp != "*" {
		for _, t := range strings.Split(exp, "||") {
			if t = strings.TrimSpace(t); t != "" {
				sd.TagsSet = append(sd.TagsSet, t)
				sd.CodeSet = append(sd.CodeSet, message.JavaStringHash(t))
			}
		}
	}
	return sd
}

// brokersOf are the distinct master addresses of topics' routes.
func (s *Service) brokersOf(ctx context.Context, topics []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range topics {
		r, err := s.backend.Route(ctx, t)
		if err != nil {
			continue
		}
		for _, bd := range r.BrokerDatas {
			if a, ok := bd.Addr(0); ok && !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// heartbeatBrokers registers the client with the brokers of its topics,
// so they know its groups (and send transaction check-backs here).
func (s *Service) heartbeatBrokers(ctx context.Context, clientID string, st *v2.Settings) {
	hb, topics := heartbeatData(clientID, st)
	b, err := fastjson.Marshal(hb)
	if err != nil {
		return
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	for _, addr := range s.brokersOf(c, topics) {
		req := newRequest(codec.ReqHeartBeat, nil)
		req.Body = b
		resp, err := s.backend.Invoke(c, addr, req)
		if err != nil {
			s.log.Debug("grpc proxy: heartbeat to broker failed", "broker", addr, "client", clientID, "err", err)
			continue
		}
		if resp.Code != int32(codec.RespSuccess) {
			s.log.Debug("grpc proxy: heartbeat refused", "broker", addr, "code", resp.Code, "remark", resp.Remark)
		}
	}
}

// Heartbeat implements MessagingService (ClientActivity.heartbeat).
func (s *Service) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	m := clientMeta(ctx)
	if err := requireClient(m); err != nil {
		return &v2.HeartbeatResponse{Status: errStatus(err)}, nil
	}
	st := s.clients.settings(m.clientID)
	if st == nil {
		return &v2.HeartbeatResponse{Status: newStatus(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "cannot find client settings for this client")}, nil
	}
	switch st.GetClientType() {
	case v2.ClientType_PRODUCER:
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER:
		if err := validateGroup(req.GetGroup()); err != nil {
			return &v2.HeartbeatResponse{Status: errStatus(err)}, nil
		}
	default:
		return &v2.HeartbeatResponse{Status: newStatus(v2.Code_UNRECOGNIZED_CLIENT_TYPE, st.GetClientType().String())}, nil
	}
	s.heartbeatBrokers(ctx, m.clientID, st)
	return &v2.HeartbeatResponse{Status: okStatus()}, nil
}

// NotifyClientTermination implements MessagingService: the client's
// settings are dropped and it is unregistered from the brokers.
func (s *Service) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	m := clientMeta(ctx)
	if err := requireClient(m); err != nil {
		return &v2.NotifyClientTerminationResponse{Status: errStatus(err)}, nil
	}
	st := s.clients.remove(m.clientID)
	if s.renew != nil {
		s.renew.clearClient(m.clientID) // CLIENT_UNREGISTER: its renewed handles come back soon
	}
	if st == nil {
		return &v2.NotifyClientTerminationResponse{Status: newStatus(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "cannot find client settings for this client")}, nil
	}
	h := header.UnregisterClientRequest{ClientID: m.clientID}
	var topics []string
	switch st.GetClientType() {
	case v2.ClientType_PRODUCER:
		for _, t := range st.GetPublishing().GetTopics() {
			topics = append(topics, t.GetName())
		}
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER:
		if err := validateGroup(req.GetGroup()); err != nil {
			return &v2.NotifyClientTerminationResponse{Status: errStatus(err)}, nil
		}
		h.ConsumerGroup = req.GetGroup().GetName()
		for _, e := range st.GetSubscription().GetSubscriptions() {
			topics = append(topics, e.GetTopic().GetName())
		}
	default:
		return &v2.NotifyClientTerminationResponse{Status: newStatus(v2.Code_UNRECOGNIZED_CLIENT_TYPE, st.GetClientType().String())}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	for _, addr := range s.brokersOf(c, topics) {
		if h.ConsumerGroup == "" {
			for _, t := range topics {
				ph := h
				ph.ProducerGroup = t
				_, _ = s.backend.Invoke(c, addr, newRequest(codec.ReqUnregisterClient, &ph))
			}
			continue
		}
		_, _ = s.backend.Invoke(c, addr, newRequest(codec.ReqUnregisterClient, &h))
	}
	return &v2.NotifyClientTerminationResponse{Status: okStatus()}, nil
}
