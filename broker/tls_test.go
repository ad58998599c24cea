package broker

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// The broker's remoting port follows the cmd's tls.* settings: enforcing
// serves a TLS client (a send, the hot leased path, and an admin call) and
// refuses a plaintext one.
func TestBrokerTLSEnforcing(t *testing.T) {
	tc := tlsconf.Default()
	tc.ServerMode = tlsconf.Enforcing
	tb := startBroker(t, func(c *Config) { c.TLS = &tc })

	secure := transport.NewClient(transport.ClientConfig{Logger: testLogger(), TLS: &tls.Config{InsecureSkipVerify: true}})
	t.Cleanup(func() { _ = secure.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := secure.Invoke(ctx, tb.addr, request(codec.ReqGetBrokerConfig))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	resp, err = secure.Invoke(ctx, tb.addr, sendV1("TopicTest", 0, "", []byte("over tls")))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	_, err = tb.cli.Invoke(ctx, tb.addr, request(codec.ReqGetBrokerConfig))
	require.Error(t, err, "plaintext refused")
}
