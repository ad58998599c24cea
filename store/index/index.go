package index

import (
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
)

// Config configures the index service.
type Config struct {
	Dir            string
	MaxHashSlotNum int // Java default 5,000,000
	MaxIndexNum    int // Java default 20,000,000
	Logger         *slog.Logger
	Now            func() time.Time
	// Lane serialises Flush's msyncs with the store's other background
	// disk calls (package iolane); nil: unserialised.
	Lane *iolane.Lane
}

// Service owns the index files. Safe for concurrent use; writes come from
// one dispatcher.
type Service struct {
	cfg Config
	// flushMu keeps files mapped while Flush syncs them without mu, so a
	// slow msync never blocks Put (the dispatcher). Taken before mu by
	// whatever unmaps files.
	flushMu sync.Mutex
	mu      sync.RWMutex
	files   []*file // oldest first; the last one takes writes; guarded by mu

	syncFile func(*file) error // Flush's msync; tests slow it down
}

// Open loads the existing index files of cfg.Dir.
func Open(cfg Config) (*Service, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxHashSlotNum <= 0 || cfg.MaxIndexNum <= 1 {
		return nil, fmt.Errorf("index: bad sizes %d/%d", cfg.MaxHashSlotNum, cfg.MaxIndexNum)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: dir: %w", err)
	}
	ents, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("index: list: %w", err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && len(e.Name()) == 17 && strings.Trim(e.Name(), "0123456789") == "" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	s := &Service{cfg: cfg, syncFile: func(x *file) error { return cfg.Lane.Do(x.sync) }}
	for _, n := range names {
		x, err := openFile(filepath.Join(cfg.Dir, n), cfg.MaxHashSlotNum, cfg.MaxIndexNum, false)
		if err != nil {
			// A damaged index only loses lookups; keep going without it.
			cfg.Logger.Warn("index: dropping unreadable file", "file", n, "err", err)
			os.Remove(filepath.Join(cfg.Dir, n))
			continue
		}
		s.files = append(s.files, x)
	}
	return s, nil
}

// MaxPhyOffset is the commit-log offset of the newest indexed record (-1
// when empty): records at or below it are already indexed.
func (s *Service) MaxPhyOffset() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := len(s.files) - 1; i >= 0; i-- {
		if s.files[i].header.indexCount > 1 {
			return s.files[i].header.endPhy
		}
	}
	return -1
}

// Put indexes the record at phy: UNIQ_KEY uniq and each space-separated
// key of keys, as topic#key. Already-indexed offsets are skipped.
func (s *Service) Put(topic, keys, uniq string, phy, storeTS int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.files); n > 0 && s.files[n-1].header.indexCount > 1 && phy <= s.files[n-1].header.endPhy {
		return nil
	}
	// Allocate room for every entry of the record first: a full disk then
	// fails the record whole, and a retry indexes all of it.
	if err := s.reserveLocked(entriesOf(keys, uniq)); err != nil {
		return err
	}
	th := message.JavaStringHashFrom(message.JavaStringHash(topic), "#")
	if uniq != "" {
		if err := s.putLocked(message.JavaStringHashFrom(th, uniq), phy, storeTS); err != nil {
			return err
		}
	}
	for keys != "" {
		k := keys
		if i := strings.IndexByte(keys, ' '); i >= 0 {
			k, keys = keys[:i], keys[i+1:]
		} else {
			keys = ""
		}
		if k == "" {
			continue
		}
		if err := s.putLocked(message.JavaStringHashFrom(th, k), phy, storeTS); err != nil {
			return err
		}
	}
	return nil
}

// entriesOf counts the index entries Put writes for a record.
func entriesOf(keys, uniq string) int {
	n := 0
	if uniq != "" {
		n++
	}
	// Words separated by spaces, counted without splitting (the dispatcher
	// runs this for every keyed record: no allocation).
	inWord := false
	for i := 0; i < len(keys); i++ {
		if keys[i] == ' ' {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	return n
}

// reserveLocked makes sure the file taking writes has k entries free and
// allocated, rolling to a new file when it has fewer left.
func (s *Service) reserveLocked(k int) error {
	if k == 0 {
		return nil
	}
	n := len(s.files)
	if n == 0 || int(s.files[n-1].header.indexCount)+k > s.files[n-1].max {
		if _, err := s.newFile(); err != nil {
			return err
		}
		n = len(s.files)
	}
	x := s.files[n-1]
	return x.ensure(x.entryPos(x.header.indexCount + int32(k)))
}

func (s *Service) putLocked(hash int32, phy, ts int64) error {
	if n := len(s.files); n > 0 {
		if ok, err := s.files[n-1].put(hash, phy, ts); ok || err != nil {
			return err
		}
	}
	x, err := s.newFile()
	if err != nil {
		return err
	}
	ok, err := x.put(hash, phy, ts)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("index: invariant violated: new file %s is full", x.path)
	}
	return nil
}

func (s *Service) newFile() (*file, error) {
	if n := len(s.files); n > 0 {
		// Make the full file durable before moving on, as Java does.
		if err := s.files[n-1].sync(); err != nil {
			return nil, err
		}
	}
	now := s.cfg.Now()
	var x *file
	var err error
	for i := 0; i < 1000; i++ {
		name := now.Add(time.Duration(i) * time.Millisecond).Format("20060102150405.000")
		name = strings.Replace(name, ".", "", 1)
		x, err = openFile(filepath.Join(s.cfg.Dir, name), s.cfg.MaxHashSlotNum, s.cfg.MaxIndexNum, true)
		if err == nil || !os.IsExist(unwrap(err)) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	s.files = append(s.files, x)
	return x, nil
}

func unwrap(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// DropFrom deletes the files holding entries at or past phy (a truncated
// commit log) and returns the smallest commit-log offset they covered: the
// caller re-indexes from there. ok is false when nothing was dropped.
func (s *Service) DropFrom(phy int64) (rebuildFrom int64, ok bool) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	rebuildFrom = phy
	for len(s.files) > 0 {
		x := s.files[len(s.files)-1]
		if x.header.indexCount <= 1 || x.header.endPhy < phy {
			break
		}
		rebuildFrom = min(rebuildFrom, x.header.beginPhy)
		ok = true
		x.close()
		os.Remove(x.path)
		s.files = s.files[:len(s.files)-1]
	}
	return rebuildFrom, ok
}

// Query returns up to max commit-log offsets of records indexed under
// topic#key with store time in [begin, end], newest first. Hash collisions
// are possible: callers compare the keys of the records.
func (s *Service) Query(topic, key string, max int, begin, end int64) []int64 {
	if max <= 0 {
		return nil
	}
	h := message.JavaStringHashFrom(message.JavaStringHashFrom(message.JavaStringHash(topic), "#"), key)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []int64
	for i := len(s.files) - 1; i >= 0 && len(out) < max; i-- {
		x := s.files[i]
		if x.header.indexCount <= 1 || x.header.endTS < begin || x.header.beginTS > end {
			continue
		}
		out = x.query(out, h, max, begin, end)
	}
	return out
}

// Flush makes the index files durable, then unmaps from our page tables
// what is flushed and no longer written: full files, and the entries of
// the current one but the newest keepEntries (the hash slots are written
// at random and stay). The msync runs without the lock Put takes: entries
// written meanwhile are made durable by the next Flush.
func (s *Service) Flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.RLock()
	n := len(s.files)
	if n == 0 {
		s.mu.RUnlock()
		return nil
	}
	x := s.files[n-1]
	count := x.header.indexCount
	old := s.files[: n-1 : n-1] // full files: never written again
	s.mu.RUnlock()
	if err := s.syncFile(x); err != nil {
		return err
	}
	for _, o := range old {
		o.dropEntries(0, true)
	}
	x.dropEntries(count-keepEntries, false)
	return nil
}

// DeleteBelow removes files whose entries all point below minPhy (never the
// file taking writes).
func (s *Service) DeleteBelow(minPhy int64) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.files) > 1 && s.files[0].header.endPhy < minPhy {
		x := s.files[0]
		x.close()
		os.Remove(x.path)
		s.files = s.files[1:]
	}
}

// Close flushes and unmaps the files.
func (s *Service) Close() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for _, x := range s.files {
		if e := x.sync(); e != nil && err == nil {
			err = e
		}
		x.close()
	}
	s.files = nil
	return err
}
