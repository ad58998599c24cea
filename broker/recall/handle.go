package recall

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// Version1 is the only handle version Java 5.3.3 knows.
const Version1 = "v1"

// ErrInvalid is every decoding failure; its text is Java's
// DecoderException message, which the broker answers as the remark.
var ErrInvalid = errors.New("recall handle is invalid")

// Handle is a decoded v1 handle. Timestamp stays a string, as in Java
// (HandleV1.timestampStr): the broker parses it when it checks it.
type Handle struct {
	Topic      string
	BrokerName string
	Timestamp  string
	MessageID  string
}

// TimestampMs is Timestamp as Java's NumberUtils.toLong(s, -1) reads it.
func (h *Handle) TimestampMs() int64 {
	n, err := strconv.ParseInt(h.Timestamp, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// AppendRaw appends the handle's unencoded text to dst.
func AppendRaw(dst []byte, topic, brokerName string, timestampMs int64, messageID string) []byte {
	dst = append(dst, Version1...)
	dst = append(dst, ' ')
	dst = append(dst, topic...)
	dst = append(dst, ' ')
	dst = append(dst, brokerName...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, timestampMs, 10)
	dst = append(dst, ' ')
	return append(dst, messageID...)
}

// AppendEncoded appends the base64 form of raw (from AppendRaw) to dst.
func AppendEncoded(dst, raw []byte) []byte {
	return base64.URLEncoding.AppendEncode(dst, raw)
}

// Encode returns the handle string of a timer message (HandleV1.buildHandle).
func Encode(topic, brokerName string, timestampMs int64, messageID string) string {
	raw := AppendRaw(make([]byte, 0, 64+len(topic)+len(brokerName)+len(messageID)), topic, brokerName, timestampMs, messageID)
	return string(AppendEncoded(nil, raw))
}

// Decode parses a handle as RecallMessageHandle.decodeHandle does.
func Decode(s string) (Handle, error) {
	if s == "" {
		return Handle{}, ErrInvalid
	}
	raw, err := decodeBase64(s)
	if err != nil {
		return Handle{}, ErrInvalid
	}
	items := javaSplit(string(raw))
	if items[0] != Version1 || len(items) < 5 {
		return Handle{}, ErrInvalid
	}
	return Handle{Topic: items[1], BrokerName: items[2], Timestamp: items[3], MessageID: items[4]}, nil
}

// decodeBase64 is java.util.Base64's URL decoder: the URL-safe alphabet
// only, padding optional but, when present, correct.
func decodeBase64(s string) ([]byte, error) {
	if strings.HasSuffix(s, "=") {
		return base64.URLEncoding.DecodeString(s)
	}
	return base64.RawURLEncoding.DecodeString(s)
}

// javaSplit is String.split(" "): empty fields between separators stay,
// trailing empty ones go, and the result has at least one element.
func javaSplit(s string) []string {
	items := strings.Split(s, " ")
	n := len(items)
	for n > 1 && items[n-1] == "" {
		n--
	}
	if n == 1 && items[0] == "" && len(s) > 0 {
		// Only separators: Java returns an empty array; items[0] then
		// throws, which the broker answers as any other bad handle.
		return []string{""}
	}
	return items[:n]
}
