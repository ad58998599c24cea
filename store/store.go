package store

import (
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/store/index"
	"golang.org/x/sys/unix"
)

// Errors reported by the store.
var (
	ErrClosed         = errors.New("store: closed")
	ErrReadOnly       = errors.New("store: read-only after a disk error")
	ErrDiskFull       = errors.New("store: read-only while the disk is full")
	ErrOffsetNotFound = errors.New("store: offset not found")
	ErrCorrupt        = errors.New("store: inconsistent data")
)

// ArrivalFunc is told about each consume-queue unit the dispatcher appends.
type ArrivalFunc func(topic string, queueID int32, maxOffset int64, tagsCode int64, props string)

type tqKey struct {
	topic string
	qid   int32
}

// Store is the message store. All methods are safe for concurrent use.
type Store struct {
	cfg  Config
	log  *slog.Logger
	cl   *commitLog
	idx  *index.Service // nil when MessageIndexEnable is false
	ckpt *checkpoint

	// mu is the append lock.
	mu           sync.Mutex
	cur          *segment         // segment taking writes; guarded by mu
	lastTS       int64            // store time of the last record; guarded by mu
	queueOffsets map[tqKey]*int64 // next queue offset per queue; guarded by mu
	// staging: SYNC_FLUSH encodes into stage, not the mapping (stage.go).
	staging  bool
	stage    stage
	flushBuf []byte // the flusher's staging buffer between group commits

	// Progress offsets (doc.go has the invariant chain). They only grow,
	// except by TruncateTo; written grows under mu.
	written    progress     // end of the last fully written record (page cache or stage)
	mapped     progress     // SYNC_FLUSH: end of the staged bytes in the page cache (pwritten)
	flushed    progress     // end of durable data
	replicated progress     // end of data acknowledged by the slaves a put needs
	confirmCap atomic.Int64 // upper bound of confirm set by SetConfirmLimit; -1 none
	flushedTS  atomic.Int64 // store time of the last durable record
	dispatched atomic.Int64 // end of the last dispatched record
	dispatchTS atomic.Int64 // store time of the last dispatched record
	// dispRound is closed and replaced after each dispatch round that
	// moved dispatched (AwaitDispatched); guarded by dispRoundMu.
	dispRoundMu sync.Mutex
	dispRound   chan struct{}
	recoveredAt int64 // written right after recovery

	cqMu sync.RWMutex
	cqs  map[tqKey]*consumeQueue // guarded by cqMu

	onArrival atomic.Pointer[ArrivalFunc]
	onDelete  atomic.Pointer[func(DeletedSegment)] // retention's hook (clean.go)

	// repairBelow: while recovery re-dispatches, records below it (the
	// checkpoint's dispatched offset) only fill gaps of existing queues.
	// -1 otherwise.
	repairBelow int64
	recovery    recoveryStats // what the last recovery read; set by recover
	// indexedTo: while recovery re-dispatches, records at or below it are
	// in the index already.
	indexedTo int64
	lockFile  *os.File

	// quarantine lists records with a bad body CRC while recovery
	// re-dispatches; their units become blank units.
	quarantine []int64

	readOnly atomic.Pointer[error] // why puts are refused after a disk error
	// diskFull: why puts are refused while the disk is full (wraps
	// ErrDiskFull); set by a failed allocation or the cleaner's check,
	// cleared by the cleaner once usage is back down (clean.go).
	diskFull       atomic.Pointer[error]
	allocFailed    atomic.Bool             // an allocation hit ENOSPC since the last check
	allocNeed      atomic.Int64            // largest failed allocation since puts were last accepted
	cleanWake      chan struct{}           // runs the cleaner now
	usage          func() (float64, int64) // disk usage in percent and free bytes; tests only (nil = statfs)
	cleanRounds    atomic.Int64            // cleaner rounds run; tests wait on it
	corruptSeen    atomic.Int64            // reads that met a corrupt record
	noVerify       bool                    // GetMessages skips verifyRecord; benchmarks only
	beforeSync     func()                  // runs before each commit-log fdatasync; tests only
	onTruncateStep func(step int)          // runs after each step of TruncateTo; tests only

	onFsync atomic.Pointer[fsyncObserver] // SetFsyncObserver (metrics)

	// puts counts appends between the lock and their hand-off to done or
	// the group commit; Close waits for it. Add only under mu while open.
	puts      sync.WaitGroup
	flushWake chan struct{}
	// flushMu is held by each flush (flushCommitLogTo) and by TruncateTo.
	flushMu sync.Mutex
	// dispMu is held by each dispatch round and by TruncateTo.
	dispMu sync.Mutex

	role           atomic.Int32 // Role
	inSyncReplicas atomic.Int32 // replicas (master included) a SYNC_MASTER put needs
	slaveTimeoutNs atomic.Int64 // SetSlaveTimeout; starts as cfg.SlaveTimeout
	fenced         atomic.Bool  // SetFenced
	// Stored messages and their bytes (PutStats): local puts on a
	// master, dispatched replicated records on a slave (Java's
	// StoreStatsService putMessageTimesTotal/putMessageSizeTotal).
	putTimes, putBytes atomic.Int64
	latency            latencyStats // put and get latencies (latency.go)
	rawWatch           atomic.Pointer[[]chan struct{}]
	// received: slave only; end of the bytes AppendRaw stored, written
	// plus an incomplete record still arriving. guarded by mu.
	received     int64
	dispatchWake chan struct{}
	// residentWake asks the resident goroutine to page in more ahead of
	// the writer; the writer sends when written passes faultMark.
	residentWake chan struct{}
	faultMark    atomic.Int64
	faultedTo    int64 // end of the paged-in window; resident goroutine only
	releasedTo   int64 // end of the last release; resident goroutine only
	stop         chan struct{}
	wg           sync.WaitGroup
	closed       atomic.Bool
	closeOnce    sync.Once
	closeErr     error
}

// Open opens (or creates) the store at cfg.RootDir, recovers it and starts
// the flusher, dispatcher, consume-queue flusher and cleaner.
func Open(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.RootDir, 0o755); err != nil {
		return nil, fmt.Errorf("store: root dir: %w", err)
	}
	if cfg.BackgroundIO == nil {
		cfg.BackgroundIO = iolane.New()
	}
	cl, err := newCommitLog(cfg.CommitLogDir, cfg.MappedFileSizeCommitLog, cfg.Logger, cfg.BackgroundIO)
	if err != nil {
		return nil, err
	}
	s := &Store{
		cfg: cfg, log: cfg.Logger, cl: cl, usage: cfg.usage,
		queueOffsets: make(map[tqKey]*int64),
		cqs:          make(map[tqKey]*consumeQueue),
		dispatchWake: make(chan struct{}, 1),
		residentWake: make(chan struct{}, 1),
		cleanWake:    make(chan struct{}, 1),
		stop:         make(chan struct{}),
		repairBelow:  -1,
		staging:      cfg.FlushDiskType == SyncFlush,
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	s.flushWake = make(chan struct{}, 1)
	s.flushed.pass = s.flushPassed
	s.replicated.pass = s.replPassed
	s.confirmCap.Store(-1)
	s.role.Store(int32(cfg.BrokerRole))
	s.inSyncReplicas.Store(int32(cfg.InSyncReplicas))
	s.slaveTimeoutNs.Store(int64(cfg.SlaveTimeout))
	if err := s.recover(); err != nil {
		s.closeFiles()
		return nil, err
	}
	if err := os.WriteFile(s.abortPath(), nil, 0o644); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("store: create abort file: %w", err)
	}
	cl.startPreallocator()
	s.wg.Add(5)
	go s.watchdog()
	go s.flushLoop()
	go s.dispatchLoop()
	go s.cqFlushLoop()
	go s.residentLoop()
	s.startCleaner()
	return s, nil
}

// lock takes the store's process lock (root/lock, like Java), so two
// stores never share a directory.
func (s *Store) lock() error {
	f, err := os.OpenFile(filepath.Join(s.cfg.RootDir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("store: lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("store: %s is in use by another store: %w", s.cfg.RootDir, err)
	}
	// compat: the Java broker holds a POSIX (fcntl) lock on byte 0 of the
	// same file, which flock does not see on Linux; take that one too so
	// neither broker opens a directory the other is serving.
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		return fmt.Errorf("store: %s is in use by another broker: %w", s.cfg.RootDir, err)
	}
	s.lockFile = f
	return nil
}

func (s *Store) abortPath() string { return filepath.Join(s.cfg.RootDir, "abort") }
func (s *Store) cqRoot() string    { return filepath.Join(s.cfg.RootDir, "consumequeue") }

// OnArrival sets the function the dispatcher calls after each consume-queue
// append (wakes long polls). Set it before traffic; it must not block.
func (s *Store) OnArrival(fn ArrivalFunc) {
	if fn == nil {
		s.onArrival.Store(nil)
		return
	}
	s.onArrival.Store(&fn)
}

// MaxPhyOffset is the end of the last written record.
func (s *Store) MaxPhyOffset() int64 { return s.written.Load() }

// MinPhyOffset is the start of the oldest commit-log segment.
func (s *Store) MinPhyOffset() int64 { return s.cl.minOffset() }

// FlushedOffset is the end of durable commit-log data.
func (s *Store) FlushedOffset() int64 { return s.flushed.Load() }

// DispatchedOffset is the end of the records the dispatcher has turned
// into consume-queue units and index entries: what consumers see.
func (s *Store) DispatchedOffset() int64 { return s.dispatched.Load() }

// ConfirmOffset is Java's CommitLog.getConfirmOffset: the end of the data
// the store confirms — the dispatcher never passes it and ReadRecord never
// serves past it. Classic (non-controller) mode: the flushed offset under
// SYNC_FLUSH, the written offset under ASYNC_FLUSH. With a limit set by
// SetConfirmLimit (controller mode: on a master the offset every in-sync
// slave acknowledged, on a slave the master's confirm offset) it is the
// smaller of the two, never below what was dispatched.
func (s *Store) ConfirmOffset() int64 { return s.watermark() }

// SetConfirmLimit bounds ConfirmOffset by off (controller mode; -1 removes
// the bound, the classic mode) and wakes the dispatcher. Records already
// dispatched stay visible. SetRole to a master removes the bound.
func (s *Store) SetConfirmLimit(off int64) {
	s.confirmCap.Store(max(off, -1))
	s.wakeDispatcher()
}

// DispatchBehind is the number of commit-log bytes not yet dispatched.
func (s *Store) DispatchBehind() int64 { return s.written.Load() - s.dispatched.Load() }

// Writable reports whether Put can succeed, with the reason if not.
func (s *Store) Writable() error {
	if s.Role() == Slave {
		return ErrSlave
	}
	if s.fenced.Load() {
		return ErrFenced
	}
	return s.healthy()
}

// PutStats is the number of messages stored and their bytes: local puts
// (counted when appended), and on a slave the replicated records as they
// are dispatched (Java's putMessageTimesTotal and putMessageSizeTotal).
func (s *Store) PutStats() (times, bytes int64) { return s.putTimes.Load(), s.putBytes.Load() }

// SetFenced refuses (true) or accepts again (false) local puts of every
// kind — sends, send-backs, transaction decisions, delay and timer
// re-puts — while a controller-mode master may have been replaced (Java's
// fenced running flag). AppendRaw on a slave is not affected.
func (s *Store) SetFenced(on bool) { s.fenced.Store(on) }

// healthy reports whether the store can append (either role).
func (s *Store) healthy() error {
	if s.closed.Load() {
		return ErrClosed
	}
	if p := s.readOnly.Load(); p != nil {
		return *p
	}
	if p := s.diskFull.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *Store) setReadOnly(err error) {
	e := fmt.Errorf("%w: %w", ErrReadOnly, err)
	if s.readOnly.CompareAndSwap(nil, &e) {
		s.log.Error("store: turning read-only", "err", err)
	}
}

func (s *Store) findCQ(topic string, qid int32) *consumeQueue {
	s.cqMu.RLock()
	q := s.cqs[tqKey{topic, qid}]
	s.cqMu.RUnlock()
	return q
}

func (s *Store) cqFor(topic string, qid int32) *consumeQueue {
	if q := s.findCQ(topic, qid); q != nil {
		return q
	}
	s.cqMu.Lock()
	defer s.cqMu.Unlock()
	k := tqKey{topic, qid}
	if q := s.cqs[k]; q != nil {
		return q
	}
	k.topic = strings.Clone(topic)
	q := newConsumeQueue(s.cqRoot(), k.topic, qid, s.cfg.MappedFileSizeConsumeQueue)
	s.cqs[k] = q
	return q
}

// MinOffset is the first queue offset still readable (0 for unknown queues).
func (s *Store) MinOffset(topic string, qid int32) int64 {
	if q := s.findCQ(topic, qid); q != nil {
		return q.minOffset.Load()
	}
	return 0
}

// MaxOffset is the number of units in the queue (next offset to be
// dispatched; 0 for unknown queues).
func (s *Store) MaxOffset(topic string, qid int32) int64 {
	if q := s.findCQ(topic, qid); q != nil {
		return q.maxOffset.Load()
	}
	return 0
}

// Topics lists the topics that have consume queues, sorted.
func (s *Store) Topics() []string {
	s.cqMu.RLock()
	seen := make(map[string]bool)
	for k := range s.cqs {
		seen[k.topic] = true
	}
	s.cqMu.RUnlock()
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// QueueIDs lists the queue ids of topic, sorted.
func (s *Store) QueueIDs(topic string) []int32 {
	s.cqMu.RLock()
	var out []int32
	for k := range s.cqs {
		if k.topic == topic {
			out = append(out, k.qid)
		}
	}
	s.cqMu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// DeleteTopic removes the consume queues of topic (its records stay in the
// commit log until retention removes them).
func (s *Store) DeleteTopic(topic string) error {
	s.mu.Lock()
	for k := range s.queueOffsets {
		if k.topic == topic {
			delete(s.queueOffsets, k)
		}
	}
	s.mu.Unlock()
	s.cqMu.Lock()
	var qs []*consumeQueue
	for k, q := range s.cqs {
		if k.topic == topic {
			qs = append(qs, q)
			delete(s.cqs, k)
		}
	}
	s.cqMu.Unlock()
	for _, q := range qs {
		q.destroy()
	}
	if err := os.RemoveAll(filepath.Join(s.cqRoot(), topic)); err != nil {
		return fmt.Errorf("store: delete topic %s: %w", topic, err)
	}
	return nil
}

// Close stops the background work, flushes everything, writes the
// checkpoint and removes the abort file (a clean shutdown).
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	s.mu.Lock()
	s.closed.Store(true)
	s.mu.Unlock()
	s.puts.Wait() // appends already past the lock reach the group commit
	close(s.stop)
	s.wg.Wait()
	var errs []error
	// Final flush and dispatch (the loops have stopped).
	if err := s.flushCommitLog(); err != nil {
		errs = append(errs, err)
	}
	s.answerAll()
	s.dispatchUpTo(s.watermark())
	if err := s.flushLogics(); err != nil {
		errs = append(errs, err)
	}
	if err := s.writeCheckpoint(); err != nil {
		errs = append(errs, err)
	}
	clean := len(errs) == 0 && s.readOnly.Load() == nil
	s.closeFiles()
	if clean {
		if err := os.Remove(s.abortPath()); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("store: remove abort file: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (s *Store) closeFiles() {
	s.cl.close()
	s.cqMu.Lock()
	for _, q := range s.cqs {
		q.mu.Lock()
		q.closeFiles()
		q.mu.Unlock()
	}
	s.cqMu.Unlock()
	if s.idx != nil {
		s.idx.Close()
	}
	if s.ckpt != nil {
		s.ckpt.close()
	}
	if s.lockFile != nil {
		s.lockFile.Close() // releases the flock
	}
}

// ReadRecord returns a copy of the record at phyOffset; size 0 reads the
// record's own length. For view-by-id and query paths, and for requests
// that name a record just stored (END_TRANSACTION, CONSUMER_SEND_MSG_BACK):
// a record is readable as soon as it is below the durable watermark
// (written; flushed under SYNC_FLUSH), before it is dispatched.
func (s *Store) ReadRecord(phyOffset int64, size int32) ([]byte, error) {
	if phyOffset < 0 || phyOffset >= s.watermark() {
		return nil, fmt.Errorf("store: read %d: %w", phyOffset, ErrOffsetNotFound)
	}
	v, seg, err := s.cl.view(phyOffset, int(size))
	if err != nil {
		return nil, err
	}
	defer seg.release()
	if err := verifyRecord(v, phyOffset); err != nil {
		s.logCorrupt("", -1, -1, phyOffset, err)
		return nil, fmt.Errorf("store: read %d: %w: %w", phyOffset, ErrCorrupt, err)
	}
	return append([]byte(nil), v...), nil
}

// QueryByKey returns commit-log offsets of records of topic indexed under
// key (KEYS entry or UNIQ_KEY) stored in [begin, end] ms, newest first.
// Hash collisions are possible; callers compare the record's keys.
func (s *Store) QueryByKey(topic, key string, max int, begin, end int64) ([]int64, error) {
	if s.idx == nil {
		return nil, errors.New("store: message index disabled")
	}
	out := s.idx.Query(topic, key, max, begin, end)
	// Never point at data that is not visible or already removed.
	d, minPhy := s.dispatched.Load(), s.cl.minOffset()
	n := 0
	for _, o := range out {
		if o >= minPhy && o < d {
			out[n] = o
			n++
		}
	}
	return out[:n], nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
