//go:build long

package storecompat

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// TestStoreCompatCrash hands a store over after the writer was SIGKILLed
// right after its last acknowledged send: the reader's abnormal recovery
// (driven by the other side's checkpoint and abort file) must serve every
// acknowledged message at its queue offset (ASYNC_FLUSH: a killed process
// loses nothing that reached the page cache). Run with -tags long.
func TestStoreCompatCrash(t *testing.T) {
	env, dir := prepare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	rig, err := NewRig(ctx, env, dir)
	require.NoError(t, err)
	defer rig.Close()
	rig.SegmentSize, rig.MaxMessageSize, rig.CQFileSize = 128<<10, 64<<10, 16*20

	t.Run("java_refuses_held_store", func(t *testing.T) { javaRefusesHeldStore(ctx, t, rig) })
	t.Run("java_killed_to_ours", func(t *testing.T) { crashMove(ctx, t, rig, Java, Ours) })
	t.Run("ours_killed_to_java", func(t *testing.T) { crashMove(ctx, t, rig, Ours, Java) })
}

func crashMove(ctx context.Context, t *testing.T, rig *Rig, writer, reader Side) {
	lap := newLap(t)
	prefix := fmt.Sprintf("sk%s%d", writer, time.Now().UnixNano()%1e6)
	w := NewWorkload(prefix, 7)
	store := filepath.Join(rig.Dir, fmt.Sprintf("crash-%s-to-%s", writer, reader))

	bw, err := rig.StartBroker(ctx, writer, store)
	require.NoError(t, err)
	defer bw.Kill()
	cl := harness.Attach(harness.External, rig.NamesrvAddr, bw.Addr)
	for _, tp := range w.Topics {
		require.NoError(t, cl.CreateTopic(ctx, tp.Name, tp.Queues, nil))
	}
	half := firstBatch / 2
	sent, err := w.Produce(ctx, rig.NamesrvAddr, 0, half)
	require.NoError(t, err, "produce on %s:\n%s", writer, bw.Logs(3000))
	if writer == Ours {
		// Let a checkpoint with real timestamps land (every second), so
		// the reader's recovery has to trust it for the first half and
		// re-dispatch the second.
		require.NoError(t, waitCheckpoint(store, 10*time.Second))
	}
	more0, err := w.Produce(ctx, rig.NamesrvAddr, half, firstBatch)
	require.NoError(t, err, "produce on %s:\n%s", writer, bw.Logs(3000))
	sent = append(sent, more0...)
	bw.Kill()
	lap(fmt.Sprintf("start %s, produce %d, SIGKILL", writer, firstBatch))
	_, err = os.Stat(filepath.Join(store, "abort"))
	require.NoError(t, err, "a killed %s broker leaves store/abort behind", writer)

	br, err := rig.StartBroker(ctx, reader, store)
	require.NoError(t, err)
	stopped := false
	defer func() {
		if !stopped {
			_, _ = br.Stop(5 * time.Second)
		}
	}()
	lap(fmt.Sprintf("start %s on the crashed store", reader))
	after, err := w.ReadAll(ctx, br.Addr, Counts(sent), 60*time.Second)
	require.NoError(t, err, "%s recovering the crashed %s store:\n%s", reader, writer, br.Logs(3000))
	require.Empty(t, Check(sent, after), "%s recovering the crashed %s store", reader, writer)
	tagProbs, err := w.CheckTagPull(ctx, br.Addr, sent)
	require.NoError(t, err)
	require.Empty(t, tagProbs)
	lookups, err := CheckLookups(ctx, br.Addr, sent)
	require.NoError(t, err)
	require.Empty(t, lookups, "index lookups after %s recovered the crashed %s store", reader, writer)
	lap(fmt.Sprintf("pull, tag pull, lookups on %s", reader))

	more, err := w.Produce(ctx, rig.NamesrvAddr, firstBatch, firstBatch+laterBatch)
	require.NoError(t, err)
	next := Counts(sent)
	for _, s := range more {
		k := QueueKey{s.Topic, s.QueueID}
		require.Equal(t, next[k], s.QueueOffset, "queue offset appended by %s to %s/%d", reader, s.Topic, s.QueueID)
		next[k]++
	}
	all := append(append([]Sent(nil), sent...), more...)
	final, err := w.ReadAll(ctx, br.Addr, Counts(all), 15*time.Second)
	require.NoError(t, err)
	require.Empty(t, Check(all, final))
	_, err = br.Stop(45 * time.Second)
	stopped = true
	require.NoError(t, err, "%s", br.Logs(3000))
	lap(fmt.Sprintf("append %d on %s, stop", laterBatch, reader))
}

// waitCheckpoint polls store/checkpoint until its physicMsgTimestamp is set.
func waitCheckpoint(store string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(filepath.Join(store, "checkpoint"))
		if err == nil && len(b) >= 8 && binary.BigEndian.Uint64(b) != 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("storecompat: no checkpoint timestamp in %s after %v (%v)", store, timeout, err)
		}
		time.Sleep(100 * time.Millisecond) // polling a file another process writes
	}
}

// lastLine returns the last line of s containing sub (or s's first line).
func lastLine(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return lines[0]
}

// javaRefusesHeldStore starts the Java broker on a directory our broker is
// serving: it must fail on the store lock. The store is empty on purpose:
// the Java broker recovers (and truncates) the store before it takes the
// lock, so pointing it at a live store with data damages that store
// whatever the lock says.
func javaRefusesHeldStore(ctx context.Context, t *testing.T, rig *Rig) {
	store := filepath.Join(rig.Dir, "held")
	bo, err := rig.StartBroker(ctx, Ours, store)
	require.NoError(t, err)
	defer func() { _, _ = bo.Stop(5 * time.Second) }()
	_, err = rig.StartBroker(ctx, Java, store)
	require.Error(t, err, "the Java broker started on a store ours holds")
	require.Contains(t, err.Error(), "Lock failed", "the Java broker failed for another reason")
	t.Logf("java refused: %s", lastLine(err.Error(), "Lock failed"))
}
