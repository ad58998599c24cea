package broker

import (
	"context"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// requestMode is Java's SetMessageRequestModeRequestBody (fields in
// fastjson's sorted order).
type requestMode struct {
	ConsumerGroup    string `json:"consumerGroup"`
	Mode             string `json:"mode"` // "PULL" | "POP"
	PopShareQueueNum int32  `json:"popShareQueueNum"`
	Topic            string `json:"topic"`
}

// requestModes is Java's MessageRequestModeManager
// (config/messageRequestMode.json: {"messageRequestModeMap":{topic:{group:body}}}).
type requestModes struct {
	path string
	mu   sync.Mutex
	m    map[string]map[string]requestMode // guarded by mu
}

type requestModeFile struct {
	MessageRequestModeMap map[string]map[string]requestMode `json:"messageRequestModeMap"`
}

func newRequestModes(root string) *requestModes {
	return &requestModes{path: filepath.Join(root, "config", "messageRequestMode.json"), m: map[string]map[string]requestMode{}}
}

func (r *requestModes) load() error {
	return loadConfigFile(r.path, "message request modes", func(b []byte) (requestModeFile, error) {
		var f requestModeFile
		err := fastjson.Unmarshal(b, &f)
		return f, err
	}, func(f requestModeFile) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for t, gs := range f.MessageRequestModeMap {
			r.m[t] = gs
		}
	})
}

func (r *requestModes) get(topic, group string) (requestMode, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.m[topic][group]
	return m, ok
}

func (r *requestModes) encode() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, _ := fastjson.Marshal(requestModeFile{MessageRequestModeMap: r.m})
	return b
}

func (r *requestModes) set(m requestMode) error {
	r.mu.Lock()
	gs := r.m[m.Topic]
	if gs == nil {
		gs = map[string]requestMode{}
		r.m[m.Topic] = gs
	}
	gs[m.ConsumerGroup] = m
	r.mu.Unlock()
	return writeConfigFile(r.path, r.encode())
}

// assignProcessor serves QUERY_ASSIGNMENT, SET_MESSAGE_REQUEST_MODE and
// GET_ALL_MESSAGE_REQUEST_MODE (Java's QueryAssignmentProcessor).
type assignProcessor struct {
	modes      *requestModes
	topics     *topicTable
	groups     *groupTable
	clients    *clientManager
	brokerName string
	// route lists the topic's readable queues across the cluster (Java's
	// TopicRouteInfoManager.getTopicSubscribeInfo); nil: this broker's only.
	route func(topic string) ([]mqRef, bool)
	log   *slog.Logger
}

// mqRef is Java's MessageQueue (JSON keys in fastjson's order).
type mqRef struct {
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
	Topic      string `json:"topic"`
}

func compareMQ(a, b mqRef) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return int(a.QueueID) - int(b.QueueID)
}

type mqAssignment struct {
	MessageQueue mqRef  `json:"messageQueue"`
	Mode         string `json:"mode"`
}

func (p *assignProcessor) queues(topic string) ([]mqRef, bool) {
	if p.route != nil {
		if qs, ok := p.route(topic); ok {
			return qs, true
		}
	}
	tc, ok := p.topics.get(topic)
	if !ok || tc.Perm&body.PermRead == 0 {
		return nil, false
	}
	qs := make([]mqRef, 0, tc.ReadQueueNums)
	for q := range tc.ReadQueueNums {
		qs = append(qs, mqRef{BrokerName: p.brokerName, QueueID: q, Topic: topic})
	}
	return qs, true
}

// routeQueues turns a name-server route into Java's subscribe info.
func routeQueues(topic string, r body.TopicRouteData) []mqRef {
	var qs []mqRef
	for _, qd := range r.QueueDatas {
		if qd.Perm&body.PermRead == 0 {
			continue
		}
		for q := range qd.ReadQueueNums {
			qs = append(qs, mqRef{BrokerName: qd.BrokerName, QueueID: q, Topic: topic})
		}
	}
	return qs
}

func (p *assignProcessor) queryAssignment(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var rb struct {
		Topic         string `json:"topic"`
		ConsumerGroup string `json:"consumerGroup"`
		ClientID      string `json:"clientId"`
		StrategyName  string `json:"strategyName"`
		MessageModel  string `json:"messageModel"`
	}
	if err := fastjson.Unmarshal(req.Body, &rb); err != nil {
		return errResp(req, codec.RespSystemError, remarks.DecodeQueryAssignmentFailed)
	}
	mode, ok := p.modes.get(rb.Topic, rb.ConsumerGroup)
	if !ok {
		// compat: a retry topic is always PULL; brokers default to PULL
		// (defaultMessageRequestMode).
		mode = requestMode{Topic: rb.Topic, ConsumerGroup: rb.ConsumerGroup, Mode: "PULL"}
	}
	assigned, valid := p.balance(rb.Topic, rb.ConsumerGroup, rb.ClientID, rb.MessageModel, rb.StrategyName, mode)
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	if !valid {
		resp.Body = []byte("{}") // null: the client keeps what it has
		return resp
	}
	out := struct {
		MessageQueueAssignments []mqAssignment `json:"messageQueueAssignments"`
	}{MessageQueueAssignments: []mqAssignment{}}
	for _, q := range assigned {
		out.MessageQueueAssignments = append(out.MessageQueueAssignments, mqAssignment{MessageQueue: q, Mode: mode.Mode})
	}
	resp.Body, _ = fastjson.Marshal(out)
	return resp
}

// balance is Java's doLoadBalance; false means "no valid result".
func (p *assignProcessor) balance(topic, group, clientID, model, strategy string, mode requestMode) ([]mqRef, bool) {
	mqAll, ok := p.queues(topic)
	if !ok {
		return nil, false
	}
	if model == "BROADCASTING" {
		return mqAll, true
	}
	cidAll := p.clients.consumerIDs(group)
	if len(cidAll) == 0 {
		return nil, false
	}
	slices.SortFunc(mqAll, compareMQ)
	slices.Sort(cidAll)
	alloc := allocStrategy(strategy)
	if alloc == nil {
		return nil, false
	}
	if mode.Mode != "POP" {
		return alloc(clientID, mqAll, cidAll), true
	}
	// Java's allocate4Pop.
	n := int(mode.PopShareQueueNum)
	if n <= 0 || n >= len(cidAll)-1 {
		// Every client pops every queue (queueId -1 per broker).
		var out []mqRef
		for _, q := range mqAll {
			out = append(out, mqRef{BrokerName: q.BrokerName, QueueID: -1, Topic: q.Topic})
		}
		return dedupMQ(out), true
	}
	if len(cidAll) <= len(mqAll) {
		out := alloc(clientID, mqAll, cidAll)
		if i := slices.Index(cidAll, clientID); i >= 0 {
			for range n {
				i = (i + 1) % len(cidAll)
				out = append(out, alloc(cidAll[i], mqAll, cidAll)...)
			}
		}
		return dedupMQ(out), true
	}
	i := slices.Index(cidAll, clientID)
	if i < 0 {
		return []mqRef{}, true
	}
	return []mqRef{mqAll[i%len(mqAll)]}, true
}

// dedupMQ drops repeats (Java collects into a HashSet).
func dedupMQ(qs []mqRef) []mqRef {
	slices.SortFunc(qs, compareMQ)
	return slices.CompactFunc(qs, func(a, b mqRef) bool { return compareMQ(a, b) == 0 })
}

type allocFunc func(cid string, mqAll []mqRef, cidAll []string) []mqRef

// allocStrategy maps Java's strategy names (AllocateMessageQueueStrategy.getName).
func allocStrategy(name string) allocFunc {
	switch name {
	case "AVG":
		return allocAveragely
	case "AVG_BY_CIRCLE":
		return func(cid string, mqAll []mqRef, cidAll []string) []mqRef {
			i := slices.Index(cidAll, cid)
			var out []mqRef
			for j := i; i >= 0 && j < len(mqAll); j += len(cidAll) {
				out = append(out, mqAll[j])
			}
			return out
		}
	}
	return nil
}

// allocAveragely is Java's AllocateMessageQueueAveragely.
func allocAveragely(cid string, mqAll []mqRef, cidAll []string) []mqRef {
	index := slices.Index(cidAll, cid)
	if index < 0 || len(mqAll) == 0 {
		return nil
	}
	mod := len(mqAll) % len(cidAll)
	avg := 1
	if len(mqAll) > len(cidAll) {
		avg = len(mqAll) / len(cidAll)
		if mod > 0 && index < mod {
			avg++
		}
	}
	start := index*avg + mod
	if mod > 0 && index < mod {
		start = index * avg
	}
	n := min(avg, len(mqAll)-start)
	var out []mqRef
	for i := 0; i < n; i++ {
		out = append(out, mqAll[(start+i)%len(mqAll)])
	}
	return out
}

func (p *assignProcessor) setRequestMode(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var m requestMode
	if err := fastjson.Unmarshal(req.Body, &m); err != nil {
		return errResp(req, codec.RespSystemError, remarks.DecodeSetRequestModeFailed)
	}
	if strings.HasPrefix(m.Topic, RetryGroupPrefix) {
		return errResp(req, codec.RespNoPermission, remarks.RetryTopicNoRequestMode)
	}
	if _, ok := p.topics.get(m.Topic); !ok {
		return errResp(req, codec.RespTopicNotExist, remarks.RequestModeTopicNotExist(m.Topic))
	}
	if _, ok := p.groups.find(m.ConsumerGroup); !ok {
		return errResp(req, codec.RespSubscriptionGroupNotExist, remarks.RequestModeGroupNotExist)
	}
	if m.Mode != "POP" && m.Mode != "PULL" {
		return errResp(req, codec.RespInvalidParameter, remarks.RequestModeInvalid)
	}
	if err := p.modes.set(m); err != nil {
		p.log.Error("persist message request modes", "err", err)
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (p *assignProcessor) getAllRequestModes(c *transport.Conn, req *codec.Frame) *codec.Frame {
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = p.modes.encode()
	return resp
}

// routeSubscribeInfo asks the name servers for the topic's route (Java's
// TopicRouteInfoManager, without its cache: QUERY_ASSIGNMENT comes every
// 20 s per client and topic).
func (b *Broker) routeSubscribeInfo(topic string) ([]mqRef, bool) {
	for _, ns := range b.cfg.NamesrvAddrs() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req := &codec.Frame{Code: int32(codec.ReqGetRouteinfoByTopic), Language: codec.LangJava, Version: codec.ServerVersion,
			Ext: []codec.KV{{Key: "topic", Value: topic}}}
		resp, err := b.nsCli.Invoke(ctx, ns, req)
		cancel()
		if err != nil || resp.Code != int32(codec.RespSuccess) {
			continue
		}
		r, err := body.DecodeTopicRouteData(resp.Body)
		if err != nil {
			continue
		}
		if qs := routeQueues(topic, r); len(qs) > 0 {
			return qs, true
		}
	}
	return nil, false
}
