package store

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestHelperHoldJavaLock is not a test: run as a child process it holds a
// POSIX lock on byte 0 of $STORE_LOCK_FILE the way the Java broker does
// (FileChannel.tryLock(0, 1, false)) until its stdin closes.
func TestHelperHoldJavaLock(t *testing.T) {
	path := os.Getenv("STORE_LOCK_FILE")
	if path == "" {
		t.Skip("helper process only")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 1}
	require.NoError(t, unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk))
	os.Stdout.WriteString("locked\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
}

// A directory a Java broker holds (POSIX lock, invisible to flock) must not
// be opened; once the Java side lets go, it opens.
func TestOpenRefusesDirectoryLockedByJava(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldJavaLock$")
	cmd.Env = append(os.Environ(), "STORE_LOCK_FILE="+filepath.Join(dir, "lock"))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	_, err = Open(testConfig(t, dir))
	require.ErrorContains(t, err, "in use by another broker")

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	s := openT(t, testConfig(t, dir))
	require.NoError(t, s.Close())
}
