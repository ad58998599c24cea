// Package fastjson writes JSON the way Java's fastjson 1.2.x serializes
// RocketMQ beans, and reads the relaxed JSON fastjson accepts.
//
// Writing (Writer) is append-style: the caller emits bean properties in
// alphabetical order (fastjson sorts them), omits nulls, and writes maps in
// their own order. What fastjson adds on top of standard JSON:
//
//	non-string map keys unquoted   {0:"10.0.0.1:10911",1:"10.0.0.2:10911"}
//	MessageQueue map keys          {{"brokerName":"b","queueId":0,"topic":"t"}:123}
//	string escapes                 \b \t \n \f \r \" \\ ; U+0000-0007, 000B,
//	                               000E-001F, 007F-009F, 2028, 2029 as \uXXXX
//	                               (upper-case hex); other non-ASCII raw UTF-8
//	doubles                        Java Double.toString: 1.5 0.0 1.0E10 1.0E-5
//
// The Browser flag switches to SerializerFeature.BrowserCompatible, used by
// the name server for route data sent to newer clients: non-string keys are
// quoted, longs beyond ±(2^53-1) are written as strings, every non-ASCII
// character and '/' are escaped.
//
// Reading (Reader) is a pull tokenizer over a byte slice. Besides standard
// JSON it accepts what fastjson's parser accepts and clients actually send:
// unquoted keys (identifiers and numbers), object keys (a MessageQueue
// written as a key), single-quoted strings, and numbers where strings are
// expected and vice versa. Errors are sticky: check Err once at the end.
// Input never causes a panic; nesting is bounded by MaxDepth.
//
// Standard JSON into Go structs (request bodies and config files whose
// shape is plain JSON) goes through Unmarshal, json-iterator in its
// encoding/json-compatible configuration (std.go).
package fastjson
