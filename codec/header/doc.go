// Package header types the custom headers (extFields) of remoting commands,
// one struct per Java header class, named after it without "Header"
// (PullMessageRequestHeader → PullMessageRequest). The *_gen.go files are
// generated from codec/internal/spec/headers.def by codec/internal/gen;
// only this file, field.go and the tests are written by hand.
//
// Every type has
//
//	Decode(f *codec.Frame) error                      // fill from f.Ext, no allocation
//	Encode(f *codec.Frame)                            // append to f.Ext
//	AppendExt(f *codec.Frame, scratch []byte) []byte  // same, numbers formatted into scratch
//
// Wire keys are Java's exactly, including SEND_MESSAGE_V2's one-letter keys
// (SendMessageRequestV2, with ToV1/FromV1) and the misspelt ones.
//
// Presence, without pointers: an empty value on the wire counts as absent
// (the Go client sends "" for unset keys; Java's binary codec turns "" into
// null). An absent required field (Java @CFNotNull) makes Decode fail with a
// *FieldError naming the key, as Java's "the custom field <x> is null". An
// absent optional field takes its declared default (zero unless the spec
// says otherwise, e.g. GetMaxOffsetRequest.Committed = true, like Java's
// field initialiser or its null handling). Encode writes required fields
// always (strings unless empty) and optional fields only when they differ
// from their default, which is what Java's null means on the wire.
//
// Values are Java's: numbers decimal (Integer.parseInt rules, range
// checked), booleans Boolean.parseBoolean ("true" in any case, anything else
// false), enums their names (kept as strings).
//
// Decoded strings alias the frame (and so the connection buffer): copy them
// (strings.Clone) before keeping them past the frame's life. AppendExt's
// values alias scratch, which must not be reused until the frame is written.
package header
