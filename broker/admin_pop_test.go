package broker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// POP_ROLLBACK (mqadmin exportPopRecord) succeeds: Java moves RocksDB pop
// records to the file store there, and ours are in the file store already.
func TestPopRollbackExportsNothing(t *testing.T) {
	tb := startBroker(t, nil)
	resp := tb.invoke(t, request(codec.ReqPopRollback))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}

// RESET_MASTER_FLUSH_OFFSET is ignored by a master, as Java's.
func TestResetMasterFlushOffsetOnMaster(t *testing.T) {
	tb := startBroker(t, nil)
	resp := tb.invoke(t, request(codec.ReqResetMasterFlushOffset, "masterFlushOffset", "0"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}
