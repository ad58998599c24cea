// Package message owns the stored message record — the commit-log entry,
// which is also exactly what PULL, QUERY_MESSAGE and VIEW_MESSAGE_BY_ID
// bodies carry — plus the properties string, the SEND_BATCH_MESSAGE body,
// offset message ids and client unique keys.
//
// Record layout (big endian; IPv4 hosts shown, IPv6 hosts are 16+4 bytes
// and flagged in SYSFLAG bits 4/5):
//
//	 0  TOTALSIZE   int32   whole record incl. this field
//	 4  MAGICCODE   int32   V1 0xDAA320A7 (1-byte topic len), V2 0xDAA320AB (2-byte)
//	 8  BODYCRC     int32   crc32 IEEE of BODY & 0x7FFFFFFF
//	12  QUEUEID     int32
//	16  FLAG        int32
//	20  QUEUEOFFSET int64
//	28  PHYSICALOFFSET int64
//	36  SYSFLAG     int32
//	40  BORNTIMESTAMP int64
//	48  BORNHOST    4+4 | 16+4
//	..  STORETIMESTAMP int64
//	..  STOREHOST   4+4 | 16+4
//	..  RECONSUMETIMES int32
//	..  PREPAREDTRANSACTIONOFFSET int64
//	..  BODYLEN int32, BODY
//	..  TOPICLEN int8 (V1) | int16 (V2), TOPIC
//	..  PROPLEN int16, PROPERTIES  name 0x01 value 0x02 ...
//
// A commit-log segment ends with an 8-byte blank marker when the next
// record does not fit: int32 remaining bytes, int32 0xCBD43194.
//
// Batch body element (SEND_BATCH_MESSAGE):
//
//	TOTALSIZE int32 | MAGIC int32 (0) | BODYCRC int32 (0) | FLAG int32 |
//	BODYLEN int32 | BODY | PROPLEN int16 | PROPERTIES
//
// Decoders fill caller structs with views into the input (no copies), and
// never panic on malformed input.
package message
