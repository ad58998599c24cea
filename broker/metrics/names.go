package metrics

import (
	"strings"

	"github.com/rocketgo/rocketgo/codec"
)

// VersionName is Java's version label: MQVersion.getVersionDesc(v) in
// lower case (the last name for a version beyond the table).
func VersionName(v int32) string {
	if v < 0 {
		v = 0
	}
	if int(v) >= len(versionNames) {
		return versionNames[len(versionNames)-1]
	}
	return versionNames[v]
}

// LanguageName is Java's language label: LanguageCode.name() in lower case.
func LanguageName(l codec.LanguageCode) string { return strings.ToLower(l.String()) }
