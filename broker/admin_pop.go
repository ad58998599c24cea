package broker

import (
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
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
