package codec

// LanguageCode is the sender's client language, carried as a name in JSON
// headers and as one byte in ROCKETMQ headers.
type LanguageCode uint8

// Language codes, numbered as Java's LanguageCode ordinals.
const (
	LangJava LanguageCode = iota
	LangCPP
	LangDotNet
	LangPython
	LangDelphi
	LangErlang
	LangRuby
	LangOther
	LangHTTP
	LangGo
	LangPHP
	LangOMS
	LangRust
	LangNodeJS
)

var languageNames = [...]string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

// String returns the Java enum name; unknown codes read "OTHER".
func (l LanguageCode) String() string {
	if int(l) < len(languageNames) {
		return languageNames[l]
	}
	return "OTHER"
}

// ParseLanguage maps a Java enum name to its code.
func ParseLanguage(s string) (LanguageCode, bool) {
	for i, n := range languageNames {
		if n == s {
			return LanguageCode(i), true
		}
	}
	return LangOther, false
}
