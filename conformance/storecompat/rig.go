package storecompat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Side names who runs a broker.
type Side string

// The two brokers.
const (
	Java Side = "java"
	Ours Side = "ours"
)

// javaToolOptions makes the JVMs start faster on a small, busy machine:
// the C1 compiler only (these runs are short).
const javaToolOptions = "JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1"

// Rig is one Java name server plus brokers started one after another on a
// shared store directory.
type Rig struct {
	Env         harness.Env
	Dir         string // scratch: one sub-directory per process
	NamesrvAddr string
	// SegmentSize is mappedFileSizeCommitLog for both brokers;
	// MaxMessageSize must fit a segment (ours checks). CQFileSize is
	// mappedFileSizeConsumeQueue (bytes; 0 = Java's default, 300000 units).
	SegmentSize    int64
	CQFileSize     int64
	MaxMessageSize int
	ReadyTimeout   time.Duration
	// Extra holds config lines (key=value, Java's keys) both brokers get
	// after the common ones, e.g. messageDelayLevel.
	Extra []string
	// JavaStart is how long the last Java broker took to register (0: none
	// started yet); a test planning around the next start uses it.
	JavaStart time.Duration
	ns        *harness.Process
	seq       int
}

// NewRig starts the Java name server under dir.
func NewRig(ctx context.Context, env harness.Env, dir string) (*Rig, error) {
	r := &Rig{Env: env, Dir: dir, SegmentSize: 128 << 10, MaxMessageSize: 64 << 10, ReadyTimeout: 120 * time.Second}
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	nsDir := filepath.Join(dir, "java-namesrv")
	if err := os.MkdirAll(nsDir, 0o755); err != nil {
		return nil, fmt.Errorf("storecompat: mkdir: %w", err)
	}
	r.NamesrvAddr = "127.0.0.1:" + strconv.Itoa(port)
	r.ns, err = harness.StartProcess("namesrv", nsDir, []string{"FOREGROUND=1", javaToolOptions},
		env.Script, "start-namesrv", strconv.Itoa(port), nsDir)
	if err != nil {
		return nil, err
	}
	if err := r.waitNamesrv(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close stops the name server.
func (r *Rig) Close() {
	if r.ns != nil {
		r.ns.Stop(10 * time.Second)
		r.ns = nil
	}
}

func (r *Rig) waitNamesrv(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.ReadyTimeout)
	defer cancel()
	var last error
	for {
		if done, err := r.ns.Exited(); done {
			return fmt.Errorf("storecompat: name server exited (%v): %s", err, r.ns.Tail(2000))
		}
		f, err := harness.Call(ctx, r.NamesrvAddr, codeGetBrokerClusterInfo, nil, nil)
		if err == nil && f.Code == codeSuccess {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("storecompat: name server not ready: %v", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Broker is one running broker process serving Store.
type Broker struct {
	Side  Side
	Addr  string // 127.0.0.1:port, as advertised
	Store string
	Took  time.Duration // from start to registered with the name server
	proc  *harness.Process
}

// Logs returns the tail of the broker's console log.
func (b *Broker) Logs(n int) string { return b.proc.Tail(n) }

// StartBroker starts side's broker (name broker-a, cluster DefaultCluster)
// on store and waits until the name server lists it.
func (r *Rig) StartBroker(ctx context.Context, side Side, store string) (*Broker, error) {
	port, err := harness.FreeBrokerPort()
	if err != nil {
		return nil, err
	}
	r.seq++
	dir := filepath.Join(r.Dir, fmt.Sprintf("%s-broker-%d", side, r.seq))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storecompat: mkdir: %w", err)
	}
	// Keys both brokers read; later lines win in the Java broker's
	// properties, so these override javaserver.sh's defaults.
	common := []string{
		"storePathRootDir=" + store,
		"storePathCommitLog=" + filepath.Join(store, "commitlog"),
		"mappedFileSizeCommitLog=" + strconv.FormatInt(r.SegmentSize, 10),
		"maxMessageSize=" + strconv.Itoa(r.MaxMessageSize),
		"flushDiskType=ASYNC_FLUSH",
		// A loaded machine makes sends wait; shed load later than 200 ms.
		"waitTimeMillsInSendQueue=3000",
		"mappedFileSizeConsumeQueue=" + strconv.FormatInt(r.cqFileSize(), 10),
		"autoCreateTopicEnable=true",
		"autoCreateSubscriptionGroup=true",
	}
	common = append(common, r.Extra...)
	b := &Broker{Side: side, Addr: "127.0.0.1:" + strconv.Itoa(port), Store: store}
	start := time.Now()
	switch side {
	case Java:
		b.proc, err = harness.StartProcess("broker", dir,
			[]string{"FOREGROUND=1", javaToolOptions, "BROKER_EXTRA_CONF=" + strings.Join(common, "\n")},
			r.Env.Script, "start-broker", r.NamesrvAddr, strconv.Itoa(port), dir)
	case Ours:
		bin := r.Env.Bin("mqbroker")
		if _, serr := os.Stat(bin); serr != nil {
			return nil, fmt.Errorf("%w: %s", harness.ErrNotBuilt, bin)
		}
		conf := filepath.Join(dir, "broker.conf")
		lines := append([]string{
			"brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=0",
			"brokerIP1=127.0.0.1", "listenIP=127.0.0.1", "listenPort=" + strconv.Itoa(port),
			"namesrvAddr=" + r.NamesrvAddr,
		}, common...)
		if err = os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("storecompat: write broker.conf: %w", err)
		}
		b.proc, err = harness.StartProcess("broker", dir, nil, bin, "-c", conf, "-n", r.NamesrvAddr)
	default:
		return nil, fmt.Errorf("storecompat: unknown side %q", side)
	}
	if err != nil {
		return nil, err
	}
	if err := r.waitRegistered(ctx, b); err != nil {
		b.proc.Stop(5 * time.Second)
		return nil, err
	}
	b.Took = time.Since(start)
	if side == Java {
		r.JavaStart = b.Took
	}
	return b, nil
}

func (r *Rig) cqFileSize() int64 {
	if r.CQFileSize > 0 {
		return r.CQFileSize
	}
	return 300000 * 20
}

// waitRegistered polls GET_BROKER_CLUSTER_INFO until it lists b.
func (r *Rig) waitRegistered(ctx context.Context, b *Broker) error {
	ctx, cancel := context.WithTimeout(ctx, r.ReadyTimeout)
	defer cancel()
	var last error
	for {
		if done, err := b.proc.Exited(); done {
			return fmt.Errorf("storecompat: %s broker exited early (%v):\n%s", b.Side, err, b.proc.Tail(3000))
		}
		f, err := harness.Call(ctx, r.NamesrvAddr, codeGetBrokerClusterInfo, nil, nil)
		switch {
		case err != nil:
			last = err
		case f.Code != codeSuccess:
			last = fmt.Errorf("cluster info code %d %q", f.Code, f.Remark)
		case !strings.Contains(string(f.Body), `"`+b.Addr+`"`):
			last = fmt.Errorf("broker %s not registered yet", b.Addr)
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("storecompat: %s broker not ready after %v: %v\n%s", b.Side, r.ReadyTimeout, last, b.proc.Tail(3000))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ErrUncleanStop means a broker did not shut down cleanly: it had to be
// killed, or it left the store's abort file behind.
var ErrUncleanStop = errors.New("storecompat: broker did not shut down cleanly")

// Stop sends SIGTERM and waits up to grace for a clean exit (SIGKILL after
// it). It reports ErrUncleanStop when the broker was killed or left
// store/abort behind.
func (b *Broker) Stop(grace time.Duration) (time.Duration, error) {
	start := time.Now()
	killed := b.proc.Stop(grace)
	took := time.Since(start)
	if killed {
		return took, fmt.Errorf("%w: %s killed after %v", ErrUncleanStop, b.Side, grace)
	}
	if _, err := os.Stat(filepath.Join(b.Store, "abort")); err == nil {
		_, werr := b.proc.Exited()
		return took, fmt.Errorf("%w: %s left %s/abort (exit %v)", ErrUncleanStop, b.Side, b.Store, werr)
	}
	return took, nil
}

// Kill SIGKILLs the broker (a crash: whatever it had not flushed to the
// page cache is lost, and store/abort stays behind).
func (b *Broker) Kill() { b.proc.Kill() }
