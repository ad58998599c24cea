// Package storecompat proves that a store directory moves between the Apache
// RocketMQ 5.3 broker and ours, with real processes on 127.0.0.1:
//
//	Java NamesrvStartup (one for the whole run)
//	  │
//	  ├─ writer broker ──► produce N messages (official Go client), commit
//	  │   (Java or ours)     consumer offsets, create a subscription group,
//	  │                      read every record back (the baseline), SIGTERM
//	  │                                   │ same storePathRootDir
//	  │                                   ▼
//	  └─ reader broker ──► pull every queue from offset 0, query by key and by
//	      (the other one)    uniq key, view by offset msgId, read topic/group/
//	                         offset config, SIGTERM
//
// Checks: every record the reader serves is byte-identical to the one the
// writer served at the same (topic, queueId, queueOffset); decoded with the
// official client's decoder, each matches what was sent (body, keys, tags,
// properties, msgId, offset msgId); topics keep their queue counts,
// committed offsets and group settings survive. Differences in the shape of
// the config JSON files each side writes are reported, not failed.
//
// Both brokers run with the same mappedFileSizeCommitLog (small, so the
// commit log rolls over several segments) and Java's default
// mappedFileSizeConsumeQueue (300000 units of 20 bytes).
package storecompat
