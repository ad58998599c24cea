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
