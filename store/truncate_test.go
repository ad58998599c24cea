package store

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cutPoint is the commit-log offset of unit qo of Mix/0: a record boundary
// in an early segment.
func cutPoint(t *testing.T, s *Store, qo int64) int64 {
	t.Helper()
	u, ok := s.ConsumeQueueUnits("Mix", 0, qo, 1, nil)
	require.True(t, ok)
	require.Len(t, u, 1)
	return u[0].PhyOffset
}

// requireCutAt checks that nothing at or past cut is left: commit log,
// consume queues, index.
func requireCutAt(t *testing.T, s *Store, cut int64) {
	t.Helper()
	require.Equal(t, cut, s.MaxPhyOffset())
	require.Equal(t, cut, s.ReceivedOffset())
	require.LessOrEqual(t, s.FlushedOffset(), cut)
	waitDispatched(t, s)
	for _, topic := range s.Topics() {
		for _, q := range s.QueueIDs(topic) {
			us, _ := s.ConsumeQueueUnits(topic, q, s.MinOffset(topic, q), 1<<20, nil)
			for _, u := range us {
				if u.Size > 0 && u.Size < 1<<30 {
					require.Less(t, u.PhyOffset+int64(u.Size), cut+1, "unit %s/%d %d past the cut", topic, q, u.QueueOffset)
				}
			}
		}
	}
	for _, k := range []string{"k1", "k12", "k40", "k77", "k140", "shared"} {
		offs, err := s.QueryByKey("Mix", k, 64, 0, 1<<62)
		require.NoError(t, err)
		for _, o := range offs {
			require.Less(t, o, cut, "index entry past the cut")
		}
	}
	names, err := listSegmentFiles(filepath.Join(s.cfg.RootDir, "commitlog"))
	require.NoError(t, err)
	for _, n := range names {
		require.LessOrEqual(t, n.start, cut, "segment %s past the cut", n.name)
	}
	require.NoError(t, s.Check())
}

// TruncateTo at run time removes the tail from the commit log, the consume
// queues and the index; the slave then takes the master's bytes from the
// cut again and ends up identical to it, also after a restart.
func TestTruncateToAtRunTime(t *testing.T) {
	cfg := smallSegConfig(t)
	master := openT(t, cfg)
	defer master.Close()
	scfg := slaveConfig(t, cfg)
	slave := openT(t, scfg)
	fillMixed(t, master, 150)
	replicate(t, master, slave)
	waitDispatched(t, slave)
	cut := cutPoint(t, slave, 10)
	require.Greater(t, slave.MaxPhyOffset()-cut, 2*cfg.MappedFileSizeCommitLog, "cuts across segments")

	require.True(t, errors.Is(master.TruncateTo(cut), ErrMaster))
	require.Error(t, slave.TruncateTo(cut+1), "not a record boundary")
	require.Error(t, slave.TruncateTo(slave.MaxPhyOffset()+100))

	require.NoError(t, slave.TruncateTo(cut))
	requireCutAt(t, slave, cut)
	require.NoError(t, slave.Close())
	slave = openT(t, scfg)
	defer func() { slave.Close() }()
	requireCutAt(t, slave, cut)

	replicate(t, master, slave)
	requireSameStores(t, master, slave, 0)
}

const truncChildEnv = "ROCKETGO_STORE_TRUNCATE_CHILD"

// TestTruncateChild is the process TestTruncateCrash kills: it fills a
// store, prints the cut, and truncates to it; it kills itself (SIGKILL)
// right after the given step of TruncateTo (5: after it returned).
func TestTruncateChild(t *testing.T) {
	spec := os.Getenv(truncChildEnv)
	if spec == "" {
		t.Skip("helper process for TestTruncateCrash")
	}
	dir, stepS, _ := strings.Cut(spec, ",")
	step, _ := strconv.Atoi(stepS)
	cfg := smallSegConfig(t)
	cfg.RootDir, cfg.CommitLogDir = dir, ""
	s := openT(t, cfg)
	fillMixed(t, s, 150)
	waitDispatched(t, s)
	cut := cutPoint(t, s, 10)
	require.NoError(t, s.flushLogics()) // consume queues and index on disk past the cut
	require.NoError(t, s.writeCheckpoint())
	require.NoError(t, s.SetRole(Slave))
	fmt.Printf("cut %d end %d\n", cut, s.MaxPhyOffset())
	os.Stdout.Sync()
	kill := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	s.onTruncateStep = func(n int) {
		if n == step {
			kill()
		}
	}
	require.NoError(t, s.TruncateTo(cut))
	kill()
}

// A kill -9 at any step of TruncateTo, or right after it, never recovers
// the truncated tail as valid: the reopened store ends at the cut.
func TestTruncateCrash(t *testing.T) {
	for step := 1; step <= 5; step++ {
		t.Run(fmt.Sprint("step", step), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestTruncateChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), truncChildEnv+"="+dir+","+strconv.Itoa(step))
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			var cut, end int64 = -1, -1
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if _, err := fmt.Sscanf(sc.Text(), "cut %d end %d", &cut, &end); err == nil {
					break
				}
			}
			for sc.Scan() {
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "child: %v", err)
			require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal(), "killed at step %d", step)
			require.Positive(t, cut)
			require.Greater(t, end, cut)

			cfg := smallSegConfig(t)
			cfg.RootDir, cfg.CommitLogDir = dir, ""
			cfg.BrokerRole = Slave
			s := openT(t, cfg)
			defer s.Close()
			requireCutAt(t, s, cut)
			require.Equal(t, int64(10), s.MaxOffset("Mix", 0), "the records before the cut are kept")
		})
	}
}

// Puts still waiting for slaves when their records are truncated away are
// answered ServiceNotAvailable (not stored), at once.
func TestTruncateAnswersWaitersPastTheCut(t *testing.T) {
	cfg := smallSegConfig(t)
	cfg.BrokerRole = SyncMaster
	cfg.InSyncReplicas = 2
	cfg.SlaveTimeout = time.Minute
	s := openT(t, cfg)
	defer s.Close()
	s.SetInSyncReplicas(1)
	fillMixed(t, s, 20)
	cut := s.MaxPhyOffset()
	s.SetInSyncReplicas(2)
	ch := make(chan PutResult, 1)
	s.Put(testMsg("Mix", 0, 99, 100), func(r PutResult) { ch <- r })
	require.NoError(t, s.SetRole(Slave))
	require.NoError(t, s.TruncateTo(cut))
	r := <-ch
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.Equal(t, cut, s.MaxPhyOffset())
}
