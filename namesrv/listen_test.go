package namesrv

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bound to every interface (Java's default, kept), the start-up line says
// so and how to restrict it; bound to one address, it names that address.
func TestListenNotice(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:9876", "[::]:9876", ":9876"} {
		level, msg := listenNotice(addr)
		require.Equal(t, slog.LevelWarn, level, addr)
		require.Contains(t, msg, "all interfaces", addr)
		require.Contains(t, msg, "bindAddress=127.0.0.1", addr)
	}
	for _, addr := range []string{"127.0.0.1:9876", "10.1.2.3:9876", "[::1]:9876"} {
		level, msg := listenNotice(addr)
		require.Equal(t, slog.LevelInfo, level, addr)
		require.NotContains(t, msg, "all interfaces", addr)
	}
}

func TestStartLogsBoundAddress(t *testing.T) {
	var buf bytes.Buffer
	s, err := New(testConfig(t), slog.New(slog.NewTextHandler(&buf, nil)))
	require.NoError(t, err)
	require.NoError(t, s.Start())
	defer func() { require.NoError(t, s.Close()) }()
	var line string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "namesrv: started") {
			line = l
		}
	}
	require.Contains(t, line, "level=INFO")
	require.Contains(t, line, "addr="+s.Addr())
}
