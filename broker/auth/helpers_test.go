package auth

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

func openTest(t testing.TB, cfg Config) *Service {
	t.Helper()
	s, err := Open(cfg, t.TempDir(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

type bboltTx = bolt.Tx
