package broker

import (
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// popAdmin serves the POP administration codes.
type popAdmin struct{}

func (a *popAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqPopRollback, pool, a.transferPopToFileStore)
}

// transferPopToFileStore answers POP_ROLLBACK, which Java 5.3.3's admin
// processor serves as "move the pop records of the RocksDB pop store
// (popConsumerKVServiceEnable) into the file store" (mqadmin
// exportPopRecord). Our pop records only ever live in the file store (the
// revive topic), so there is nothing to move: SUCCESS, as Java answers
// without that service.
func (a *popAdmin) transferPopToFileStore(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// flushAdmin serves RESET_MASTER_FLUSH_OFFSET (mqadmin
// resetMasterFlushOffset).
type flushAdmin struct {
	role *roleState
}

func (a *flushAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqResetMasterFlushOffset, pool, a.resetMasterFlushOffset)
}

// resetMasterFlushOffset: Java's master ignores the request and answers
// SUCCESS; a slave stores the offset as the master's flushed offset (its
// truncation point at the next start), which our slave does not keep yet:
// REQUEST_CODE_NOT_SUPPORTED there.
func (a *flushAdmin) resetMasterFlushOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	if a.role.IsSlave() {
		return codec.NewResponse(req, int32(codec.RespRequestCodeNotSupported), remarks.RequestCodeNotSupported(req.Code))
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}
