package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Process is a child process running in its own process group.
type Process struct {
	Name string
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done closes
	// reaped: the group was signalled after the leader exited; never
	// signal it again (its id may be reused). Used by one goroutine.
	reaped bool
}

// StartProcess runs argv in dir with extra env, stdout+stderr to dir/<name>.log.
func StartProcess(name, dir string, env []string, argv ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("harness: create log %s: %w", logPath, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("harness: start %s: %w", name, err)
	}
	p := &Process{Name: name, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = lf.Close()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended, and its wait error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace. It
// reports whether the process had to be killed.
func (p *Process) Stop(grace time.Duration) (killed bool) {
	if p.reaped {
		return false
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		killed = true
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	p.reap()
	return killed
}

// Kill SIGKILLs the process group at once (a crash) and waits for it.
func (p *Process) Kill() {
	if p.reaped {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	p.reap()
}

// reap kills whatever of the group outlived its leader.
func (p *Process) reap() {
	p.reaped = true
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = err // the group is gone or not ours: nothing left to do
	}
}

// Tail returns the last n bytes of the process log (for failure messages).
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

var execLookPath = exec.LookPath
