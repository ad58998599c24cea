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
//	32 confirmPhyOffset   int64   (5.x; the confirm offset, at most flushed)
//	40 dispatchedOffset   int64   rocketgo: every record below it is in the
//	                              flushed consume queues and index
//	48 truncateTo+1       int64   rocketgo: a TruncateTo in progress (0 none);
//	                              recovery finishes the cut
//
// Progress offsets (progress.go; commit-log offsets, each monotonic except
// that TruncateTo lowers them):
//
//	written     end of the last complete record appended: in the page cache
//	            (ASYNC_FLUSH) or in the SYNC_FLUSH stage
//	mapped      SYNC_FLUSH only: end of the staged bytes the flusher has
//	            pwritten to the page cache, before their fdatasync
//	RawEnd      what ReadRaw serves to slaves: mapped (SYNC_FLUSH) or
//	            written — so the network overlaps the fdatasync
//	flushed     end of fdatasync'd data
//	replicated  end of data acknowledged by as many slaves as a put needs
//	            (AckReplicated, from the HA service; QuorumOffset reduces
//	            per-slave acks to it)
//	confirm     Java's CommitLog.getConfirmOffset (ConfirmOffset): flushed
//	            under SYNC_FLUSH, written under ASYNC_FLUSH (classic mode),
//	            optionally bounded by SetConfirmLimit (controller mode)
//	dispatched  end of the records turned into consume-queue units and
//	            index entries (DispatchedOffset; what the old ConfirmOffset
//	            returned)
//	received    slave: end of the bytes AppendRaw stored, written plus the
//	            head of a record still arriving (ReceivedOffset)
//
// Invariants: minPhy <= dispatched <= confirm <= written; flushed <=
// written; RawEnd <= written; replicated <= RawEnd; written <= received.
//
// A put completes when the offsets its policy needs have passed its end
// (flush.go policy): flushed under SYNC_FLUSH, replicated on a SYNC_MASTER
// with InSyncReplicas > 1 (as Java 5.x handleHA: at 1 it waits for no
// slave), both when both apply — nothing on an ASYNC_MASTER with
// ASYNC_FLUSH. Each offset has one waiter list ordered by target; whoever
// advances it (flusher, AckReplicated) answers the puts it passed; a
// watchdog answers FlushDiskTimeout after SyncFlushTimeout and
// FlushSlaveTimeout after SlaveTimeout (the record stays stored).
// Every answer records the put's latency from its call (latency.go,
// Java's StoreStatsService figures; GetMessages records the read's).
//
// Replication (repl.go, raw.go, truncate.go, role.go): on a master ReadRaw
// hands out views of mapped commit-log bytes up to RawEnd, never across a
// segment, holding the segment (WatchRaw wakes the sender); on a slave
// (Role Slave: local puts refused with ErrSlave) AppendRaw stores the
// master's bytes at the received end, makes each record visible once
// complete and valid (magic, size, offset, body CRC), rolls segments at
// the blank end-of-segment records and the dispatcher builds consume
// queues and index from them as for local puts; TruncateTo cuts the log,
// queues and index at a record boundary, crash-safe through the
// checkpoint's cut field. SetRole switches roles at run time.
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
// Lock order: Store.flushMu → Store.dispMu → Store.mu (append) →
// commitLog.segMu; consume queues have their own mutex and are never
// locked while holding Store.mu. progress.fireMu → progress.mu; a waiter's
// callback runs with neither mu held.
package store
