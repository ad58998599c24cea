package namesrv

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/configfile"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

func ok(req *codec.Frame) *codec.Frame { return codec.NewResponse(req, int32(codec.RespSuccess), "") }

func fail(req *codec.Frame, code codec.ResponseCode, remark string) *codec.Frame {
	return codec.NewResponse(req, int32(code), remark)
}

// badHeader answers a header that does not decode as Java does: SYSTEM_ERROR
// with the exception text ("the custom field <x> is null").
func badHeader(req *codec.Frame, err error) *codec.Frame {
	return fail(req, codec.RespSystemError, err.Error())
}

func withBody(resp *codec.Frame, b []byte) *codec.Frame {
	resp.Body = b
	return resp
}

func (s *Server) getRouteInfo(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetRouteInfoRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	cfg := s.cfg.Load()
	if cfg.NeedWaitForService && time.Since(s.start) < time.Duration(cfg.WaitSecondsForService)*time.Second {
		return fail(req, codec.RespSystemError, remarks.NameServerNotReady)
	}
	var orderConf string
	if cfg.OrderMessageEnable {
		orderConf, _ = s.kv.get(namespaceOrderTopicConfig, h.Topic)
	}
	browser := req.Version >= body.VersionV4_9_4 || h.AcceptStandardJsonOnly
	zone := req.Value("__ZONE_NAME")
	zoned := zone != "" && strings.EqualFold(req.Value("__ZONE_MODE"), "true")
	key := routeCacheKey{topic: h.Topic, browser: browser, supportActingMaster: cfg.SupportActingMaster}
	gen := s.routes.gen.Load()
	if !zoned {
		if b, hit := s.routeCache.get(key, gen, orderConf); hit {
			return withBody(ok(req), b)
		}
	}
	r, found := s.routes.route(h.Topic, cfg.SupportActingMaster)
	if !found {
		return fail(req, codec.RespTopicNotExist, remarks.NoTopicRouteInfo(h.Topic))
	}
	r.OrderTopicConf = orderConf
	if zoned {
		filterByZone(&r, zone)
		// compat: Java's ZoneRouteRPCHook re-encodes the filtered route with
		// default fastjson, so zone-mode replies always carry bare keys.
		return withBody(ok(req), body.AppendTopicRouteData(make([]byte, 0, 512), &r, false))
	}
	b := body.AppendTopicRouteData(make([]byte, 0, 512), &r, browser)
	s.routeCache.put(key, routeCacheEntry{gen: gen, orderConf: orderConf, body: b})
	return withBody(ok(req), b)
}

// filterByZone keeps the broker groups of zone, and groups without a
// master (whose slaves still serve reads), like Java's ZoneRouteRPCHook.
func filterByZone(r *body.TopicRouteData, zone string) {
	removed := map[string]bool{}
	kept := r.BrokerDatas[:0]
	for _, bd := range r.BrokerDatas {
		if _, hasMaster := bd.Addr(masterID); !hasMaster || strings.EqualFold(bd.ZoneName, zone) {
			kept = append(kept, bd)
			continue
		}
		removed[bd.BrokerName] = true
		for _, a := range bd.BrokerAddrs {
			for i := 0; i < len(r.FilterServerTable); i++ {
				if r.FilterServerTable[i].BrokerAddr == a.Addr {
					r.FilterServerTable = append(r.FilterServerTable[:i], r.FilterServerTable[i+1:]...)
					i--
				}
			}
		}
	}
	r.BrokerDatas = kept
	qds := r.QueueDatas[:0]
	for _, qd := range r.QueueDatas {
		if !removed[qd.BrokerName] {
			qds = append(qds, qd)
		}
	}
	r.QueueDatas = qds
}

// limitOr is v, or def when v is not positive.
func limitOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func limitOr64(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// bigRegisterBody: a plain body this long, or any compressed one, is
// decoded under bigDecode. Decoding costs many times the body (the topic
// configs it yields), so at most one such decode runs at a time and a
// burst of them cannot multiply that cost by the pool size.
const bigRegisterBody = 1 << 20

func (s *Server) decodeRegisterBody(b []byte, compressed bool, version int32) (body.RegisterBrokerBody, error) {
	if compressed || len(b) >= bigRegisterBody {
		s.bigDecode.Lock()
		defer s.bigDecode.Unlock()
	}
	return body.DecodeRegisterBrokerBody(b, compressed, version)
}

func (s *Server) registerBroker(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.RegisterBrokerRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	if h.BodyCrc32 != 0 && int32(crc32.ChecksumIEEE(req.Body)&0x7FFFFFFF) != h.BodyCrc32 {
		s.log.Warn("namesrv: register broker crc32 mismatch", "remote", c.RemoteAddr())
		return fail(req, codec.RespSystemError, remarks.CRC32NotMatch)
	}
	b, err := s.decodeRegisterBody(req.Body, h.Compressed, req.Version)
	if err != nil {
		s.log.Warn("namesrv: register broker body", "remote", c.RemoteAddr(), "broker", h.BrokerName, "err", err)
		return fail(req, codec.RespSystemError, remarks.DecodeRegisterBrokerBodyFailed)
	}
	cfg := s.cfg.Load()
	if max := limitOr(cfg.MaxTopicsPerBrokerRegistration, DefaultMaxTopicsPerBrokerRegistration); len(b.Topics)+len(b.Mappings) > max {
		s.log.Warn("namesrv: register broker refused (maxTopicsPerBrokerRegistration)", "remote", c.RemoteAddr(),
			"broker", h.BrokerName, "topics", len(b.Topics), "mappings", len(b.Mappings))
		return fail(req, codec.RespSystemError, remarks.RegisterBrokerTooManyTopics(len(b.Topics)+len(b.Mappings), max))
	}
	reg := registration{
		cluster: strings.Clone(h.ClusterName), addr: strings.Clone(h.BrokerAddr), name: strings.Clone(h.BrokerName),
		id: h.BrokerID, haAddr: strings.Clone(h.HaServerAddr), zone: strings.Clone(h.ZoneName),
		timeout: time.Duration(h.HeartbeatTimeoutMillis) * time.Millisecond,
		body:    b, hasBody: true, conn: c,
		deleteMissingTopics: cfg.DeleteTopicWithBrokerRegistration,
		maxBrokers:          limitOr(cfg.MaxBrokers, DefaultMaxBrokers),
		maxEntries:          limitOr(cfg.MaxTopicRouteEntries, DefaultMaxTopicRouteEntries),
		maxBytes:            limitOr64(cfg.MaxRouteTableBytes, DefaultMaxRouteTableBytes),
	}
	if _, present := req.Get("enableActingMaster"); present {
		v := h.EnableActingMaster
		reg.actingMaster = &v
	}
	res, registered := s.routes.register(&reg)
	if !registered {
		return fail(req, codec.RespSystemError, remarks.RegisterBrokerFailed)
	}
	if res.refused != "" {
		s.log.Warn("namesrv: "+res.refused, "remote", c.RemoteAddr(), "cluster", h.ClusterName, "broker", h.BrokerName, "addr", h.BrokerAddr)
		return fail(req, codec.RespSystemError, res.refused)
	}
	resp := ok(req)
	rh := header.RegisterBrokerResponse{HaServerAddr: res.haAddr, MasterAddr: res.masterAddr}
	rh.Encode(resp)
	if cfg.ReturnOrderTopicConfigToBroker {
		if table, found := s.kv.list(namespaceOrderTopicConfig); found {
			resp.Body = body.AppendKVTable(nil, table)
		}
	}
	return resp
}

func (s *Server) unregisterBroker(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.UnRegisterBrokerRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	s.routes.unregister(h.ClusterName, h.BrokerAddr, h.BrokerName)
	return ok(req)
}

func (s *Server) brokerHeartbeat(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.BrokerHeartbeatRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	s.routes.touch(h.ClusterName, h.BrokerAddr)
	return ok(req)
}

func (s *Server) queryDataVersion(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryDataVersionRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	prev, known := s.routes.dataVersion(h.ClusterName, h.BrokerAddr)
	changed := true
	if v, err := body.DecodeDataVersion(req.Body); err == nil && len(req.Body) > 0 && known {
		changed = v != prev
	}
	s.routes.touch(h.ClusterName, h.BrokerAddr)
	resp := ok(req)
	rh := header.QueryDataVersionResponse{Changed: changed}
	rh.Encode(resp)
	if known {
		resp.Body = body.AppendTopicVersion(nil, prev)
	}
	return resp
}

func (s *Server) getBrokerClusterInfo(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	info := s.routes.clusterInfo()
	return withBody(ok(req), body.AppendClusterInfo(nil, &info))
}

func (s *Server) getBrokerMemberGroup(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetBrokerMemberGroupRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	return withBody(ok(req), body.AppendBrokerMemberGroupBody(nil, h.ClusterName, h.BrokerName, s.routes.memberGroup(h.BrokerName)))
}

func topicListResponse(req *codec.Frame, l body.TopicList) *codec.Frame {
	if l.Topics == nil {
		l.Topics = []string{}
	}
	return withBody(ok(req), body.AppendTopicList(nil, &l))
}

func (s *Server) getAllTopicList(c *transport.Conn, req *codec.Frame) *codec.Frame {
	if !s.cfg.Load().EnableAllTopicList {
		return fail(req, codec.RespSystemError, remarks.Disable)
	}
	return topicListResponse(req, body.TopicList{Topics: s.routes.allTopics()})
}

func (s *Server) getTopicsByCluster(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	if !s.cfg.Load().EnableTopicList {
		return fail(req, codec.RespSystemError, remarks.Disable)
	}
	var h header.GetTopicsByClusterRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	return topicListResponse(req, body.TopicList{Topics: s.routes.topicsByCluster(h.Cluster)})
}

func (s *Server) getSystemTopicList(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	return topicListResponse(req, s.routes.systemTopics())
}

func (s *Server) unitTopicList(keep func(int32) bool) transport.Handler {
	return func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		if !s.cfg.Load().EnableTopicList {
			return fail(req, codec.RespSystemError, remarks.Disable)
		}
		return topicListResponse(req, body.TopicList{Topics: s.routes.topicsByFlag(keep)})
	}
}

func (s *Server) deleteTopic(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.DeleteTopicFromNamesrvRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	s.routes.deleteTopic(h.Topic, h.ClusterName)
	return ok(req)
}

func (s *Server) registerTopic(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.RegisterTopicRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	if len(req.Body) > 0 {
		r, err := body.DecodeTopicRouteData(req.Body)
		if err != nil {
			return fail(req, codec.RespSystemError, err.Error())
		}
		if len(r.QueueDatas) > 0 {
			cfg := s.cfg.Load()
			maxEntries := limitOr(cfg.MaxTopicRouteEntries, DefaultMaxTopicRouteEntries)
			maxBytes := limitOr64(cfg.MaxRouteTableBytes, DefaultMaxRouteTableBytes)
			if refused := s.routes.registerTopic(strings.Clone(h.Topic), r.QueueDatas, maxEntries, maxBytes); refused != "" {
				return fail(req, codec.RespSystemError, refused)
			}
		}
	}
	return ok(req)
}

func (s *Server) putKVConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.PutKVConfigRequest
	if err := h.Decode(req); err != nil {
		return fail(req, codec.RespSystemError, remarks.NamespaceOrKeyIsNull)
	}
	cfg := s.cfg.Load()
	// The bounds are checked on the request's strings; only a put that
	// fits clones them.
	maxBytes := limitOr(cfg.MaxKVConfigBytes, DefaultMaxKVConfigBytes)
	maxValue := limitOr(cfg.MaxKVConfigValueLength, DefaultMaxKVConfigValueLength)
	if len(h.Value) > maxValue {
		return fail(req, codec.RespSystemError, remarks.KVValueTooLong(len(h.Value), maxValue))
	}
	if err := s.kv.put(strings.Clone(h.Namespace), strings.Clone(h.Key), strings.Clone(h.Value), maxBytes, maxValue); err != nil {
		if errors.Is(err, errKVFull) {
			s.log.Warn("namesrv: put kv config refused", "namespace", h.Namespace, "err", err)
			return fail(req, codec.RespSystemError, remarks.KVConfigRefused(strings.TrimPrefix(err.Error(), errKVFull.Error()+": ")))
		}
		s.log.Error("namesrv: put kv config", "err", err)
	}
	return ok(req)
}

func (s *Server) getKVConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetKVConfigRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	v, found := s.kv.get(h.Namespace, h.Key)
	if !found {
		return fail(req, codec.RespQueryNotFound, remarks.NoConfigItem(h.Namespace, h.Key))
	}
	resp := ok(req)
	rh := header.GetKVConfigResponse{Value: v}
	rh.Encode(resp)
	return resp
}

func (s *Server) deleteKVConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.DeleteKVConfigRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	if err := s.kv.delete(h.Namespace, h.Key); err != nil {
		s.log.Error("namesrv: delete kv config", "err", err)
	}
	return ok(req)
}

func (s *Server) getKVList(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetKVListByNamespaceRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	table, found := s.kv.list(h.Namespace)
	if !found {
		return fail(req, codec.RespQueryNotFound, remarks.NoConfigNamespace(h.Namespace))
	}
	return withBody(ok(req), body.AppendKVTable(nil, table))
}

func (s *Server) wipeWritePerm(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.WipeWritePermOfBrokerRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	n := s.routes.setWritePerm(h.BrokerName, true)
	s.log.Info("namesrv: wipe write perm of broker", "broker", h.BrokerName, "client", c.RemoteAddr(), "topics", n)
	resp := ok(req)
	rh := header.WipeWritePermOfBrokerResponse{WipeTopicCount: int32(n)}
	rh.Encode(resp)
	return resp
}

func (s *Server) addWritePerm(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.AddWritePermOfBrokerRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	n := s.routes.setWritePerm(h.BrokerName, false)
	s.log.Info("namesrv: add write perm of broker", "broker", h.BrokerName, "client", c.RemoteAddr(), "topics", n)
	resp := ok(req)
	rh := header.AddWritePermOfBrokerResponse{AddTopicCount: int32(n)}
	rh.Encode(resp)
	return resp
}

func (s *Server) updateConfig(c *transport.Conn, req *codec.Frame) *codec.Frame {
	s.log.Info("namesrv: update config", "client", c.RemoteAddr())
	if len(req.Body) == 0 {
		return ok(req)
	}
	p, err := javaprops.Parse(req.Body)
	if err != nil {
		return fail(req, codec.RespSystemError, remarks.String2PropertiesFail)
	}
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	next := *s.cfg.Load()
	// Like Java: one refused key refuses the whole update, nothing applied
	// or persisted.
	if key, why, refused := next.refusedKey(p); refused {
		s.log.Warn("namesrv: update config refused", "client", c.RemoteAddr(), "key", key, "why", why)
		return fail(req, codec.RespNoPermission, remarks.ConfigInBlackList)
	}
	unknown, err := next.Apply(p)
	if err == nil {
		err = next.Validate()
	}
	if err != nil {
		s.log.Warn("namesrv: update config refused", "client", c.RemoteAddr(), "err", err)
		return fail(req, codec.RespSystemError, err.Error())
	}
	if len(unknown) > 0 {
		s.log.Warn("namesrv: update config: unknown keys ignored", "keys", unknown)
	}
	var file []byte
	if next.ConfigStorePath != "" {
		var err error
		if file, err = configFile(&next); err != nil {
			// Like Java: the update stands, only the file stays as it was.
			s.log.Error("namesrv: update config: read config file", "path", next.ConfigStorePath, "err", err)
			file = nil
		} else if err := startsAs(file, &next); err != nil {
			s.log.Warn("namesrv: update config refused", "client", c.RemoteAddr(), "err", err)
			return fail(req, codec.RespSystemError, err.Error())
		}
	}
	s.cfg.Store(&next)
	if file != nil {
		if err := configfile.Write(next.ConfigStorePath, file); err != nil {
			s.log.Error("namesrv: persist config", "path", next.ConfigStorePath, "err", err)
		}
	}
	return ok(req)
}

// configFile is what next.ConfigStorePath is rewritten with: every setting
// of next, and the keys of the file that are not ours (the embedded
// controller's: Java's writer drops them, so a controller node would not
// start again).
func configFile(next *Config) ([]byte, error) {
	path := next.ConfigStorePath
	file := next.Properties()
	switch data, err := os.ReadFile(path); {
	case err == nil:
		old, err := javaprops.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("namesrv: config file %s: %w", path, err)
		}
		for _, e := range old {
			if _, ours := props.Find(e.Key); !ours {
				file.Set(e.Key, e.Value)
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("namesrv: config file: %w", err)
	}
	// compat: Java's Configuration.persist writes unescaped key=value
	// lines, so a value holding a newline ("x\nkvConfigPath=/y") adds a key
	// at the next start, past the black list. We write the escaped form,
	// which Java's Properties.load reads back to the same values.
	return javaprops.Append(nil, file), nil
}

// startsAs checks that a start from file gets the settings of next.
func startsAs(file []byte, next *Config) error {
	path := next.ConfigStorePath
	p, err := javaprops.Parse(file)
	if err != nil {
		return fmt.Errorf("namesrv: update config: %s would not parse: %w", path, err)
	}
	restarted, err := fromFile(p, path)
	if err != nil {
		return fmt.Errorf("namesrv: update config: %s would not start: %w", path, err)
	}
	restarted.TLS = next.TLS // the cmd's, from the tls.* keys the file keeps
	if restarted != *next {
		return fmt.Errorf("namesrv: update config: %s would start with other settings", path)
	}
	return nil
}

func (s *Server) getConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	cfg := s.cfg.Load()
	return withBody(ok(req), javaprops.AppendPlain(nil, cfg.Properties()))
}
