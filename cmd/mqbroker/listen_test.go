package main

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bound to every interface (an empty listenIP, Java's default), the
// start-up line says so and how to restrict it.
func TestListenNotice(t *testing.T) {
	for _, addrs := range [][]string{{"0.0.0.0:10911", "0.0.0.0:10909"}, {"[::]:10911"}, {"127.0.0.1:10911", ":10909"}} {
		level, msg := listenNotice(addrs...)
		require.Equal(t, slog.LevelWarn, level, addrs)
		require.Contains(t, msg, "all interfaces")
		require.Contains(t, msg, "listenIP=127.0.0.1")
	}
	level, msg := listenNotice(boundAddrs("127.0.0.1:10911", "")...)
	require.Equal(t, slog.LevelInfo, level)
	require.NotContains(t, msg, "all interfaces")
	require.Equal(t, []string{"127.0.0.1:10911", "127.0.0.1:10909"}, boundAddrs("127.0.0.1:10911", "127.0.0.1:10909"))
}
