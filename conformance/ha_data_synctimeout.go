package conformance

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/storecompat"
)

// haSlaveTimeout is slaveTimeout of repl_slave_timeout (ms).
const haSlaveTimeout = 1000

// timedSend is one raw SEND_MESSAGE (a busy broker asked again) and how
// long the answer took.
func timedSend(ctx context.Context, addr, topic string, qid int, key string) (int32, string, time.Duration, error) {
	for try := 0; ; try++ {
		t0 := time.Now()
		code, remark, _, err := sendRaw(ctx, addr, topic, qid, map[string]string{"KEYS": key}, []byte(key))
		if err != nil || code != respSystemBusy || try == 20 {
			return code, remark, time.Since(t0), err
		}
		select {
		case <-ctx.Done():
			return code, remark, time.Since(t0), ctx.Err()
		case <-time.After(time.Duration(try+1) * 50 * time.Millisecond):
		}
	}
}

// replSlaveTimeout: SYNC_MASTER with totalReplicas=2, inSyncReplicas=2,
// slaveTimeout=1000. Sends answer SEND_OK while the slave runs; with the
// slave stopped they answer FLUSH_SLAVE_TIMEOUT after about slaveTimeout
// and the message is stored; with the slave back, SEND_OK again.
func replSlaveTimeout(ctx context.Context, h *HARun) error {
	p := h.Pair
	topic := h.Name("sync")
	if err := createTopic(ctx, p, topic, 1); err != nil {
		return err
	}
	// Caught up at 0 says nothing: wait for the slave's HA connection.
	if err := waitSlaveConnected(ctx, p.Master.Addr); err != nil {
		return err
	}
	var okMax time.Duration
	for i := range 20 {
		code, remark, d, err := timedSend(ctx, p.Master.Addr, topic, 0, "up-"+strconv.Itoa(i))
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("send %d with the slave up: code %d %q after %v, want SEND_OK", i, code, remark, d)
		}
		okMax = max(okMax, d)
	}
	gs, err := goclient.NewSender(p.NamesrvAddr, h.Name("sync_p"))
	if err != nil {
		return err
	}
	defer gs.Close()
	if st, _, _, err := gs.Send(ctx, topic, []byte("go-up")); err != nil || st != "SendOK" {
		return fmt.Errorf("Go client send with the slave up: %s %v, want SendOK", st, err)
	}

	p.Slave.Stop()
	before, err := storecompat.MaxOffset(ctx, p.Master.Addr, topic, 0)
	if err != nil {
		return err
	}
	var waits []time.Duration
	keys := []string{"down-0", "down-1", "down-2"}
	for _, k := range keys {
		code, remark, d, err := timedSend(ctx, p.Master.Addr, topic, 0, k)
		if err != nil {
			return err
		}
		if code != respFlushSlaveTimeout {
			return fmt.Errorf("send %s with the slave stopped: code %d %q after %v, want FLUSH_SLAVE_TIMEOUT (12)", k, code, remark, d)
		}
		if d < haSlaveTimeout*time.Millisecond*9/10 || d > 3*haSlaveTimeout*time.Millisecond+time.Second {
			return fmt.Errorf("send %s with the slave stopped answered FLUSH_SLAVE_TIMEOUT after %v, want ≈ slaveTimeout %dms", k, d, haSlaveTimeout)
		}
		waits = append(waits, d)
	}
	st, qid, qoff, err := gs.Send(ctx, topic, []byte("go-down"))
	if err != nil || st != "SendFlushSlaveTimeout" {
		return fmt.Errorf("Go client send with the slave stopped: %s %v, want SendFlushSlaveTimeout", st, err)
	}
	// Every timed-out message is stored on the master.
	recs, err := storecompat.PullRange(ctx, p.Master.Addr, h.Name("sync_raw"), topic, 0, before, before+int64(len(keys))+1, "*")
	if err != nil {
		return fmt.Errorf("read the timed-out messages back from the master: %w", err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, bodyOf(r))
	}
	want := append(append([]string{}, keys...), "go-down")
	if fmt.Sprint(got) != fmt.Sprint(want) || qid != 0 || qoff != before+int64(len(keys)) {
		return fmt.Errorf("master's queue %s/0 from %d holds %q, want %q (Go send at queue %d offset %d)", topic, before, got, want, qid, qoff)
	}

	r0 := time.Now()
	if err := p.Slave.Start(ctx); err != nil {
		return err
	}
	listed := time.Since(r0)
	var back time.Duration
	var timeouts int
	err = poll(ctx, 60*time.Second, "SEND_OK again after the slave restarted", func() (bool, string, error) {
		code, remark, _, err := timedSend(ctx, p.Master.Addr, topic, 0, "back-"+strconv.Itoa(timeouts))
		if err != nil {
			return false, "", err
		}
		switch code {
		case 0:
			back = time.Since(r0)
			return true, "", nil
		case respFlushSlaveTimeout:
			timeouts++
			return false, fmt.Sprintf("%d sends answered FLUSH_SLAVE_TIMEOUT since the restart", timeouts), nil
		}
		return false, "", fmt.Errorf("code %d %q", code, remark)
	})
	if err != nil {
		return err
	}
	if st, _, _, err := gs.Send(ctx, topic, []byte("go-back")); err != nil || st != "SendOK" {
		return fmt.Errorf("Go client send after the slave returned: %s %v, want SendOK", st, err)
	}
	h.Note("SEND_OK with the slave up (slowest %v); slave stopped: FLUSH_SLAVE_TIMEOUT after %v, Go client SendFlushSlaveTimeout, all stored; slave restarted (listed after %v): SEND_OK again %v after the restart (%d timeouts before)",
		okMax.Round(time.Millisecond), roundAll(waits), listed.Round(time.Millisecond), back.Round(time.Millisecond), timeouts)
	return nil
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// waitSlaveConnected polls the master's GET_BROKER_HA_STATUS until it lists
// one slave connection that has reported.
func waitSlaveConnected(ctx context.Context, master string) error {
	return poll(ctx, 60*time.Second, "a slave connected to the master's HA port", func() (bool, string, error) {
		st, err := haStatusRaw(ctx, master)
		if err != nil {
			return false, err.Error(), nil
		}
		return len(st.HAConnectionInfo) == 1 && st.HAConnectionInfo[0].SlaveAckOffset >= 0, fmt.Sprintf("%+v", st), nil
	})
}
