package auth

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCrashKeepsAcknowledged runs a child that creates users and prints
// each name once CreateUser returned, SIGKILLs it mid-stream, and
// reopens: every acknowledged user is there.
func TestCrashKeepsAcknowledged(t *testing.T) {
	if dir := os.Getenv("AUTH_CRASH_CHILD_DIR"); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKeepsAcknowledged$")
	cmd.Env = append(os.Environ(), "AUTH_CRASH_CHILD_DIR="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	var acked []string
	for len(acked) < 50 && sc.Scan() {
		acked = append(acked, sc.Text())
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL, mid-write
	_ = cmd.Wait()
	require.Len(t, acked, 50)

	s, err := Open(Config{}, dir, nil)
	require.NoError(t, err)
	defer s.Close()
	for _, name := range acked {
		u, ok, err := s.GetUser(name)
		require.NoError(t, err)
		require.True(t, ok, name)
		require.Equal(t, "pw-"+name, u.Password)
	}
	acl, ok, err := s.GetACL(acked[0])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "Topic:t", acl.Policies[0].Entries[0].Resource.Key())
}

func crashChild(dir string) {
	s, err := Open(Config{}, dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		name := "u" + strconv.Itoa(i)
		if err := s.CreateUser(User{Username: name, Password: "pw-" + name}); err != nil {
			os.Exit(3)
		}
		if err := s.PutACL(ACL{Username: name, Policies: []Policy{{Entries: []Entry{{
			Resource: ResourcePattern{Type: ResourceTopic, Name: "t", Pattern: PatternLiteral},
			Actions:  []Action{ActionPub}, Decision: Allow}}}}}); err != nil {
			os.Exit(4)
		}
		fmt.Println(name)
	}
}
