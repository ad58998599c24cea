// Package capture records real RocketMQ remoting traffic as golden fixtures.
//
// A Proxy sits between a real peer pair (a Java or Go client and the Java
// name server or broker), forwards every byte unchanged and hands each
// complete frame, in both directions, to a Recorder that writes it under
// codec/testdata/golden as <source>-<dir>-<code>-<n>.frame (raw bytes with the
// length prefix) plus a .json description.
//
// The .json is computed by the small decoder in this package (wire.go), which
// is written independently of rocketgo's codec package on purpose: fixtures
// must not be produced by the decoder they are meant to check.
//
// Frame layout (big endian):
//
//	+---------+------------------------------+--------+------+
//	| int32   | int32                        | header | body |
//	| total   | serializeType<<24 | hdrLen   |        |      |
//	+---------+------------------------------+--------+------+
//	total = 4 + hdrLen + bodyLen
//
// ROCKETMQ (binary) header:
//
//	int16 code | int8 language | int16 version | int32 opaque | int32 flag |
//	int32 remarkLen | remark | int32 extLen | { int16 kLen | k | int32 vLen | v }...
package capture
