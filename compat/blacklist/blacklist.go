package blacklist

import (
	"strings"

	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// Reasons a key is refused (for logs and docs; the wire answer is Java's
// one remark whatever the reason).
const (
	ReasonList       = "on configBlackList"
	ReasonPath       = "names a file or directory"
	ReasonCode       = "loads code or starts a process"
	ReasonProtection = "turns a protection off (authentication, access control, listening address, a resource cap)"
	ReasonRetention  = "controls when kept messages are deleted"
	ReasonLayout     = "fixes the store's on-disk layout"
	ReasonSensitive  = "redirects or re-homes the server (an address, a role, group membership, or an operator's sensitiveRemoteConfigKeys entry) while refuseSensitiveRemoteConfig is on"
)

var exact = map[string]string{
	"configBlackList":                      ReasonList,
	"filterServerNums":                     ReasonCode,
	"initAuthenticationUser":               ReasonProtection,
	"innerClientAuthenticationCredentials": ReasonProtection,
	"listenIP":                             ReasonProtection,
	"bindAddress":                          ReasonProtection,
	"maxTopicQueueNums":                    ReasonProtection,
	"writeBufferHighWaterMark":             ReasonProtection,
	"writeBufferLowWaterMark":              ReasonProtection,
	"maxUnsentBytesPerConnection":          ReasonProtection,
	"maxUnsentBytesTotal":                  ReasonProtection,
	"maxInflightRequestsPerConnection":     ReasonProtection,
	"maxUnreadBytesPerConnection":          ReasonProtection,
	"maxUnreadBytesTotal":                  ReasonProtection,
	"frameReadTimeoutMillis":               ReasonProtection,
	"maxHeaderLength":                      ReasonProtection,
	"writeStallTimeoutMillis":              ReasonProtection,
	"controllerAllowAdminOnLiveBrokers":    ReasonProtection,
	"refuseSensitiveRemoteConfig":          ReasonProtection, // the Policy itself
	"sensitiveRemoteConfigKeys":            ReasonProtection,
	"maxHeldPullsPerConnection":            ReasonProtection,
	"maxHeldPullBytes":                     ReasonProtection,
	"maxMsgsNumBatch":                      ReasonProtection,
	"maxTopicsPerBrokerRegistration":       ReasonProtection,
	"maxTopicRouteEntries":                 ReasonProtection,
	"maxBrokers":                           ReasonProtection,
	"maxKVConfigBytes":                     ReasonProtection,
	"maxKVConfigValueLength":               ReasonProtection,
	"fileReservedTime":                     ReasonRetention,
	"cleanFileForciblyEnable":              ReasonRetention,
	"diskMaxUsedSpaceRatio":                ReasonRetention,
	"diskSpaceCleanForciblyRatio":          ReasonRetention,
	"diskSpaceWarningLevelRatio":           ReasonRetention,
}

type affix struct {
	s, why string
	suffix bool
}

// rules are tried in order; the first match gives the reason.
var rules = []affix{
	{"Provider", ReasonCode, true}, {"PlugIn", ReasonCode, true}, {"Plugin", ReasonCode, true}, {"Class", ReasonCode, true},
	{"storePath", ReasonPath, false},
	{"Path", ReasonPath, true}, {"Paths", ReasonPath, true},
	{"Dir", ReasonPath, true}, {"Dirs", ReasonPath, true},
	{"File", ReasonPath, true}, // also two Java keys that are not paths: syncFromLastFile, flushLeastPagesWhenWarmMapedFile
	{"Home", ReasonPath, true},
	{"acl", ReasonProtection, false},
	{"authentication", ReasonProtection, false},
	{"authorization", ReasonProtection, false},
	{"mappedFileSize", ReasonLayout, false},
	{"mapperFileSize", ReasonLayout, false}, // compat: Java's misspelt mapperFileSizeBatchConsumeQueue
}

// Fixed reports whether key is refused whatever configBlackList says, and
// why.
func Fixed(key string) (why string, refused bool) {
	if why, ok := exact[key]; ok {
		return why, true
	}
	for _, r := range rules {
		if r.suffix && strings.HasSuffix(key, r.s) || !r.suffix && strings.HasPrefix(key, r.s) {
			return r.why, true
		}
	}
	return "", false
}

// Refused reports whether a remote update may not set key: a fixed rule
// or an entry of list (a configBlackList value, ';'-separated as in Java).
func Refused(key, list string) (why string, refused bool) {
	if why, ok := Fixed(key); ok {
		return why, true
	}
	if inList(key, list) {
		return ReasonList, true
	}
	return "", false
}

// inList reports whether key is an entry of a ';'-separated list.
func inList(key, list string) bool {
	for rest := list; rest != "" && key != ""; {
		var k string
		k, rest, _ = strings.Cut(rest, ";")
		if strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// Check returns the first key of an update that Refused refuses.
func Check(update javaprops.Props, list string) (key, why string, refused bool) {
	for _, e := range update {
		if why, ok := Refused(e.Key, list); ok {
			return e.Key, why, true
		}
	}
	return "", "", false
}

// Policy is a server's rule for keys that are not on the black list but
// redirect or re-home it: its name servers, its replication or controller
// addresses, the roles it may take. Java takes them from any caller; with
// Refuse on (the default) a remote update refuses them like black-listed
// keys, and refuses the operator's Extra keys too. The policy's own keys
// are Fixed, so it changes only in the config file, at a restart.
type Policy struct {
	Refuse bool   // refuseSensitiveRemoteConfig (default true)
	Extra  string // sensitiveRemoteConfigKeys: ';'-separated keys added to the server's own
}

// Refuses reports whether p refuses key, given the server's own sensitive
// keys.
func (p Policy) Refuses(key string, own map[string]bool) bool {
	return p.Refuse && (own[key] || inList(key, p.Extra))
}

// Check returns the first key of an update that p refuses.
func (p Policy) Check(update javaprops.Props, own map[string]bool) (key string, refused bool) {
	for _, e := range update {
		if p.Refuses(e.Key, own) {
			return e.Key, true
		}
	}
	return "", false
}
