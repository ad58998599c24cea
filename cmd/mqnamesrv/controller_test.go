package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// TestEmbeddedController: enableControllerInNamesrv=true starts a controller
// node from the same file, as Java's NamesrvStartup does; it stops with
// the name server.
func TestEmbeddedController(t *testing.T) {
	dir := t.TempDir()
	var port int
	for port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		l.Close()
		if err == nil {
			l2.Close()
			port = p
		}
	}
	conf := filepath.Join(dir, "namesrv.conf")
	require.NoError(t, os.WriteFile(conf, []byte(strings.Join([]string{
		"bindAddress=127.0.0.1",
		"listenPort=0",
		"kvConfigPath=" + filepath.Join(dir, "kv.json"),
		"enableControllerInNamesrv = true",
		"controllerDLegerGroup = group1",
		fmt.Sprintf("controllerDLegerPeers = n0-127.0.0.1:%d", port),
		"controllerDLegerSelfId = n0",
		"controllerStorePath = " + filepath.Join(dir, "controller"),
	}, "\n")), 0o644))
	stop := make(chan os.Signal, 1)
	done := make(chan int, 1)
	go func() { done <- run([]string{"-c", conf}, io.Discard, io.Discard, stop) }()

	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, Logger: quiet()})
	defer c.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := c.Invoke(ctx, addr, &codec.Frame{Code: int32(codec.ReqControllerGetMetadataInfo), Language: codec.LangJava, Version: codec.ServerVersion})
		if err != nil {
			return false
		}
		var h header.GetMetaDataResponse
		return h.Decode(resp) == nil && h.IsLeader && h.Group == "group1"
	}, 15*time.Second, 50*time.Millisecond)
	stop <- syscall.SIGTERM
	select {
	case code := <-done:
		require.Equal(t, 0, code)
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after the stop signal")
	}
	_, err := net.DialTimeout("tcp", addr, time.Second)
	require.Error(t, err, "the controller stops with the name server")
}
