package body

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHARuntimeInfoMasterShape(t *testing.T) {
	h := HARuntimeInfo{
		Master: true, MasterCommitLogMaxOffset: 1000, InSyncSlaveNums: 1,
		HAConnectionInfo: []HAConnectionRuntimeInfo{
			{Addr: "127.0.0.1:5555", SlaveAckOffset: 900, Diff: 100, InSync: true, TransferredByteInSecond: 2048, TransferFromWhere: 0},
			{Addr: "127.0.0.2:6666", SlaveAckOffset: -1, Diff: 1001, TransferFromWhere: 7},
		},
	}
	got := string(AppendHARuntimeInfo(nil, &h))
	// fastjson: properties by name; masterAddr null so absent; isActivated has no getter.
	require.Equal(t, `{"haClientRuntimeInfo":{"lastReadTimestamp":0,"lastWriteTimestamp":0,"masterFlushOffset":0,"maxOffset":0,"transferredByteInSecond":0},`+
		`"haConnectionInfo":[{"addr":"127.0.0.1:5555","diff":100,"inSync":true,"slaveAckOffset":900,"transferFromWhere":0,"transferredByteInSecond":2048},`+
		`{"addr":"127.0.0.2:6666","diff":1001,"inSync":false,"slaveAckOffset":-1,"transferFromWhere":7,"transferredByteInSecond":0}],`+
		`"inSyncSlaveNums":1,"master":true,"masterCommitLogMaxOffset":1000}`, got)
	require.True(t, json.Valid([]byte(got)))
	back, err := DecodeHARuntimeInfo([]byte(got))
	require.NoError(t, err)
	require.Equal(t, h, back)
}

func TestHARuntimeInfoSlaveRoundTrip(t *testing.T) {
	h := HARuntimeInfo{HAClientRuntimeInfo: HAClientRuntimeInfo{
		MasterAddr: "10.0.0.1:10912", TransferredByteInSecond: 5, MaxOffset: 77,
		LastReadTimestamp: 1700000000000, LastWriteTimestamp: 1700000000001, MasterFlushOffset: 70,
	}}
	got := AppendHARuntimeInfo(nil, &h)
	require.Contains(t, string(got), `"masterAddr":"10.0.0.1:10912"`)
	require.Contains(t, string(got), `"haConnectionInfo":[]`)
	back, err := DecodeHARuntimeInfo(got)
	require.NoError(t, err)
	back.HAConnectionInfo = nil
	require.Equal(t, h, back)

	// A body as Java's fastjson writes it for a slave.
	java := `{"haClientRuntimeInfo":{"lastReadTimestamp":1,"lastWriteTimestamp":2,"masterAddr":"m:1","masterFlushOffset":3,"maxOffset":4,"transferredByteInSecond":5},"haConnectionInfo":[],"inSyncSlaveNums":0,"master":false,"masterCommitLogMaxOffset":0}`
	j, err := DecodeHARuntimeInfo([]byte(java))
	require.NoError(t, err)
	require.Equal(t, java, string(AppendHARuntimeInfo(nil, &j)))
	_, err = DecodeHARuntimeInfo([]byte("{"))
	require.Error(t, err)
}
