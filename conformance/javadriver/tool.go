package javadriver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// HaToolClass is the main class of the HA load/consume tool
// (conformance/java/.../HaTool.java).
const HaToolClass = "io.rocketgo.conformance.HaTool"

// RunTool runs HaTool with args (mode first: produce, consume, pull, offsets,
// topic) in a JVM of the client's profile, building the profile first if this
// Driver has not. Leading "-D..." args are JVM system properties, e.g.
// -Drocketmq.client.rebalance.waitInterval=2000. onLine (may be nil) is called for every stdout line, in
// order, on the calling goroutine. The JVM runs in its own process group,
// killed with SIGKILL when ctx ends. The error is the JVM's exit error with
// the tail of its stderr, or ctx's error when ctx ended it.
func (d *Driver) RunTool(ctx context.Context, client scenario.Client, args []string, onLine func(line string)) error {
	profile, ok := Profiles[client]
	if !ok {
		return fmt.Errorf("javadriver: no Java profile for client %q", client)
	}
	if err := d.Build(ctx, profile); err != nil {
		return err
	}
	jargs, mode := toolArgs(filepath.Join(d.Dir, "target", profile), args)
	return runChild(ctx, "HaTool "+mode, exec.CommandContext(ctx, "java", jargs...), onLine)
}

// FailoverToolClass is the main class of the failover suite's Java client
// load (conformance/java/.../FailoverTool.java).
const FailoverToolClass = "io.rocketgo.conformance.FailoverTool"

// RunClass runs main class of the profile's classes as RunTool runs HaTool
// (same JVM flags, leading -D args, process group, onLine), with stdin (nil:
// none) as the JVM's standard input. It does not build: the caller calls
// Build first, or knows the classes are current (ClassesDir).
func (d *Driver) RunClass(ctx context.Context, client scenario.Client, class string, args []string, stdin *os.File, onLine func(line string)) error {
	profile, ok := Profiles[client]
	if !ok {
		return fmt.Errorf("javadriver: no Java profile for client %q", client)
	}
	jargs, _ := classArgs(filepath.Join(d.Dir, "target", profile), class, args)
	cmd := exec.CommandContext(ctx, "java", jargs...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	return runChild(ctx, class[strings.LastIndexByte(class, '.')+1:], cmd, onLine)
}

// ClassesDir is where Build puts the compiled classes of profile.
func (d *Driver) ClassesDir(profile string) string {
	return filepath.Join(d.Dir, "target", profile, "classes")
}

// toolArgs is the java command line for HaTool args of the profile built in
// target, leading -D args moved before the class; mode is the first tool arg.
func toolArgs(target string, args []string) (jargs []string, mode string) {
	return classArgs(target, HaToolClass, args)
}

// classArgs is toolArgs for any main class.
func classArgs(target, class string, args []string) (jargs []string, mode string) {
	jargs = []string{"-Xms64m", "-Xmx512m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1",
		"-Drocketmq.client.logUseSlf4j=false", "-Drocketmq.client.logLevel=ERROR",
		"-Drocketmq.client.logRoot=" + filepath.Join(os.TempDir(), "rocketgo-conformance-java-logs")}
	for len(args) > 0 && strings.HasPrefix(args[0], "-D") {
		jargs, args = append(jargs, args[0]), args[1:]
	}
	jargs = append(jargs, "-cp", filepath.Join(target, "classes")+":"+filepath.Join(target, "lib", "*"), class)
	if len(args) > 0 {
		mode = args[0]
	}
	return append(jargs, args...), mode
}

// runChild starts cmd in its own process group, feeds its stdout lines to
// onLine and waits for it; ctx's end kills the whole group.
func runChild(ctx context.Context, name string, cmd *exec.Cmd, onLine func(string)) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("javadriver: %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("javadriver: start %s: %w", name, err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if onLine != nil {
			onLine(sc.Text())
		}
	}
	if sc.Err() != nil {
		// An over-long line: keep draining so the child never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("javadriver: %s: %w (exit: %v)", name, ctx.Err(), waitErr)
	}
	if waitErr != nil {
		return fmt.Errorf("javadriver: %s: %w\n%s", name, waitErr, stderr.String())
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// Ack is one acknowledged send:
//
//	ACK <key> <msgId> <queueId> <queueOffset> <status> <kind>
//
// Status is Java's SendStatus name (SEND_OK, FLUSH_SLAVE_TIMEOUT, ...). For
// kind txn QueueOffset is -1 (the broker assigns it at commit) and QueueID is
// the queue of the half message's target.
type Ack struct {
	Key, MsgID  string
	QueueID     int
	QueueOffset int64
	Status      string
	Kind        string // single, batch, keyed, compressed, delay, txn; "" from an older tool
}

// ParseAck reads an ACK line.
func ParseAck(line string) (Ack, bool) {
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "ACK" {
		return Ack{}, false
	}
	q, err1 := strconv.Atoi(f[3])
	off, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return Ack{}, false
	}
	a := Ack{Key: f[1], MsgID: f[2], QueueID: q, QueueOffset: off, Status: f[5]}
	if len(f) > 6 {
		a.Kind = f[6]
	}
	return a, true
}

// SendErr is one failed send: ERR <key> <exceptionClass> <message>.
// The offsets mode reports a failed query as ERR <brokerName>:<queueId> ....
type SendErr struct {
	Key, Class, Message string
}

// ParseErr reads an ERR line.
func ParseErr(line string) (SendErr, bool) {
	f := strings.SplitN(line, " ", 4)
	if len(f) < 3 || f[0] != "ERR" {
		return SendErr{}, false
	}
	e := SendErr{Key: f[1], Class: f[2]}
	if len(f) == 4 {
		e.Message = f[3]
	}
	return e, true
}

// Delivery is one message delivered to a consumer:
//
//	MSG <key> <msgId> <queueId> <queueOffset> <brokerName>
//
// Redeliveries are reported again. Key is "-" for a message without keys.
type Delivery struct {
	Key, MsgID  string
	QueueID     int
	QueueOffset int64
	BrokerName  string
}

// ParseMsg reads a MSG line.
func ParseMsg(line string) (Delivery, bool) {
	f := strings.Fields(line)
	if len(f) != 6 || f[0] != "MSG" {
		return Delivery{}, false
	}
	q, err1 := strconv.Atoi(f[3])
	off, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return Delivery{}, false
	}
	return Delivery{Key: f[1], MsgID: f[2], QueueID: q, QueueOffset: off, BrokerName: f[5]}, true
}

// Offset is a group's committed offset of one queue as one broker holds it:
//
//	OFF <brokerName> <queueId> <offset> <brokerId> <addr>
//
// Offset is -1 when that broker has none for the group (QUERY_NOT_FOUND).
type Offset struct {
	BrokerName string
	QueueID    int
	Offset     int64
	BrokerID   int64 // -1 from a line without it
	Addr       string
}

// ParseOff reads an OFF line.
func ParseOff(line string) (Offset, bool) {
	f := strings.Fields(line)
	if (len(f) != 4 && len(f) != 6) || f[0] != "OFF" {
		return Offset{}, false
	}
	q, err1 := strconv.Atoi(f[2])
	off, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return Offset{}, false
	}
	o := Offset{BrokerName: f[1], QueueID: q, Offset: off, BrokerID: -1}
	if len(f) == 6 {
		id, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			return Offset{}, false
		}
		o.BrokerID, o.Addr = id, f[5]
	}
	return o, true
}

// ParseDone reads the "DONE k=v k=v ..." line that ends every mode (nothing
// is printed after it). Keys: produce acked failed rolledback unresolved ms;
// consume and pull distinct deliveries ms; offsets queues errors; topic
// brokers.
func ParseDone(line string) (map[string]int64, bool) {
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != "DONE" {
		return nil, false
	}
	out := make(map[string]int64, len(f)-1)
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, false
		}
		out[k] = n
	}
	return out, true
}

// ErrFatal wraps a tool's "FATAL <class> <message>" line (bad arguments, a
// client that did not start).
var ErrFatal = errors.New("javadriver: HaTool fatal")

// ParseFatal returns an error wrapping ErrFatal for a FATAL line, nil for
// any other line.
func ParseFatal(line string) error {
	rest, ok := strings.CutPrefix(line, "FATAL ")
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrFatal, rest)
}
