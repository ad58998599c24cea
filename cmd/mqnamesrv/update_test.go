package main

import (
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/controller"
)

// runFrom starts run -c conf in process and returns its address and a
// stop function that waits for run's exit code.
func runFrom(t *testing.T, conf string) (string, func() int) {
	t.Helper()
	stop := make(chan os.Signal, 1)
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- run([]string{"-c", conf}, pw, io.Discard, stop); pw.Close() }()
	addr := bootAddr(t, pr)
	go io.Copy(io.Discard, pr)
	return addr, func() int {
		stop <- syscall.SIGTERM
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return after the stop signal")
			return -1
		}
	}
}

// TestRemoteUpdateKeepsRestart: a name server run from a -c file that
// holds the embedded controller's keys refuses, with Java's black-list
// answer, every controller key and every key read only at start; a valid
// update is persisted with the file's other keys kept, and the server
// starts again from the file with it.
func TestRemoteUpdateKeepsRestart(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir)
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\ncontrollerDLegerGroup=group1\ncontrollerDLegerPeers=n0-127.0.0.1:1\ncontrollerDLegerSelfId=n0\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	addr, stop := runFrom(t, conf)
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, Logger: quiet()})
	defer c.Close()
	update := func(body string) *codec.Frame {
		u := &codec.Frame{Code: int32(codec.ReqUpdateNamesrvConfig), Language: codec.LangJava, Version: 479, Body: []byte(body)}
		return invoke(t, c, addr, u)
	}
	ctl := controller.Default()
	keys := []string{"listenPort", "bindAddress", "enableControllerInNamesrv"}
	for _, e := range ctl.Properties() {
		keys = append(keys, e.Key)
	}
	for _, k := range keys {
		resp := update(k + "=1\n")
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, k)
		require.Equal(t, "Can not update config in black list.", resp.Remark, k)
	}
	require.Equal(t, int32(codec.RespSuccess), update("orderMessageEnable=false\n").Code)
	require.Equal(t, 0, stop())

	stored, err := os.ReadFile(conf)
	require.NoError(t, err)
	for _, line := range []string{"orderMessageEnable=false\n", "controllerDLegerGroup=group1\n", "controllerDLegerSelfId=n0\n", "someUnknownKey=1\n", "listenPort=0\n"} {
		require.Contains(t, string(stored), line)
	}
	addr, stop = runFrom(t, conf)
	require.Equal(t, int32(codec.RespTopicNotExist), invoke(t, c, addr, routeReq("Nope")).Code)
	resp := invoke(t, c, addr, &codec.Frame{Code: int32(codec.ReqGetNamesrvConfig), Language: codec.LangJava, Version: 479})
	require.Contains(t, string(resp.Body), "orderMessageEnable=false\n")
	require.Equal(t, 0, stop())
}
