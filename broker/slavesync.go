package broker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/store/timer"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Java's SlaveSynchronize schedule (BrokerController.initializeBrokerScheduledTasks):
// a tick every 3 s after 10 s, and a full sync only when 60 s have passed
// since the last one (the clock starts at construction, so the first sync
// happens about a minute after start).
const (
	slaveSyncInitialDelay = 10 * time.Second
	slaveSyncTick         = 3 * time.Second
	slaveSyncEvery        = 60 * time.Second
	// slaveSyncPageSize is BrokerOuterAPI.getMaxPageSize: the page a slave
	// asks of a 5.x master that splits its metadata.
	slaveSyncPageSize = 2000
	// slaveSyncPagedTimeout bounds one paged fetch (BrokerOuterAPI.getTimeoutMillis).
	slaveSyncPagedTimeout = 60 * time.Second
	// slaveSyncCallTimeout is the 3 s of Java's single-shot fetches.
	slaveSyncCallTimeout = 3 * time.Second
)

// roleView is what slaveSync needs of the broker's role component.
type roleView interface {
	IsSlave() bool
	MasterAddr() string
}

// invoker sends one request and waits for its answer (*transport.Client).
type invoker interface {
	Invoke(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error)
}

// slaveSyncTables are the broker tables a slave takes over from its master.
type slaveSyncTables struct {
	topics  *topicTable
	offsets *offsetTable
	groups  *groupTable
	delay   *delayService
	// timerWheel is timerWheelEnable: syncAll then also asks for the timer
	// metrics (Java syncTimerMetrics; we keep none, so they are only checked).
	timerWheel bool
	// timerCheckpoint, when set with timerWheel, receives the master's
	// timer checkpoint every tick (Java syncTimerCheckPoint: lastReadTimeMs,
	// masterTimerQueueOffset and the data version).
	timerCheckpoint func(timer.Checkpoint)
}

// slaveSync is the slave's periodic metadata synchronization from its
// master (Java SlaveSynchronize): topic configs, consumer offsets, delay
// offsets, subscription groups and message request modes, in that order
// and with Java's request codes.
type slaveSync struct {
	cli      invoker
	role     roleView
	selfAddr func() string // this broker's address; a master equal to it is skipped
	tables   slaveSyncTables
	log      *slog.Logger

	mu       sync.Mutex
	lastSync time.Time // guarded by mu

	startOnce, stopOnce sync.Once
	quit                chan struct{}
	wg                  sync.WaitGroup
}

func newSlaveSync(cli invoker, role roleView, selfAddr func() string, tables slaveSyncTables, log *slog.Logger) *slaveSync {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &slaveSync{
		cli: cli, role: role, selfAddr: selfAddr, tables: tables, log: log,
		lastSync: time.Now(),
		quit:     make(chan struct{}),
	}
}

// Start runs the schedule in a goroutine; ticks do nothing while the
// broker is not a slave, so a role change needs no restart.
func (s *slaveSync) Start() {
	s.startOnce.Do(func() {
		s.wg.Add(1)
		go s.loop()
	})
}

// Stop ends the schedule and waits for a sync in progress.
func (s *slaveSync) Stop() {
	s.stopOnce.Do(func() { close(s.quit) })
	s.wg.Wait()
}

func (s *slaveSync) loop() {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTimer(slaveSyncInitialDelay)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		t.Reset(slaveSyncTick)
		if !s.role.IsSlave() {
			continue
		}
		s.mu.Lock()
		due := time.Since(s.lastSync) > slaveSyncEvery
		s.mu.Unlock()
		if due {
			if err := s.SyncOnce(ctx); err != nil {
				s.log.Warn("slave sync from master", "err", err)
			}
		}
		// The timer checkpoint is latency-sensitive: every tick, as Java.
		if err := s.SyncTimerCheckpoint(ctx); err != nil {
			s.log.Warn("slave sync timer checkpoint from master", "err", err)
		}
	}
}

// SyncOnce runs one full sync (Java syncAll). Each step is independent: a
// failed step is reported and leaves its table as it was.
func (s *slaveSync) SyncOnce(ctx context.Context) error {
	defer func() {
		s.mu.Lock()
		s.lastSync = time.Now()
		s.mu.Unlock()
	}()
	master := s.role.MasterAddr()
	if master == "" || (s.selfAddr != nil && master == s.selfAddr()) {
		return nil
	}
	var errs []error
	step := func(what string, f func(context.Context, string) error) {
		if err := f(ctx, master); err != nil {
			errs = append(errs, fmt.Errorf("slave sync %s from %s: %w", what, master, err))
		}
	}
	step("topic config", s.syncTopicConfig)
	step("consumer offset", s.syncConsumerOffset)
	step("delay offset", s.syncDelayOffset)
	step("subscription group", s.syncSubscriptionGroup)
	step("message request mode", s.syncMessageRequestMode)
	if s.tables.timerWheel {
		step("timer metrics", s.syncTimerMetrics)
	}
	return errors.Join(errs...)
}

func (s *slaveSync) call(ctx context.Context, addr string, req *codec.Frame, timeout time.Duration) (*codec.Frame, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := s.cli.Invoke(ctx, addr, req)
	if err != nil {
		return nil, err
	}
	if resp.Code != int32(codec.RespSuccess) {
		return nil, fmt.Errorf("code %d: %s", resp.Code, resp.Remark)
	}
	return resp, nil
}

func syncRequest(code codec.RequestCode) *codec.Frame {
	return &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion}
}

// fetchPaged runs BrokerOuterAPI's paged loop for GET_ALL_TOPIC_CONFIG and
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (5.4.0): ask writes a page's typed
// request header (seq, page size, the first page's data version or "");
// decode returns a page's data version and entry count; total reads the
// table size from the answer's typed header (header.ErrMissingField: a
// master that does not page, such as 5.3.3, sent everything); reset drops
// what was gathered when the version moves.
func (s *slaveSync) fetchPaged(ctx context.Context, addr string, code codec.RequestCode, ask func(f *codec.Frame, seq int32, dataVersion string),
	decode func([]byte) (body.TopicVersion, int, error), total func(*codec.Frame) (int32, error), reset func()) (body.TopicVersion, error) {
	ctx, cancel := context.WithTimeout(ctx, slaveSyncPagedTimeout)
	defer cancel()
	var version *body.TopicVersion
	seq := 0
	for {
		req := syncRequest(code)
		dv := ""
		if version != nil {
			dv = string(body.AppendTopicVersion(nil, *version))
		}
		ask(req, int32(seq), dv)
		resp, err := s.call(ctx, addr, req, slaveSyncPagedTimeout)
		if err != nil {
			return body.TopicVersion{}, err
		}
		v, n, err := decode(resp.Body)
		if err != nil {
			return body.TopicVersion{}, err
		}
		seq += n
		if version == nil {
			version = &v
		}
		n32, err := total(resp)
		if errors.Is(err, header.ErrMissingField) { // a master that does not page sent everything
			return *version, nil
		}
		if err != nil {
			return body.TopicVersion{}, err
		}
		total := int(n32)
		if *version != v {
			version = &v
			seq = 0
			reset()
			continue
		}
		// compat: Java's loop stops at total-1, which drops the last entry
		// of a table one past a page multiple; we read to total, and an
		// empty page ends the table.
		if seq >= total || n == 0 {
			return *version, nil
		}
	}
}

func (s *slaveSync) syncTopicConfig(ctx context.Context, addr string) error {
	all := map[string]body.TopicConfig{}
	version, err := s.fetchPaged(ctx, addr, codec.ReqGetAllTopicConfig,
		func(f *codec.Frame, seq int32, dv string) {
			h := header.GetAllTopicConfigRequest{DataVersion: dv}
			h.SetTopicSeq(seq)
			h.SetMaxTopicNum(slaveSyncPageSize)
			h.Encode(f)
		},
		func(b []byte) (body.TopicVersion, int, error) {
			f, err := body.DecodeTopicConfigFile(b)
			if err != nil {
				return body.TopicVersion{}, 0, err
			}
			for k, tc := range f.TopicConfigTable {
				all[k] = tc
			}
			return f.DataVersion, len(f.TopicConfigTable), nil
		}, func(r *codec.Frame) (int32, error) {
			var h header.GetAllTopicConfigResponse
			err := h.Decode(r)
			return h.TotalTopicNum, err
		}, func() { clear(all) })
	if err != nil {
		return err
	}
	if len(all) == 0 {
		// A master always has its system topics: an empty table is a bad answer.
		return errors.New("master sent no topic")
	}
	t := s.tables.topics
	t.mu.Lock()
	if t.version == version {
		t.mu.Unlock()
		return nil
	}
	t.topics = all
	t.version = version
	// compat: Java takes the master's version and then bumps it
	// (updateDataVersion), so the name server sees the change.
	t.bumpLocked()
	t.mu.Unlock()
	return t.changed(nil)
}

func (s *slaveSync) syncConsumerOffset(ctx context.Context, addr string) error {
	resp, err := s.call(ctx, addr, syncRequest(codec.ReqGetAllConsumerOffset), slaveSyncCallTimeout)
	if err != nil {
		return err
	}
	f, err := body.DecodeConsumerOffsetFile(resp.Body)
	if err != nil {
		return err
	}
	o := s.tables.offsets
	o.mu.Lock()
	// Java putAll: the master's entries replace the slave's, none is deleted.
	for key, queues := range f.OffsetTable {
		i := strings.LastIndexByte(key, '@')
		if i < 0 {
			continue
		}
		m := make(map[int32]int64, len(queues))
		for q, off := range queues {
			m[q] = off
		}
		o.table[groupTopic{topic: key[:i], group: key[i+1:]}] = m
	}
	o.version = f.DataVersion
	o.mu.Unlock()
	return o.persist()
}

func (s *slaveSync) syncDelayOffset(ctx context.Context, addr string) error {
	resp, err := s.call(ctx, addr, syncRequest(codec.ReqGetAllDelayOffset), slaveSyncCallTimeout)
	if err != nil {
		return err
	}
	// Java writes the body to delayOffset.json as is and reloads it; we
	// check it parses first so a bad answer cannot replace a good file.
	if _, err := body.DecodeDelayOffsetFile(resp.Body); err != nil {
		return err
	}
	d := s.tables.delay
	d.pmu.Lock()
	err = writeConfigFile(d.path, resp.Body)
	d.pmu.Unlock()
	if err != nil {
		return err
	}
	return d.load()
}

func (s *slaveSync) syncSubscriptionGroup(ctx context.Context, addr string) error {
	all := map[string]body.SubscriptionGroupConfig{}
	version, err := s.fetchPaged(ctx, addr, codec.ReqGetAllSubscriptiongroupConfig,
		func(f *codec.Frame, seq int32, dv string) {
			h := header.GetAllSubscriptionGroupRequest{DataVersion: dv}
			h.SetGroupSeq(seq)
			h.SetMaxGroupNum(slaveSyncPageSize)
			h.Encode(f)
		},
		func(b []byte) (body.TopicVersion, int, error) {
			f, err := body.DecodeSubscriptionGroupFile(b)
			if err != nil {
				return body.TopicVersion{}, 0, err
			}
			for k, sg := range f.SubscriptionGroupTable {
				all[k] = sg
			}
			return f.DataVersion, len(f.SubscriptionGroupTable), nil
		}, func(r *codec.Frame) (int32, error) {
			var h header.GetAllSubscriptionGroupResponse
			err := h.Decode(r)
			return h.TotalGroupNum, err
		}, func() { clear(all) })
	if err != nil {
		return err
	}
	if len(all) == 0 {
		return errors.New("master sent no subscription group")
	}
	g := s.tables.groups
	g.mu.Lock()
	if g.version == version {
		g.mu.Unlock()
		return nil
	}
	g.groups = all
	g.version = version
	// compat: bumped after taking the master's version, as Java does.
	g.version.Counter++
	g.version.Timestamp = time.Now().UnixMilli()
	g.mu.Unlock()
	return g.persist()
}

// syncMessageRequestMode asks GET_ALL_MESSAGE_REQUEST_MODE as Java's slave
// does. We keep no message request modes (POP assignment is not served), so
// the answer is only checked.
func (s *slaveSync) syncMessageRequestMode(ctx context.Context, addr string) error {
	resp, err := s.call(ctx, addr, syncRequest(codec.ReqGetAllMessageRequestMode), slaveSyncCallTimeout)
	if err != nil {
		return err
	}
	var w struct {
		MessageRequestModeMap map[string]json.RawMessage `json:"messageRequestModeMap"`
	}
	if err := fastjson.Unmarshal(resp.Body, &w); err != nil {
		return fmt.Errorf("message request modes: %w", err)
	}
	return nil
}

// syncTimerMetrics asks GET_TIMER_METRICS as Java's slave does when
// timerWheelEnable. Our timer keeps no TimerMetrics, so the answer is only
// checked.
func (s *slaveSync) syncTimerMetrics(ctx context.Context, addr string) error {
	resp, err := s.call(ctx, addr, syncRequest(codec.ReqGetTimerMetrics), slaveSyncCallTimeout)
	if err != nil {
		return err
	}
	var w struct {
		DataVersion body.TopicVersion          `json:"dataVersion"`
		TimingCount map[string]json.RawMessage `json:"timingCount"`
	}
	if err := fastjson.Unmarshal(resp.Body, &w); err != nil {
		return fmt.Errorf("timer metrics: %w", err)
	}
	return nil
}

// SyncTimerCheckpoint is Java's syncTimerCheckPoint: GET_TIMER_CHECK_POINT
// from the master, handed to tables.timerCheckpoint. It does nothing when
// the broker is not a slave, the timer is off or nothing takes the result.
func (s *slaveSync) SyncTimerCheckpoint(ctx context.Context) error {
	if !s.tables.timerWheel || s.tables.timerCheckpoint == nil || !s.role.IsSlave() {
		return nil
	}
	master := s.role.MasterAddr()
	if master == "" {
		return nil
	}
	resp, err := s.call(ctx, master, syncRequest(codec.ReqGetTimerCheckPoint), slaveSyncCallTimeout)
	if err != nil {
		return fmt.Errorf("slave sync timer checkpoint from %s: %w", master, err)
	}
	ck, err := decodeTimerCheckpoint(resp.Body)
	if err != nil {
		return fmt.Errorf("slave sync timer checkpoint from %s: %w", master, err)
	}
	s.tables.timerCheckpoint(ck)
	return nil
}

// decodeTimerCheckpoint reads TimerCheckpoint.encode: four longs, then
// (since 4.9.x) the data version's stateVersion, timestamp and counter.
func decodeTimerCheckpoint(b []byte) (timer.Checkpoint, error) {
	ck := timer.Checkpoint{ProgressPos: -1}
	if len(b) < 32 {
		return ck, fmt.Errorf("timer checkpoint: %d bytes", len(b))
	}
	get := func(i int) int64 { return int64(binary.BigEndian.Uint64(b[i*8:])) }
	ck.LastReadTimeMs, ck.LastTimerLogFlushPos = get(0), get(1)
	ck.LastTimerQueueOffset, ck.MasterTimerQueueOffset = get(2), get(3)
	if len(b) >= timerCheckpointWireSize {
		ck.StateVersion, ck.Timestamp, ck.Counter = get(4), get(5), get(6)
	}
	return ck, nil
}
