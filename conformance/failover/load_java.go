package failover

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// The Java client load: conformance/java's FailoverTool (the official Java
// client 5.3.3, profile client-5) in one JVM in the root namespace, beside
// the Go client. Its lines become Acks and Deliveries with Client "java".
const (
	// javaPollNameServer is the Java client's route refresh: its own
	// default (ClientConfig.pollNameServerInterval), the Go client's fixed
	// 30 s too. The Java producer does not fetch the route again when a
	// send fails (DefaultMQProducerImpl.tryToFindTopicPublishInfo only does
	// when it has no usable route): a moved master is found by this timer.
	javaPollNameServer = 30 * time.Second
	// javaDeadline bounds the JVM's senders and its life (a run lasts a
	// few minutes); the context kills it 30 s after.
	javaDeadline = 10 * time.Minute
	// stopJavaWait bounds STOP → SENT (sends in flight end within the
	// client's 3 s send timeout plus a connect timeout) and EOF → exit
	// (consumer shutdown ≤ 5 s).
	stopJavaWait = 20 * time.Second
)

// javaLoad is one FailoverTool JVM.
type javaLoad struct {
	stdin   *os.File // write end of the JVM's stdin
	cancel  context.CancelFunc
	done    chan struct{} // RunClass returned
	ready   chan struct{} // READY
	firstOK chan struct{} // first SEND_OK
	sent    chan struct{} // SENT: every sender ended

	mu       sync.Mutex
	err      error // RunClass's error; set before done closes
	fatal    string
	stopOnce sync.Once
	stopped  bool // guarded by mu: STOP was asked for
}

// javaProjectDir is conformance/java, found from this source file.
func javaProjectDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Join(filepath.Dir(file), "..", "java")
}

// javaClassesStale says whether FailoverTool.class is missing or older than
// a source file (what maven-compiler-plugin recompiles for; a newer pom
// alone would not refresh the class and so would rebuild every run).
func javaClassesStale(project, classes string) bool {
	cls, err := os.Stat(filepath.Join(classes, "io", "rocketgo", "conformance", "FailoverTool.class"))
	if err != nil {
		return true
	}
	stale := false
	check := func(p string) {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(cls.ModTime()) {
			stale = true
		}
	}
	_ = filepath.WalkDir(filepath.Join(project, "src", "main", "java"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".java") {
			check(p)
		}
		return nil
	})
	return stale
}

// startJavaLoad starts the JVM and waits (bounded) for its READY. Without
// java, or without classes and mvn to build them, it returns nil and the
// reason. add and got receive every ACK/ERR and MSG line as records.
func startJavaLoad(project, ns, topic, prefix string, count, threads int, pace time.Duration, add func(Ack), got func(Delivery)) (*javaLoad, string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, "no java on PATH", nil
	}
	if _, err := os.Stat(filepath.Join(project, "pom.xml")); err != nil {
		return nil, "no conformance/java project", nil
	}
	d := javadriver.New(project)
	profile := javadriver.Profiles[scenario.Java5]
	if javaClassesStale(project, d.ClassesDir(profile)) {
		if !javadriver.Available() {
			return nil, "FailoverTool not built and no mvn", nil
		}
		bctx, bcancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := d.Build(bctx, profile)
		bcancel()
		if err != nil {
			return nil, "", fmt.Errorf("java load: %w", err)
		}
	}
	args := []string{"load", "--namesrv", ns, "--topic", topic, "--prefix", prefix,
		"--count", strconv.Itoa(count), "--threads", strconv.Itoa(threads),
		"--pace-ms", strconv.FormatInt(pace.Milliseconds(), 10),
		"--deadline-ms", strconv.FormatInt(javaDeadline.Milliseconds(), 10),
		"--send-timeout-ms", "3000", "--retries", "2",
		"--poll-namesrv-ms", strconv.FormatInt(javaPollNameServer.Milliseconds(), 10)}
	j, err := superviseJVM("java load", ClientJava, func(ctx context.Context, stdin *os.File, onLine func(string)) error {
		return d.RunClass(ctx, scenario.Java5, javadriver.FailoverToolClass, args, stdin, onLine)
	}, add, got)
	return j, "", err
}

// superviseJVM runs a load JVM speaking FailoverTool's lines (run starts
// it with stdin and feeds onLine its stdout lines) and waits (bounded) for
// its READY. Its ACK/ERR and MSG lines become records of client.
func superviseJVM(what, client string, run func(ctx context.Context, stdin *os.File, onLine func(string)) error, add func(Ack), got func(Delivery)) (*javaLoad, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s: stdin pipe: %w", what, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), javaDeadline+30*time.Second)
	j := &javaLoad{stdin: w, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}),
		firstOK: make(chan struct{}), sent: make(chan struct{})}
	var readyOnce, okOnce, sentOnce sync.Once
	go func() {
		err := run(ctx, r, func(line string) {
			switch {
			case line == "READY":
				readyOnce.Do(func() { close(j.ready) })
			case strings.HasPrefix(line, "SENT "):
				sentOnce.Do(func() { close(j.sent) })
			case strings.HasPrefix(line, "FATAL "):
				j.mu.Lock()
				j.fatal = line
				j.mu.Unlock()
			default:
				if a, ok := parseJavaAck(line); ok {
					a.Client = client
					add(a)
					if a.OK {
						okOnce.Do(func() { close(j.firstOK) })
					}
				} else if g, ok := parseJavaMsg(line); ok {
					g.Client = client
					got(g)
				}
			}
		})
		_ = r.Close()
		j.mu.Lock()
		j.err = err
		j.mu.Unlock()
		close(j.done)
	}()
	select {
	case <-j.ready:
		return j, nil
	case <-j.done:
	case <-time.After(90 * time.Second):
	}
	f := j.failure()
	j.close()
	if f == "" {
		f = "no READY within 90s"
	}
	return nil, fmt.Errorf("%s: %s", what, f)
}

// awaitFirstOK waits (at most d) until the Java producer has a SEND_OK.
func (j *javaLoad) awaitFirstOK(d time.Duration) error {
	select {
	case <-j.firstOK:
		return nil
	case <-j.done:
		return fmt.Errorf("java load: ended before a SEND_OK: %s", j.failure())
	case <-time.After(d):
		return fmt.Errorf("java load: no SEND_OK within %v", d)
	}
}

// stopSending asks the senders to stop and waits (bounded) for SENT.
func (j *javaLoad) stopSending() {
	j.stopOnce.Do(func() {
		j.mu.Lock()
		j.stopped = true
		j.mu.Unlock()
		_, _ = j.stdin.WriteString("STOP\n")
		select {
		case <-j.sent:
		case <-j.done:
		case <-time.After(stopJavaWait):
		}
	})
}

// close stops the senders, closes stdin (the consumer ends, the JVM
// exits) and kills the JVM's process group if it has not exited in time.
func (j *javaLoad) close() {
	select {
	case <-j.done:
	default:
		j.stopSending()
	}
	_ = j.stdin.Close()
	select {
	case <-j.done:
	case <-time.After(stopJavaWait):
	}
	j.cancel() // SIGKILL of the group when it still runs
	<-j.done   // runChild's WaitDelay bounds this
}

// failure is the JVM's FATAL line or its exit error when it ended before
// being told to (a JVM that exits after STOP and EOF is no failure).
func (j *javaLoad) failure() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fatal != "" {
		return j.fatal
	}
	select {
	case <-j.done:
	default:
		return ""
	}
	switch {
	case j.stopped:
		return ""
	case j.err != nil:
		return "java load ended early: " + j.err.Error()
	default:
		return "java load ended before it was stopped"
	}
}

// parseJavaAck reads "ACK <key> <startUs> <endUs> <status> <offsetMsgId>"
// and "ERR <key> <startUs> <endUs> <class> <message>".
func parseJavaAck(line string) (Ack, bool) {
	f := strings.SplitN(line, " ", 6)
	if len(f) < 5 || (f[0] != "ACK" && f[0] != "ERR") {
		return Ack{}, false
	}
	s, err1 := strconv.ParseInt(f[2], 10, 64)
	e, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return Ack{}, false
	}
	a := Ack{Key: f[1], Client: ClientJava, Start: time.UnixMicro(s), End: time.UnixMicro(e)}
	if f[0] == "ERR" {
		a.Status = f[4]
		if len(f) == 6 {
			a.Status += ": " + f[5]
		}
		return a, true
	}
	if len(f) != 6 {
		return Ack{}, false
	}
	a.Status = f[4]
	a.OK = f[4] == "SEND_OK"
	a.Host, a.PhyOffset, _ = decodeOffsetMsgID(f[5])
	return a, true
}

// parseJavaMsg reads "MSG <key> <storeHost> <commitLogOffset> <queueId> <queueOffset>".
func parseJavaMsg(line string) (Delivery, bool) {
	f := strings.Fields(line)
	if len(f) != 6 || f[0] != "MSG" {
		return Delivery{}, false
	}
	off, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return Delivery{}, false
	}
	return Delivery{Key: f[1], Client: ClientJava, Host: f[2], PhyOffset: off}, true
}
