package broker

import (
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store/ha"
)

// haStatusSource is what GET_BROKER_HA_STATUS reads (*Broker has it).
type haStatusSource interface {
	IsSlave() bool
	// HASlaves lists the master's slave connections (nil on a slave).
	HASlaves() []ha.SlaveStatus
	// HAClientStatus is the slave's HA client (false when none runs).
	HAClientStatus() (ha.ClientStatus, bool)
}

// registerHAStatus serves GET_BROKER_HA_STATUS (907) with Java's
// HARuntimeInfo; maxPhyOffset is the commit log's end (Java's
// masterPutWhere on a master, getMaxPhyOffset on a slave).
func registerHAStatus(r *transport.Router, pool *transport.Pool, src haStatusSource, maxPhyOffset func() int64) {
	r.Handle(codec.ReqGetBrokerHaStatus, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		info := haRuntimeInfo(src, maxPhyOffset())
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = body.AppendHARuntimeInfo(nil, &info)
		return resp
	})
}

// haRuntimeInfo builds the body as Java's DefaultHAService.getRuntimeInfo.
func haRuntimeInfo(src haStatusSource, maxPhy int64) body.HARuntimeInfo {
	var info body.HARuntimeInfo
	if src.IsSlave() {
		c := &info.HAClientRuntimeInfo
		c.MaxOffset = maxPhy
		// masterFlushOffset stays 0: classic HA never learns the master's
		// flushed offset (Java sets it only in controller / acting-master mode).
		if st, ok := src.HAClientStatus(); ok {
			c.MasterAddr = st.MasterAddr
			c.TransferredByteInSecond = st.TransferredBytesPerSecond
			c.LastReadTimestamp = unixMilli(st.LastRead)
			c.LastWriteTimestamp = unixMilli(st.LastWrite)
		}
		return info
	}
	info.Master = true
	info.MasterCommitLogMaxOffset = maxPhy
	slaves := src.HASlaves()
	info.HAConnectionInfo = make([]body.HAConnectionRuntimeInfo, 0, len(slaves))
	for _, s := range slaves {
		if s.InSync {
			info.InSyncSlaveNums++
		}
		info.HAConnectionInfo = append(info.HAConnectionInfo, body.HAConnectionRuntimeInfo{
			Addr:                    s.Addr,
			SlaveAckOffset:          s.AckOffset,
			Diff:                    maxPhy - s.AckOffset, // compat: Java subtracts the raw ack (-1 before the first report)
			InSync:                  s.InSync,
			TransferredByteInSecond: s.TransferredBytesPerSecond,
			TransferFromWhere:       s.TransferFrom,
		})
	}
	if c, ok := src.(interface{ HAInSyncSlaveNums() (int, bool) }); ok {
		if n, ok := c.HAInSyncSlaveNums(); ok {
			info.InSyncSlaveNums = int32(n) // controller mode: the local SyncStateSet
		}
	}
	return info
}

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
