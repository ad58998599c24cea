package store

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type flushReq struct {
	end  int64
	at   time.Time
	res  PutResult
	done func(PutResult)
}

// groupCommit queues SYNC_FLUSH completions: one fdatasync covers every
// record written before it, then each waiter whose record it covers is told.
// A watchdog answers FlushDiskTimeout to waiters older than
// SyncFlushTimeout even while an fdatasync hangs; each waiter is answered
// exactly once.
type groupCommit struct {
	mu       sync.Mutex
	reqs     []flushReq // queued; guarded by mu
	inflight []flushReq // being flushed; guarded by mu
	spare    []flushReq // guarded by mu
	wake     chan struct{}
}

func (g *groupCommit) enqueue(r flushReq) {
	g.mu.Lock()
	g.reqs = append(g.reqs, r)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// take moves the queued requests in flight (flusher goroutine only).
func (g *groupCommit) take() {
	g.mu.Lock()
	g.inflight, g.reqs = g.reqs, g.spare[:0]
	g.spare = nil
	g.mu.Unlock()
}

// complete answers the in-flight requests after a flush.
func (g *groupCommit) complete(s *Store, flushErr error) {
	g.mu.Lock()
	reqs := g.inflight
	g.inflight = nil
	g.mu.Unlock()
	timeout := s.cfg.SyncFlushTimeout
	now := time.Now()
	flushed := s.flushed.Load()
	for i := range reqs {
		r := &reqs[i]
		res := r.res
		switch {
		case flushErr != nil:
			res.Status, res.Err = FlushDiskTimeout, flushErr
		case r.end > flushed:
			res.Status, res.Err = FlushDiskTimeout, errors.New("store: record not flushed")
		case now.Sub(r.at) > timeout:
			res.Status = FlushDiskTimeout
			res.Err = fmt.Errorf("store: flush took longer than %v", timeout)
		}
		r.done(res)
		*r = flushReq{}
	}
	g.mu.Lock()
	if g.spare == nil {
		g.spare = reqs[:0]
	}
	g.mu.Unlock()
}

// expire answers FlushDiskTimeout to every request, queued or in flight,
// older than the timeout (the disk is hanging).
func (g *groupCommit) expire(timeout time.Duration) {
	now := time.Now()
	var late []flushReq
	g.mu.Lock()
	keep := func(rs []flushReq) []flushReq {
		n := 0
		for _, r := range rs {
			if now.Sub(r.at) > timeout {
				late = append(late, r)
				continue
			}
			rs[n] = r
			n++
		}
		clear(rs[n:])
		return rs[:n]
	}
	g.reqs = keep(g.reqs)
	g.inflight = keep(g.inflight)
	g.mu.Unlock()
	for _, r := range late {
		res := r.res
		res.Status = FlushDiskTimeout
		res.Err = fmt.Errorf("store: no flush within %v", timeout)
		r.done(res)
	}
}

// completeAll answers everything still queued (Close).
func (g *groupCommit) completeAll(s *Store, err error) {
	g.take()
	g.complete(s, err)
}

func (s *Store) watermark() int64 {
	if s.cfg.FlushDiskType == SyncFlush {
		return s.flushed.Load()
	}
	return s.written.Load()
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
		s.wg.Add(1)
		go s.flushWatchdog()
		for {
			select {
			case <-s.stop:
				return
			case <-s.gc.wake:
			}
			s.gc.take()
			err := s.flushCommitLog()
			s.wakeDispatcher()
			s.gc.complete(s, err)
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

// flushWatchdog times out SYNC_FLUSH waiters when the disk hangs.
func (s *Store) flushWatchdog() {
	defer s.wg.Done()
	t := time.NewTicker(max(s.cfg.SyncFlushTimeout/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.gc.expire(s.cfg.SyncFlushTimeout)
		}
	}
}

// flushCommitLog makes every written record durable. Only the flusher
// goroutine (or Close after it stopped) calls it.
func (s *Store) flushCommitLog() error {
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
				return err
			}
		}
	}
	from := s.flushed.Load()
	if target <= from {
		return nil
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
			return err
		}
	}
	s.flushedTS.Store(ts)
	s.flushed.Store(target)
	return nil
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
	s.cqMu.RLock()
	qs := make([]*consumeQueue, 0, len(s.cqs))
	for _, q := range s.cqs {
		qs = append(qs, q)
	}
	s.cqMu.RUnlock()
	var errs []error
	for _, q := range qs {
		if err := q.flush(); err != nil {
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

func (s *Store) writeCheckpoint() error {
	return s.ckpt.write(s.flushed.Load(), s.flushedTS.Load())
}
