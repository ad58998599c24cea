// Package index is the message-key hash index (Java IndexFile), in Java's
// on-disk layout so index files move between brokers:
//
//	header (40 bytes)
//	   0 beginTimestamp int64   8 endTimestamp int64
//	  16 beginPhyOffset int64  24 endPhyOffset int64
//	  32 hashSlotCount int32   36 indexCount int32 (starts at 1)
//	slots: hashSlotNum × int32   newest entry number of the bucket, 0 = empty
//	entries: indexNum × 20 bytes
//	   0 keyHash int32 | 4 phyOffset int64 | 12 timeDiff int32 (s) | 16 prevIndex int32
//
// Keys are "topic#key" for each KEYS entry and for UNIQ_KEY. Lookups match
// only the hash and the time range, as Java does; callers compare keys.
// Files are named by creation time (yyyyMMddHHmmssSSS, local time).
//
// Files are sparse, as Java's are (420 MB at the default sizes, mostly
// untouched), but never written into a hole: the header and slots are
// allocated when a file is created and the entries 1 MiB ahead of the
// writer (file.ensure), so a full disk is an ENOSPC from Put, not a SIGBUS
// from a store through the mapping.
package index
