package store

import (
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"time"

	"golang.org/x/sys/unix"
)

// The SYNC_FLUSH group commit and the replication wait are expressed
// through progress offsets (progress.go): finish queues a put on the first
// offset its policy needs; the flusher's fdatasync advances flushed (one
// fdatasync covers every record written before it) and the HA service's
// acknowledgements advance replicated; a put whose offsets have all passed
// is answered at once by whoever advanced the last one. The watchdog
// answers FlushDiskTimeout (SyncFlushTimeout) and FlushSlaveTimeout
// (SlaveTimeout) to waiters older than the limits even while an fdatasync
// or a slave hangs; each put is answered exactly once.

// policy is what a put waits for: flushed under SYNC_FLUSH, replicated on
// a SYNC_MASTER whose put needs more than one replica (Java 5.x handleHA:
// inSyncReplicas <= 1 completes at once).
func (s *Store) policy() uint8 {
	var n uint8
	if s.cfg.FlushDiskType == SyncFlush {
		n |= needFlushed
	}
	if Role(s.role.Load()) == SyncMaster && s.inSyncReplicas.Load() > 1 {
		n |= needReplicated
	}
	return n
}

// proceed moves w to the next offset it waits for, or answers it.
func (s *Store) proceed(w *waiter) {
	if w.needs&needFlushed != 0 {
		if s.flushed.enqueue(w) {
			s.wakeFlusher()
			return
		}
		w.needs &^= needFlushed
	}
	if w.needs&needReplicated != 0 {
		if s.replicated.Load() < w.target && time.Since(w.at) > s.slaveTimeoutNow() {
			// Not replicated, and the flush took longer than the slaves
			// may (Java: the HA status overrides the flush status).
			s.slaveTimeout(w)
			return
		}
		if s.replicated.enqueue(w) {
			return
		}
		w.needs &^= needReplicated
	}
	s.answer(w)
}

// answer hands w its result and records the put's latency (Java's
// setPutMessageEntireTimeMax on every put's answer, failed ones too).
func (s *Store) answer(w *waiter) {
	s.latency.observePut(sinceMs(w.begun))
	w.done(w.res)
}

// flushPassed: flushed passed w's records.
func (s *Store) flushPassed(w *waiter) {
	if time.Since(w.at) > s.cfg.SyncFlushTimeout && w.res.Status == PutOK {
		w.res.Status = FlushDiskTimeout
		w.res.Err = fmt.Errorf("store: flush took longer than %v", s.cfg.SyncFlushTimeout)
	}
	w.needs &^= needFlushed
	s.proceed(w)
}

// flushFailed: w's records could not be flushed (err) or not in time.
func (s *Store) flushFailed(w *waiter, err error) {
	if w.res.Status == PutOK {
		w.res.Status, w.res.Err = FlushDiskTimeout, err
	}
	w.needs &^= needFlushed
	s.proceed(w)
}

func (s *Store) replPassed(w *waiter) {
	w.needs &^= needReplicated
	s.proceed(w)
}

// slaveTimeout answers w FlushSlaveTimeout: the record is stored, but not
// acknowledged by enough slaves within SlaveTimeout.
func (s *Store) slaveTimeout(w *waiter) {
	w.res.Status = FlushSlaveTimeout
	w.res.Err = fmt.Errorf("store: not replicated within %v", s.slaveTimeoutNow())
	w.needs = 0
	s.answer(w)
}

// expireWaiters answers the waiters older than their limits (watchdog).
func (s *Store) expireWaiters(now time.Time) {
	s.flushed.expire(now.Add(-s.cfg.SyncFlushTimeout), func(w *waiter) {
		s.flushFailed(w, fmt.Errorf("store: no flush within %v", s.cfg.SyncFlushTimeout))
	})
	s.replicated.expire(now.Add(-s.slaveTimeoutNow()), s.slaveTimeout)
}

// answerAll answers every queued put (Close): flushed first, which may
// move puts on to replicated.
func (s *Store) answerAll() {
	s.flushed.wake()
	s.flushed.drain(-1, func(w *waiter) { s.flushFailed(w, errors.New("store: record not flushed")) })
	s.replicated.drain(-1, func(w *waiter) {
		w.res.Status, w.res.Err, w.needs = FlushSlaveTimeout, errors.New("store: closed before the slaves acknowledged"), 0
		s.answer(w)
	})
}

func (s *Store) wakeFlusher() {
	select {
	case s.flushWake <- struct{}{}:
	default:
	}
}

// watermark is the confirm offset (ConfirmOffset): what the dispatcher
// makes visible and ReadRecord serves.
func (s *Store) watermark() int64 {
	c := s.written.Load()
	if s.cfg.FlushDiskType == SyncFlush {
		c = s.flushed.Load()
	}
	if lim := s.confirmCap.Load(); lim >= 0 {
		c = min(c, max(lim, s.dispatched.Load()))
	}
	return c
}

func (s *Store) wakeDispatcher() {
	select {
	case s.dispatchWake <- struct{}{}:
	default:
	}
}

// flushLoop is the commit-log flusher: group commit for SYNC_FLUSH, a timer
// with a page threshold (and a thorough flush every
// FlushCommitLogThoroughInterval) for ASYNC_FLUSH.
func (s *Store) flushLoop() {
	defer s.wg.Done()
	if s.cfg.FlushDiskType == SyncFlush {
		for {
			select {
			case <-s.stop:
				return
			case <-s.flushWake:
			}
			target, err := s.flushCommitLogTo()
			s.wakeDispatcher()
			if err != nil {
				s.flushed.drain(target, func(w *waiter) { s.flushFailed(w, err) })
			}
		}
	}
	t := time.NewTicker(s.cfg.FlushIntervalCommitLog)
	defer t.Stop()
	last := time.Now()
	least := int64(s.cfg.FlushCommitLogLeastPages) * 4096
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		pending := s.written.Load() - s.flushed.Load()
		if pending <= 0 {
			continue
		}
		if pending < least && time.Since(last) < s.cfg.FlushCommitLogThoroughInterval {
			continue
		}
		last = time.Now()
		if err := s.flushCommitLog(); err != nil {
			s.log.Error("store: commit-log flush failed", "err", err)
		}
	}
}

// watchdog times out waiters when the disk or the slaves hang.
func (s *Store) watchdog() {
	defer s.wg.Done()
	// A quarter of the shorter limit (read each round: slaveTimeout
	// changes at run time).
	period := func() time.Duration { return max(min(s.cfg.SyncFlushTimeout, s.slaveTimeoutNow())/4, time.Millisecond) }
	t := time.NewTimer(period())
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.expireWaiters(now)
			t.Reset(period())
		}
	}
}

// flushCommitLog makes every written record durable. Only the flusher
// goroutine (or Close after it stopped) calls it.
func (s *Store) flushCommitLog() error {
	_, err := s.flushCommitLogTo()
	return err
}

// flushCommitLogTo is flushCommitLog, also returning the offset it tried
// to make durable. Under SYNC_FLUSH the staged bytes reach the page cache
// (pwrite) before the fdatasync, and mapped moves at once, so the HA
// service sends them to the slaves while the disk works.
func (s *Store) flushCommitLogTo() (int64, error) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	target, ts := s.written.Load(), s.lastTS
	var staged []byte
	var at int64
	if s.staging {
		staged, at = s.stage.swap(target, s.flushBuf)
	}
	s.mu.Unlock()
	if s.staging {
		// The stage now owns the old flushBuf; staged becomes ours, unless
		// a burst of large records grew it far beyond this group: then it
		// goes to the garbage collector (memory follows the load).
		s.flushBuf = staged[:0]
		if cap(staged) > stageKeepCap && len(staged) < cap(staged)/4 {
			s.flushBuf = nil
		}
		if len(staged) > 0 {
			if err := s.writeOut(staged, at); err != nil {
				s.setReadOnly(err)
				return target, err
			}
		}
		s.advanceMapped(target)
	}
	from := s.flushed.Load()
	if target <= from {
		if s.flushed.waiting.Load() > 0 {
			s.flushed.wake() // nothing new to sync; answer what is covered
		}
		return target, nil
	}
	if s.beforeSync != nil {
		s.beforeSync()
	}
	var began time.Time
	onFsync := s.onFsync.Load()
	if onFsync != nil {
		began = time.Now()
	}
	for _, seg := range s.cl.list() {
		if seg.end() <= from || seg.start >= target {
			continue
		}
		if !seg.tryAcquire() {
			continue
		}
		err := seg.sync()
		seg.release()
		if err != nil {
			s.setReadOnly(err)
			return target, err
		}
	}
	if onFsync != nil {
		(*onFsync)(time.Since(began))
	}
	s.flushedTS.Store(ts)
	s.flushed.advance(target)
	return target, nil
}

// fsyncObserver is told the duration of each commit-log sync.
type fsyncObserver = func(time.Duration)

// SetFsyncObserver has fn told how long each commit-log sync took (every
// segment the flush covered); nil removes it. fn runs on the flusher and
// must be quick.
func (s *Store) SetFsyncObserver(fn func(time.Duration)) {
	if fn == nil {
		s.onFsync.Store(nil)
		return
	}
	s.onFsync.Store(&fn)
}

// FlushBehind is the number of commit-log bytes written but not yet
// durable (Java's flushBehindBytes).
func (s *Store) FlushBehind() int64 { return max(s.written.Load()-s.flushed.Load(), 0) }

// StorageUsedBytes is the used space of the file system holding the
// store's root directory (Java's rocketmq_storage_size: total minus free).
func (s *Store) StorageUsedBytes() int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(s.cfg.RootDir, &st); err != nil {
		return 0
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize)
}

// cqFlushLoop periodically makes consume queues, the index and the
// checkpoint durable.
func (s *Store) cqFlushLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.FlushIntervalConsumeQueue)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if err := s.flushLogics(); err != nil {
			s.log.Error("store: consume-queue flush failed", "err", err)
			continue
		}
		if err := s.writeCheckpoint(); err != nil {
			s.log.Error("store: checkpoint write failed", "err", err)
		}
	}
}

// flushLogics syncs consume queues and the index and records in the
// checkpoint what they now durably cover.
func (s *Store) flushLogics() error {
	d, ts := s.dispatched.Load(), s.dispatchTS.Load()
	qs := s.queues()
	var errs []error
	for _, q := range qs {
		if err := q.flush(s.cfg.BackgroundIO); err != nil {
			errs = append(errs, err)
		}
	}
	if s.idx != nil {
		if err := s.idx.Flush(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.ckpt.setLogics(d, ts)
	return nil
}

// writeOut writes staged commit-log bytes starting at at to their segment.
func (s *Store) writeOut(b []byte, at int64) error {
	seg := s.cl.find(at)
	if seg == nil || !seg.tryAcquire() {
		return fmt.Errorf("store: no commit-log segment for staged offset %d", at)
	}
	defer seg.release()
	return writeStaged(seg, b, at)
}

// BackgroundIO is the lane the store's background disk calls take turns
// on (package iolane); other periodic disk writers of the same process
// (the timer wheel, the broker's config files) should take it too.
func (s *Store) BackgroundIO() *iolane.Lane { return s.cfg.BackgroundIO }

func (s *Store) writeCheckpoint() error {
	f := s.flushed.Load()
	return s.ckpt.write(f, min(f, s.watermark()), s.flushedTS.Load())
}
