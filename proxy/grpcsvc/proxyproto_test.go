package grpcsvc

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec/proxyproto"
	"github.com/rocketgo/rocketgo/codec/proxyproto/proxyprototest"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

func proxyV2Inet(src [4]byte, port uint16) []byte { return proxyprototest.ProxyInet(src, port, 8081) }

// A PROXY protocol v1/v2 header before HTTP/2 (Java's
// ProxyAndTlsProtocolNegotiator) makes its source address the request's
// peer: erin may publish only from 203.0.113.0/24, so a send through a
// header from there passes and one straight from loopback, or with a
// header from elsewhere, is refused; a malformed header closes the
// connection.
func TestProxyProtocolSourceIP(t *testing.T) {
	c := startAuthCluster(t)
	svc := c.b.Auth()
	p, ok := auth.ParseResourcePattern("Topic:" + authTopic)
	require.True(t, ok)
	require.NoError(t, svc.CreateUser(auth.User{Username: "erin", Password: "erin-secret"}))
	require.NoError(t, svc.PutACL(auth.ACL{Username: "erin", Policies: []auth.Policy{{Type: auth.PolicyCustom,
		Entries: []auth.Entry{{Resource: p, Actions: []auth.Action{auth.ActionPub}, SourceIPs: []string{"203.0.113.0/24"}, Decision: auth.Allow}}}}}))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	via := func(header []byte) v2.MessagingServiceClient {
		conn, err := grpc.NewClient("passthrough:///"+c.ep.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
				nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				if err != nil || header == nil {
					return nc, err
				}
				if _, err := nc.Write(header); err != nil {
					nc.Close()
					return nil, err
				}
				return nc, nil
			}))
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		return v2.NewMessagingServiceClient(conn)
	}
	send := func(cli v2.MessagingServiceClient, id string) (*v2.Status, error) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		r, err := cli.SendMessage(sdkSign(as(rctx, "erin-client"), "erin", "erin-secret"),
			&v2.SendMessageRequest{Messages: []*v2.Message{newMessage(authTopic, id, "b")}})
		return r.GetStatus(), err
	}

	st, err := send(via(nil), "0A0000000000000000000101")
	require.NoError(t, err)
	assert.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode(), "from loopback: %s", st.GetMessage())

	st, err = send(via([]byte("PROXY TCP4 203.0.113.7 127.0.0.1 51234 8081\r\n")), "0A0000000000000000000102")
	require.NoError(t, err)
	assert.Equal(t, v2.Code_OK, st.GetCode(), "v1 from 203.0.113.7: %s", st.GetMessage())

	st, err = send(via(proxyV2Inet([4]byte{203, 0, 113, 9}, 4242)), "0A0000000000000000000103")
	require.NoError(t, err)
	assert.Equal(t, v2.Code_OK, st.GetCode(), "v2 from 203.0.113.9: %s", st.GetMessage())

	st, err = send(via(proxyV2Inet([4]byte{192, 0, 2, 9}, 4242)), "0A0000000000000000000104")
	require.NoError(t, err)
	assert.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode(), "v2 from 192.0.2.9: %s", st.GetMessage())

	// v2 LOCAL (a balancer's health check): the socket's address stays.
	st, err = send(via(append([]byte(proxyproto.SigV2), 0x20, 0x00, 0, 0)), "0A0000000000000000000105")
	require.NoError(t, err)
	assert.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode(), "v2 LOCAL: %s", st.GetMessage())

	for _, garbage := range [][]byte{[]byte("PROXY garbage here\r\n"), []byte("PROXY TCP4 999.0.0.1 127.0.0.1 1 2\r\n"),
		append([]byte(proxyproto.SigV2), 0x99, 0x11, 0, 0)} {
		_, err = send(via(garbage), "0A0000000000000000000106")
		assert.Error(t, err, "%q", garbage)
	}
	// The endpoint still serves after the garbage.
	st, err = send(via([]byte("PROXY TCP4 203.0.113.8 127.0.0.1 1 8081\r\n")), "0A0000000000000000000107")
	require.NoError(t, err)
	assert.Equal(t, v2.Code_OK, st.GetCode(), st.GetMessage())
}
