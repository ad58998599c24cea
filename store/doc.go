// Package store is the broker's message store, on disk in Apache
// RocketMQ's layout so a store directory moves between Java and rocketgo:
//
//	root/
//	  commitlog/<%020d start offset>         records back to back (codec/message)
//	  consumequeue/<topic>/<qid>/<%020d>     20-byte units, 300000 per file
//	  index/<yyyyMMddHHmmssSSS>              hash index (store/index)
//	  checkpoint                             flushed timestamps (below)
//	  abort                                  present while the store is open
//
// Consume-queue unit:
//
//	0 commitLogOffset int64 | 8 size int32 | 12 tagsCode int64
//
// Checkpoint (4096 bytes; Java fields at 0..39, ours after them):
//
//	 0 physicMsgTimestamp int64   store time of the last flushed record
//	 8 logicsMsgTimestamp int64   store time of the last flushed CQ unit
//	16 indexMsgTimestamp  int64   store time of the last flushed index entry
//	24 masterFlushedOffset int64  (5.x; written as the flushed offset)
//	32 confirmPhyOffset   int64   (5.x; written as the flushed offset)
//	40 dispatchedOffset   int64   rocketgo: every record below it is in the
//	                              flushed consume queues and index
//
// Data flow: Put encodes each record under one mutex (queue offsets are
// assigned there too) — straight into the mapped commit-log segment for
// ASYNC_FLUSH, into a staging buffer for SYNC_FLUSH (stage.go) — the
// flusher makes it durable (a timer for ASYNC_FLUSH; for SYNC_FLUSH group
// commit: one pwrite of the staged batch and one fdatasync), and the
// dispatcher appends
// consume-queue units and index entries for records up to the durable
// watermark (written for async, flushed for sync), then calls OnArrival.
//
// Disk full (clean.go): every file written through a mapping has its
// blocks allocated first (store/internal/falloc; the index 1 MiB ahead), so
// a full disk surfaces as ENOSPC, never as SIGBUS. ENOSPC refuses puts with
// ErrDiskFull (ServiceNotAvailable) and the dispatcher waits at the record
// whose consume-queue or index entries it could not allocate (consumers see
// it once there is room); the cleaner's check every
// CleanResourceInterval (Java's ratios and keys) accepts puts again once
// usage is at or below DiskSpaceCleanForciblyRatio. Other I/O errors turn
// the store read-only for good (ErrReadOnly).
//
// Corruption (get.go verifyRecord): every record handed out (GetMessages,
// ReadRecord) is decoded and its body CRC checked on the way; a bad one is
// logged at ERROR and skipped, never served. Recovery also checks CRCs
// past the checkpoint and hides bad records from the consume queues.
//
// Residency (resident.go): segments are fallocated, not paged in; a
// background goroutine pages in a window ahead of the writer and unmaps
// flushed, dispatched data behind it (it stays in the page cache), so
// resident memory follows the data in use, not the store size.
//
// Lock order: Store.mu (append) → commitLog.segMu; consume queues have their
// own mutex and are never locked while holding Store.mu.
package store
