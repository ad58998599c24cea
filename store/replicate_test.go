package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

// fillMixed puts single records, batches and transaction halves over
// several segment rolls.
func fillMixed(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0, 1:
			require.Equal(t, PutOK, putSync(t, s, testMsg("Mix", int32(i%3), i, 100+i*37%3000)).Status)
		case 2:
			ms := make([]message.Message, 1+i%7)
			for j := range ms {
				ms[j] = *testMsg("MixBatch", 1, i*10+j, 200+j*50)
			}
			ch := make(chan PutResult, 1)
			s.PutBatch(ms, func(r PutResult) { ch <- r })
			require.Equal(t, PutOK, (<-ch).Status)
		case 3:
			m := testMsg("Half", 0, i, 300)
			m.SysFlag = message.ResetTransactionValue(m.SysFlag, message.TransactionPreparedType)
			require.Equal(t, PutOK, putSync(t, s, m).Status)
		case 4:
			require.Equal(t, PutOK, putSync(t, s, testMsg("Mix", 2, i, 8000)).Status)
		}
	}
}

// replicate copies master's raw bytes into slave in chunks of odd sizes,
// so records arrive split across calls.
func replicate(t *testing.T, master, slave *Store) {
	t.Helper()
	var v RawView
	defer v.Release()
	sizes := []int{1000, 32 << 10, 77, 5000, 13}
	for i := 0; ; i++ {
		off := slave.ReceivedOffset()
		if off == master.RawEnd() {
			return
		}
		require.NoError(t, master.ReadRaw(off, sizes[i%len(sizes)], &v))
		require.NotEmpty(t, v.Data)
		require.NoError(t, slave.AppendRaw(v.Offset, v.Data))
	}
}

func slaveConfig(t *testing.T, cfg Config) Config {
	c := cfg
	c.RootDir = t.TempDir()
	c.CommitLogDir = ""
	c.BrokerRole = Slave
	return c
}

func requireSameStores(t *testing.T, master, slave *Store, from int64) {
	t.Helper()
	waitDispatched(t, master)
	waitDispatched(t, slave)
	end := master.MaxPhyOffset()
	require.Equal(t, end, slave.MaxPhyOffset())
	seg := master.cfg.MappedFileSizeCommitLog
	require.Equal(t, commitLogBytes(t, master.cfg.RootDir, seg, from, end), commitLogBytes(t, slave.cfg.RootDir, seg, from, end), "commit logs byte for byte")
	require.Equal(t, master.Topics(), slave.Topics())
	for _, topic := range master.Topics() {
		require.Equal(t, master.QueueIDs(topic), slave.QueueIDs(topic))
		for _, q := range master.QueueIDs(topic) {
			lo := slave.MinOffset(topic, q)
			require.Equal(t, master.MaxOffset(topic, q), slave.MaxOffset(topic, q), "%s/%d", topic, q)
			mu, _ := master.ConsumeQueueUnits(topic, q, lo, 1<<20, nil)
			su, _ := slave.ConsumeQueueUnits(topic, q, lo, 1<<20, nil)
			require.Equal(t, mu, su, "consume queue %s/%d", topic, q)
		}
	}
	for _, k := range []string{"k1", "k12", "k40", "shared"} {
		mo, err := master.QueryByKey("Mix", k, 64, 0, 1<<62)
		require.NoError(t, err)
		so, err := slave.QueryByKey("Mix", k, 64, 0, 1<<62)
		require.NoError(t, err)
		var mine []int64
		for _, o := range mo {
			if o >= from {
				mine = append(mine, o)
			}
		}
		require.Equal(t, mine, so, "index %s", k)
	}
	require.NoError(t, slave.Check())
}

// A slave fed through ReadRaw -> AppendRaw holds the master's commit log
// byte for byte, rolls its segments where the master did, and builds the
// same consume queues and index.
func TestReplicateReadRawAppendRaw(t *testing.T) {
	for _, ft := range []FlushType{AsyncFlush, SyncFlush} {
		t.Run(ft.String(), func(t *testing.T) {
			cfg := smallSegConfig(t)
			cfg.FlushDiskType = ft
			master := openT(t, cfg)
			defer master.Close()
			slave := openT(t, slaveConfig(t, cfg))
			defer slave.Close()
			fillMixed(t, master, 150)
			require.Greater(t, master.MaxPhyOffset(), 3*cfg.MappedFileSizeCommitLog, "several rolls")
			replicate(t, master, slave)
			fillMixed(t, master, 60)
			replicate(t, master, slave)
			requireSameStores(t, master, slave, 0)
			require.Equal(t, master.cl.list()[len(master.cl.list())-1].start, slave.cl.list()[len(slave.cl.list())-1].start)
		})
	}
}

// An empty slave starts at a segment-aligned offset of the master (Java
// starts it at the master's last segment) and builds its queues from there.
func TestReplicateEmptySlaveStartsAtSegment(t *testing.T) {
	cfg := smallSegConfig(t)
	master := openT(t, cfg)
	defer master.Close()
	slave := openT(t, slaveConfig(t, cfg))
	defer slave.Close()
	fillMixed(t, master, 120)
	end := master.MaxPhyOffset()
	start := end - end%cfg.MappedFileSizeCommitLog
	require.Positive(t, start)
	require.True(t, errors.Is(slave.AppendRaw(start+8, []byte{1}), ErrOffsetMismatch), "not a segment start")
	var v RawView
	require.NoError(t, master.ReadRaw(start, 1<<20, &v))
	require.NoError(t, slave.AppendRaw(start, v.Data))
	v.Release()
	replicate(t, master, slave)
	require.Equal(t, start, slave.MinPhyOffset())
	waitDispatched(t, master)
	waitDispatched(t, slave)
	require.Equal(t, master.MaxOffset("Mix", 2), slave.MaxOffset("Mix", 2))
	require.Positive(t, slave.MinOffset("Mix", 2))
	var res GetResult
	slave.GetMessages("Mix", 2, slave.MinOffset("Mix", 2), 32, 1<<20, nil, &res)
	require.Equal(t, Found, res.Status)
	res.Release()
}

// AppendRaw refuses a wrong offset and a corrupt record (nothing of it
// becomes visible, and the correct bytes are accepted afterwards); a
// master refuses AppendRaw and a slave refuses local puts.
func TestAppendRawRefuses(t *testing.T) {
	cfg := smallSegConfig(t)
	master := openT(t, cfg)
	defer master.Close()
	slave := openT(t, slaveConfig(t, cfg))
	defer slave.Close()
	fillMixed(t, master, 10)

	require.True(t, errors.Is(master.AppendRaw(master.MaxPhyOffset(), []byte{0}), ErrMaster))
	r := putSync(t, slave, testMsg("Mix", 0, 0, 10))
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.True(t, errors.Is(r.Err, ErrSlave))

	var v RawView
	require.NoError(t, master.ReadRaw(0, 1<<20, &v))
	data := append([]byte(nil), v.Data...)
	v.Release()
	first, _, _ := message.PeekSize(data)
	require.True(t, errors.Is(slave.AppendRaw(100, data), ErrOffsetMismatch))

	bad := append([]byte(nil), data...)
	var e message.Ext
	require.NoError(t, message.Decode(bad[first:], &e))
	e.Body[len(e.Body)/2]++ // Body aliases bad: a flipped bit of the second record's body
	err := slave.AppendRaw(0, bad)
	require.True(t, errors.Is(err, ErrCorrupt), "%v", err)
	require.Equal(t, int64(first), slave.MaxPhyOffset(), "first record visible, nothing of the bad one")
	require.Equal(t, int64(first), slave.ReceivedOffset(), "the bad bytes are dropped")
	require.NoError(t, slave.AppendRaw(int64(first), data[first:]))
	replicate(t, master, slave)
	requireSameStores(t, master, slave, 0)
}

// The role changes at run time: a slave that became master continues the
// queues where replication left them; back to slave it refuses puts and
// takes the master's bytes again.
func TestSetRoleAtRunTime(t *testing.T) {
	cfg := smallSegConfig(t)
	master := openT(t, cfg)
	defer master.Close()
	slave := openT(t, slaveConfig(t, cfg))
	defer slave.Close()
	fillMixed(t, master, 40)
	replicate(t, master, slave)
	// A record half received is dropped by the switch.
	fillMixed(t, master, 1)
	var v RawView
	require.NoError(t, master.ReadRaw(slave.ReceivedOffset(), 50, &v))
	require.NoError(t, slave.AppendRaw(v.Offset, v.Data))
	v.Release()
	written := slave.MaxPhyOffset()
	require.Greater(t, slave.ReceivedOffset(), written)

	require.NoError(t, slave.SetRole(AsyncMaster))
	require.True(t, slave.IsWritable())
	require.Equal(t, written, slave.ReceivedOffset())
	next := slave.MaxOffset("Mix", 0)
	r := putSync(t, slave, testMsg("Mix", 0, 999, 100))
	require.Equal(t, PutOK, r.Status)
	require.Equal(t, written, r.WroteOffset)
	require.Equal(t, next, r.QueueOffset, "queue offsets continue")
	require.True(t, errors.Is(slave.AppendRaw(slave.MaxPhyOffset(), []byte{0}), ErrMaster))

	require.NoError(t, slave.SetRole(Slave))
	r = putSync(t, slave, testMsg("Mix", 0, 1000, 100))
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.Equal(t, fmt.Sprint(Slave), slave.Role().String())
	waitDispatched(t, slave)
	require.NoError(t, slave.Check())
}

// A slave's AppendRaw allocates nothing per call (segment rolls aside).
func TestAppendRawAllocationBudget(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.MessageIndexEnable = false
	cfg.FlushIntervalConsumeQueue = time.Hour
	master := openT(t, cfg)
	defer master.Close()
	slave := openT(t, slaveConfig(t, cfg))
	defer slave.Close()
	m := benchMsg(0)
	for i := 0; i < 800; i++ {
		require.Equal(t, PutOK, putSync(t, master, m).Status)
	}
	require.Less(t, master.MaxPhyOffset(), cfg.MappedFileSizeCommitLog, "no roll")
	var v RawView
	defer v.Release()
	step := func() {
		if err := master.ReadRaw(slave.ReceivedOffset(), 3000, &v); err != nil || len(v.Data) == 0 {
			t.Fatalf("read raw: %v", err)
		}
		if err := slave.AppendRaw(v.Offset, v.Data); err != nil {
			t.Fatalf("append raw: %v", err)
		}
	}
	for range 20 { // the queue's table entries
		step()
	}
	waitDispatched(t, slave)
	require.Zero(t, testing.AllocsPerRun(200, step))
}
