package broker

import (
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// emptyMessageRequestModes is what Java's MessageRequestModeManager.encode
// writes when no consumer group set a request mode.
const emptyMessageRequestModes = `{"messageRequestModeMap":{}}`

// registerMasterSync adds the master-side answers a Java slave's
// SlaveSynchronize asks for and the other admin handlers do not cover.
func registerMasterSync(r *transport.Router, pool *transport.Pool) {
	// We keep no message request modes (SET_MESSAGE_REQUEST_MODE is not
	// served), so the honest answer is Java's empty table.
	r.Handle(codec.ReqGetAllMessageRequestMode, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = []byte(emptyMessageRequestModes)
		return resp
	})
}
