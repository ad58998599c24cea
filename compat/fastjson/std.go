package fastjson

import jsoniter "github.com/json-iterator/go"

// decoder and encoder are json-iterator. Decoding uses its default
// configuration: field names matched case-insensitively, json tags,
// json.Unmarshaler and json.RawMessage honoured, nesting bounded (10,000
// levels), as encoding/json does; it skips encoding/json's validation of
// RawMessage values on output only. BenchmarkDecodeHeartbeat: ~3 µs
// against encoding/json's ~6 µs (its encoding/json-compatible
// configuration took ~15 µs). Encoding uses the compatible configuration:
// map keys sorted and HTML escaped, as encoding/json writes them.
var (
	decoder = jsoniter.ConfigDefault
	encoder = jsoniter.ConfigCompatibleWithStandardLibrary
)

// Unmarshal decodes standard JSON (what clients and servers send in
// request and response bodies, and the config files) into v, as
// encoding/json would. Relaxed fastjson input (unquoted keys, MessageQueue
// map keys) is read with Reader instead.
func Unmarshal(data []byte, v any) error { return decoder.Unmarshal(data, v) }

// Marshal writes v as encoding/json would. Bodies a Java peer parses are
// written with Writer, in fastjson's shape; Marshal is for our own files
// and for JSON read back by encoding/json-compatible readers.
func Marshal(v any) ([]byte, error) { return encoder.Marshal(v) }
