package broker

import (
	"context"
	"hash/crc32"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// registrar keeps the broker registered with every name server: at start,
// every registerNameServerPeriod, and soon after any topic change. Like
// Java's registerIncrementBrokerData, a round that follows only topic
// creations or updates registers just those topics (with the table's new
// data version); a start, a period, a delete or any other change
// registers the whole table. Creating N topics one by one thus sends O(N)
// topic entries, not O(N²).
type registrar struct {
	cfg    *Config
	live   *liveConfig // brokerPermission, namesrvAddr
	topics *topicTable
	client *transport.Client
	log    *slog.Logger
	period time.Duration

	// Set by New: the run-time brokerId, the advertised HA address and
	// the handler of a reply's masterAddr/haServerAddr (nil in tests).
	role         *roleState
	haServerAddr func() string
	onResult     func(masterAddr, haServerAddr string)
	// Controller mode (nil otherwise): skip registrations while the
	// broker is fenced (Java's isIsolated), and the master epoch the data
	// version carries as stateVersion.
	skip         func() bool
	stateVersion func() int64

	trigger chan struct{}
	quit    chan struct{}
	wg      sync.WaitGroup

	// What the next round registers: full, or the topics in pending.
	pmu      sync.Mutex
	full     bool                // guarded by pmu
	pending  map[string]struct{} // guarded by pmu
	lastFull bool                // guarded by pmu: the last full round reached every name server

	// Rounds for sync: requested counts calls of sync, and a round
	// covers every request made before it started.
	roundMu   sync.Mutex
	requested uint64        // guarded by roundMu
	completed uint64        // guarded by roundMu: the highest request a finished round covered
	roundDone chan struct{} // guarded by roundMu: closed when a round finishes
}

func newRegistrar(cfg *Config, live *liveConfig, topics *topicTable, client *transport.Client, log *slog.Logger) *registrar {
	period := time.Duration(cfg.RegisterNameServerPeriod) * time.Millisecond
	if period < time.Second {
		period = 30 * time.Second
	}
	return &registrar{cfg: cfg, live: live, topics: topics, client: client, log: log, period: period,
		trigger: make(chan struct{}, 1), quit: make(chan struct{}), roundDone: make(chan struct{}),
		pending: make(map[string]struct{})}
}

// start registers once (waiting for the answers) and then keeps
// registering in the background.
func (r *registrar) start() {
	r.registerAll()
	r.wg.Add(1)
	go r.loop()
}

// changed asks for a full registration soon; calls coalesce.
func (r *registrar) changed() {
	r.pmu.Lock()
	r.full = true
	r.pmu.Unlock()
	r.kick()
}

// topicsChanged asks for a registration of topics soon (nil: of
// everything); calls coalesce.
func (r *registrar) topicsChanged(topics []string) {
	r.pmu.Lock()
	if topics == nil {
		r.full = true
	}
	for _, t := range topics {
		r.pending[t] = struct{}{}
	}
	r.pmu.Unlock()
	r.kick()
}

// kick wakes the loop for a round of whatever is pending.
func (r *registrar) kick() {
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}

// takeRound returns the topics the next round registers: nil for every
// topic (a full round).
func (r *registrar) takeRound(periodic bool) []string {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	var names []string
	if !periodic && !r.full && r.lastFull {
		names = make([]string, 0, len(r.pending))
		for t := range r.pending {
			names = append(names, t)
		}
	}
	r.full = false
	clear(r.pending)
	if names != nil && len(names) == 0 {
		return []string{} // nothing changed: a round that registers no topic
	}
	return names
}

func (r *registrar) loop() {
	defer r.wg.Done()
	tick := time.NewTicker(r.period)
	defer tick.Stop()
	for {
		periodic := false
		select {
		case <-r.quit:
			return
		case <-tick.C:
			periodic = true
		case <-r.trigger:
		}
		r.roundMu.Lock()
		covers := r.requested
		r.roundMu.Unlock()
		if names := r.takeRound(periodic); names == nil {
			r.registerAll()
		} else if len(names) > 0 {
			r.registerTopics(names)
		}
		r.roundMu.Lock()
		r.completed = covers
		close(r.roundDone)
		r.roundDone = make(chan struct{})
		r.roundMu.Unlock()
	}
}

// registerNowTimeout bounds how long a heartbeat waits for sync.
const registerNowTimeout = 3 * time.Second

// sync asks for a registration and waits, at most timeout, until one that
// started after the call has finished (answered or failed at every name
// server). Java's broker registers a topic it creates for a heartbeat or
// a send-back before it answers (registerIncrementBrokerData): a client
// reads the route of its group's new %RETRY% topic right after its first
// heartbeat, and a route still missing then waits out the client's 30 s
// route refresh, delaying every first retry (issue #19 S3). Not for the
// event loops: it blocks.
func (r *registrar) sync(timeout time.Duration) bool {
	r.roundMu.Lock()
	r.requested++
	want := r.requested
	r.roundMu.Unlock()
	r.kick() // the round registers what changed (the caller's topic is pending)
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		r.roundMu.Lock()
		if r.completed >= want {
			r.roundMu.Unlock()
			return true
		}
		ch := r.roundDone
		r.roundMu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return false
		case <-r.quit:
			return false
		}
	}
}

// stop ends the loop and unregisters from every name server.
func (r *registrar) stop() {
	close(r.quit)
	r.wg.Wait()
	r.unregisterAll()
}

func (r *registrar) haAddr() string {
	if r.haServerAddr != nil {
		return r.haServerAddr()
	}
	ip := r.cfg.BrokerIP2
	if ip == "" {
		ip = r.cfg.BrokerIP1
	}
	return net.JoinHostPort(ip, strconv.Itoa(r.cfg.ListenPort+1))
}

// registerBody builds the RegisterBrokerBody JSON (uncompressed form) of
// every topic.
func (r *registrar) registerBody() []byte {
	v, topics := r.topics.snapshot()
	return r.bodyOf(v, topics)
}

// bodyOf builds the RegisterBrokerBody JSON of topics at version v.
func (r *registrar) bodyOf(v body.TopicVersion, topics []body.TopicConfig) []byte {
	if r.stateVersion != nil {
		v.StateVersion = r.stateVersion()
	}
	// Like Java's registerBrokerAll: a broker that is not both readable and
	// writable announces every topic with its permission masked, so
	// clients stop routing sends (or pulls) to it.
	if perm := r.live.perm.Load(); perm&body.PermRead == 0 || perm&body.PermWrite == 0 {
		for i := range topics {
			topics[i].Perm &= perm
		}
	}
	b := append(make([]byte, 0, 256+len(topics)*220), `{"filterServerList":[],"topicConfigSerializeWrapper":`...)
	b = body.AppendTopicConfigFile(b, v, topics)
	return append(b, '}')
}

// registerAll registers every topic with every name server.
func (r *registrar) registerAll() {
	addrs := r.live.namesrvAddrs()
	if len(addrs) == 0 || (r.skip != nil && r.skip()) {
		return
	}
	ok := r.register(addrs, r.registerBody())
	r.pmu.Lock()
	r.lastFull = ok
	r.pmu.Unlock()
}

// registerTopics registers only names (Java's registerIncrementBrokerData);
// a topic deleted meanwhile, or a failed answer, makes the next round a
// full one.
func (r *registrar) registerTopics(names []string) {
	addrs := r.live.namesrvAddrs()
	if len(addrs) == 0 || (r.skip != nil && r.skip()) {
		return
	}
	v, topics, complete := r.topics.snapshotOf(names)
	ok := r.register(addrs, r.bodyOf(v, topics))
	if !ok || !complete {
		r.pmu.Lock()
		r.full = true
		r.pmu.Unlock()
		r.kick()
	}
}

// register sends one REGISTER_BROKER with b to every name server and
// reports whether all of them accepted it.
func (r *registrar) register(addrs []string, b []byte) bool {
	crc := int64(crc32.ChecksumIEEE(b) & 0x7FFFFFFF)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &codec.Frame{Code: int32(codec.ReqRegisterBroker), Language: codec.LangJava, Version: codec.ServerVersion, Body: b}
			req.Ext = []codec.KV{
				{Key: "brokerName", Value: r.cfg.BrokerName},
				{Key: "brokerAddr", Value: r.cfg.BrokerAddr()},
				{Key: "clusterName", Value: r.cfg.BrokerClusterName},
				{Key: "haServerAddr", Value: r.haAddr()},
				{Key: "brokerId", Value: strconv.FormatInt(r.brokerID(), 10)},
				{Key: "heartbeatTimeoutMillis", Value: "120000"},
				{Key: "enableActingMaster", Value: "false"},
				{Key: "compressed", Value: "false"},
				{Key: "bodyCrc32", Value: strconv.FormatInt(crc, 10)},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
			defer cancel()
			resp, err := r.client.Invoke(ctx, addr, req)
			if err != nil {
				failed.Store(true)
				r.log.Warn("register broker failed", "namesrv", addr, "err", err)
				return
			}
			if resp.Code != int32(codec.RespSuccess) {
				failed.Store(true)
				r.log.Warn("register broker refused", "namesrv", addr, "code", resp.Code, "remark", resp.Remark)
				return
			}
			r.log.Debug("registered with name server", "namesrv", addr)
			if r.onResult != nil {
				var rh header.RegisterBrokerResponse
				_ = rh.Decode(resp) // string fields only: nothing to refuse
				r.onResult(rh.MasterAddr, rh.HaServerAddr)
			}
		}()
	}
	wg.Wait()
	return !failed.Load()
}

func (r *registrar) unregisterAll() {
	var wg sync.WaitGroup
	for _, addr := range r.live.namesrvAddrs() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &codec.Frame{Code: int32(codec.ReqUnregisterBroker), Language: codec.LangJava, Version: codec.ServerVersion}
			req.Ext = []codec.KV{
				{Key: "brokerName", Value: r.cfg.BrokerName},
				{Key: "brokerAddr", Value: r.cfg.BrokerAddr()},
				{Key: "clusterName", Value: r.cfg.BrokerClusterName},
				{Key: "brokerId", Value: strconv.FormatInt(r.brokerID(), 10)},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if _, err := r.client.Invoke(ctx, addr, req); err != nil {
				r.log.Warn("unregister broker failed", "namesrv", addr, "err", err)
			}
		}()
	}
	wg.Wait()
}

// brokerID is the run-time brokerId (the role component's), else the
// configured one.
func (r *registrar) brokerID() int64 {
	if r.role != nil {
		return r.role.BrokerID()
	}
	return r.cfg.BrokerID
}
