package store

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/store/internal/falloc"
)

// deleteFilesBatchMax bounds commit-log segments deleted per round (Java).
const deleteFilesBatchMax = 10

// DeletedSegment describes a commit-log segment retention is about to
// delete: its offset range, whether it is deleted before its retention
// time because the disk is nearly full, and, per consume queue, the queue
// offsets [From, To) of the units that point into it.
type DeletedSegment struct {
	Start, End int64
	Forced     bool
	Queues     []QueueRange
}

// QueueRange is a range of queue offsets of one consume queue.
type QueueRange struct {
	Topic    string
	QueueID  int32
	From, To int64
}

// OnDeleteSegment sets the function retention calls before it deletes a
// commit-log segment, with the consume-queue ranges that point into it (the
// broker logs how many messages of which consumer groups were not consumed
// yet). It runs on the cleaner goroutine and must not call into retention.
func (s *Store) OnDeleteSegment(fn func(DeletedSegment)) {
	if fn == nil {
		s.onDelete.Store(nil)
		return
	}
	s.onDelete.Store(&fn)
}

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
			case <-s.cleanWake:
			}
		}
	}()
}

// diskUsage returns how full the file system holding dir is and how many
// bytes are free for us.
func diskUsage(dir string) (usedPercent float64, free int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1, 0, err
	}
	return javaUsedPercent(st.Blocks, st.Bfree, st.Bavail), int64(st.Bavail * uint64(st.Bsize)), nil
}

// javaUsedPercent is Java's UtilAll.getDiskPartitionSpaceUsedPercent (as df's
// Use%): the used blocks over the used plus the available ones, rounded up
// to a whole percent. Blocks reserved for root count on neither side, so a
// file system with many reserved blocks is not taken for a full one (we
// once divided by every block, which read a half-empty disk with a large
// reserve as 85 % used and deleted a slave's segments the Java master kept).
func javaUsedPercent(blocks, bfree, bavail uint64) float64 {
	used := blocks - min(bfree, blocks)
	entire := used + bavail
	if entire == 0 {
		return 0
	}
	pct := used * 100 / entire
	if used*100%entire != 0 {
		pct++
	}
	return float64(pct)
}

// diskUsed is the fuller of the commit-log and store-root file systems,
// and the free bytes of the one with less room.
func (s *Store) diskUsed() (float64, int64) {
	if s.usage != nil {
		return s.usage()
	}
	used, free, err := diskUsage(s.cfg.CommitLogDir)
	if err != nil {
		s.log.Warn("store: statfs failed", "dir", s.cfg.CommitLogDir, "err", err)
	}
	if s.cfg.RootDir != s.cfg.CommitLogDir {
		if u, f, err := diskUsage(s.cfg.RootDir); err == nil {
			used, free = max(used, u), min(free, f)
		}
	}
	return used, free
}

func (s *Store) isDeleteHour(now time.Time) bool {
	for _, h := range strings.Split(s.cfg.DeleteWhen, ";") {
		if v, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && v == now.Hour() {
			return true
		}
	}
	return false
}

// noSpace records that an allocation found the disk full: puts are refused
// at once (not only at the next check) and the cleaner runs now. The
// condition clears like a full disk does, at a check that finds the usage
// at or below DiskSpaceCleanForciblyRatio.
func (s *Store) noSpace(err error) {
	s.allocFailed.Store(true)
	if ns := (*falloc.NoSpaceError)(nil); errors.As(err, &ns) {
		for {
			old := s.allocNeed.Load()
			if ns.Bytes <= old || s.allocNeed.CompareAndSwap(old, ns.Bytes) {
				break
			}
		}
	}
	if s.markDiskFull(fmt.Errorf("%w: %w", ErrDiskFull, err)) {
		select {
		case s.cleanWake <- struct{}{}:
		default:
		}
	}
}

// markDiskFull refuses puts with err; true if they were accepted before.
func (s *Store) markDiskFull(err error) bool {
	if s.diskFull.CompareAndSwap(nil, &err) {
		s.log.Error("store: disk full, refusing writes until space is freed", "err", err)
		return true
	}
	return false
}

// cleanOnce is one retention round, after Java's CleanCommitLogService:
// it sets or clears the disk-full state from the disk usage, then deletes
// expired segments at DeleteWhen, when the disk is above
// DiskMaxUsedSpaceRatio or after a failed allocation (any age above
// DiskSpaceCleanForciblyRatio, with CleanFileForciblyEnable), then drops
// consume-queue and index files wholly below the new minimum.
func (s *Store) cleanOnce() {
	defer s.cleanRounds.Add(1)
	used, free := s.diskUsed()
	allocFailed := s.allocFailed.Swap(false)
	need := s.allocNeed.Load()
	cleanNow := used > float64(s.cfg.DiskSpaceCleanForciblyRatio)
	switch {
	case used > float64(s.cfg.DiskSpaceWarningLevelRatio):
		s.markDiskFull(fmt.Errorf("%w: %.1f%% used, above diskSpaceWarningLevelRatio %d%%", ErrDiskFull, used, s.cfg.DiskSpaceWarningLevelRatio))
	case cleanNow:
		// Between the forcible and the warning ratio: Java leaves the
		// flag as it is.
	case free < need:
		// The allocation that failed would fail again (a disk smaller
		// than a few segments can be full below the ratios).
	default:
		s.allocNeed.Store(0)
		if s.diskFull.Swap(nil) != nil {
			s.log.Info("store: disk space available again, accepting writes", "usedPercent", math.Round(used*10)/10, "freeBytes", free)
		}
	}
	now := s.cfg.Now()
	// A failed allocation deletes expired segments now, whatever the hour;
	// only the usage ratio deletes before fileReservedTime (as in Java: a
	// full quota or a disk smaller than its segments loses no data early).
	spaceLow := allocFailed || cleanNow || used < 0 || used > float64(s.cfg.DiskMaxUsedSpaceRatio)
	if !s.isDeleteHour(now) && !spaceLow {
		return
	}
	forcibly := s.cfg.CleanFileForciblyEnable && cleanNow
	n := s.DeleteExpired(now, forcibly)
	if n == 0 && spaceLow {
		s.log.Warn("store: disk nearly full but no commit-log segment could be deleted", "usedPercent", math.Round(used*10)/10)
	}
	if n > 0 && (allocFailed || s.diskFull.Load() != nil) {
		// Deleting freed space: look again now instead of a whole
		// interval later.
		select {
		case s.cleanWake <- struct{}{}:
		default:
		}
	}
}

// DeleteExpired deletes commit-log segments last modified before
// now-FileReservedTime (any age when force), never the segment taking
// writes nor data not yet dispatched, then consume-queue and index files
// wholly below the new minimum. It returns the number of segments removed.
// A segment deleted before its time is logged at WARN with its offset
// range and the consume-queue ranges that pointed into it.
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
		forced := false
		st, err := first.f.Stat()
		if err != nil || now.Sub(st.ModTime()) < s.cfg.FileReservedTime {
			if !force {
				break
			}
			forced = true
		}
		info := DeletedSegment{Start: first.start, End: first.end(), Forced: forced}
		fn := s.onDelete.Load()
		if forced || fn != nil {
			info.Queues = s.queueRangesIn(first.start, first.end())
		}
		if forced {
			var units int64
			for _, r := range info.Queues {
				units += r.To - r.From
			}
			s.log.Warn("store: disk nearly full, deleting a commit-log segment before its retention time",
				"start", info.Start, "end", info.End, "messages", units, "queues", len(info.Queues),
				"fileReservedTimeHours", s.cfg.FileReservedTime.Hours())
		} else {
			s.log.Info("store: deleting expired commit-log segment", "start", info.Start, "end", info.End)
		}
		if fn != nil {
			(*fn)(info)
		}
		s.cl.removeFirst()
		removed++
	}
	if removed > 0 {
		s.deleteLogicsBelow(s.cl.minOffset())
	}
	return removed
}

// queueRangesIn lists, per consume queue, the units whose record lies in
// the commit-log range [start, end).
func (s *Store) queueRangesIn(start, end int64) []QueueRange {
	qs := s.queues()
	var out []QueueRange
	for _, q := range qs {
		if from, to := q.unitsIn(start, end); to > from {
			out = append(out, QueueRange{Topic: q.topic, QueueID: q.queueID, From: from, To: to})
		}
	}
	return out
}

func (s *Store) deleteLogicsBelow(minPhy int64) {
	qs := s.queues()
	for _, q := range qs {
		q.deleteBelow(minPhy)
	}
	if s.idx != nil {
		s.idx.DeleteBelow(minPhy)
	}
}

// isNoSpace reports whether err is an allocation failure on a full disk.
func isNoSpace(err error) bool { return errors.Is(err, errNoSpace) }

// DiskUsedRatios reports how full the file systems holding the commit log,
// the consume queues and the index are, as fractions (Java's diskUtil in
// the SERVICE_NOT_AVAILABLE remark: "CL: %5.2f CQ: %5.2f INDEX: %5.2f");
// -1 where statfs fails.
func (s *Store) DiskUsedRatios() (commitLog, consumeQueue, index float64) {
	ratio := func(dir string) float64 {
		u, _, err := diskUsage(dir)
		if err != nil {
			// Not created yet (no queue, index off): its parent's disk.
			if u, _, err = diskUsage(s.cfg.RootDir); err != nil {
				return -1
			}
		}
		return u / 100
	}
	return ratio(s.cfg.CommitLogDir), ratio(s.cqRoot()), ratio(filepath.Join(s.cfg.RootDir, "index"))
}
