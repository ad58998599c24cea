// Package timer is the on-disk timer wheel of 5.x timer messages, in the
// Java broker's file layout and names, so a store directory with pending
// timers moves between Java and rocketgo:
//
//	root/
//	  timerwheel                 the wheel: 2 × slotsTotal slots of 32 bytes
//	  timerlog/<%020d start>     fixed-size mapped files of 52-byte units
//	  config/timercheck          checkpoint (4096 bytes)
//
// Every pending timer costs one timerlog unit on disk; memory does not grow
// with the number of pending timers (the wheel and the log are mapped
// files, slots are walked in bounded batches).
//
// Wheel slot (index = timeMs/precisionMs mod 2·slotsTotal; slotsTotal is
// 7 days of seconds whatever the precision, like Java):
//
//	 0 time     int64  timeMs/precisionMs of the slot's chain
//	 8 firstPos int64  timerlog position of the chain's first unit (-1: none)
//	16 lastPos  int64  position of its last unit; the chain runs backwards
//	24 num      int32  units added (minus delete markers)
//	28 magic    int32  unused by Java; rocketgo sets MagicDelete when the
//	                   chain holds a delete marker
//
// A slot whose stored time differs from the one asked for is empty: the
// wheel is never cleared, stale chains are simply not matched.
//
// Timerlog unit (big-endian, like everything here):
//
//	 0 size       int32  52
//	 4 prevPos    int64  previous unit of the same slot, -1 at the chain head
//	12 magic      int32  MagicDefault | MagicRoll | MagicDelete
//	16 writeTime  int64  the wheel's write time when appended (ms)
//	24 delay      int32  slot time − writeTime (ms)
//	28 offsetPy   int64  commit-log offset of the timer-topic record
//	36 sizePy     int32  its size
//	40 topicHash  int32  Java String.hashCode of REAL_TOPIC
//	44 reserved   int64  0
//
// A unit that would leave fewer than 16 bytes in its file is preceded by a
// blank record filling the file: size = bytes left, 8 zero bytes, magic
// BlankMagic.
//
// Checkpoint (Java fields at 0..55, ours after them; Java ignores the rest):
//
//	 0 lastReadTimeMs        next slot to deliver
//	 8 lastTimerLogFlushPos  timerlog bytes durable
//	16 lastTimerQueueOffset  next timer-topic queue offset to enqueue
//	24 masterTimerQueueOffset  written equal to lastTimerQueueOffset
//	32 stateVersion, 40 timestamp, 48 counter   (DataVersion)
//	56 progressSlotMs        rocketgo: slot partly delivered …
//	64 progressPos+1         … up to and including this unit (0: none)
//
// Durability order (Flush): timerlog msync, wheel msync, then the
// checkpoint with pwrite+fdatasync. Recovery (Open) rescans the timerlog
// from one file before the checkpointed flush position, truncates (and
// zeroes) a torn tail and re-points every slot at its last surviving unit,
// so the wheel and the log agree after a crash.
package timer
