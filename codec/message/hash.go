package message

import (
	"unicode/utf16"
	"unicode/utf8"
)

// JavaStringHash is Java's String.hashCode over the UTF-16 code units of
// s (invalid UTF-8 bytes count as U+FFFD, as Java's decoder replaces them).
func JavaStringHash(s string) int32 { return JavaStringHashFrom(0, s) }

// JavaStringHashFrom continues a Java String.hashCode computation: the hash
// of a+b equals JavaStringHashFrom(JavaStringHash(a), b).
func JavaStringHashFrom(h int32, s string) int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// TagsHash is the consume-queue tags code of a TAGS value: Java's
// String.hashCode sign-extended to 64 bits; 0 for no tags.
func TagsHash(tags string) int64 {
	if tags == "" {
		return 0
	}
	return int64(JavaStringHash(tags))
}
