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
// The reader also pulls by tag (the broker filters on the tag hash codes
// the other side wrote into the consume queue) and appends more messages,
// whose queue offsets must continue where the writer stopped; a store
// written by ours comes back to ours after Java appended to it. While the
// Java writer runs, our broker must refuse its directory (Java's store lock
// is a POSIX lock on store/lock).
//
// Both brokers run with the same small mappedFileSizeCommitLog and
// mappedFileSizeConsumeQueue, so commit log and consume queues roll over
// several files on both sides.
//
// With -tags long, TestStoreCompatCrash hands over after SIGKILL instead
// of a clean stop (abnormal recovery from the other side's checkpoint and
// abort file) and checks the Java broker refuses a directory ours holds.
//
// STORECOMPAT_DIR=dir keeps the stores and logs of a run in dir.
package storecompat
