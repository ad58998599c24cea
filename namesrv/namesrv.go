package namesrv

import (
	"context"
	"fmt"
	"github.com/rocketgo/rocketgo/broker/auth"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/telemetry"
)

// Server is a running name server.
type Server struct {
	cfg    atomic.Pointer[Config] // replaced whole by UPDATE_NAMESRV_CONFIG
	cfgMu  sync.Mutex             // serializes config updates
	log    *slog.Logger
	routes *routeTable
	kv     *kvStore

	routeCache routeCache // big GET_ROUTEINFO_BY_TOPIC bodies
	start      time.Time

	bigDecode sync.Mutex // one big or compressed REGISTER_BROKER body decodes at a time

	srv     *transport.Server
	auth    *auth.Service // with authentication on: who may write
	general *transport.Pool
	client  *transport.Pool
	metrics *telemetry.Exporter // metricsExporterType=PROM or OTLP_GRPC (metrics.go); nil otherwise

	stop      chan struct{}
	done      chan struct{}
	bg        sync.WaitGroup // connection-close handlers in flight
	closeOnce sync.Once
}

// New builds a name server from cfg and loads the KV store; Start listens.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		log:    log,
		routes: newRouteTable(log, time.Now),
		kv:     newKVStore(cfg.KVConfigPath, log),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	c := cfg
	s.cfg.Store(&c)
	if err := s.kv.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// Config returns the current configuration.
func (s *Server) Config() Config { return *s.cfg.Load() }

// Start listens on bindAddress:listenPort and starts the liveness scanner.
func (s *Server) Start() error {
	cfg := s.Config()
	s.general = transport.NewPool("namesrv-default", cfg.DefaultThreadPoolNums, cfg.DefaultThreadPoolQueueCapacity)
	s.client = transport.NewPool("namesrv-client", cfg.ClientRequestThreadPoolNums, cfg.ClientRequestThreadPoolQueueCapacity)
	scfg, tlsErr := cfg.Limits.Apply(transport.ServerConfig{
		Addr:        cfg.ListenAddr(),
		Logger:      s.log,
		IdleTimeout: time.Duration(cfg.ServerChannelMaxIdleTimeSeconds) * time.Second,
		OnClose: func(c *transport.Conn) {
			// Off the event loop: unregistering takes the route table's write lock.
			s.bg.Add(1)
			go func() {
				defer s.bg.Done()
				s.routes.connClosed(c)
			}()
		},
	}).WithTLS(cfg.TLS)
	r := s.router()
	exp, rpc, err := s.newMetrics(cfg)
	if err != nil {
		s.general.Close()
		s.client.Close()
		return fmt.Errorf("namesrv: start: %w", err)
	}
	if rpc != nil {
		r.Observe(rpc.Observer())
	}
	if cfg.Auth.AuthenticationEnabled && tlsErr == nil {
		svc, err := auth.Open(cfg.Auth, filepath.Join(filepath.Dir(cfg.KVConfigPath), "auth"), s.log.With("component", "auth"))
		if err != nil {
			s.general.Close()
			s.client.Close()
			return fmt.Errorf("namesrv: start: %w", err)
		}
		s.auth = svc
		r.Use(svc.Guard(isNamesrvWrite, clusterOf))
	}
	s.srv = transport.NewServer(scfg, r)
	s.start = time.Now()
	if tlsErr == nil {
		tlsErr = s.srv.Start()
	}
	if err := tlsErr; err != nil {
		s.general.Close()
		s.client.Close()
		if s.auth != nil {
			_ = s.auth.Close()
		}
		return fmt.Errorf("namesrv: start: %w", err)
	}
	if exp != nil {
		if err := exp.Start(cfg.metricsConfig(), cfg.BindAddress); err != nil {
			_ = s.srv.Close()
			s.general.Close()
			s.client.Close()
			if s.auth != nil {
				_ = s.auth.Close()
			}
			return fmt.Errorf("namesrv: start: %w", err)
		}
		s.metrics = exp
	}
	go s.scan(cfg.ScanNotActiveBrokerInterval)
	level, msg := listenNotice(s.srv.Addr())
	s.log.Log(context.Background(), level, msg, "addr", s.srv.Addr())
	return nil
}

// Addr is the bound "ip:port".
func (s *Server) Addr() string { return s.srv.Addr() }

// Close stops listening, the scanner and the worker pools.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		if s.srv == nil {
			close(s.done)
			return
		}
		if merr := s.metrics.Close(); merr != nil {
			s.log.Warn("namesrv: close metrics endpoint", "err", merr)
		}
		err = s.srv.Close()
		<-s.done
		s.bg.Wait()
		s.general.Close()
		s.client.Close()
		if s.auth != nil {
			if cerr := s.auth.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
		s.log.Info("namesrv: stopped")
	})
	return err
}

// scan drops brokers that stopped registering.
func (s *Server) scan(every time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			for _, c := range s.routes.expire(s.Config().BrokerChannelExpiredTime) {
				c.Close()
			}
		}
	}
}

// isNamesrvWrite reports the codes that change the name server's state:
// with authentication on they need a signed super user.
func isNamesrvWrite(code int32) bool {
	switch codec.RequestCode(code) {
	case codec.ReqRegisterBroker, codec.ReqUnregisterBroker, codec.ReqBrokerHeartbeat,
		codec.ReqDeleteTopicInNamesrv, codec.ReqRegisterTopicInNamesrv,
		codec.ReqPutKvConfig, codec.ReqDeleteKvConfig,
		codec.ReqWipeWritePermOfBroker, codec.ReqAddWritePermOfBroker,
		codec.ReqUpdateNamesrvConfig:
		return true
	}
	return false
}

// clusterOf is the cluster a guarded request acts on: the one it names,
// or "" (the whole name server).
func clusterOf(req *codec.Frame) string {
	v, _ := req.Get("clusterName")
	return v
}

func (s *Server) router() *transport.Router {
	r := transport.NewRouter()
	g := s.general
	r.Handle(codec.ReqGetRouteinfoByTopic, s.client, s.getRouteInfo)
	r.Handle(codec.ReqRegisterBroker, g, s.registerBroker)
	r.Handle(codec.ReqUnregisterBroker, g, s.unregisterBroker)
	r.Handle(codec.ReqBrokerHeartbeat, g, s.brokerHeartbeat)
	r.Handle(codec.ReqQueryDataVersion, g, s.queryDataVersion)
	r.Handle(codec.ReqGetBrokerClusterInfo, g, s.getBrokerClusterInfo)
	r.Handle(codec.ReqGetBrokerMemberGroup, g, s.getBrokerMemberGroup)
	r.Handle(codec.ReqGetAllTopicListFromNameserver, g, s.getAllTopicList)
	r.Handle(codec.ReqGetTopicsByCluster, g, s.getTopicsByCluster)
	r.Handle(codec.ReqGetSystemTopicListFromNs, g, s.getSystemTopicList)
	r.Handle(codec.ReqGetUnitTopicList, g, s.unitTopicList(func(f int32) bool { return f&flagUnit != 0 }))
	r.Handle(codec.ReqGetHasUnitSubTopicList, g, s.unitTopicList(func(f int32) bool { return f&flagUnitSub != 0 }))
	r.Handle(codec.ReqGetHasUnitSubUnunitTopicList, g, s.unitTopicList(func(f int32) bool { return f&flagUnit == 0 && f&flagUnitSub != 0 }))
	r.Handle(codec.ReqDeleteTopicInNamesrv, g, s.deleteTopic)
	r.Handle(codec.ReqRegisterTopicInNamesrv, g, s.registerTopic)
	r.Handle(codec.ReqPutKvConfig, g, s.putKVConfig)
	r.Handle(codec.ReqGetKvConfig, g, s.getKVConfig)
	r.Handle(codec.ReqDeleteKvConfig, g, s.deleteKVConfig)
	r.Handle(codec.ReqGetKvlistByNamespace, g, s.getKVList)
	r.Handle(codec.ReqWipeWritePermOfBroker, g, s.wipeWritePerm)
	r.Handle(codec.ReqAddWritePermOfBroker, g, s.addWritePerm)
	r.Handle(codec.ReqUpdateNamesrvConfig, g, s.updateConfig)
	r.Handle(codec.ReqGetNamesrvConfig, g, s.getConfig)
	return r
}
