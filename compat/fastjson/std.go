package fastjson

import jsoniter "github.com/json-iterator/go"

// std is json-iterator in its encoding/json-compatible configuration:
// field names matched case-insensitively, json tags, json.Marshaler /
// json.Unmarshaler and json.RawMessage honoured, map keys sorted and HTML
// escaped on output, nesting bounded (10,000 levels).
var std = jsoniter.ConfigCompatibleWithStandardLibrary

// Unmarshal decodes standard JSON (what clients and servers send in
// request and response bodies, and the config files) into v, as
// encoding/json would. Relaxed fastjson input (unquoted keys, MessageQueue
// map keys) is read with Reader instead.
func Unmarshal(data []byte, v any) error { return std.Unmarshal(data, v) }

// Marshal writes v as encoding/json would. Bodies a Java peer parses are
// written with Writer, in fastjson's shape; Marshal is for our own files
// and for JSON read back by encoding/json-compatible readers.
func Marshal(v any) ([]byte, error) { return std.Marshal(v) }
