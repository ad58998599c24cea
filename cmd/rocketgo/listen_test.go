package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBrokerListenNotice(t *testing.T) {
	for _, addrs := range [][]string{{"0.0.0.0:10911"}, {"[::]:10911", "[::]:10909"}, {":10911"}} {
		level, msg := brokerListenNotice(addrs...)
		require.Equal(t, slog.LevelWarn, level, addrs)
		require.Contains(t, msg, "all interfaces")
		require.Contains(t, msg, "-brokerListen 127.0.0.1:10911")
	}
	level, _ := brokerListenNotice("127.0.0.1:10911", "127.0.0.1:10909")
	require.Equal(t, slog.LevelInfo, level)
}

// rocketgo logs where both servers listen, one line each.
func TestRocketgoLogsListenAddresses(t *testing.T) {
	var out, logs bytes.Buffer
	stop, err := start([]string{"-dataDir", t.TempDir(), "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0"},
		&out, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	require.NoError(t, stop())
	var ns, br []string
	for _, l := range strings.Split(logs.String(), "\n") {
		switch {
		case strings.Contains(l, `msg="namesrv: started"`):
			ns = append(ns, l)
		case strings.Contains(l, `msg="rocketgo: broker listening"`):
			br = append(br, l)
		}
	}
	require.Len(t, ns, 1, logs.String())
	require.Contains(t, ns[0], "addr=127.0.0.1:")
	require.Len(t, br, 1, logs.String())
	require.Regexp(t, `addrs=127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+)?( |$)`, br[0])
}
