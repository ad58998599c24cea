package storecompat

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is a child in its own process group with its output in
// dir/<name>.log. Unlike harness.Process it can also be killed outright,
// which the crash hand-over needs.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done closes
	// reaped: the group was signalled after the leader exited; never
	// signal it again (its id may be reused). Used by one goroutine.
	reaped bool
}

func startProcess(name, dir string, env []string, argv ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("storecompat: create log %s: %w", logPath, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("storecompat: start %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = lf.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and its wait error.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the group and waits up to grace, then SIGKILLs it.
// It reports whether the process had to be killed.
func (p *process) stop(grace time.Duration) (killed bool) {
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

// kill SIGKILLs the group at once (a crash) and waits for the process.
func (p *process) kill() {
	if p.reaped {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	p.reap()
}

// reap kills whatever of the group outlived its leader.
func (p *process) reap() {
	p.reaped = true
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = err // the group is gone or not ours: nothing left to do
	}
}

// tail returns the last n bytes of the log.
func (p *process) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
