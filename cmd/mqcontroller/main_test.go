package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
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

func freePort(t *testing.T) int {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		l.Close()
		if err == nil {
			l2.Close()
			return p
		}
	}
}

func writeConf(t *testing.T, dir string, port int) string {
	conf := filepath.Join(dir, "controller.conf")
	require.NoError(t, os.WriteFile(conf, []byte(strings.Join([]string{
		"controllerDLegerGroup = group1",
		fmt.Sprintf("controllerDLegerPeers = n0-127.0.0.1:%d", port),
		"controllerDLegerSelfId = n0",
		"controllerStorePath = " + filepath.Join(dir, "store"),
		"enableElectUncleanMaster = true",
		"scanNotActiveBrokerInterval = 1000",
		"jRaftGroupId = ignored",
	}, "\n")), 0o644))
	return conf
}

func TestPrintConfig(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"-c", writeConf(t, dir, 9878), "-p"}, &out, &errb, nil), errb.String())
	s := out.String()
	require.Contains(t, s, "controllerDLegerPeers=n0-127.0.0.1:9878\n")
	require.Contains(t, s, "enableElectUncleanMaster=true\n")
	require.Contains(t, s, "scanNotActiveBrokerInterval=1000\n")
	require.Contains(t, s, "notifyBrokerRoleChanged=true\n")
	require.Contains(t, errb.String(), "jRaftGroupId", "unknown keys are reported")
}

func TestBadConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "c.conf")
	require.NoError(t, os.WriteFile(conf, []byte("controllerDLegerSelfId=n0\n"), 0o644))
	var out, errb bytes.Buffer
	require.Equal(t, 1, run([]string{"-c", conf}, &out, &errb, nil))
	require.Contains(t, errb.String(), "controllerDLegerPeers")
}

func TestRunServesAndStops(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	stop := make(chan os.Signal, 1)
	done := make(chan int, 1)
	conf := writeConf(t, dir, port)
	go func() { done <- run([]string{"-c", conf}, io.Discard, io.Discard, stop) }()

	cl := transport.NewClient(transport.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer cl.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := cl.Invoke(ctx, addr, &codec.Frame{Code: int32(codec.ReqControllerGetMetadataInfo), Language: codec.LangJava, Version: codec.ServerVersion})
		if err != nil {
			return false
		}
		var h header.GetMetaDataResponse
		return h.Decode(resp) == nil && h.IsLeader && h.ControllerLeaderAddress == addr && h.Group == "group1"
	}, 15*time.Second, 50*time.Millisecond)
	stop <- syscall.SIGTERM
	select {
	case rc := <-done:
		require.Equal(t, 0, rc)
	case <-time.After(15 * time.Second):
		t.Fatal("mqcontroller did not stop")
	}
	_, err := os.Stat(filepath.Join(dir, "store", "raft.db"))
	require.NoError(t, err, "the Raft log lives under controllerStorePath")
}
