package storecompat

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

const (
	firstBatch = 500 // messages the writer stores
	laterBatch = 30  // messages the reader appends after the switch
)

// TestStoreCompat moves a store directory Java → ours and ours → Java.
func TestStoreCompat(t *testing.T) {
	env, dir := prepare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Second)
	defer cancel()

	start := time.Now()
	rig, err := NewRig(ctx, env, dir)
	require.NoError(t, err)
	defer rig.Close()
	// Small files so both the commit log and the consume queues roll over
	// several files on both sides.
	rig.SegmentSize, rig.MaxMessageSize, rig.CQFileSize = 128<<10, 64<<10, 16*20
	t.Logf("java name server %s ready in %v", rig.NamesrvAddr, time.Since(start).Round(time.Millisecond))

	t.Run("java_to_ours", func(t *testing.T) { moveStore(ctx, t, rig, Java, Ours) })
	t.Run("ours_to_java", func(t *testing.T) { moveStore(ctx, t, rig, Ours, Java) })
}

// moveStore writes with writer, stops it cleanly, starts reader on the same
// directory and checks the reader serves everything the writer did, then
// appends on the reader.
func moveStore(ctx context.Context, t *testing.T, rig *Rig, writer, reader Side) {
	lap := newLap(t)
	prefix := fmt.Sprintf("sc%s%d", writer, time.Now().UnixNano()%1e6)
	w := NewWorkload(prefix, 42)
	store := filepath.Join(rig.Dir, fmt.Sprintf("store-%s-to-%s", writer, reader))

	// 1. The writer stores the workload and the config to carry over.
	bw, err := rig.StartBroker(ctx, writer, store)
	require.NoError(t, err)
	stopped := false
	defer func() {
		if !stopped {
			_, _ = bw.Stop(5 * time.Second)
		}
	}()
	lap(fmt.Sprintf("start %s broker (writer)", writer))
	if writer == Java {
		// Ours must refuse a directory a Java broker is serving (Java's
		// lock is a POSIX lock on store/lock).
		_, err := rig.StartBroker(ctx, Ours, store)
		require.ErrorContains(t, err, "in use", "our broker started on a store the Java broker holds")
	}
	cl := harness.Attach(harness.External, rig.NamesrvAddr, bw.Addr)
	for _, tp := range w.Topics {
		require.NoError(t, cl.CreateTopic(ctx, tp.Name, tp.Queues, nil))
	}
	sent, err := w.Produce(ctx, rig.NamesrvAddr, 0, firstBatch)
	require.NoError(t, err, "produce on %s:\n%s", writer, bw.Logs(3000))
	lap(fmt.Sprintf("produce %d on %s", firstBatch, writer))

	group := GroupConfig{GroupName: w.Group(), ConsumeEnable: true, ConsumeFromMinEnable: true,
		ConsumeBroadcastEnable: true, RetryQueueNums: 1, RetryMaxTimes: 7, WhichBrokerWhenSlowly: 1, NotifyIDsChanged: true}
	require.NoError(t, CreateGroup(ctx, bw.Addr, group))
	counts := Counts(sent)
	committed := map[QueueKey]int64{}
	for _, tp := range w.Topics {
		for q := range tp.Queues {
			k := QueueKey{tp.Name, q}
			off := min(counts[k], int64(q+1)*3)
			require.NoError(t, CommitOffset(ctx, bw.Addr, w.Group(), tp.Name, q, off))
			committed[k] = off
		}
	}
	before, err := w.ReadAll(ctx, bw.Addr, counts, 15*time.Second)
	require.NoError(t, err)
	require.Empty(t, Check(sent, before), "the writer (%s) itself does not serve what it acknowledged", writer)
	writerLookups, err := CheckLookups(ctx, bw.Addr, sent)
	require.NoError(t, err)
	if len(writerLookups) > 0 {
		t.Logf("lookups on the writer (%s) already fail (not a store-format issue): %s", writer, strings.Join(writerLookups, "\n  "))
	}
	lap(fmt.Sprintf("read back + lookups on %s", writer))

	_, err = bw.Stop(45 * time.Second)
	stopped = true
	require.NoError(t, err, "%s", bw.Logs(3000))
	lap(fmt.Sprintf("stop %s (SIGTERM, clean)", writer))
	writerFiles, err := ReadConfigFiles(store)
	require.NoError(t, err)
	segs, _ := filepath.Glob(filepath.Join(store, "commitlog", "*"))
	cqs, _ := filepath.Glob(filepath.Join(store, "consumequeue", w.Topics[0].Name, "0", "*"))
	t.Logf("  store written by %s: %d commit-log files of %d bytes; %d consume-queue files of %d bytes in %s/0",
		writer, len(segs), rig.SegmentSize, len(cqs), rig.CQFileSize, w.Topics[0].Name)

	// 2. The reader opens the same directory.
	br, err := rig.StartBroker(ctx, reader, store)
	require.NoError(t, err)
	rstopped := false
	defer func() {
		if !rstopped {
			_, _ = br.Stop(5 * time.Second)
		}
	}()
	lap(fmt.Sprintf("start %s broker (reader)", reader))

	after, err := w.ReadAll(ctx, br.Addr, counts, 30*time.Second)
	require.NoError(t, err, "%s broker reading the %s store:\n%s", reader, writer, br.Logs(3000))
	require.Empty(t, Check(sent, after), "%s serves the %s store differently from what was sent", reader, writer)
	require.Empty(t, SameRecords(before, after), "%s serves records that differ from the %s broker's", reader, writer)
	tagProbs, err := w.CheckTagPull(ctx, br.Addr, sent)
	require.NoError(t, err)
	require.Empty(t, tagProbs, "%s filtering by tag over consume queues written by %s", reader, writer)
	lap(fmt.Sprintf("pull all %d (+ by tag) on %s", firstBatch, reader))

	readerLookups, err := CheckLookups(ctx, br.Addr, sent)
	require.NoError(t, err)
	if len(writerLookups) == 0 {
		require.Empty(t, readerLookups, "lookups that worked on %s fail on %s", writer, reader)
	} else if len(readerLookups) > 0 {
		t.Logf("lookups on the reader (%s): %s", reader, strings.Join(readerLookups, "\n  "))
	}
	lap(fmt.Sprintf("query by key/uniq key, view on %s", reader))

	topics, err := Topics(ctx, br.Addr)
	require.NoError(t, err)
	for _, tp := range w.Topics {
		got, ok := topics[tp.Name]
		require.True(t, ok, "topic %s written by %s is unknown to %s", tp.Name, writer, reader)
		require.Equal(t, tp.Queues, got.ReadQueueNums, "read queues of %s", tp.Name)
		require.Equal(t, tp.Queues, got.WriteQueueNums, "write queues of %s", tp.Name)
		require.Equal(t, 6, got.Perm, "perm of %s", tp.Name)
	}
	for k, want := range committed {
		got, found, err := QueryOffset(ctx, br.Addr, w.Group(), k.Topic, k.Queue)
		require.NoError(t, err)
		require.True(t, found, "offset of %s on %s/%d committed on %s is unknown to %s", w.Group(), k.Topic, k.Queue, writer, reader)
		require.Equal(t, want, got, "offset of %s on %s/%d", w.Group(), k.Topic, k.Queue)
	}
	groups, err := Groups(ctx, br.Addr)
	require.NoError(t, err)
	g, ok := groups[w.Group()]
	require.True(t, ok, "group %s created on %s is unknown to %s", w.Group(), writer, reader)
	require.Equal(t, group, g, "group %s settings after the switch", w.Group())
	lap(fmt.Sprintf("topics/offsets/groups on %s", reader))

	// 3. The reader appends: queue offsets and the commit log continue.
	more, err := w.Produce(ctx, rig.NamesrvAddr, firstBatch, firstBatch+laterBatch)
	require.NoError(t, err, "append on %s:\n%s", reader, br.Logs(3000))
	next := Counts(sent)
	for _, s := range more {
		k := QueueKey{s.Topic, s.QueueID}
		require.Equal(t, next[k], s.QueueOffset, "queue offset of a message appended by %s to %s/%d", reader, s.Topic, s.QueueID)
		next[k]++
	}
	all := append(append([]Sent(nil), sent...), more...)
	final, err := w.ReadAll(ctx, br.Addr, Counts(all), 15*time.Second)
	require.NoError(t, err)
	require.Empty(t, Check(all, final), "after appending on %s", reader)
	lap(fmt.Sprintf("append %d on %s and re-read", laterBatch, reader))
	wt, err := Traits(sent, final)
	require.NoError(t, err)
	rt, err := Traits(more, final)
	require.NoError(t, err)
	if onlyW, onlyR := TraitDiff(wt, rt); len(onlyW)+len(onlyR) > 0 {
		t.Logf("record contents for the same sends: only %s writes %v; only %s writes %v", writer, onlyW, reader, onlyR)
	}

	_, err = br.Stop(45 * time.Second)
	rstopped = true
	require.NoError(t, err, "%s", br.Logs(3000))
	lap(fmt.Sprintf("stop %s (SIGTERM, clean)", reader))

	// 4. Report how the config files each side wrote differ in shape.
	readerFiles, err := ReadConfigFiles(store)
	require.NoError(t, err)
	for _, n := range ConfigFiles {
		a, b := writerFiles[n], readerFiles[n]
		if a == nil || b == nil {
			t.Logf("config/%s: written by %s: %v, by %s: %v", n, writer, a != nil, reader, b != nil)
			continue
		}
		onlyW, onlyR, err := ShapeDiff(a, b)
		require.NoError(t, err, "config/%s", n)
		if len(onlyW)+len(onlyR) > 0 {
			t.Logf("config/%s fields only %s writes: %v; only %s writes: %v", n, writer, onlyW, reader, onlyR)
		}
		dropped, added, err := TableKeyDiff(n, a, b)
		require.NoError(t, err)
		require.Empty(t, dropped, "config/%s entries written by %s that %s dropped", n, writer, reader)
		if len(added) > 0 {
			t.Logf("config/%s entries %s added to the %s file: %v", n, reader, writer, added)
		}
	}

	// 5. When the writer is ours (cheap to restart), hand the store back:
	// ours reads what Java appended, with Java's checkpoint.
	if writer != Ours {
		return
	}
	bb, err := rig.StartBroker(ctx, writer, store)
	require.NoError(t, err)
	defer func() { _, _ = bb.Stop(5 * time.Second) }()
	back, err := w.ReadAll(ctx, bb.Addr, Counts(all), 15*time.Second)
	require.NoError(t, err, "%s reading the store back from %s:\n%s", writer, reader, bb.Logs(3000))
	require.Empty(t, Check(all, back), "%s reading the store back from %s", writer, reader)
	require.Empty(t, SameRecords(final, back), "%s serves records that differ from the %s broker's", writer, reader)
	backLookups, err := CheckLookups(ctx, bb.Addr, all)
	require.NoError(t, err)
	require.Empty(t, backLookups, "lookups on %s after the store came back from %s", writer, reader)
	for k, want := range committed {
		got, found, err := QueryOffset(ctx, bb.Addr, w.Group(), k.Topic, k.Queue)
		require.NoError(t, err)
		require.True(t, found && got == want, "offset of %s/%d back on %s: %d (found %v), want %d", k.Topic, k.Queue, writer, got, found, want)
	}
	_, err = bb.Stop(45 * time.Second)
	require.NoError(t, err, "%s", bb.Logs(3000))
	lap(fmt.Sprintf("back on %s: pull, lookups, offsets", writer))
}

// newLap returns a function that logs what took how long since its
// previous call (or since newLap).
func newLap(t *testing.T) func(what string) {
	phase := time.Now()
	return func(what string) {
		t.Logf("%-34s %v", what, time.Since(phase).Round(time.Millisecond))
		phase = time.Now()
	}
}
