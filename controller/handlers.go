package controller

import (
	"errors"
	"github.com/rocketgo/rocketgo/broker/auth"
	"math"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/blacklist"
	"github.com/rocketgo/rocketgo/compat/configfile"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

func (c *Controller) router() *transport.Router {
	r := transport.NewRouter()
	if c.auth != nil {
		// Every controller code acts on a broker set or the group.
		r.Use(c.auth.Guard(func(int32) bool { return true }, func(req *codec.Frame) string {
			v, _ := req.Get("clusterName")
			return v
		}))
	}
	p := c.pool
	r.Handle(codec.ReqControllerAlterSyncStateSet, p, c.alterSyncStateSet)
	r.Handle(codec.ReqControllerElectMaster, p, c.electMaster)
	r.Handle(codec.ReqControllerRegisterBroker, p, c.registerBroker)
	r.Handle(codec.ReqControllerGetReplicaInfo, p, c.getReplicaInfo)
	r.Handle(codec.ReqControllerGetMetadataInfo, p, c.getMetadata)
	r.Handle(codec.ReqControllerGetSyncStateData, p, c.getSyncStateData)
	r.Handle(codec.ReqBrokerHeartbeat, p, c.brokerHeartbeat)
	r.Handle(codec.ReqUpdateControllerConfig, p, c.updateConfig)
	r.Handle(codec.ReqGetControllerConfig, p, c.getConfig)
	r.Handle(codec.ReqCleanBrokerData, p, c.cleanBrokerData)
	r.Handle(codec.ReqControllerGetNextBrokerId, p, c.getNextBrokerID)
	r.Handle(codec.ReqControllerApplyBrokerId, p, c.applyBrokerID)
	// Every other code: REQUEST_CODE_NOT_SUPPORTED from the transport.
	return r
}

// respond runs decide (replicating its events when write) and answers.
func (c *Controller) respond(req *codec.Frame, write bool, decide func() *result) *codec.Frame {
	r, err := c.run(write, decide)
	if errors.Is(err, errNotLeader) {
		return codec.NewResponse(req, int32(codec.RespControllerNotLeader), remarks.ControllerNotLeader)
	}
	if err != nil {
		// Java: the cancelled consensus future surfaces as an exception,
		// which the remoting layer answers with SYSTEM_ERROR.
		c.log.Warn("controller: request failed", "code", codec.RequestCode(req.Code).String(), "err", err)
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	resp := codec.NewResponse(req, int32(r.code), r.remark)
	resp.Ext = r.ext
	resp.Body = r.body
	return resp
}

func badHeader(req *codec.Frame, err error) *codec.Frame {
	return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
}

// notSet is Java's answer when a handler had nothing to say.
func notSet(req *codec.Frame) *codec.Frame {
	return codec.NewResponse(req, int32(codec.RespSystemError), remarks.NoResponseCode)
}

func (c *Controller) alterSyncStateSet(conn *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.AlterSyncStateSetRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	set, err := body.DecodeSyncStateSet(req.Body, maxSyncSetIDs)
	if err != nil {
		return badHeader(req, err)
	}
	return c.respond(req, true, func() *result {
		return c.dec.alterSyncStateSet(conn, h.BrokerName, h.MasterBrokerID, h.MasterEpoch, set)
	})
}

// electMaster is a broker's own election request, or with designateElect
// mqadmin's electMaster (an admin operation; see doc.go for the rule).
func (c *Controller) electMaster(conn *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ElectMasterRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	resp := c.respond(req, true, func() *result {
		if h.DesignateElect {
			return c.dec.adminElect(h.BrokerName, h.BrokerID)
		}
		return c.dec.brokerElect(conn, h.BrokerName, h.BrokerID)
	})
	if resp.Code != int32(codec.RespSuccess) && resp.Code != int32(codec.RespControllerMasterStillExist) {
		c.log.Info("controller: elect master refused", "broker", h.BrokerName, "id", h.BrokerID, "designate", h.DesignateElect,
			"client", conn.RemoteAddr(), "code", resp.Code, "remark", resp.Remark)
	}
	if resp.Code == int32(codec.RespSuccess) {
		c.notifyRoleChanged(h.BrokerName)
	}
	return resp
}

func (c *Controller) registerBroker(conn *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.RegisterBrokerToControllerRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	return c.respond(req, true, func() *result {
		return c.dec.registerBroker(conn, h.ClusterName, h.BrokerName, h.BrokerID, h.BrokerAddress)
	})
}

func (c *Controller) getReplicaInfo(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetReplicaInfoRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	return c.respond(req, false, func() *result { return c.dec.getReplicaInfo(h.BrokerName) })
}

// getMetadata is answered by every node, leader or not.
func (c *Controller) getMetadata(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	cfg := c.Config()
	var peers strings.Builder
	for _, p := range c.peers {
		peers.WriteString(p.ID)
		peers.WriteByte(':')
		peers.WriteString(p.Addr)
		peers.WriteByte(';')
	}
	h := header.GetMetaDataResponse{Group: cfg.Group, Peers: peers.String(), IsLeader: c.IsLeader()}
	if l, ok := c.leaderPeer(); ok {
		h.ControllerLeaderID = l.ID
		h.ControllerLeaderAddress = l.Addr
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	h.Encode(resp)
	if !h.IsLeader {
		// compat: Java writes the primitive boolean false too.
		resp.Ext = append(resp.Ext, codec.KV{Key: "isLeader", Value: "false"})
	}
	return resp
}

func (c *Controller) getSyncStateData(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	if len(req.Body) == 0 {
		return notSet(req)
	}
	names, err := body.DecodeBrokerNames(req.Body, maxBrokerNames)
	if err != nil {
		return badHeader(req, err)
	}
	if len(names) == 0 {
		return notSet(req)
	}
	return c.respond(req, false, func() *result { return c.dec.getSyncStateData(names) })
}

func (c *Controller) brokerHeartbeat(conn *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.BrokerHeartbeatRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	if _, ok := req.Get("brokerId"); !ok {
		return codec.NewResponse(req, int32(codec.RespControllerInvalidRequest), remarks.HeartbeatNoBrokerID)
	}
	// Like Java: absent numbers take -1, absent priority the lowest.
	info := LiveInfo{Addr: h.BrokerAddr, Epoch: h.Epoch, MaxOffset: h.MaxOffset, ConfirmOffset: h.ConfirmOffset, Priority: h.ElectionPriority}
	if _, ok := req.Get("epoch"); !ok {
		info.Epoch = -1
	}
	if _, ok := req.Get("maxOffset"); !ok {
		info.MaxOffset = -1
	}
	if _, ok := req.Get("confirmOffset"); !ok {
		info.ConfirmOffset = -1
	}
	if _, ok := req.Get("electionPriority"); !ok {
		info.Priority = math.MaxInt32
	}
	if len(h.ClusterName) > maxNameLength || len(h.BrokerName) > maxNameLength || len(h.BrokerAddr) > maxAddrLength {
		return codec.NewResponse(req, int32(codec.RespControllerInvalidRequest), remarks.HeartbeatNameTooLong)
	}
	k := brokerKey{cluster: h.ClusterName, broker: h.BrokerName, id: h.BrokerID}
	if err := c.live.beat(k, info, time.Duration(h.HeartbeatTimeoutMills)*time.Millisecond, conn); err != nil {
		if errors.Is(err, errHeldElsewhere) {
			c.log.Debug("controller: heartbeat refused", "cluster", k.cluster, "broker", k.broker, "id", k.id, "client", conn.RemoteAddr(), "err", err)
			return codec.NewResponse(req, int32(codec.RespControllerInvalidRequest), remarks.HeartbeatOtherConnection)
		}
		return codec.NewResponse(req, int32(codec.RespControllerInvalidRequest), remarks.HeartbeatTooManyBrokers)
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), remarks.HeartbeatOK)
}

// cleanBrokerData is mqadmin's cleanBrokerMetadata (an admin operation;
// see doc.go for the rule).
func (c *Controller) cleanBrokerData(conn *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.CleanControllerBrokerDataRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	resp := c.respond(req, true, func() *result {
		return c.dec.cleanBrokerData(h.ClusterName, h.BrokerName, h.BrokerControllerIdsToClean, h.IsCleanLivingBroker)
	})
	c.log.Info("controller: clean broker data", "broker", h.BrokerName, "ids", h.BrokerControllerIdsToClean, "living", h.IsCleanLivingBroker,
		"client", conn.RemoteAddr(), "code", resp.Code, "remark", resp.Remark)
	return resp
}

func (c *Controller) getNextBrokerID(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetNextBrokerIdRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	return c.respond(req, false, func() *result { return c.dec.getNextBrokerID(h.ClusterName, h.BrokerName) })
}

func (c *Controller) applyBrokerID(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ApplyBrokerIdRequest
	if err := h.Decode(req); err != nil {
		return badHeader(req, err)
	}
	return c.respond(req, true, func() *result {
		return c.dec.applyBrokerID(h.ClusterName, h.BrokerName, h.AppliedBrokerID, h.RegisterCheckCode)
	})
}

func (c *Controller) getConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	cfg := c.Config()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = javaprops.AppendPlain(nil, cfg.Properties())
	return resp
}

// updateConfig applies a properties body to the running configuration.
// Like Java, one black-listed key refuses the whole update, and the result
// is written to configStorePath.
func (c *Controller) updateConfig(conn *transport.Conn, req *codec.Frame) *codec.Frame {
	c.log.Info("controller: update config", "client", conn.RemoteAddr())
	if len(req.Body) == 0 {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	p, err := javaprops.Parse(req.Body)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.String2PropertiesFail)
	}
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	next := c.Config()
	if key, why, refused := blacklist.Check(p, next.ConfigBlackList); refused {
		c.log.Warn("controller: update config refused", "key", key, "why", why)
		return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.ConfigInBlackList)
	}
	// The group's shape is fixed at start: these keys would change nothing
	// until a restart, and a half-changed view would lie to clients.
	for _, e := range p {
		if auth.IsConfigKey(e.Key) {
			return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.ConfigInBlackList)
		}
		switch e.Key {
		case "controllerDLegerGroup", "controllerDLegerPeers", "controllerDLegerSelfId", "controllerRaftPeers", "controllerType",
			// Who may act on live brokers is the operator's local decision, never a remote one.
			"controllerAllowAdminOnLiveBrokers":
			return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.ConfigInBlackList)
		}
	}
	// Stricter than Java: the policy's keys and the operator's additions.
	policy := blacklist.Policy{Refuse: next.RefuseSensitiveRemoteConfig, Extra: next.SensitiveRemoteConfigKeys}
	if key, refused := policy.Check(p, sensitiveKeys); refused {
		c.log.Warn("controller: update config refused", "key", key, "why", blacklist.ReasonSensitive)
		return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.ConfigInBlackList)
	}
	unknown, err := next.Apply(p)
	if err == nil {
		err = next.Validate()
	}
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	if len(unknown) > 0 {
		c.log.Warn("controller: update config: unknown keys ignored", "keys", unknown)
	}
	c.cfg.Store(&next)
	if next.ConfigStorePath != "" {
		// Java's Configuration.persist: every key, to configStorePath (read
		// at start only when it is also the -c file). Written escaped, so a
		// value holding a newline cannot add a key (see the name server).
		if err := configfile.Write(next.ConfigStorePath, javaprops.Append(nil, next.Properties())); err != nil {
			// Like Java: the update stands; only the file is stale.
			c.log.Error("controller: persist config", "path", next.ConfigStorePath, "err", err)
		}
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}
