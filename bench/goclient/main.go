package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: goclient produce|consume [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	namesrv := fs.String("n", "127.0.0.1:9876", "name server ip:port")
	topic := fs.String("t", "BenchmarkTest", "topic")
	duration := fs.Duration("duration", 30*time.Second, "run length (upper bound with -count)")
	count := fs.Uint64("count", 0, "stop after this many messages (0 = no limit)")
	logLevel := fs.String("log", "error", "client log level (rlog)")
	var s Summary
	var err error
	switch args[0] {
	case "produce":
		group := fs.String("g", "goclient_producer", "producer group")
		threads := fs.Int("threads", 8, "sending goroutines (sync sends)")
		size := fs.Int("size", 1024, "body bytes (at least 16: the send-time stamp)")
		rate := fs.Float64("rate", 0, "messages/s over all goroutines; 0 = closed loop")
		timeout := fs.Duration("timeout", 3*time.Second, "send timeout")
		warmup := fs.Duration("warmup", 0, "send for this long first without counting (with -count: counts against it)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *threads < 1 || *size < stampLen {
			return fmt.Errorf("goclient: -threads must be >= 1 and -size >= %d", stampLen)
		}
		rlog.SetLogLevel(*logLevel)
		s, err = runProduce(produceConfig{namesrv: *namesrv, topic: *topic, group: *group, threads: *threads,
			size: *size, count: *count, rate: *rate, duration: *duration, timeout: *timeout, warmup: *warmup})
	case "consume":
		group := fs.String("g", "goclient_consumer", "consumer group (a new group reads from the first offset)")
		warmup := fs.Duration("warmup", 0, "if > 0, latency counts only messages sent this long after the first message arrived")
		idle := fs.Duration("idle", 0, "stop once no message arrived for this long after the first (0 = never)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		rlog.SetLogLevel(*logLevel)
		s, err = runConsume(consumeConfig{namesrv: *namesrv, topic: *topic, group: *group, count: *count,
			duration: *duration, warmup: *warmup, idle: *idle})
	default:
		return fmt.Errorf("goclient: unknown command %q (produce|consume)", args[0])
	}
	if err != nil {
		return err
	}
	return s.write(stdout)
}
