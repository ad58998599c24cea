// Package codec owns the bytes of Apache RocketMQ's remoting protocol: the
// frame, both header serializations (JSON and the binary "ROCKETMQ" form),
// the language codes and the request/response code vocabulary.
//
// A frame on the wire:
//
//	+---------+-----------------+-------------------+---------------------+
//	| length  | headerLenWord   | header            | body                |
//	| int32   | int32           | headerLen bytes   | length-4-headerLen  |
//	+---------+-----------------+-------------------+---------------------+
//	headerLenWord = serializeType<<24 | headerLen (24 bits)
//
// ROCKETMQ binary header (all big-endian):
//
//	code int16 | language u8 | version int16 | opaque int32 | flag int32 |
//	remarkLen int32 | remark | extLen int32 | { keyLen int16 key valLen int32 val }*
//
// Decoding never copies: the strings of a decoded Frame alias the payload
// buffer handed to Decode, which must stay unchanged for the Frame's life.
// Subpackages: header (typed request/response headers), message (stored
// records, properties, message ids), body (JSON bodies), transport (gnet
// server, router, client).
package codec
