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
// TestStoreCompatTimers hands over a store holding pending 5.x timers
// (TIMER_DELIVER_MS, TIMER_DELAY_SEC) and delay-level messages, both ways,
// with messageDelayLevel shortened to "1s <stop>s <pending>s" on both
// sides (TimerPlan times everything from the first send):
//
//	writer: level 1 + a timer due in 1.5 s ─── delivered by the writer
//	        2 × level 2 + a timer due in the gap    ┐ pending at the
//	        2 × level 3 + 7 timers (DELIVER_MS,     │ hand-over
//	        DELAY_SEC) due once the reader is up    ┘
//	        wait until its timercheck has passed every timer-topic record
//	        (all timers chained into its wheel); one more pending timer,
//	        then SIGTERM at once (that one may or may not be in the wheel
//	        or the checkpoint: the reader recovers it either way)
//	files:  timercheck queue offset = timers (+1), timerlog units likewise,
//	        live wheel slots count the undelivered ones (read here with
//	        Java's geometry, independently of either broker)
//	offline until the gap ones are due, then the reader starts
//
// The reader must deliver every held message exactly once overall (the
// early ones not again: delayOffset.json and the wheel's read time carry
// over), to its real topic and queue with body, keys, tag and user
// properties intact, never before its due time, at most 6 s after
// max(due, reader registered); timers must come from the writer's
// timerlog units (TIMER_ENQUEUE_MS is the unit's write time, before the
// writer stopped), not from enqueuing the timer topic again (the
// last-minute one excepted). Lateness is reported per phase (due in the
// gap, while the reader starts, once it serves) and kind, and the
// properties each side leaves on delivered records are logged (Java keeps
// REAL_TOPIC/REAL_QID on timers and DELAY on delays; ours drops those). A Java writer stopping later than
// planned may deliver what fell due meanwhile; that is tolerated and
// counted, never a second delivery. The Java reader is killed at the end
// (nothing is checked after, and its clean stop takes 10+ s).
//
// With -tags long, TestStoreCompatCrash hands over after SIGKILL instead
// of a clean stop (abnormal recovery from the other side's checkpoint and
// abort file) and checks the Java broker refuses a directory ours holds.
//
// STORECOMPAT_DIR=dir keeps the stores and logs of a run in dir.
package storecompat
