package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store"
)

// Deps are the broker's collaborators. Store may be nil: New then opens
// the store under cfg.StorePathRootDir and closes it in Close.
type Deps struct {
	Logger *slog.Logger
	Store  MessageStore
	Clock  Clock // drives the statistics windows (stats_sampler.go); nil: WallClock
}

// Broker is the composition root: tables, processors, servers and the
// background loops that persist state and keep registrations fresh.
type Broker struct {
	cfg       Config
	log       *slog.Logger
	store     MessageStore
	ownsStore bool
	host      *hostBox    // advertised ip:port, set once bound
	live      *liveConfig // settings UPDATE_BROKER_CONFIG changes at run time

	cfgMu   sync.Mutex        // guards cfg's runtime keys, cfg.ListenPort and pending; serializes updates
	pending map[string]string // restart-only keys updated at run time; guarded by cfgMu

	topics  *topicTable
	groups  *groupTable
	offsets *offsetTable
	clients *clientManager
	locks   *lockTable
	stats   *brokerStats
	filters *filter.Cache // compiled subscriptions, shared by heartbeats, pulls and CHECK_CLIENT_CONFIG

	send   *sendProcessor
	pull   *pullProcessor
	pop    *popProcessor
	assign *assignProcessor
	revive []*reviveService
	delays *delayTable
	delay  *delayService
	retry  *retryProcessor
	txn    *txnService
	timer  *timerService
	reg    *registrar
	role   *roleState // role, brokerId, master addresses (role.go)
	nsCli  *transport.Client
	sync   *slaveSync // a slave's metadata sync from its master (slavesync.go)

	rm *replicasManager // controller mode (controllermode.go); nil otherwise

	auth *auth.Service // users and ACLs (authconf.go); nil unless an ACL 2.0 key is set

	metrics *brokerMetrics // metricsExporterType=PROM (metrics.go); nil otherwise

	pools      []*transport.Pool
	sendPool   *transport.Pool    // the send requests' (waitTimeMillsInSendQueue is live)
	authChk    *authCheck         // the request middleware; nil without auth
	signer     func(*codec.Frame) // signs the broker's own calls (innerClientAuthenticationCredentials); nil: unsigned
	main, fast *transport.Server

	roleMu     sync.Mutex  // serializes role changes; guards rrt, roleClosed
	rrt        roleRuntime // what the current role started
	roleClosed bool

	quit      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New builds a broker; nothing listens until Start.
func New(cfg Config, deps Deps) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("broker", cfg.BrokerName)
	b := &Broker{cfg: cfg, log: log, store: deps.Store, host: new(hostBox), quit: make(chan struct{})}
	b.live = newLiveConfig(&b.cfg)
	role, err := newRoleState(&b.cfg)
	if err != nil {
		return nil, err
	}
	if role.role != store.Slave {
		role.brokerID = 0 // compat: Java's BrokerStartup sets a master's brokerId to 0
	}
	b.role = role
	levels, _ := cfg.DelayLevels()
	b.delays = &delayTable{levels: levels}
	if b.store == nil {
		st, err := store.Open(StoreConfig(&b.cfg, log))
		if err != nil {
			return nil, fmt.Errorf("broker: open store %s: %w", cfg.StorePathRootDir, err)
		}
		b.store, b.ownsStore = st, true
	}
	b.topics = newTopicTable(&b.cfg, b.live, log)
	b.groups = newGroupTable(&b.cfg, b.live, log)
	b.offsets = newOffsetTable(&b.cfg)
	watchRetention(b.store, b.offsets, log)
	b.filters = filter.NewCache(0)
	b.clients = newClientManager(log, time.Duration(cfg.ChannelExpiredTimeout)*time.Millisecond, b.filters)
	b.locks = newLockTable(time.Duration(cfg.RebalanceLockMaxLiveTime) * time.Millisecond)
	b.stats = newBrokerStats(statsDeps{clock: deps.Clock, clusterName: cfg.BrokerClusterName, isSystem: b.topics.isSystem, storePuts: storePutStats(b.store),
		storeRoll: storeLatencyRoll(b.store)})
	b.delay = newDelayService(&b.cfg, b.delays, b.store, log)
	for _, load := range []func() error{b.topics.load, b.groups.load, b.offsets.load, b.delay.load} {
		if err := load(); err != nil {
			b.closeStore()
			return nil, err
		}
	}
	inner, signed, err := auth.ParseCredentials(cfg.InnerClientAuthenticationCredentials)
	if err != nil {
		b.closeStore()
		return nil, err
	}
	if signed {
		// Registration, slave sync and controller calls carry the inner
		// credentials, as Java's broker signs its outer API.
		b.signer = inner.Signer()
	}
	nsCliCfg, err := transport.ClientConfig{Logger: log, DialTimeout: 3 * time.Second, BeforeRequest: b.signer}.WithTLS(cfg.TLS)
	if err != nil {
		b.closeStore()
		return nil, err
	}
	b.nsCli = transport.NewClient(nsCliCfg)
	b.reg = newRegistrar(&b.cfg, b.live, b.topics, b.nsCli, log)
	b.reg.role, b.reg.haServerAddr, b.reg.onResult = b.role, b.haServerAddr, b.onRegisterResult
	b.topics.onChange = b.reg.topicsChanged
	b.send = newSendProcessor(&b.cfg, b.live, b.store, b.topics, b.groups, b.locks, b.stats, b.host, log)
	b.send.delays = b.delays
	b.send.role = b.role
	b.pull = newPullProcessor(&b.cfg, b.live, b.store, b.topics, b.groups, b.clients, b.offsets, b.stats, b.filters, log)
	b.pop = newPopProcessor(&b.cfg, b.live, b.store, b.topics, b.groups, b.offsets, b.filters, b.clients, b.stats, b.host, log)
	b.assign = &assignProcessor{modes: newRequestModes(cfg.StorePathRootDir), topics: b.topics, groups: b.groups, clients: b.clients,
		brokerName: cfg.BrokerName, route: b.routeSubscribeInfo, log: log}
	if err := b.assign.modes.load(); err != nil {
		b.nsCli.Close()
		b.closeStore()
		return nil, err
	}
	for q := range b.pop.reviveQueue {
		b.revive = append(b.revive, newReviveService(b.pop, q))
	}
	timers, err := newTimerService(&b.cfg, b.store, b.offsets, log)
	if err != nil {
		b.nsCli.Close()
		b.closeStore()
		return nil, err
	}
	b.timer = timers
	b.txn = newTxnService(&b.cfg, b.live, b.store, b.topics, b.clients, b.offsets, b.host, log)
	b.retry = &retryProcessor{cfg: &b.cfg, live: b.live, store: b.store, topics: b.topics, groups: b.groups, delays: b.delays, storeHost: b.host, stats: b.stats, log: log}
	b.pull.role, b.txn.role, b.retry.role, b.pop.role = b.role, b.role, b.role, b.role
	b.sync = newSlaveSync(b.nsCli, b.role, b.BrokerAddr, slaveSyncTables{
		topics: b.topics, offsets: b.offsets, groups: b.groups, delay: b.delay, timerWheel: b.timer.ts != nil,
	}, log)
	if b.auth, err = openAuth(&b.cfg, log); err != nil {
		b.nsCli.Close()
		b.timer.close()
		b.closeStore()
		return nil, err
	}
	if b.auth != nil {
		b.authChk = newAuthCheck(b.auth, cfg.BrokerClusterName)
	}
	if b.metrics, err = newBrokerMetrics(b); err != nil {
		b.closeAuth()
		b.nsCli.Close()
		b.timer.close()
		b.closeStore()
		return nil, err
	}
	if cfg.EnableControllerMode {
		rm, err := newReplicasManager(b, &b.cfg, b.log, b.store, b.nsCliConfig())
		if err != nil {
			b.closeAuth()
			b.nsCli.Close()
			b.timer.close()
			b.closeStore()
			return nil, err
		}
		b.rm = rm
		b.reg.skip = rm.fenced.Load
		b.reg.stateVersion = func() int64 { return int64(rm.MasterEpoch()) }
	}
	return b, nil
}

// StoreConfig maps the broker settings to the store's. Callers that open
// the store themselves (Deps.Store) should start from it: it carries the
// tags-code hook scheduled (delayed) messages need.
func StoreConfig(cfg *Config, log *slog.Logger) store.Config {
	sc := store.DefaultConfig(cfg.StorePathRootDir)
	if cfg.StorePathCommitLog != "" {
		sc.CommitLogDir = cfg.StorePathCommitLog
	}
	sc.MappedFileSizeCommitLog = cfg.MappedFileSizeCommitLog
	if cfg.MappedFileSizeConsumeQueue > 0 {
		// compat: Java's getMappedFileSizeConsumeQueue rounds up to whole units.
		sc.MappedFileSizeConsumeQueue = (cfg.MappedFileSizeConsumeQueue + store.CQUnitSize - 1) / store.CQUnitSize * store.CQUnitSize
	}
	if cfg.FlushDiskType == "SYNC_FLUSH" {
		sc.FlushDiskType = store.SyncFlush
	}
	sc.MaxMessageSize = cfg.MaxMessageSize
	sc.FileReservedTime = time.Duration(cfg.FileReservedTime) * time.Hour
	sc.DeleteWhen = cfg.DeleteWhen
	sc.DiskMaxUsedSpaceRatio = cfg.DiskMaxUsedSpaceRatio
	sc.DiskSpaceWarningLevelRatio = cfg.DiskSpaceWarningLevelRatio
	sc.DiskSpaceCleanForciblyRatio = cfg.DiskSpaceCleanForciblyRatio
	sc.CleanFileForciblyEnable = cfg.CleanFileForciblyEnable
	if cfg.CleanResourceInterval > 0 {
		sc.CleanResourceInterval = time.Duration(cfg.CleanResourceInterval) * time.Millisecond
	}
	levels, _ := cfg.DelayLevels()
	sc.TagsCode = (&delayTable{levels: levels}).tagsCode
	sc.Logger = log
	if role, err := store.ParseRole(cfg.BrokerRole); err == nil {
		sc.BrokerRole = role
	}
	sc.InSyncReplicas = max(cfg.InSyncReplicas, 1)
	sc.SlaveTimeout = time.Duration(cfg.SlaveTimeout) * time.Millisecond
	return sc
}

// nsCliConfig is the outbound remoting clients' config: TLS when
// tls.enable, as Java's (the error was checked by New).
func (b *Broker) nsCliConfig() transport.ClientConfig {
	cc, _ := transport.ClientConfig{Logger: b.log, DialTimeout: 3 * time.Second, BeforeRequest: b.signer}.WithTLS(b.cfg.TLS)
	return cc
}

func (b *Broker) closeStore() {
	if b.ownsStore {
		if err := b.store.Close(); err != nil {
			b.log.Error("close store", "err", err)
		}
	}
}

// Start listens, registers with the name servers and starts the
// background loops. It returns once the broker serves requests.
func (b *Broker) Start() error {
	ip, err := netip.ParseAddr(b.cfg.BrokerIP1)
	if err != nil {
		return fmt.Errorf("broker: brokerIP1 %q: %w", b.cfg.BrokerIP1, err)
	}
	b.store.OnArrival(func(topic string, queueID int32, maxOffset int64, tagsCode int64, props string) {
		b.pull.holds.arrived(topic, queueID, maxOffset, tagsCode, props)
		b.pop.holds.arrived(topic)
		if topic == timerTopic {
			b.timer.arrived()
		}
	})
	b.pull.holds.start()
	b.pop.holds.start()
	b.pop.ensureReviveTopic()

	mainRouter, fastRouter := b.routers()
	listenIP := b.cfg.BindIP()
	onClose := func(c *transport.Conn) {
		b.pull.holds.connClosed(c)
		b.pop.holds.connClosed(c)
		b.clients.notifyChanged(b.clients.connClosed(c)...)
	}
	mainCfg, err := b.cfg.transportLimits().Apply(transport.ServerConfig{
		Addr: net.JoinHostPort(listenIP, strconv.Itoa(b.cfg.ListenPort)), Logger: b.log,
		IdleTimeout: 120 * time.Second, OnClose: onClose, WriteObserver: b.replyWriteObserver(),
	}).WithTLS(b.cfg.TLS)
	main := transport.NewServer(mainCfg, mainRouter)
	if err == nil {
		err = main.Start()
	}
	if err != nil {
		b.pull.holds.stop()
		b.pop.holds.stop()
		for _, p := range b.pools {
			p.Close()
		}
		b.pools = nil
		return fmt.Errorf("broker: listen %d: %w", b.cfg.ListenPort, err)
	}
	b.main = main
	if ap, err := netip.ParseAddrPort(main.Addr()); err == nil {
		// Handlers may already run (GET_BROKER_CONFIG reads it under cfgMu).
		b.cfgMu.Lock()
		b.cfg.ListenPort = int(ap.Port())
		b.cfgMu.Unlock()
	}
	// Sends queue up until the workers start below; storeHost is set first.
	b.host.set(netip.AddrPortFrom(ip.Unmap(), uint16(b.cfg.ListenPort)))
	if b.cfg.FastListen {
		port := b.cfg.ListenPort - 2
		if b.cfg.ListenPort < 3 {
			port = 0
		}
		fastCfg, _ := b.cfg.transportLimits().Apply(transport.ServerConfig{
			Addr: net.JoinHostPort(listenIP, strconv.Itoa(port)), Logger: b.log,
			IdleTimeout: 120 * time.Second, OnClose: onClose, WriteObserver: b.replyWriteObserver(),
		}).WithTLS(b.cfg.TLS) // an error would have failed the main port
		b.fast = transport.NewServer(fastCfg, fastRouter)
		if err := b.fast.Start(); err != nil {
			b.log.Warn("fast (VIP) port not available", "port", port, "err", err)
			b.fast = nil
		}
	}
	b.roleMu.Lock()
	err = b.applyRoleLocked(b.role.Role())
	b.roleMu.Unlock()
	if err != nil {
		// The HA port is taken, say: fail like Java; Close cleans up.
		return fmt.Errorf("broker: start as %s: %w", b.role.Role(), err)
	}

	if b.metrics != nil {
		if err := b.metrics.exp.Start(b.cfg.metricsConfig(), b.cfg.BrokerIP1); err != nil {
			return fmt.Errorf("broker: %w", err) // Close cleans up
		}
	}
	b.reg.start()
	b.sync.Start() // idle unless the role is SLAVE (checked every tick)
	if b.rm != nil {
		b.rm.start()
	}
	for _, rs := range b.revive {
		b.wg.Add(1)
		go func() { defer b.wg.Done(); rs.run(b.quit) }()
	}
	b.wg.Add(3)
	go b.persistLoop()
	go b.clientLoop()
	go func() { defer b.wg.Done(); b.stats.run(b.quit) }()
	b.log.Info("broker started", "addr", main.Addr(), "advertised", b.cfg.BrokerAddr(), "cluster", b.cfg.BrokerClusterName)
	return nil
}

// Addr is the bound main address.
func (b *Broker) Addr() string { return b.main.Addr() }

// FastAddr is the bound VIP address, "" when it is not served.
func (b *Broker) FastAddr() string {
	if b.fast == nil {
		return ""
	}
	return b.fast.Addr()
}

// BrokerAddr is the advertised address registered with name servers.
func (b *Broker) BrokerAddr() string {
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	return b.cfg.BrokerAddr()
}

// Config returns the effective configuration.
func (b *Broker) Config() Config {
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	return b.cfg
}

// Close unregisters, stops serving, persists state and closes the store.
func (b *Broker) Close() error {
	var errs []error
	b.closeOnce.Do(func() {
		if b.main == nil { // never started
			b.roleMu.Lock()
			b.roleClosed = true
			b.roleMu.Unlock()
			b.timer.close()
			b.nsCli.Close()
			b.closeAuth()
			b.closeStore()
			return
		}
		if b.rm != nil {
			b.rm.stop()
		}
		b.reg.stop()
		b.sync.Stop()
		if b.metrics != nil {
			if err := b.metrics.exp.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		close(b.quit)
		b.wg.Wait()
		if err := b.main.Close(); err != nil {
			errs = append(errs, err)
		}
		if b.fast != nil {
			if err := b.fast.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		b.closeRole()
		b.timer.close()
		b.pull.holds.stop()
		b.pop.holds.stop()
		for _, p := range b.pools {
			p.Close()
		}
		b.nsCli.Close()
		for _, persist := range []func() error{b.offsets.persist, b.topics.persist, b.groups.persist, b.delay.persist} {
			if err := persist(); err != nil {
				errs = append(errs, err)
			}
		}
		if b.auth != nil {
			if err := b.auth.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		if b.ownsStore {
			if err := b.store.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	})
	return errors.Join(errs...)
}

// persistLoop writes consumer offsets every flushConsumerOffsetInterval.
func (b *Broker) persistLoop() {
	defer b.wg.Done()
	iv := time.Duration(b.cfg.FlushConsumerOffsetInterval) * time.Millisecond
	if iv <= 0 {
		iv = 5 * time.Second
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-b.quit:
			return
		case <-t.C:
			// Their fsyncs take the store's background lane (store/iolane).
			if err := b.store.BackgroundIO().Do(b.offsets.persist); err != nil {
				b.log.Error("persist consumer offsets", "err", err)
			}
			if err := b.store.BackgroundIO().Do(b.delay.persist); err != nil {
				b.log.Error("persist delay offsets", "err", err)
			}
		}
	}
}

// clientLoop sends membership notifications and expires silent clients.
func (b *Broker) clientLoop() {
	defer b.wg.Done()
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.quit:
			return
		case g := <-b.clients.notifyC:
			b.clients.sendNotify(g)
		case now := <-t.C:
			changed, dead := b.clients.expire(now)
			for _, c := range dead {
				b.log.Info("client channel expired", "remote", c.RemoteAddr())
				c.Close()
			}
			b.clients.notifyChanged(changed...)
		}
	}
}

// routers builds the main and the VIP route tables; the VIP port serves
// everything but the pulls.
func (b *Broker) routers() (mainR, fastR *transport.Router) {
	pullPool := b.pool("pull", b.cfg.PullMessageThreadPoolNums, b.cfg.PullThreadPoolQueueCapacity)
	clientPool := b.pool("client", 4, 50000)
	offsetPool := b.pool("offset", 4, 50000)
	queryPool := b.pool("query", 4, 10000)
	adminPool := b.pool("admin", b.cfg.AdminBrokerThreadPoolNums, 10000)
	replyPool := b.pool("reply", 4, 10000)
	// POP runs on pools of its own (Java's popMessageThreadPoolNums,
	// ackMessageThreadPoolNums: 16 and 3 + cores; queue 100000).
	popPool := b.pool("pop", max(b.cfg.PullMessageThreadPoolNums, 4), b.cfg.PullThreadPoolQueueCapacity)
	ackPool := b.pool("ack", 4, 100000)
	rp := &replyProcessor{send: b.send, clients: b.clients, storeHost: b.host, log: b.log}

	off := newOffsetProcessor(b.store, b.offsets)
	off.live = b.live // accessMessageInMemoryMaxRatio's window
	cp := &clientProcessor{live: b.live, clients: b.clients, groups: b.groups, topics: b.topics, filters: b.filters, log: b.log,
		registerNow: func() { b.reg.sync(registerNowTimeout) }}
	lp := &lockProcessor{locks: b.locks}
	qp := &queryProcessor{store: b.store, log: b.log, maxBatch: b.cfg.MaxMsgsNumBatch}
	b.sendPool = b.pool("send", b.cfg.SendMessageThreadPoolNums, b.cfg.SendThreadPoolQueueCapacity)
	b.sendPool.SetMaxQueueWait(b.live.waitInQueue())
	admin := b.adminHandlers()
	recallP := &recallProcessor{cfg: &b.cfg, live: b.live, role: b.role, topics: b.topics, store: b.store, storeHost: b.host, now: time.Now}

	send := b.send.handle
	if b.rm != nil {
		send = b.rm.gateSend(send) // fencing and minInSyncReplicas (controllermode_role.go)
	}
	build := func(withPull bool) *transport.Router {
		r := transport.NewRouter()
		b.metrics.observe(r)
		if b.authChk.enabled() {
			r.Use(b.authChk.check)
		}
		r.HandleLeased(codec.ReqSendMessage, b.sendPool, send)
		r.HandleLeased(codec.ReqSendMessageV2, b.sendPool, send)
		r.HandleLeased(codec.ReqSendBatchMessage, b.sendPool, send)
		r.Handle(codec.ReqRecallMessage, b.sendPool, recallP.handle) // Java: the send executor
		r.Handle(codec.ReqSendReplyMessage, replyPool, rp.handle)
		r.Handle(codec.ReqSendReplyMessageV2, replyPool, rp.handle)
		if withPull {
			r.HandleLeased(codec.ReqPullMessage, pullPool, b.pull.handle)
			r.HandleLeased(codec.ReqLitePullMessage, pullPool, b.pull.handle)
			// compat: like pulls, Java serves POP, PEEK, NOTIFICATION and
			// POLLING_INFO on the main port only.
			r.HandleLeased(codec.ReqPopMessage, popPool, b.pop.handlePop)
			r.HandleLeased(codec.ReqNotification, popPool, b.pop.handleNotification)
			r.HandleLeased(codec.ReqPeekMessage, popPool, b.pop.handlePeek)
			r.Handle(codec.ReqPollingInfo, popPool, b.pop.pollingInfo)
		}
		r.HandleLeased(codec.ReqAckMessage, ackPool, b.pop.ack)
		r.HandleLeased(codec.ReqBatchAckMessage, ackPool, b.pop.batchAck)
		r.Handle(codec.ReqChangeMessageInvisibletime, ackPool, b.pop.changeInvisible)
		r.Handle(codec.ReqQueryAssignment, clientPool, b.assign.queryAssignment)
		r.Handle(codec.ReqSetMessageRequestMode, adminPool, b.assign.setRequestMode)
		r.Handle(codec.ReqGetAllMessageRequestMode, adminPool, b.assign.getAllRequestModes)
		r.Handle(codec.ReqHeartBeat, clientPool, cp.heartbeat)
		r.Handle(codec.ReqUnregisterClient, clientPool, cp.unregisterClient)
		r.Handle(codec.ReqGetConsumerListByGroup, clientPool, cp.consumerList)
		r.Handle(codec.ReqCheckClientConfig, clientPool, cp.checkClientConfig)
		r.Handle(codec.ReqQueryConsumerOffset, offsetPool, off.queryConsumerOffset)
		r.Handle(codec.ReqUpdateConsumerOffset, offsetPool, off.updateConsumerOffset)
		r.Handle(codec.ReqGetMaxOffset, offsetPool, off.getMaxOffset)
		r.Handle(codec.ReqGetMinOffset, offsetPool, off.getMinOffset)
		r.Handle(codec.ReqSearchOffsetByTimestamp, offsetPool, off.searchOffsetByTimestamp)
		r.Handle(codec.ReqGetEarliestMsgStoretime, offsetPool, off.getEarliestMsgStoretime)
		r.Handle(codec.ReqLockBatchMq, clientPool, lp.lockBatch)
		r.Handle(codec.ReqUnlockBatchMq, clientPool, lp.unlockBatch)
		r.Handle(codec.ReqConsumerSendMsgBack, clientPool, b.retry.sendBack)
		r.Handle(codec.ReqEndTransaction, clientPool, b.txn.endTransaction)
		r.Handle(codec.ReqQueryMessage, queryPool, qp.queryMessage)
		r.Handle(codec.ReqViewMessageById, queryPool, qp.viewMessageByID)
		for _, h := range admin {
			h.register(r, adminPool)
		}
		registerHAStatus(r, adminPool, b, b.store.MaxPhyOffset)
		registerMasterSync(r, adminPool, b.timer.ts != nil, b.cfg.StorePathRootDir)
		registerControllerMode(r, adminPool, b)
		if b.authChk.enabled() {
			r.SetDefault(adminPool, unknownCode) // checked first, as Java's default processor (authmw.go)
		}
		return r
	}
	return build(true), build(false)
}

func (b *Broker) pool(name string, workers, queue int) *transport.Pool {
	p := transport.NewPool(name, workers, queue)
	b.pools = append(b.pools, p)
	return p
}

// sendQueueLen is the number of sends waiting for a worker.
func (b *Broker) sendQueueLen() int {
	if b.sendPool == nil {
		return 0
	}
	return b.sendPool.Pending()
}

// adminHandlers builds the admin request groups (admin_*.go), each with
// exactly what it uses.
func (b *Broker) adminHandlers() []adminHandlers {
	groups := []adminHandlers{
		&topicAdmin{topics: b.topics, offsets: b.offsets, store: b.store, live: b.live, log: b.log},
		&groupAdmin{groups: b.groups, offsets: b.offsets, clients: b.clients, brokerAddr: b.BrokerAddr, live: b.live},
		&statsAdmin{brokerName: b.cfg.BrokerName, topics: b.topics, offsets: b.offsets, clients: b.clients, store: b.store, stats: b.stats, role: b.role,
			sendQueueLen: b.sendQueueLen, timerBehind: b.timer.behind, delayStats: b.delay.runningStats,
			sendQueueCapacity: b.cfg.SendThreadPoolQueueCapacity, pullQueueCapacity: b.cfg.PullThreadPoolQueueCapacity,
			storeRoot: b.cfg.StorePathRootDir, commitLogDir: b.cfg.StorePathCommitLog},
		&clientAdmin{role: b.role, brokerName: b.cfg.BrokerName, topics: b.topics, groups: b.groups, offsets: b.offsets, clients: b.clients, store: b.store, log: b.log},
		&syncAdmin{topics: b.topics, offsets: b.offsets, delay: b.delay},
		&batchAdmin{topics: b.topics, groups: b.groups, offsets: b.offsets, clients: b.clients},
		&configAdmin{cfg: b, topics: b.topics, auth: b.authChk, log: b.log},
		&consumeAdmin{brokerName: b.cfg.BrokerName, brokerAddr: b.BrokerAddr, topics: b.topics, groups: b.groups, offsets: b.offsets, clients: b.clients, store: b.store, stats: b.stats, log: b.log},
		&popAdmin{},
		&flushAdmin{role: b.role},
	}
	if b.auth != nil {
		groups = append(groups, &authAdmin{auth: b.auth, log: b.log})
	}
	return groups
}

// replyWriteObserver is the remoting servers' WriteObserver: the reply
// write histogram with metrics on, nil (no clock reads) without.
func (b *Broker) replyWriteObserver() func(queued, written int64) {
	if b.metrics == nil {
		return nil
	}
	return b.metrics.observeReplyWrite
}
