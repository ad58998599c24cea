package goclient

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// MixedLoad is the replication scenarios' producer load (issue #14
// repl_identical): single messages with keys and tags, batches, bodies big
// enough for the client to compress, transactional halves resolved by
// commit or rollback, and delayed messages of levels 1..3. Every send must
// be acknowledged SEND_OK.
type MixedLoad struct {
	Namesrv string
	Prefix  string // producer groups and instance names
	// Topic takes singles, batches and compressed bodies; DelayTopic the
	// delayed messages; TxnTopic the transactional ones. All must exist.
	Topic, DelayTopic, TxnTopic string
	Batches, BatchSize          int
	Singles, Compressed         int
	Txn                         int // half commit, half rollback
	Delayed                     int // spread over levels 1, 2, 3
	Producers                   int // producer instances (one connection each)
	Workers                     int // concurrent senders
}

// MixedResult counts what MixedLoad had acknowledged.
type MixedResult struct {
	Messages              int // acknowledged messages (a batch counts its messages)
	Singles, Batched      int
	Compressed            int
	Committed, RolledBack int
	Delayed               int
	Elapsed               time.Duration
}

func (r MixedResult) String() string {
	return fmt.Sprintf("%d messages (%d single keyed, %d in batches, %d compressed, %d txn committed + %d rolled back, %d delayed) in %v",
		r.Messages, r.Singles, r.Batched, r.Compressed, r.Committed, r.RolledBack, r.Delayed, r.Elapsed.Round(time.Millisecond))
}

// txnByBody resolves a transaction from its body's first word.
type txnByBody struct{}

func (txnByBody) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	if strings.HasPrefix(string(m.Body), "commit") {
		return primitive.CommitMessageState
	}
	return primitive.RollbackMessageState
}

func (l txnByBody) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	return l.ExecuteLocalTransaction(&m.Message)
}

// haBody is a deterministic body of n bytes for message i: text that
// varies with i (so a misplaced record shows) and compresses.
func haBody(kind string, i, n int) []byte {
	head := kind + "-" + strconv.Itoa(i) + ":"
	b := make([]byte, 0, n)
	b = append(b, head...)
	for len(b) < n {
		b = append(b, byte('a'+(len(b)*7+i)%26))
		if len(b)%61 == 0 {
			b = append(b, ' ')
		}
	}
	return b[:n]
}

// Run sends the load and returns what was acknowledged. The delayed
// messages go first, so their delivery overlaps the rest of the load.
func (l MixedLoad) Run(ctx context.Context) (MixedResult, error) {
	Quiet()
	start := time.Now()
	var res MixedResult
	if l.Producers <= 0 {
		l.Producers = 4
	}
	if l.Workers <= 0 {
		l.Workers = 16
	}
	prods := make([]rocketmq.Producer, l.Producers)
	for i := range prods {
		p, err := rocketmq.NewProducer(producer.WithNameServer(primitive.NamesrvAddr{l.Namesrv}),
			producer.WithGroupName(l.Prefix+"_mixed_p"), producer.WithInstanceName(l.Prefix+"_mixed_p"+strconv.Itoa(i)),
			producer.WithRetry(2), producer.WithSendMsgTimeout(10*time.Second))
		if err != nil {
			return res, fmt.Errorf("new producer: %w", err)
		}
		if err := p.Start(); err != nil {
			return res, fmt.Errorf("start producer: %w", err)
		}
		defer p.Shutdown()
		prods[i] = p
	}
	var txp rocketmq.TransactionProducer
	if l.Txn > 0 {
		p, err := rocketmq.NewTransactionProducer(txnByBody{}, producer.WithNameServer(primitive.NamesrvAddr{l.Namesrv}),
			producer.WithGroupName(l.Prefix+"_mixed_tx"), producer.WithInstanceName(l.Prefix+"_mixed_tx"),
			producer.WithRetry(2), producer.WithSendMsgTimeout(10*time.Second))
		if err != nil {
			return res, fmt.Errorf("new transaction producer: %w", err)
		}
		if err := p.Start(); err != nil {
			return res, fmt.Errorf("start transaction producer: %w", err)
		}
		defer p.Shutdown()
		txp = p
	}

	var singles, batched, compressed, committed, rolledBack, delayed atomic.Int64
	send := func(i int, msgs ...*primitive.Message) error {
		r, err := retryBusy(ctx, func() (*primitive.SendResult, error) { return prods[i%len(prods)].SendSync(ctx, msgs...) })
		if err != nil {
			return err
		}
		if r.Status != primitive.SendOK {
			return fmt.Errorf("status %d", r.Status)
		}
		return nil
	}
	jobs := []struct {
		name string
		n    int
		do   func(i int) error
	}{
		{"delayed", l.Delayed, func(i int) error {
			m := primitive.NewMessage(l.DelayTopic, haBody("delay", i, 120))
			m.WithDelayTimeLevel(1 + i%3)
			m.WithKeys([]string{l.Prefix + "_d" + strconv.Itoa(i)})
			if err := send(i, m); err != nil {
				return err
			}
			delayed.Add(1)
			return nil
		}},
		{"transactional", l.Txn, func(i int) error {
			word := "commit"
			if i%2 == 1 {
				word = "rollback"
			}
			m := primitive.NewMessage(l.TxnTopic, haBody(word, i, 200))
			m.WithKeys([]string{l.Prefix + "_t" + strconv.Itoa(i)})
			r, err := retryBusy(ctx, func() (*primitive.TransactionSendResult, error) { return txp.SendMessageInTransaction(ctx, m) })
			if err != nil {
				return err
			}
			if r.Status != primitive.SendOK {
				return fmt.Errorf("status %d", r.Status)
			}
			if word == "commit" {
				committed.Add(1)
			} else {
				rolledBack.Add(1)
			}
			return nil
		}},
		{"compressed", l.Compressed, func(i int) error {
			m := primitive.NewMessage(l.Topic, haBody("zip", i, 5<<10+i%4096))
			m.WithTag("zip")
			if err := send(i, m); err != nil {
				return err
			}
			compressed.Add(1)
			return nil
		}},
		{"batch", l.Batches, func(i int) error {
			msgs := make([]*primitive.Message, l.BatchSize)
			for j := range msgs {
				msgs[j] = primitive.NewMessage(l.Topic, haBody("batch", i*l.BatchSize+j, 64+j%64))
				msgs[j].WithTag("batch")
			}
			if err := send(i, msgs...); err != nil {
				return err
			}
			batched.Add(int64(len(msgs)))
			return nil
		}},
		{"single", l.Singles, func(i int) error {
			m := primitive.NewMessage(l.Topic, haBody("single", i, 80+i%160))
			m.WithTag("t" + strconv.Itoa(i%8))
			m.WithKeys([]string{l.Prefix + "_k" + strconv.Itoa(i), "group" + strconv.Itoa(i%100)})
			m.WithProperty("seq", strconv.Itoa(i))
			if err := send(i, m); err != nil {
				return err
			}
			singles.Add(1)
			return nil
		}},
	}
	for _, j := range jobs {
		if j.n <= 0 {
			continue
		}
		// The first sends go one by one, one per producer: concurrent first
		// sends to a topic can fail in the client ("route info not found")
		// while it fetches the route.
		warm := min(j.n, len(prods))
		for i := range warm {
			if err := j.do(i); err != nil {
				return res, fmt.Errorf("%s send #%d: %w", j.name, i, err)
			}
		}
		if err := parallel(ctx, l.Workers, warm, j.n, j.do); err != nil {
			return res, fmt.Errorf("%s sends: %w", j.name, err)
		}
	}
	res = MixedResult{
		Singles: int(singles.Load()), Batched: int(batched.Load()), Compressed: int(compressed.Load()),
		Committed: int(committed.Load()), RolledBack: int(rolledBack.Load()), Delayed: int(delayed.Load()),
		Elapsed: time.Since(start),
	}
	res.Messages = res.Singles + res.Batched + res.Compressed + res.Committed + res.RolledBack + res.Delayed
	return res, nil
}

// parallel runs do(from..n-1) on workers goroutines and returns the first
// error (the others stop taking work).
func parallel(ctx context.Context, workers, from, n int, do func(i int) error) error {
	var next atomic.Int64
	next.Store(int64(from))
	var first error
	var once sync.Once
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					once.Do(func() { first = fmt.Errorf("#%d: %w", i, err) })
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// retryBusy calls send again, a bounded number of times with a growing
// pause, while the broker answers SYSTEM_BUSY (its flow control: the client
// reports "CODE: 2"); nothing was stored then.
func retryBusy[R any](ctx context.Context, send func() (R, error)) (R, error) {
	for try := 1; ; try++ {
		r, err := send()
		if err == nil || try == 10 || !strings.Contains(err.Error(), "CODE: 2,") {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, err
		case <-time.After(time.Duration(try) * 100 * time.Millisecond):
		}
	}
}
