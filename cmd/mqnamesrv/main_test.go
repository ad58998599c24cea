package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

func writeConf(t *testing.T, dir string) string {
	conf := filepath.Join(dir, "namesrv.conf")
	require.NoError(t, os.WriteFile(conf, []byte(strings.Join([]string{
		"# test config",
		"bindAddress=127.0.0.1",
		"listenPort = 0",
		"kvConfigPath=" + filepath.Join(dir, "kv", "kvConfig.json"),
		"configStorePath=" + filepath.Join(dir, "namesrv.properties"),
		"orderMessageEnable=true",
		"scanNotActiveBrokerInterval: 100",
		"someUnknownKey=1",
	}, "\n")), 0o644))
	return conf
}

func TestPrintConfig(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir)
	t.Setenv("ROCKETMQ_HOME", "/opt/rmq")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-c", conf, "-p"}, &out, &errOut, nil))
	require.Contains(t, out.String(), "rocketmqHome=/opt/rmq\n")
	require.Contains(t, out.String(), "listenPort=0\n")
	require.Contains(t, out.String(), "orderMessageEnable=true\n")
	require.Contains(t, out.String(), "scanNotActiveBrokerInterval=100\n")
	require.Contains(t, out.String(), "configStorePath="+conf+"\n")
	require.Contains(t, errOut.String(), "someUnknownKey")

	require.NoError(t, os.WriteFile(conf, []byte("listenPort=notanumber\n"), 0o644))
	require.Equal(t, 1, run([]string{"-c", conf, "-p"}, &out, &errOut, nil))
	require.Equal(t, 2, run([]string{"-bogus"}, &out, &errOut, nil))
}

func TestRunInProcessStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir)
	stop := make(chan os.Signal, 1)
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- run([]string{"-c", conf}, pw, io.Discard, stop); pw.Close() }()
	addr := bootAddr(t, pr)
	go io.Copy(io.Discard, pr)
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, Logger: quiet()})
	defer c.Close()
	resp := invoke(t, c, addr, routeReq("Nope"))
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code)
	stop <- syscall.SIGTERM
	select {
	case code := <-done:
		require.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the stop signal")
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// bootAddr reads the boot line and returns the bound address.
func bootAddr(t *testing.T, r io.Reader) string {
	t.Helper()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "address "); i >= 0 {
				lines <- sc.Text()[i+len("address "):]
				return
			}
		}
		close(lines)
	}()
	select {
	case a, ok := <-lines:
		require.True(t, ok, "no boot line")
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("name server did not boot")
		return ""
	}
}

func invoke(t *testing.T, c *transport.Client, addr string, req *codec.Frame) *codec.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, addr, req)
	require.NoError(t, err)
	return resp
}

func routeReq(topic string) *codec.Frame {
	f := &codec.Frame{Code: int32(codec.ReqGetRouteinfoByTopic), Language: codec.LangJava, Version: 479}
	f.Set("topic", topic)
	return f
}

func registerReq(t *testing.T, name, addr string, compressed bool, topics ...string) *codec.Frame {
	h := header.RegisterBrokerRequest{BrokerName: name, BrokerAddr: addr, ClusterName: "DefaultCluster", HaServerAddr: addr, Compressed: compressed}
	f := &codec.Frame{Code: int32(codec.ReqRegisterBroker), Language: codec.LangJava, Version: 479}
	h.Encode(f)
	rb := body.RegisterBrokerBody{DataVersion: body.TopicVersion{Counter: 1, Timestamp: time.Now().UnixMilli()}, FilterServerList: []string{}}
	for _, tp := range topics {
		tc := body.NewTopicConfig(tp)
		tc.ReadQueueNums, tc.WriteQueueNums = 4, 4
		rb.Topics = append(rb.Topics, tc)
	}
	if compressed {
		b, err := body.AppendRegisterBrokerBodyCompressed(nil, &rb, 479)
		require.NoError(t, err)
		f.Body = b
	} else {
		f.Body = body.AppendRegisterBrokerBody(nil, &rb)
	}
	return f
}

// TestBinaryChildProcess builds mqnamesrv, runs it, registers fake brokers
// over TCP with plain and compressed bodies, stops it with SIGTERM, checks
// the KV store survives a restart, and finally SIGKILLs it.
func TestBinaryChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mqnamesrv")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	conf := writeConf(t, dir)

	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(bin, "-c", conf)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = io.Discard
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addr := bootAddr(t, stdout)
		go io.Copy(io.Discard, stdout)
		return cmd, addr
	}

	cmd, addr := start()
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, Logger: quiet()})
	defer c.Close()
	for _, reg := range []*codec.Frame{
		registerReq(t, "broker-plain", "127.0.0.1:20911", false, "PlainTopic", "Shared"),
		registerReq(t, "broker-zip", "127.0.0.1:21911", true, "ZipTopic", "Shared"),
	} {
		resp := invoke(t, c, addr, reg)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	for topic, brokers := range map[string]int{"PlainTopic": 1, "ZipTopic": 1, "Shared": 2} {
		resp := invoke(t, c, addr, routeReq(topic))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, topic)
		r, err := body.DecodeTopicRouteData(resp.Body)
		require.NoError(t, err)
		require.Len(t, r.BrokerDatas, brokers, topic)
	}
	kv := &codec.Frame{Code: int32(codec.ReqPutKvConfig), Language: codec.LangJava, Version: 479}
	kv.Set("namespace", "ORDER_TOPIC_CONFIG")
	kv.Set("key", "Shared")
	kv.Set("value", "broker-plain:4;broker-zip:4")
	require.Equal(t, int32(codec.RespSuccess), invoke(t, c, addr, kv).Code)
	resp := invoke(t, c, addr, routeReq("Shared"))
	require.Contains(t, string(resp.Body), `"orderTopicConf":"broker-plain:4;broker-zip:4"`)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait())
	require.Equal(t, 0, cmd.ProcessState.ExitCode())

	// Restarted: routes are gone (brokers must re-register), KV is back.
	cmd, addr = start()
	require.Equal(t, int32(codec.RespTopicNotExist), invoke(t, c, addr, routeReq("Shared")).Code)
	get := &codec.Frame{Code: int32(codec.ReqGetKvConfig), Language: codec.LangJava, Version: 479}
	get.Set("namespace", "ORDER_TOPIC_CONFIG")
	get.Set("key", "Shared")
	require.Equal(t, "broker-plain:4;broker-zip:4", invoke(t, c, addr, get).Value("value"))
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
}

// -logHome writes Java's layout: namesrv.log (and remoting.log) under
// <home>/logs/rocketmqlogs, nothing on stderr.
func TestLogHomeJavaLayout(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir)
	home := filepath.Join(dir, "home")
	stop := make(chan os.Signal, 1)
	pr, pw := io.Pipe()
	var errOut strings.Builder
	done := make(chan int, 1)
	go func() { done <- run([]string{"-c", conf, "-logHome", home}, pw, &errOut, stop); pw.Close() }()
	bootAddr(t, pr)
	go io.Copy(io.Discard, pr)
	stop <- syscall.SIGTERM
	select {
	case code := <-done:
		require.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the stop signal")
	}
	b, err := os.ReadFile(filepath.Join(home, "logs", "rocketmqlogs", "namesrv.log"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO \S+ - `, string(b))
	for _, f := range []string{"store.log", "remoting.log"} {
		_, err := os.Stat(filepath.Join(home, "logs", "rocketmqlogs", f))
		require.NoError(t, err, f)
	}
	require.Empty(t, errOut.String(), "nothing on stderr")
}
