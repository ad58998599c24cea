package grpcsvc

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// RenewConfig is the receipt-handle auto-renew of Java's proxy 5.3.3
// (ProxyConfig's enableProxyAutoRenew and renew* keys,
// DefaultReceiptHandleManager): the handles a ReceiveMessage with
// auto_renew hands out are kept invisible for the client until it acks,
// nacks or forwards them, goes away, or renewMaxTimeMillis passes. Zero
// fields take DefaultRenew's values.
type RenewConfig struct {
	// Disabled is !enableProxyAutoRenew (Java: enabled).
	Disabled bool
	// DefaultInvisible is the invisibility an auto-renewed receive pops
	// with (defaultInvisibleTimeMills, 60 s).
	DefaultInvisible time.Duration
	// Ahead renews a handle this long before it becomes visible
	// (renewAheadTimeMillis, 10 s).
	Ahead time.Duration
	// MaxTime stops renewing a handle this long after it was received
	// (renewMaxTimeMillis, 3 h): it is then made visible after the
	// group's retry delay.
	MaxTime time.Duration
	// Period is the scan interval (renewSchedulePeriodMillis, 5 s).
	Period time.Duration
	// MaxRetries drops a handle after this many failed renewals in a row
	// (maxRenewRetryTimes, 3).
	MaxRetries int
	// Workers run the renewals (renewThreadPoolNums, 2; Java grows to
	// renewMaxThreadPoolNums only when the queue is full, we do not).
	Workers int
	// Queue bounds the renewals waiting for a worker
	// (renewThreadPoolQueueCapacity, 300); a full queue skips the handle
	// until the next scan, as Java's rejection handler does.
	Queue int
	// ClearInvisible is the invisibility left to a handle whose client
	// went away (invisibleTimeMillisWhenClear, 1 s).
	ClearInvisible time.Duration
	// MaxHandles bounds the handles tracked at once (ours; Java has no
	// bound): past it a receive's handles are not tracked and keep
	// DefaultInvisible.
	MaxHandles int

	// steps replaces renewSteps (tests: renewals short enough to expire).
	steps []time.Duration
}

// DefaultRenew is Java's ProxyConfig defaults, and our bound of 100,000
// tracked handles (about 40 MB at the SDK's handle size).
func DefaultRenew() RenewConfig {
	return RenewConfig{DefaultInvisible: 60 * time.Second, Ahead: 10 * time.Second, MaxTime: 3 * time.Hour,
		Period: 5 * time.Second, MaxRetries: 3, Workers: 2, Queue: 300, ClearInvisible: time.Second, MaxHandles: 100000}
}

func (c RenewConfig) withDefaults() RenewConfig {
	d := DefaultRenew()
	if c.DefaultInvisible <= 0 {
		c.DefaultInvisible = d.DefaultInvisible
	}
	if c.Ahead <= 0 {
		c.Ahead = d.Ahead
	}
	if c.MaxTime <= 0 {
		c.MaxTime = d.MaxTime
	}
	if c.Period <= 0 {
		c.Period = d.Period
	}
	if c.MaxRetries <= 0 {
		c.MaxRetries = d.MaxRetries
	}
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.Queue <= 0 {
		c.Queue = d.Queue
	}
	if c.ClearInvisible <= 0 {
		c.ClearInvisible = d.ClearInvisible
	}
	if c.MaxHandles <= 0 {
		c.MaxHandles = d.MaxHandles
	}
	return c
}

// renewSteps is Java's RenewStrategyPolicy: the invisibility each renewal
// asks, by how many renewals the handle had (the last repeats).
var renewSteps = []time.Duration{time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// renewKey is Java's ReceiptHandleGroupKey: one client (its channel) and
// one group.
type renewKey struct{ client, group string }

// tracked is one received message under renewal (MessageReceiptHandle).
type tracked struct {
	// mu is held across a renewal's broker request, so an ack that takes
	// the handle meanwhile waits and then acks the renewed handle (Java's
	// ReceiptHandleGroup.HandleData lock).
	mu sync.Mutex

	key              renewKey
	id               string // msgID + " " + the handle the client holds
	topic            string
	consumed         time.Time
	reconsume        int32
	handle           string    // current handle, guarded by mu
	visible          time.Time // when handle becomes visible, guarded by mu
	renews, failures int       // guarded by mu
	gone             bool      // taken, dropped or cleared; guarded by mu
	queued           atomic.Bool
}

// renewFuncs are the service calls the renewer makes.
type renewFuncs struct {
	// change is CHANGE_MESSAGE_INVISIBLETIME; it returns the new handle.
	change func(ctx context.Context, handle, group, topic string, d time.Duration) (string, error)
	// online reports a client the service still knows (Java:
	// ConsumerManager.findChannel).
	online func(client string) bool
	// backoff is the group's retry delay for a message delivered
	// attempt+1 times (the client's merged BackoffPolicy).
	backoff func(client string, attempt int32) time.Duration
}

// renewer is DefaultReceiptHandleManager: tracked handles by client and
// group, a scan every Period that queues the handles close to visible,
// and Workers that renew them.
//
// Locks: a worker holding tracked.mu may take renewer.mu; a holder of
// renewer.mu only TryLocks tracked.mu (scan), so neither waits on the
// other. No broker request runs under renewer.mu.
type renewer struct {
	cfg   RenewConfig
	fn    renewFuncs
	log   *slog.Logger
	steps []time.Duration
	now   func() time.Time

	mu     sync.Mutex
	groups map[renewKey]map[string]*tracked // guarded by mu
	n      int                              // tracked handles, guarded by mu
	full   bool                             // warned about MaxHandles, guarded by mu

	work chan *tracked
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func newRenewer(cfg RenewConfig, fn renewFuncs, log *slog.Logger) *renewer {
	cfg = cfg.withDefaults()
	steps := renewSteps
	if len(cfg.steps) > 0 {
		steps = cfg.steps
	}
	return &renewer{cfg: cfg, fn: fn, log: log, steps: steps, now: time.Now,
		groups: map[renewKey]map[string]*tracked{}, work: make(chan *tracked, cfg.Queue), stop: make(chan struct{})}
}

// start runs the scan and the workers until close.
func (r *renewer) start() {
	r.wg.Add(1 + r.cfg.Workers)
	go r.scanLoop()
	for range r.cfg.Workers {
		go r.worker()
	}
}

// close stops the scan and the workers, then makes every tracked handle
// visible soon (Java's shutdown: clearAllHandle).
func (r *renewer) close() {
	r.once.Do(func() {
		close(r.stop)
		r.wg.Wait()
		r.mu.Lock()
		var all []*tracked
		for k, g := range r.groups {
			for _, t := range g {
				all = append(all, t)
			}
			delete(r.groups, k)
		}
		r.n = 0
		r.mu.Unlock()
		r.release(all)
	})
}

func trackID(msgID, handle string) string { return msgID + " " + handle }

// add tracks a received handle; false when MaxHandles are tracked.
func (r *renewer) add(client, group, topic, msgID, handle string, reconsume int32) bool {
	rh, err := parseHandle(handle)
	if err != nil {
		return false
	}
	key := renewKey{client, group}
	t := &tracked{key: key, id: trackID(msgID, handle), topic: topic, consumed: r.now(), reconsume: reconsume,
		handle: handle, visible: time.UnixMilli(rh.PopTime + rh.InvisibleTime)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n >= r.cfg.MaxHandles {
		if !r.full {
			r.full = true
			r.log.Warn("grpc proxy: auto-renew table full, new handles are not renewed", "max", r.cfg.MaxHandles)
		}
		return false
	}
	g := r.groups[key]
	if g == nil {
		g = map[string]*tracked{}
		r.groups[key] = g
	}
	if _, dup := g[t.id]; !dup {
		r.n++
	}
	g[t.id] = t
	return true
}

// take stops tracking a handle the client acks, nacks or forwards, and
// returns the handle to use: the renewed one, or handle itself when it
// was not tracked (Java: removeReceiptHandle in the ack, change-invisible
// and DLQ activities).
func (r *renewer) take(client, group, msgID, handle string) string {
	key := renewKey{client, group}
	id := trackID(msgID, handle)
	r.mu.Lock()
	t := r.groups[key][id]
	if t != nil {
		r.unlink(t)
	}
	r.mu.Unlock()
	if t == nil {
		return handle
	}
	t.mu.Lock() // waits for a renewal under way
	defer t.mu.Unlock()
	t.gone = true
	return t.handle
}

// unlink removes t from the table; mu held.
func (r *renewer) unlink(t *tracked) {
	g := r.groups[t.key]
	if g[t.id] != t {
		return
	}
	delete(g, t.id)
	r.n--
	r.full = false
	if len(g) == 0 {
		delete(r.groups, t.key)
	}
}

// clearClient makes the handles of a client that went away visible soon
// (Java: clearGroup on CLIENT_UNREGISTER, or when the scan finds the
// channel gone).
func (r *renewer) clearClient(client string) {
	r.mu.Lock()
	var all []*tracked
	for k, g := range r.groups {
		if k.client != client {
			continue
		}
		for _, t := range g {
			all = append(all, t)
		}
		r.n -= len(g)
		delete(r.groups, k)
	}
	if len(all) > 0 {
		r.full = false
	}
	r.mu.Unlock()
	r.release(all)
}

// release gives each handle ClearInvisible, one request at a time.
func (r *renewer) release(all []*tracked) {
	for _, t := range all {
		t.mu.Lock()
		if !t.gone {
			t.gone = true
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if _, err := r.fn.change(ctx, t.handle, t.key.group, t.topic, r.cfg.ClearInvisible); err != nil {
				r.log.Debug("grpc proxy: release of a renewed handle failed", "group", t.key.group, "topic", t.topic, "err", err)
			}
			cancel()
		}
		t.mu.Unlock()
	}
}

// tracking is the number of handles tracked.
func (r *renewer) tracking() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *renewer) scanLoop() {
	defer r.wg.Done()
	tick := time.NewTicker(r.cfg.Period)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			r.scan()
		}
	}
}

// scan is scheduleRenewTask: clients gone are cleared, handles due within
// Ahead are queued for a worker.
func (r *renewer) scan() {
	r.mu.Lock()
	var offline []string
	var due []*tracked
	deadline := r.now().Add(r.cfg.Ahead)
	for k, g := range r.groups {
		if !r.fn.online(k.client) {
			offline = append(offline, k.client)
			continue
		}
		for _, t := range g {
			if t.queued.Load() || !t.mu.TryLock() {
				continue // queued, or being renewed or taken
			}
			if !t.gone && !t.visible.After(deadline) {
				due = append(due, t)
			}
			t.mu.Unlock()
		}
	}
	r.mu.Unlock()
	for _, c := range offline {
		go r.clearClient(c)
	}
	for _, t := range due {
		t.queued.Store(true)
		select {
		case r.work <- t:
		default:
			t.queued.Store(false)
			r.log.Warn("grpc proxy: renew queue full", "capacity", r.cfg.Queue)
			return
		}
	}
}

func (r *renewer) worker() {
	defer r.wg.Done()
	for {
		select {
		case <-r.stop:
			return
		case t := <-r.work:
			r.renew(t)
		}
	}
}

// renew is startRenewMessage for one handle.
func (r *renewer) renew(t *tracked) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queued.Store(false)
	if t.gone {
		return
	}
	drop := func() {
		t.gone = true
		r.mu.Lock()
		r.unlink(t)
		r.mu.Unlock()
	}
	if t.failures >= r.cfg.MaxRetries {
		r.log.Warn("grpc proxy: handle renewal failed too often, left to expire", "group", t.key.group, "topic", t.topic)
		drop()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if r.now().Sub(t.consumed) >= r.cfg.MaxTime {
		// compat: past renewMaxTimeMillis the message comes back after the
		// group's retry delay, as a failed consumption would.
		if _, err := r.fn.change(ctx, t.handle, t.key.group, t.topic, r.fn.backoff(t.key.client, t.reconsume)); err != nil {
			r.log.Debug("grpc proxy: stop-renew change failed", "group", t.key.group, "topic", t.topic, "err", err)
		}
		drop()
		return
	}
	d := r.steps[min(t.renews, len(r.steps)-1)]
	nh, err := r.fn.change(ctx, t.handle, t.key.group, t.topic, d)
	if err != nil {
		if !renewRetryable(err) {
			drop()
			return
		}
		t.failures++
		return
	}
	rh, perr := parseHandle(nh)
	if perr != nil {
		drop()
		return
	}
	t.handle, t.visible = nh, time.UnixMilli(rh.PopTime+rh.InvisibleTime)
	t.failures = 0
	t.renews++
}

// renewRetryable is renewExceptionNeedRetry: an invalid handle or broker
// is final.
func renewRetryable(err error) bool {
	var se *statusError
	if errors.As(err, &se) && se.code == v2.Code_INVALID_RECEIPT_HANDLE {
		return false
	}
	return true
}

// backoffDelay is RetryPolicy.nextDelayDuration for a message delivered
// attempt+1 times.
func backoffDelay(rp *v2.RetryPolicy, attempt int32) time.Duration {
	attempt = max(attempt, 0)
	if e := rp.GetExponentialBackoff(); e != nil {
		d := float64(e.GetInitial().AsDuration()) * math.Pow(float64(max(e.GetMultiplier(), 1)), float64(attempt))
		if mx := e.GetMax().AsDuration(); mx > 0 && d > float64(mx) {
			return mx
		}
		return time.Duration(d)
	}
	next := customizedNext
	if c := rp.GetCustomizedBackoff(); c != nil && len(c.GetNext()) > 0 {
		n := c.GetNext()
		return n[min(int(attempt), len(n)-1)].AsDuration()
	}
	return next[min(int(attempt), len(next)-1)]
}
