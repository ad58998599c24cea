package store

import (
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// deleteFilesBatchMax bounds commit-log segments deleted per round (Java).
const deleteFilesBatchMax = 10

func (s *Store) startCleaner() {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.cfg.CleanResourceInterval)
		defer t.Stop()
		for {
			s.cleanOnce()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// diskUsedPercent returns how full the commit-log file system is.
func diskUsedPercent(dir string) (int, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	total := st.Blocks * uint64(st.Bsize)
	if total == 0 {
		return 0, nil
	}
	free := st.Bavail * uint64(st.Bsize)
	return int((total - free) * 100 / total), nil
}

func (s *Store) isDeleteHour(now time.Time) bool {
	for _, h := range strings.Split(s.cfg.DeleteWhen, ";") {
		if v, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && v == now.Hour() {
			return true
		}
	}
	return false
}

// cleanOnce is one retention round: refuse writes past DiskFullRatio,
// delete expired segments at DeleteWhen or when the disk is above
// DiskMaxUsedSpaceRatio (any age above DiskCleanForciblyRatio), then drop
// consume-queue and index files wholly below the new minimum.
func (s *Store) cleanOnce() {
	used, err := diskUsedPercent(s.cfg.CommitLogDir)
	if err != nil {
		s.log.Warn("store: statfs failed", "err", err)
	}
	full := used >= s.cfg.DiskFullRatio
	if full != s.diskFull.Load() {
		s.diskFull.Store(full)
		if full {
			s.log.Error("store: disk full, refusing writes", "usedPercent", used, "limit", s.cfg.DiskFullRatio)
		} else {
			s.log.Info("store: disk usage back under the limit, accepting writes", "usedPercent", used)
		}
	}
	now := s.cfg.Now()
	spaceLow := used >= s.cfg.DiskMaxUsedSpaceRatio
	forcibly := s.cfg.DiskCleanForciblyRatio > 0 && used >= s.cfg.DiskCleanForciblyRatio
	if !s.isDeleteHour(now) && !spaceLow {
		return
	}
	s.DeleteExpired(now, forcibly)
}

// DeleteExpired deletes commit-log segments last modified before
// now-FileReservedTime (any age when force), never the segment taking
// writes nor data not yet dispatched, then consume-queue and index files
// wholly below the new minimum. It returns the number of segments removed.
func (s *Store) DeleteExpired(now time.Time, force bool) int {
	removed := 0
	for removed < deleteFilesBatchMax {
		segs := s.cl.list()
		if len(segs) < 2 {
			break
		}
		first := segs[0]
		if first.end() > s.dispatched.Load() || first.end() > s.flushed.Load() {
			break
		}
		if !force {
			st, err := first.f.Stat()
			if err != nil || now.Sub(st.ModTime()) < s.cfg.FileReservedTime {
				break
			}
		}
		s.log.Info("store: deleting commit-log segment", "start", first.start, "force", force)
		s.cl.removeFirst()
		removed++
	}
	if removed > 0 {
		s.deleteLogicsBelow(s.cl.minOffset())
	}
	return removed
}

func (s *Store) deleteLogicsBelow(minPhy int64) {
	s.cqMu.RLock()
	qs := make([]*consumeQueue, 0, len(s.cqs))
	for _, q := range s.cqs {
		qs = append(qs, q)
	}
	s.cqMu.RUnlock()
	for _, q := range qs {
		q.deleteBelow(minPhy)
	}
	if s.idx != nil {
		s.idx.DeleteBelow(minPhy)
	}
}
