package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store/internal/falloc"
)

const diskFullChildEnv = "ROCKETGO_STORE_DISKFULL_CHILD"

// mountTmpfs mounts a tmpfs of sizeMiB at a fresh directory, or skips the
// test (visibly) where that is not possible.
func mountTmpfs(t *testing.T, sizeMiB int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to mount a small tmpfs (the disk-full tests run on one)")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", sizeMiB), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// diskFullConfig: 4 MiB segments on a 64 MiB tmpfs, checks every 200 ms,
// an index large enough that its entries cross many pages.
func diskFullConfig(dir string) Config {
	cfg := DefaultConfig(dir)
	cfg.MappedFileSizeCommitLog = 4 << 20
	cfg.MappedFileSizeConsumeQueue = 20000 * CQUnitSize
	cfg.MaxMessageSize = 64 << 10
	cfg.MaxHashSlotNum = 10000
	cfg.MaxIndexNum = 100000
	cfg.FlushIntervalCommitLog = 10 * time.Millisecond
	cfg.FlushIntervalConsumeQueue = 50 * time.Millisecond
	cfg.CleanResourceInterval = diskFullRecheck
	cfg.DeleteWhen = "99"
	return cfg
}

const diskFullRecheck = 200 * time.Millisecond

func diskFullBody(w, i int) []byte {
	b := make([]byte, 1000+(i*13)%1000)
	for j := range b {
		b[j] = byte(w*7 + i + j)
	}
	return b
}

type diskAck struct{ i, qo int64 }

// producers are 4 synchronous writers, one queue each, that keep every
// acknowledgement and the refusals they meet.
type producers struct {
	s       *Store
	maxPuts int
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	acks    [4][]diskAck // guarded by mu
	refused atomic.Int64
	lastErr atomic.Pointer[error]
	other   atomic.Pointer[PutResult] // a result that is neither OK nor refused
}

func startProducers(s *Store, maxPuts int) *producers {
	p := &producers{s: s, stop: make(chan struct{}), maxPuts: maxPuts}
	p.run([4]int{})
	return p
}

// resume starts the writers again on s (a reopened store), keeping the
// acknowledgements and continuing each writer's numbering.
func (p *producers) resume(s *Store) *producers {
	q := &producers{s: s, stop: make(chan struct{}), maxPuts: p.maxPuts, acks: p.acks}
	var from [4]int
	for w, a := range p.acks {
		if len(a) > 0 {
			from[w] = int(a[len(a)-1].i) + 1
		}
	}
	q.run(from)
	return q
}

func (p *producers) run(from [4]int) {
	s := p.s
	for w := 0; w < 4; w++ {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			ch := make(chan PutResult, 1)
			for i := from[w]; i < from[w]+p.maxPuts; i++ {
				select {
				case <-p.stop:
					return
				default:
				}
				m := &message.Message{Topic: "Full", QueueID: int32(w), Body: diskFullBody(w, i),
					Properties: fmt.Sprintf("KEYS\x01w%di%d\x02UNIQ_KEY\x01U%d-%d\x02", w, i, w, i),
					BornHost:   bornHost, StoreHost: storeHost}
				s.Put(m, func(r PutResult) { ch <- r })
				r := <-ch
				switch r.Status {
				case PutOK:
					p.mu.Lock()
					p.acks[w] = append(p.acks[w], diskAck{int64(i), r.QueueOffset})
					p.mu.Unlock()
				case ServiceNotAvailable:
					p.refused.Add(1)
					p.lastErr.Store(&r.Err)
					time.Sleep(time.Millisecond) // back off while refused (load loop, not synchronisation)
				default:
					p.other.Store(&r)
					return
				}
			}
		}()
	}
}

func (p *producers) acked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.acks {
		n += len(a)
	}
	return n
}

func (p *producers) halt() {
	close(p.stop)
	p.wg.Wait()
}

// verifyAcks checks that every acknowledged message is readable with its
// body, except those below the queue's minimum offset, which must lie in
// a range retention reported as deleted. Only units below the dispatched
// end are checked when !all.
func verifyAcks(t *testing.T, s *Store, p *producers, deleted []DeletedSegment, all bool) (checked int) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var res GetResult
	defer res.Release()
	var e message.Ext
	for w, acks := range p.acks {
		minO, maxO := s.MinOffset("Full", int32(w)), s.MaxOffset("Full", int32(w))
		for _, a := range acks {
			if a.qo < minO {
				require.True(t, inDeleted(deleted, int32(w), a.qo), "queue %d offset %d lost but not reported deleted", w, a.qo)
				continue
			}
			if !all && a.qo >= maxO {
				continue
			}
			s.GetMessages("Full", int32(w), a.qo, 1, math.MaxInt32, nil, &res)
			require.Equal(t, Found, res.Status, "queue %d offset %d", w, a.qo)
			require.NoError(t, message.Decode(res.Records[0], &e))
			if !bytes.Equal(diskFullBody(w, int(a.i)), e.Body) {
				// Say which record came back instead of diffing two bodies
				// (a hex diff would bury the child's log).
				keys, _ := message.Property(e.Properties, "KEYS")
				t.Fatalf("queue %d offset %d: acked message i=%d read back as %q (record queue offset %d, commit-log offset %d); queue min %d max %d, next begin %d, dispatched %d, written %d",
					w, a.qo, a.i, keys, e.QueueOffset, e.PhysicalOffset, minO, maxO, res.NextBeginOffset, s.DispatchedOffset(), s.MaxPhyOffset())
			}
			res.Release()
			checked++
		}
	}
	return checked
}

func inDeleted(deleted []DeletedSegment, qid int32, qo int64) bool {
	for _, d := range deleted {
		for _, r := range d.Queues {
			if r.Topic == "Full" && r.QueueID == qid && qo >= r.From && qo < r.To {
				return true
			}
		}
	}
	return false
}

// fillDisk allocates a file in dir until the file system has no free block.
func fillDisk(t *testing.T, path string) *os.File {
	f, err := os.Create(path)
	require.NoError(t, err)
	var size int64
	for _, chunk := range []int64{1 << 20, 64 << 10, 4 << 10} {
		for {
			if err := falloc.Allocate(f, size, chunk); err != nil {
				require.ErrorIs(t, err, falloc.ErrNoSpace)
				break
			}
			size += chunk
		}
	}
	return f
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDiskFullChild is the store process of TestDiskFullCycle; it does
// nothing unless re-executed with diskFullChildEnv set, so a SIGBUS shows
// as a crashed child instead of killing the test run.
func TestDiskFullChild(t *testing.T) {
	spec := os.Getenv(diskFullChildEnv)
	if spec == "" {
		t.Skip("helper process for TestDiskFullCycle")
	}
	dir, mode, _ := strings.Cut(spec, ",")
	logs := &lockedBuffer{}
	cfg := diskFullConfig(filepath.Join(dir, "store"))
	cfg.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(logs, os.Stderr), nil))
	var delMu sync.Mutex
	var deleted []DeletedSegment
	onDelete := func(d DeletedSegment) {
		delMu.Lock()
		deleted = append(deleted, d)
		delMu.Unlock()
	}
	switch mode {
	case "filler":
		diskFullFiller(t, dir, cfg, onDelete)
	case "requeue":
		diskFullRequeue(t, dir, cfg)
	case "forcible":
		diskFullForcible(t, cfg, onDelete, logs, func() []DeletedSegment {
			delMu.Lock()
			defer delMu.Unlock()
			return append([]DeletedSegment(nil), deleted...)
		})
	default:
		t.Fatalf("mode %q", mode)
	}
	fmt.Println("DISKFULL-CHILD-OK")
}

// diskFullFiller: fill the disk with a foreign file under load, see puts
// refused and reads served, delete the file, see puts accepted again
// within the re-check interval; nothing acknowledged is lost.
func diskFullFiller(t *testing.T, dir string, cfg Config, onDelete func(DeletedSegment)) {
	cfg.CleanFileForciblyEnable = false // only the filler frees space
	s := openT(t, cfg)
	s.OnDeleteSegment(onDelete)
	p := startProducers(s, 1_000_000)
	defer func() {
		select {
		case <-p.stop:
		default:
			p.halt()
		}
	}()
	// (p is replaced after the restart below; the deferred halt sees the
	// current one.)
	require.Eventually(t, func() bool { return s.MaxPhyOffset() > 2*cfg.MappedFileSizeCommitLog }, 30*time.Second, time.Millisecond)
	// fallocate really allocates on tmpfs: the segments' blocks exist
	// before the writer gets there.
	for _, seg := range s.cl.list() {
		n, err := falloc.Allocated(seg.f)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, seg.size, "segment %s not allocated", seg.path)
	}
	filler := fillDisk(t, filepath.Join(dir, "filler"))
	require.Eventually(t, func() bool { return p.refused.Load() > 0 }, 30*time.Second, time.Millisecond, "puts never refused on a full disk")
	require.ErrorIs(t, *p.lastErr.Load(), ErrDiskFull)
	require.ErrorIs(t, s.Writable(), ErrDiskFull)
	require.Nil(t, p.other.Load())
	// Reads keep working while the disk is full.
	n := verifyAcks(t, s, p, nil, false)
	require.Positive(t, n)
	before := p.acked()
	t.Logf("disk full after %d acknowledged puts; %d refusals so far; %d read back", before, p.refused.Load(), n)

	// Free the space: puts are accepted again within the re-check
	// interval (plus the time a round takes), without a restart.
	require.NoError(t, filler.Close())
	require.NoError(t, os.Remove(filler.Name()))
	freed := time.Now()
	require.Eventually(t, func() bool { return s.Writable() == nil }, 2*diskFullRecheck+time.Second, time.Millisecond,
		"still refusing %v after the space was freed", time.Since(freed))
	t.Logf("writable again %v after the space was freed (re-check interval %v)", time.Since(freed).Round(time.Millisecond), diskFullRecheck)
	require.Eventually(t, func() bool { return p.acked() > before+2000 }, 30*time.Second, time.Millisecond)

	// Full again, then a restart while the disk is full: the store opens,
	// serves reads, refuses puts, and accepts them once space is freed.
	filler = fillDisk(t, filepath.Join(dir, "filler"))
	refused := p.refused.Load()
	require.Eventually(t, func() bool { return p.refused.Load() > refused }, 30*time.Second, time.Millisecond)
	p.halt()
	require.Nil(t, p.other.Load())
	require.NoError(t, s.Close())
	s = openT(t, cfg)
	require.Eventually(t, func() bool { return s.Writable() != nil }, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, s.Writable(), ErrDiskFull)
	require.Positive(t, verifyAcks(t, s, p, nil, false))
	require.NoError(t, filler.Close())
	require.NoError(t, os.Remove(filler.Name()))
	require.Eventually(t, func() bool { return s.Writable() == nil }, 2*diskFullRecheck+time.Second, time.Millisecond)
	p = p.resume(s)
	require.Eventually(t, func() bool { return p.acked() > before+4000 }, 30*time.Second, time.Millisecond)
	p.halt()
	require.Nil(t, p.other.Load())
	waitDispatched(t, s)
	verifyAcks(t, s, p, nil, true)
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
	// And after a clean restart.
	s = openT(t, cfg)
	defer s.Close()
	verifyAcks(t, s, p, nil, true)
	require.NoError(t, s.Check())
}

// diskFullRequeue: acknowledged records whose consume-queue units could
// not be written (no room for the queue's next file) when the store
// stopped keep their queue offsets after a restart on the still full disk:
// new puts continue past them instead of reusing their offsets.
func diskFullRequeue(t *testing.T, dir string, cfg Config) {
	cfg.CleanFileForciblyEnable = false
	s := openT(t, cfg)
	units := int(cfg.MappedFileSizeConsumeQueue / CQUnitSize)
	body := func(i int) []byte { return []byte(fmt.Sprintf("requeue-%06d", i)) }
	put := func(s *Store, i int) PutResult {
		return putSync(t, s, &message.Message{Topic: "Requeue", QueueID: 0, Body: body(i), BornHost: bornHost, StoreHost: storeHost})
	}
	for i := range units {
		require.Equal(t, PutOK, put(s, i).Status)
	}
	waitDispatched(t, s)
	// The preallocated next segment exists (its allocation racing the
	// filler would free space again when it fails).
	require.Eventually(t, func() bool {
		s.cl.spareMu.Lock()
		defer s.cl.spareMu.Unlock()
		return s.cl.spare != nil
	}, 10*time.Second, time.Millisecond)
	// The next records are acknowledged while the dispatcher is held, and
	// the disk is full by the time it needs the queue's second file.
	const extra = 5
	s.dispMu.Lock()
	for i := units; i < units+extra; i++ {
		r := put(s, i)
		require.Equal(t, PutOK, r.Status)
		require.Equal(t, int64(i), r.QueueOffset)
	}
	filler := fillDisk(t, filepath.Join(dir, "filler"))
	s.dispMu.Unlock()
	require.Eventually(t, func() bool { return s.Writable() != nil }, 10*time.Second, time.Millisecond, "the dispatcher never met the full disk")
	require.Equal(t, int64(units), s.MaxOffset("Requeue", 0))
	require.NoError(t, s.Close())
	// Close gave the spare segment's blocks back: take them too, so that
	// recovery cannot dispatch the records either.
	filler2 := fillDisk(t, filepath.Join(dir, "filler2"))

	s = openT(t, cfg)
	require.Equal(t, int64(units), s.MaxOffset("Requeue", 0))
	for _, f := range []*os.File{filler, filler2} {
		require.NoError(t, f.Close())
		require.NoError(t, os.Remove(f.Name()))
	}
	require.Eventually(t, func() bool { return s.Writable() == nil }, 2*diskFullRecheck+5*time.Second, time.Millisecond)
	r := put(s, units+extra)
	require.Equal(t, PutOK, r.Status)
	require.Equal(t, int64(units+extra), r.QueueOffset, "a new put reused the queue offset of an acknowledged record")
	waitDispatched(t, s)
	var res GetResult
	var e message.Ext
	for i := units - 1; i <= units+extra; i++ {
		s.GetMessages("Requeue", 0, int64(i), 1, math.MaxInt32, nil, &res)
		require.Equal(t, Found, res.Status, "offset %d", i)
		require.NoError(t, message.Decode(res.Records[0], &e))
		require.Equal(t, string(body(i)), string(e.Body), "queue offset %d", i)
		res.Release()
	}
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

// diskFullForcible: write three times the disk's size through it; with
// cleanFileForciblyEnable the oldest segments go before their retention
// time, each logged at WARN with its range; everything not reported
// deleted stays readable.
func diskFullForcible(t *testing.T, cfg Config, onDelete func(DeletedSegment), logs *lockedBuffer, deleted func() []DeletedSegment) {
	s := openT(t, cfg)
	s.OnDeleteSegment(onDelete)
	defer s.Close()
	p := startProducers(s, 1_000_000)
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(cfg.RootDir, &st))
	disk := int64(st.Blocks) * st.Bsize
	require.Eventually(t, func() bool { return s.MaxPhyOffset() > 3*disk }, 60*time.Second, time.Millisecond,
		"wrote %d of %d bytes", s.MaxPhyOffset(), 3*disk)
	p.halt()
	require.Nil(t, p.other.Load())
	waitDispatched(t, s)
	d := deleted()
	require.NotEmpty(t, d)
	for _, x := range d {
		require.True(t, x.Forced, "deleted %+v before its retention time", x)
		require.NotEmpty(t, x.Queues, "segment %d held messages", x.Start)
	}
	require.Contains(t, logs.String(), "deleting a commit-log segment before its retention time")
	require.Positive(t, verifyAcks(t, s, p, d, true))
	require.NoError(t, s.Check())
	t.Logf("%d acknowledged, %d refused, %d segments deleted forcibly", p.acked(), p.refused.Load(), len(d))
}

// TestDiskFullCycle runs a store on a 64 MiB tmpfs in a child process
// (re-executed test binary) and fills the disk under load from four
// synchronous producers: puts are refused with ErrDiskFull, reads keep
// working, the process never dies of SIGBUS (index, consume queues and
// commit log are allocated before they are written through their
// mappings), and puts are accepted again by themselves once space is
// freed — by deleting a foreign file, or by forcible retention.
func TestDiskFullCycle(t *testing.T) {
	if os.Getenv(diskFullChildEnv) != "" {
		t.Skip("in child")
	}
	for _, mode := range []string{"filler", "forcible", "requeue"} {
		t.Run(mode, func(t *testing.T) {
			dir := mountTmpfs(t, 64)
			cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), diskFullChildEnv+"="+dir+","+mode)
			var out lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(120 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("child did not finish in 120 s:\n%s", tail(out.String(), 4000))
			}
			if i := strings.Index(out.String(), "[signal "); i >= 0 {
				// The Go runtime turns a fault in Go code into a fatal error
				// that names the signal and exits 2.
				t.Fatalf("store process crashed: %s", tail(out.String()[max(i-200, 0):], 1500))
			}
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					t.Fatalf("store process crashed with %v:\n%s", ws.Signal(), tail(out.String(), 4000))
				}
			}
			require.NoError(t, err, "child failed:\n%s", tail(out.String(), 8000))
			require.Contains(t, out.String(), "DISKFULL-CHILD-OK")
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, "diskfull_test.go") && strings.Contains(l, ":") {
					t.Log(strings.TrimSpace(l))
				}
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
