package blacklist

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/compat/javaprops"
)

func TestFixedRules(t *testing.T) {
	for key, why := range map[string]string{
		"storePathRootDir":            ReasonPath,
		"storePathCommitLog":          ReasonPath,
		"storePathEpochFile":          ReasonPath,
		"readOnlyCommitLogStorePaths": ReasonPath,
		"brokerConfigPath":            ReasonPath,
		"kvConfigPath":                ReasonPath,
		"configStorePath":             ReasonPath,
		"rocketmqHome":                ReasonPath,
		"authConfigPath":              ReasonPath,
		"messageStorePlugIn":          ReasonCode,
		"authenticationProvider":      ReasonCode,
		"filterServerNums":            ReasonCode,
		"aclEnable":                   ReasonProtection,
		"authenticationEnabled":       ReasonProtection,
		"authorizationWhitelist":      ReasonProtection,
		"listenIP":                    ReasonProtection,
		"bindAddress":                 ReasonProtection,
		"maxTopicQueueNums":           ReasonProtection,
		"maxUnreadBytesTotal":         ReasonProtection,
		"frameReadTimeoutMillis":      ReasonProtection,
		"maxHeldPullBytes":            ReasonProtection,
		"maxKVConfigBytes":            ReasonProtection,
		"fileReservedTime":            ReasonRetention,
		"cleanFileForciblyEnable":     ReasonRetention,
		"diskMaxUsedSpaceRatio":       ReasonRetention,
		"mappedFileSizeCommitLog":     ReasonLayout,
		"mappedFileSizeConsumeQueue":  ReasonLayout,
		"configBlackList":             ReasonList,
	} {
		got, ok := Fixed(key)
		require.True(t, ok, key)
		require.Equal(t, why, got, key)
	}
	for _, key := range []string{
		"brokerPermission", "autoCreateTopicEnable", "namesrvAddr", "deleteWhen", "maxMessageSize",
		"orderMessageEnable", "brokerIP1", "listenPort", "flushDiskType", "transactionTimeOut", "",
		"storepathrootdir", // keys are case-sensitive, as in Java: this one sets nothing
	} {
		_, ok := Fixed(key)
		require.False(t, ok, key)
	}
}

func TestOperatorList(t *testing.T) {
	list := " deleteWhen ; brokerIP1;;"
	for _, k := range []string{"deleteWhen", "brokerIP1", "storePathRootDir"} {
		_, ok := Refused(k, list)
		require.True(t, ok, k)
	}
	_, ok := Refused("brokerIP2", list)
	require.False(t, ok)
	_, ok = Refused("", list)
	require.False(t, ok)
}

func TestCheckFindsAnyKeyOfTheUpdate(t *testing.T) {
	p, err := javaprops.Parse([]byte("brokerPermission=6\nstorePath\\u0052ootDir=/tmp/x\n"))
	require.NoError(t, err)
	key, why, ok := Check(p, "")
	require.True(t, ok)
	require.Equal(t, "storePathRootDir", key)
	require.Equal(t, ReasonPath, why)
	p, err = javaprops.Parse([]byte("brokerPermission=6\n"))
	require.NoError(t, err)
	_, _, ok = Check(p, "configBlackList")
	require.False(t, ok)
}

// The policy refuses the server's own keys and the operator's extras
// while it is on, nothing when off; its own keys are fixed.
func TestPolicy(t *testing.T) {
	own := map[string]bool{"namesrvAddr": true}
	on := Policy{Refuse: true, Extra: " brokerPermission ;;deleteWhen"}
	for _, k := range []string{"namesrvAddr", "brokerPermission", "deleteWhen"} {
		require.True(t, on.Refuses(k, own), k)
		require.False(t, Policy{Extra: on.Extra}.Refuses(k, own), k)
	}
	for _, k := range []string{"shortPollingTimeMills", "", "brokerpermission"} {
		require.False(t, on.Refuses(k, own), k)
	}
	p, err := javaprops.Parse([]byte("shortPollingTimeMills=5\nbrokerPermission=6\n"))
	require.NoError(t, err)
	key, ok := on.Check(p, own)
	require.True(t, ok)
	require.Equal(t, "brokerPermission", key)
	_, ok = Policy{Refuse: true}.Check(p, own)
	require.False(t, ok)
	for _, k := range []string{"refuseSensitiveRemoteConfig", "sensitiveRemoteConfigKeys"} {
		why, ok := Fixed(k)
		require.True(t, ok, k)
		require.Equal(t, ReasonProtection, why)
	}
}
