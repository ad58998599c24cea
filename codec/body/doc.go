// Package body holds the JSON bodies of remoting commands: what the name
// server and the broker put after the header, shaped exactly as Java's
// fastjson writes them (properties sorted, nulls omitted, compact,
// non-string map keys bare) and read leniently from what clients send.
//
// Name-server bodies (route.go, register.go, cluster.go, kv.go,
// topiclist.go) are encoded with compat/fastjson's Writer and decoded with
// its Reader. Broker bodies live in the other files.
//
// The compressed REGISTER_BROKER body (header compressed=true) is a zlib
// stream whose inflated content is, all integers big-endian int32:
//
//	+-------+------------------+-------+--------------------------------+
//	| len   | DataVersion JSON | count | count × (len, TopicConfig text) |
//	+-------+------------------+-------+--------------------------------+
//	| len   | filterServerList JSON array                                |
//	+-------+------------------------------------------------------------+
//	| count | count × (len, TopicQueueMappingInfo JSON)  (brokers >= 5.0) |
//	+-------+------------------------------------------------------------+
//
// TopicConfig text: "name read write perm filterType[ attributesJSON]",
// single spaces; topicSysFlag and order are not carried.
//
// Lengths in the stream are claims, not facts: the decoder allocates as
// bytes are inflated (32 KiB at a time), never what a length announces,
// and stops with ErrRegisterBody once MaxInflatedRegisterBody (the frame
// limit, 16 MiB) has been inflated. Lists of unknown length are gathered
// in fixed blocks, so a body costs about twice its decoded table.
package body
