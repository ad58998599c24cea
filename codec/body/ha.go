package body

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// HARuntimeInfo is the GET_BROKER_HA_STATUS (907) body (Java HARuntimeInfo).
type HARuntimeInfo struct {
	Master                   bool                      `json:"master"`
	MasterCommitLogMaxOffset int64                     `json:"masterCommitLogMaxOffset"`
	InSyncSlaveNums          int32                     `json:"inSyncSlaveNums"`
	HAConnectionInfo         []HAConnectionRuntimeInfo `json:"haConnectionInfo"`
	HAClientRuntimeInfo      HAClientRuntimeInfo       `json:"haClientRuntimeInfo"`
}

// HAConnectionRuntimeInfo is one slave connection as the master sees it.
type HAConnectionRuntimeInfo struct {
	Addr                    string `json:"addr"`
	SlaveAckOffset          int64  `json:"slaveAckOffset"`
	Diff                    int64  `json:"diff"`
	InSync                  bool   `json:"inSync"`
	TransferredByteInSecond int64  `json:"transferredByteInSecond"`
	TransferFromWhere       int64  `json:"transferFromWhere"`
}

// HAClientRuntimeInfo is the slave's HA client. Java's isActivated field
// has no getter, so fastjson never writes it; neither do we.
type HAClientRuntimeInfo struct {
	MasterAddr              string `json:"masterAddr"`
	TransferredByteInSecond int64  `json:"transferredByteInSecond"`
	MaxOffset               int64  `json:"maxOffset"`
	LastReadTimestamp       int64  `json:"lastReadTimestamp"`
	LastWriteTimestamp      int64  `json:"lastWriteTimestamp"`
	MasterFlushOffset       int64  `json:"masterFlushOffset"`
}

// AppendHARuntimeInfo writes the body as fastjson does: properties sorted
// by name, a null masterAddr left out.
func AppendHARuntimeInfo(dst []byte, h *HARuntimeInfo) []byte {
	c := &h.HAClientRuntimeInfo
	dst = append(dst, `{"haClientRuntimeInfo":{"lastReadTimestamp":`...)
	dst = strconv.AppendInt(dst, c.LastReadTimestamp, 10)
	dst = append(dst, `,"lastWriteTimestamp":`...)
	dst = strconv.AppendInt(dst, c.LastWriteTimestamp, 10)
	if c.MasterAddr != "" {
		dst = append(dst, `,"masterAddr":`...)
		dst = appendString(dst, c.MasterAddr)
	}
	dst = append(dst, `,"masterFlushOffset":`...)
	dst = strconv.AppendInt(dst, c.MasterFlushOffset, 10)
	dst = append(dst, `,"maxOffset":`...)
	dst = strconv.AppendInt(dst, c.MaxOffset, 10)
	dst = append(dst, `,"transferredByteInSecond":`...)
	dst = strconv.AppendInt(dst, c.TransferredByteInSecond, 10)
	dst = append(dst, `},"haConnectionInfo":[`...)
	for i := range h.HAConnectionInfo {
		s := &h.HAConnectionInfo[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"addr":`...)
		dst = appendString(dst, s.Addr)
		dst = append(dst, `,"diff":`...)
		dst = strconv.AppendInt(dst, s.Diff, 10)
		dst = append(dst, `,"inSync":`...)
		dst = strconv.AppendBool(dst, s.InSync)
		dst = append(dst, `,"slaveAckOffset":`...)
		dst = strconv.AppendInt(dst, s.SlaveAckOffset, 10)
		dst = append(dst, `,"transferFromWhere":`...)
		dst = strconv.AppendInt(dst, s.TransferFromWhere, 10)
		dst = append(dst, `,"transferredByteInSecond":`...)
		dst = strconv.AppendInt(dst, s.TransferredByteInSecond, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"inSyncSlaveNums":`...)
	dst = strconv.AppendInt(dst, int64(h.InSyncSlaveNums), 10)
	dst = append(dst, `,"master":`...)
	dst = strconv.AppendBool(dst, h.Master)
	dst = append(dst, `,"masterCommitLogMaxOffset":`...)
	dst = strconv.AppendInt(dst, h.MasterCommitLogMaxOffset, 10)
	return append(dst, '}')
}

// DecodeHARuntimeInfo parses the body as Java or we wrote it.
func DecodeHARuntimeInfo(b []byte) (HARuntimeInfo, error) {
	var h HARuntimeInfo
	if err := fastjson.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("body: ha runtime info: %w", err)
	}
	return h, nil
}
