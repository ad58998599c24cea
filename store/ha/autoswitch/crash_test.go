package autoswitch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

const crashChildEnv = "ROCKETGO_AUTOSWITCH_CRASH_CHILD"

// divergedPair builds, in dir/m and dir/s, a master of epoch 3 and a slave
// whose tail past cp was written as master of epoch 2 (the scenario of
// TestDivergedSlaveTruncated). It returns cp.
func divergedPair(t testing.TB, dir string) (m, s *node, cp int64) {
	m, s = openNode(t, filepath.Join(dir, "m"), store.Slave), openNode(t, filepath.Join(dir, "s"), store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	fill(t, m.st, 0, 30)
	srv := startServer(t, m, serverConfig(1))
	c := startClient(t, s, clientConfig(2), srv.Addr().String())
	requireSame(t, m, s, 0)
	require.NoError(t, c.Close())
	require.NoError(t, srv.Close())
	fill(t, m.st, 30, 10)
	cp = s.st.MaxPhyOffset()
	s.becomeMaster(t, store.AsyncMaster, 2)
	fill(t, s.st, 1000, 60) // the stale tail, over a segment roll
	m.becomeMaster(t, store.AsyncMaster, 3)
	fill(t, m.st, 40, 30)
	require.NoError(t, s.st.SetRole(store.Slave))
	return m, s, cp
}

// TestTruncateCrashChild is the process TestTruncateCrash kills: it builds
// a diverged pair, prints the consistent point and the stale end, and
// connects the slave; it kills itself (SIGKILL) at the given step of the
// handshake's truncation (1 before the store's cut, 2 after it, 3 after
// the epoch file's; 4 once the slave caught up; 5 inside the store's cut,
// as soon as it is visible).
func TestTruncateCrashChild(t *testing.T) {
	spec := os.Getenv(crashChildEnv)
	if spec == "" {
		t.Skip("helper process for TestTruncateCrash")
	}
	dir, stepS, _ := strings.Cut(spec, ",")
	step, _ := strconv.Atoi(stepS)
	m, s, cp := divergedPair(t, dir)
	fmt.Printf("cp %d stale %d\n", cp, s.st.MaxPhyOffset())
	os.Stdout.Sync()
	kill := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	srv := startServer(t, m, serverConfig(1))
	c := newClient(s, clientConfig(2), srv.Addr().String())
	c.onTruncate = func(n int) {
		if n == step {
			kill()
		}
		if step == 5 && n == 1 {
			// Inside the store's TruncateTo: once the cut is visible, before
			// its consume queues, index and checkpoint are done.
			go func() {
				for s.st.MaxPhyOffset() > cp {
					runtime.Gosched()
				}
				kill()
			}()
		}
	}
	c.Start()
	requireSame(t, m, s, 0)
	kill()
}

// A kill -9 at any step of the slave's truncation never leaves the stale
// tail valid (apache/rocketmq#10666): after a restart, everything below
// the consistent point the next handshake computes equals the master's
// bytes, a tail past the cut still carries its stale epoch, and the slave
// then replicates to a byte-identical log and epoch file.
func TestTruncateCrash(t *testing.T) {
	for step := 1; step <= 5; step++ {
		t.Run(fmt.Sprint("step", step), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestTruncateCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashChildEnv+"="+dir+","+strconv.Itoa(step))
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			var cp, stale int64 = -1, -1
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if _, err := fmt.Sscanf(sc.Text(), "cp %d stale %d", &cp, &stale); err == nil {
					break
				}
			}
			for sc.Scan() {
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "child: %v", err)
			require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal(), "killed at step %d", step)
			require.Positive(t, cp)
			require.Greater(t, stale, cp+segSize)

			m := openNode(t, filepath.Join(dir, "m"), store.AsyncMaster)
			s := openNode(t, filepath.Join(dir, "s"), store.Slave)
			sMax, mMax := s.st.MaxPhyOffset(), m.st.MaxPhyOffset()
			local := s.ep.Entries()
			next := epoch.ConsistentPoint(local, sMax, m.ep.Entries(), mMax)
			require.GreaterOrEqual(t, next, int64(0))
			next = min(next, sMax)
			require.Equal(t, commitLog(t, m.cfg, 0, next), commitLog(t, s.cfg, 0, next), "kept bytes equal the master's")
			switch step {
			case 1:
				require.Equal(t, stale, sMax, "not cut yet")
			case 2, 3, 5:
				require.Equal(t, cp, sMax, "cut at the consistent point")
			}
			if sMax > cp {
				if last := local[len(local)-1]; last.Epoch == 2 {
					require.Equal(t, cp, last.StartOffset, "the stale tail keeps its epoch")
				} else {
					require.Equal(t, 4, step, "only a caught-up slave has a new epoch past the cut")
					require.Equal(t, int32(3), last.Epoch)
				}
			}

			srv := startServer(t, m, serverConfig(1))
			startClient(t, s, clientConfig(2), srv.Addr().String())
			fill(t, m.st, 70, 5)
			requireSame(t, m, s, 0)
			require.Equal(t, []EpochEntry{{1, 0}, {3, m.ep.Entries()[1].StartOffset}}, entries(s.ep.Entries()))
		})
	}
}
