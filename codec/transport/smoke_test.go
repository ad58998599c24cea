package transport

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func TestRoundTripInlineAndPool(t *testing.T) {
	pool := newPool(t, "p", 2, 16)
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	r.Handle(codeOther, pool, echo)
	s := startServer(t, ServerConfig{}, r)
	require.NotContains(t, s.Addr(), ":0")

	cl := newClient(t, nil)
	for _, code := range []codec.RequestCode{codeEcho, codeOther} {
		req := request(code, 0)
		req.Set("id", "abc")
		req.Body = []byte("hello")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := cl.Invoke(ctx, s.Addr(), req)
		cancel()
		require.NoError(t, err)
		require.Equal(t, int32(codec.RespSuccess), resp.Code)
		require.True(t, resp.IsResponse())
		require.Equal(t, req.Opaque, resp.Opaque)
		require.Equal(t, codec.ServerVersion, resp.Version)
		require.Equal(t, "abc", resp.Value("id"))
		require.Equal(t, "hello", string(resp.Body))
	}
}

// ROCKETMQ-serialized requests decode too; the response is JSON unless
// the handler picks a serialization.
func TestRocketMQSerialization(t *testing.T) {
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	r.Handle(codeOther, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		resp := echo(c, req)
		resp.Serialize = req.Serialize
		return resp
	})
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())
	for _, tc := range []struct {
		code codec.RequestCode
		want codec.SerializeType
	}{{codeEcho, codec.SerializeJSON}, {codeOther, codec.SerializeRocketMQ}} {
		req := request(tc.code, 3)
		req.Serialize = codec.SerializeRocketMQ
		req.Set("id", "rmq")
		rc.send(req)
		f := rc.recv()
		require.Equal(t, tc.want, f.Serialize)
		require.Equal(t, "rmq", f.Value("id"))
		require.Equal(t, int32(3), f.Opaque)
	}
}
