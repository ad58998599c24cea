package grpcsvc

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// routeOver asks a route over a new connection with creds; it returns the
// RPC error (nil when the call went through, whatever its status).
func routeOver(t *testing.T, addr string, creds credentials.TransportCredentials) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = v2.NewMessagingServiceClient(conn).QueryRoute(as(ctx, "tls-client"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "GTlsT"}})
	return err
}

func tlsClient() credentials.TransportCredentials {
	// The SDKs trust any server certificate (InsecureTrustManagerFactory).
	return credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
}

func TestTLSModes(t *testing.T) {
	for _, mode := range []tlsconf.Mode{tlsconf.Permissive, tlsconf.Enforcing, tlsconf.Disabled} {
		t.Run(mode.String(), func(t *testing.T) {
			c := startCluster(t, func(_ *broker.Config, gc *Config) {
				gc.TLS = &TLSConfig{Mode: mode, TestMode: true, HandshakeTimeout: time.Second}
			})
			addr := c.ep.Addr()
			tlsErr, plainErr := routeOver(t, addr, tlsClient()), routeOver(t, addr, insecure.NewCredentials())
			switch mode {
			case tlsconf.Permissive:
				assert.NoError(t, tlsErr, "TLS on a permissive port")
				assert.NoError(t, plainErr, "plaintext on a permissive port")
			case tlsconf.Enforcing:
				assert.NoError(t, tlsErr, "TLS on an enforcing port")
				assert.Error(t, plainErr, "plaintext refused on an enforcing port")
			case tlsconf.Disabled:
				assert.Error(t, tlsErr, "TLS refused on a disabled port")
				assert.NoError(t, plainErr, "plaintext on a disabled port")
			}
		})
	}
}

// TestTLSHalfHandshakes: connections that send nothing, only a record
// type byte or half a ClientHello are closed after the handshake timeout
// and do not hold up other clients.
func TestTLSHalfHandshakes(t *testing.T) {
	c := startCluster(t, func(_ *broker.Config, gc *Config) {
		gc.TLS = &TLSConfig{Mode: tlsconf.Permissive, TestMode: true, HandshakeTimeout: 500 * time.Millisecond}
	})
	addr := c.ep.Addr()
	var held []net.Conn
	for i, first := range [][]byte{nil, {0x16}, {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00}} {
		for range 20 {
			nc, err := net.DialTimeout("tcp", addr, time.Second)
			require.NoError(t, err, "conn kind %d", i)
			if first != nil {
				_, err = nc.Write(first)
				require.NoError(t, err)
			}
			held = append(held, nc)
		}
	}
	defer func() {
		for _, nc := range held {
			_ = nc.Close()
		}
	}()
	t0 := time.Now()
	assert.NoError(t, routeOver(t, addr, tlsClient()), "a TLS client is served beside half handshakes")
	t.Logf("tls route %v", time.Since(t0))
	assert.NoError(t, routeOver(t, addr, insecure.NewCredentials()), "a plaintext client too")
	t.Logf("routes %v", time.Since(t0))
	// Every held connection is closed by the server within a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for _, nc := range held {
		require.NoError(t, nc.SetReadDeadline(deadline))
		buf := make([]byte, 512)
		for {
			if _, err := nc.Read(buf); err != nil {
				var ne net.Error
				require.False(t, errorAs(err, &ne) && ne.Timeout(), "the server kept a half handshake past its timeout")
				break
			}
		}
	}
	t.Logf("closed %v", time.Since(t0))
}

func errorAs(err error, target *net.Error) bool {
	ne, ok := err.(net.Error)
	if ok {
		*target = ne
	}
	return ok
}
