package broker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/blacklist"
)

// TestUpdateBrokerConfigRefusesDangerousKeys: keys that move the store,
// shorten retention, change the store layout, widen the listening address,
// load code or switch off access control are refused over the wire with
// Java's code and remark, alone or beside an allowed key; the -c file, the
// reported config and the live values stay as they were. (The old broker
// took storePathRootDir and fileReservedTime=0 and wrote them to its -c
// file, so the next start opened an empty store.) An allowed key still
// updates and persists.
func TestUpdateBrokerConfigRefusesDangerousKeys(t *testing.T) {
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(confPath, []byte("brokerName=broker-a\nfileReservedTime=72\n"), 0o644))
	root := t.TempDir()
	tb, stop := startBrokerAt(t, root, func(c *Config) { c.BrokerConfigPath = confPath })
	fileBefore, err := os.ReadFile(confPath)
	require.NoError(t, err)
	textBefore := brokerConfigText(t, tb)
	evil := t.TempDir()

	for _, body := range []string{
		"storePathRootDir=" + evil,
		"storePathCommitLog=" + evil,
		"fileReservedTime=0",
		"mappedFileSizeCommitLog=4096",
		"mappedFileSizeConsumeQueue=20",
		"listenIP=0.0.0.0",
		"rocketmqHome=" + evil,
		"brokerConfigPath=" + filepath.Join(evil, "x.conf"),
		"configBlackList=",
		"messageStorePlugIn=com.evil.Plugin",
		"filterServerNums=1",
		"aclEnable=false",
		"authenticationEnabled=false",
		"cleanFileForciblyEnable=true",
		"brokerPermission=2\nstorePathRootDir=" + evil, // one refused key refuses all
		"storePath\\u0052ootDir=" + evil,               // an escaped key is the same key
	} {
		resp := updateConfig(t, tb, body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		fileNow, err := os.ReadFile(confPath)
		require.NoError(t, err)
		require.Equal(t, string(fileBefore), string(fileNow), body)
		require.Equal(t, textBefore, brokerConfigText(t, tb), body)
	}
	tb.cfgMu.Lock()
	require.Equal(t, root, tb.cfg.StorePathRootDir)
	require.Equal(t, 72, tb.cfg.FileReservedTime)
	require.Empty(t, tb.pending)
	tb.cfgMu.Unlock()
	require.Equal(t, int32(6), tb.live.perm.Load())

	// An allowed key still updates, live and in the file.
	resp := updateConfig(t, tb, "brokerPermission=4")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, int32(4), tb.live.perm.Load())
	stop()

	// The file the next start reads keeps the store where it was.
	reloaded := DefaultConfig()
	reloaded.StorePathRootDir = root
	_, err = reloaded.LoadFile(confPath)
	require.NoError(t, err)
	require.Equal(t, root, reloaded.StorePathRootDir)
	require.Equal(t, 72, reloaded.FileReservedTime)
	require.Equal(t, int32(4), reloaded.BrokerPermission)
	entries, err := os.ReadDir(evil)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// writeStallTimeoutMillis reaches the transport from broker.conf, and is
// one of the bounds a remote update may not change.
func TestWriteStallTimeoutKey(t *testing.T) {
	cfg := DefaultConfig()
	require.Equal(t, transport.DefaultWriteStallTimeout.Milliseconds(), cfg.transportLimits().WriteStallTimeoutMillis)
	ok, err := cfg.Set("writeStallTimeoutMillis", "2500")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 2500*time.Millisecond, cfg.transportLimits().Apply(transport.ServerConfig{}).WriteStallTimeout)
	_, refused := blacklist.Refused("writeStallTimeoutMillis", "")
	require.True(t, refused)
}
