package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/storecompat"
)

// replIdentical: a mixed load, then the logs and consume queues of master
// and slave compared on disk.
func replIdentical(ctx context.Context, h *HARun) error {
	p := h.Pair
	topic, dtopic, ttopic := h.Name("mix"), h.Name("delay"), h.Name("txn")
	for _, t := range []struct {
		name   string
		queues int
	}{{topic, 8}, {dtopic, 4}, {ttopic, 4}} {
		if err := createTopic(ctx, p, t.name, t.queues); err != nil {
			return err
		}
	}
	// An empty slave that reports only after the master rolled would start
	// at the master's last segment (repl_empty_slave): wait for its report.
	if err := waitSlaveConnected(ctx, p.Master.Addr); err != nil {
		return err
	}
	load := goclient.MixedLoad{
		Namesrv: p.NamesrvAddr, Prefix: h.Prefix, Topic: topic, DelayTopic: dtopic, TxnTopic: ttopic,
		Delayed: 3000, Txn: 2000, Compressed: 2000, Batches: 1500, BatchSize: 100, Singles: 43000,
		Producers: 4, Workers: 24,
	}
	// With a Java client, its HaTool produces into a topic of its own while
	// the Go load runs (both clients' records interleave in one log).
	jtopic := h.Name("jmix")
	var jacked int64
	jdone := make(chan error, 1)
	if h.Client != HarnessOnly {
		if err := createTopic(ctx, p, jtopic, 8); err != nil {
			return err
		}
		go func() { jdone <- javaMixed(ctx, h, jtopic, &jacked) }()
	} else {
		jdone <- nil
	}
	res, err := load.Run(ctx)
	if jerr := <-jdone; err == nil {
		err = jerr
	}
	if err != nil {
		return err
	}
	h.Note("sent %s", res)
	if h.Client != HarnessOnly {
		h.Note("%s client (HaTool) sent %d more (single, batch, keyed, compressed, delay)", h.Client, jacked)
	}
	if res.Messages < 200_000 {
		return fmt.Errorf("only %d messages acknowledged, want ≥ 200000", res.Messages)
	}
	settle := time.Now()
	if err := quiesceMixed(ctx, h, res, dtopic, ttopic); err != nil {
		return err
	}
	if jacked > 0 {
		// The Java client's delayed messages land in its topic when due.
		if err := poll(ctx, 60*time.Second, "the Java client's messages (delays delivered) on the master", func() (bool, string, error) {
			n, err := queueTotal(ctx, p.Master.Addr, jtopic, 8)
			if err != nil {
				return false, err.Error(), nil
			}
			return n >= jacked, fmt.Sprintf("%d of %d", n, jacked), nil
		}); err != nil {
			return err
		}
	}
	if _, err := p.WaitCaughtUp(ctx, 2*time.Minute); err != nil {
		return err
	}
	end, err := stopMasterThenSlave(ctx, h)
	if err != nil {
		return err
	}
	h.Note("settled (delays delivered, ops written, slave caught up, both stopped) in %v", time.Since(settle).Round(time.Millisecond))
	cmpStart := time.Now()
	lc, err := compareCommitLogs(p.Master.StoreDir, p.Slave.StoreDir, 0, end)
	if err != nil {
		return err
	}
	if lc.Files < 4 {
		return fmt.Errorf("the master's commit log has %d files up to %d, want ≥ 4 (3 segment rolls)", lc.Files, end)
	}
	cq, extra, err := compareConsumeQueues(p.Master.StoreDir, p.Slave.StoreDir)
	if err != nil {
		return err
	}
	h.Note("commit logs identical: %d bytes in %d files; consume queues identical: %d entries in %d queues of %d topics (compared in %v)",
		lc.Bytes, lc.Files, cq.Entries, cq.Queues, cq.Topics, time.Since(cmpStart).Round(time.Millisecond))
	if len(extra) > 0 {
		h.Note("queues only on the slave: %s", strings.Join(extra, " "))
	}
	return nil
}

// quiesceMixed waits until the master wrote everything the load causes
// later: the delayed messages delivered to their topic, the committed
// messages in theirs, and op messages naming every decided half.
func quiesceMixed(ctx context.Context, h *HARun, res goclient.MixedResult, dtopic, ttopic string) error {
	m := h.Pair.Master.Addr
	count := func(topic string, queues int, want int) func() (bool, string, error) {
		return func() (bool, string, error) {
			n, err := queueTotal(ctx, m, topic, queues)
			if err != nil {
				return false, err.Error(), nil
			}
			return n >= int64(want), fmt.Sprintf("%d of %d", n, want), nil
		}
	}
	if err := poll(ctx, 90*time.Second, "delayed messages delivered on the master", count(dtopic, 4, res.Delayed)); err != nil {
		return err
	}
	if err := poll(ctx, 30*time.Second, "committed transactional messages on the master", count(ttopic, 4, res.Committed)); err != nil {
		return err
	}
	decided := res.Committed + res.RolledBack
	return poll(ctx, 30*time.Second, "op messages for every decided half on the master", func() (bool, string, error) {
		n, err := opReferences(ctx, m)
		if err != nil {
			return false, err.Error(), nil
		}
		return n >= decided, fmt.Sprintf("%d of %d halves named", n, decided), nil
	})
}

// opReferences counts the distinct half offsets the master's op messages
// name (Java 5.x batches them as "o1,o2,…"; one offset per op otherwise).
func opReferences(ctx context.Context, addr string) (int, error) {
	end, err := storecompat.MaxOffset(ctx, addr, transOpHalfTopic, 0)
	if err != nil || end == 0 {
		return 0, err
	}
	recs, err := storecompat.PullRange(ctx, addr, haPullGroupWhenNoSubscription, transOpHalfTopic, 0, 0, end, "*")
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, r := range recs {
		for _, m := range primitive.DecodeMessage(r) {
			for _, o := range strings.Split(string(m.Body), ",") {
				if o = strings.TrimSpace(o); o != "" {
					seen[o] = true
				}
			}
		}
	}
	return len(seen), nil
}

// stopMasterThenSlave stops the master gracefully, reads where its commit
// log ends, waits for the slave to hold that much and stops it (a graceful
// stop flushes both consume queues). It returns the master's end.
func stopMasterThenSlave(ctx context.Context, h *HARun) (int64, error) {
	p := h.Pair
	p.Master.Stop()
	end, _, err := commitLogEnd(p.Master.StoreDir)
	if err != nil {
		return 0, fmt.Errorf("master's commit log after stop: %w", err)
	}
	err = poll(ctx, 30*time.Second, "slave holding the stopped master's last byte", func() (bool, string, error) {
		v, err := p.Slave.MaxPhyOffset(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		return v == end, fmt.Sprintf("slave at %d, master's log ends at %d", v, end), nil
	})
	p.Slave.Stop()
	if err != nil {
		return 0, err
	}
	return end, nil
}

// haJavaMessages is what the Java client sends in repl_identical_java.
const haJavaMessages = 40_000

// javaMixed runs HaTool produce for the cell's Java client: every kind but
// txn (the Go load has those; HaTool's UNKNOW halves need check-backs,
// which would keep the master writing) with async sends, and stores the
// acknowledged count in acked. Every send must be acknowledged SEND_OK.
func javaMixed(ctx context.Context, h *HARun, topic string, acked *int64) error {
	args := []string{"produce", "--namesrv", h.Pair.NamesrvAddr, "--topic", topic,
		"--count", strconv.Itoa(haJavaMessages), "--threads", "4", "--async", "32", "--batch-size", "16",
		"--kinds", "single,batch,keyed,compressed,delay", "--key-prefix", h.Name("j"),
		"--deadline-ms", "240000", "--send-timeout-ms", "10000"}
	var fatal error
	var errs, notOK int
	var firstErr string
	err := h.Runner.Java.RunTool(ctx, h.Client, args, func(line string) {
		if a, ok := javadriver.ParseAck(line); ok {
			if a.Status == "SEND_OK" {
				*acked++
			} else {
				notOK++
			}
		} else if e, ok := javadriver.ParseErr(line); ok {
			if errs++; errs == 1 {
				firstErr = e.Key + " " + e.Class + ": " + e.Message
			}
		} else if f := javadriver.ParseFatal(line); f != nil {
			fatal = f
		}
	})
	if err = errors.Join(fatal, err); err != nil {
		return fmt.Errorf("%s HaTool produce: %w", h.Client, err)
	}
	if errs > 0 || notOK > 0 || *acked != haJavaMessages {
		return fmt.Errorf("%s HaTool produce: %d SEND_OK of %d, %d other statuses, %d errors (first: %s)", h.Client, *acked, haJavaMessages, notOK, errs, firstErr)
	}
	return nil
}
