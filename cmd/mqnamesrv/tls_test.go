package main

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// Java's -Dtls.* keys in the -c file: enforcing refuses plaintext, a TLS
// client is served; tls.config.file overrides the file's test mode key.
func TestTLSKeysFromConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir)
	tlsFile := filepath.Join(dir, "tls.properties")
	require.NoError(t, os.WriteFile(tlsFile, []byte("tls.test.mode.enable=true\n"), 0o600))
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\ntls.server.mode=enforcing\ntls.test.mode.enable=false\ntls.config.file=" + tlsFile + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	addr, stop := runFrom(t, conf)
	defer func() { require.Equal(t, 0, stop()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	plain := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, Logger: quiet()})
	defer plain.Close()
	_, err = plain.Invoke(ctx, addr, routeReq("Nope"))
	require.Error(t, err, "enforcing: plaintext refused")

	secure := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, Logger: quiet(),
		TLS: &tls.Config{InsecureSkipVerify: true}})
	defer secure.Close()
	resp, err := secure.Invoke(ctx, addr, routeReq("Nope"))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code)
}
