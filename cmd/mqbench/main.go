package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

const usage = `usage: mqbench produce|consume|hostile|repllag|hawait|scale [flags]   (mqbench <cmd> -h for flags)`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mqbench:", err)
		os.Exit(1)
	}
}

// run parses args and executes one subcommand; the summary goes to stdout,
// progress lines to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	var (
		sum           Summary
		err           error
		asJSON, quiet bool
	)
	switch args[0] {
	case "produce":
		var cfg produceConfig
		fs := produceFlags(&cfg, stderr)
		if err := parseWithOutput(fs, args[1:], &asJSON, &quiet); err != nil {
			return err
		}
		if !quiet {
			cfg.Progress = stderr
		}
		sum, err = runProduce(cfg)
	case "consume":
		var cfg consumeConfig
		fs := consumeFlags(&cfg, stderr)
		if err := parseWithOutput(fs, args[1:], &asJSON, &quiet); err != nil {
			return err
		}
		if !quiet {
			cfg.Progress = stderr
		}
		sum, err = runConsume(cfg)
	case "hostile":
		var cfg hostileConfig
		fs := hostileFlags(&cfg, stderr)
		if err := parseWithOutput(fs, args[1:], &asJSON, &quiet); err != nil {
			return err
		}
		if !quiet {
			cfg.Progress = stderr
		}
		hs, herr := runHostile(cfg)
		if asJSON {
			if jerr := json.NewEncoder(stdout).Encode(hs); jerr != nil {
				return jerr
			}
		} else {
			hs.writeText(stdout)
		}
		return herr
	case "repllag":
		var cfg replLagConfig
		if err := parseWithOutput(replLagFlags(&cfg, stderr), args[1:], &asJSON, &quiet); err != nil {
			return err
		}
		rs, rerr := runReplLag(cfg)
		if rerr != nil {
			return rerr
		}
		return writeSummary(stdout, asJSON, &rs)
	case "scale":
		return runScale(args[1:], stdout, stderr)
	case "hawait":
		var cfg haWaitConfig
		if err := parseWithOutput(haWaitFlags(&cfg, stderr), args[1:], &asJSON, &quiet); err != nil {
			return err
		}
		if !quiet {
			cfg.Progress = stderr
		}
		hs, herr := runHAWait(cfg)
		if herr != nil {
			return herr
		}
		return writeSummary(stdout, asJSON, &hs)
	default:
		return fmt.Errorf("unknown command %q; %s", args[0], usage)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return sum.writeJSON(stdout)
	}
	sum.writeText(stdout)
	return nil
}

// parseWithOutput adds the flags every subcommand shares (-json, -quiet)
// to fs and parses args.
func parseWithOutput(fs *flag.FlagSet, args []string, asJSON, quiet *bool) error {
	fs.BoolVar(asJSON, "json", false, "print the summary as JSON")
	fs.BoolVar(quiet, "quiet", false, "no progress lines")
	return fs.Parse(args)
}

func produceFlags(cfg *produceConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("produce", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.NameSrv, "n", "", "name server ip:port (route lookup)")
	fs.StringVar(&cfg.Broker, "b", "", "broker ip:port (send directly to queues 0..queues-1)")
	fs.StringVar(&cfg.Topic, "t", "BenchmarkTest", "topic")
	fs.StringVar(&cfg.Group, "g", "mqbench_producer", "producer group")
	fs.IntVar(&cfg.Threads, "threads", 8, "producer goroutines")
	fs.IntVar(&cfg.Conns, "conns", 4, "connections per broker")
	fs.IntVar(&cfg.Inflight, "inflight", 32, "requests in flight per thread (async, batch)")
	fs.IntVar(&cfg.Size, "size", 1024, "message body bytes")
	fs.StringVar(&cfg.Tags, "tags", "", "TAGS property")
	fs.BoolVar(&cfg.Keys, "keys", false, "set a unique KEYS property per message")
	fs.StringVar(&cfg.Mode, "mode", "async", "sync | async | oneway | batch")
	fs.IntVar(&cfg.Batch, "batch", 16, "messages per SEND_BATCH_MESSAGE (batch mode)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "messages/s over all threads; 0 = closed loop")
	fs.DurationVar(&cfg.Duration, "duration", 30*time.Second, "run length (0 = until -count)")
	fs.Int64Var(&cfg.Count, "count", 0, "stop after this many messages (0 = no limit)")
	fs.IntVar(&cfg.Queues, "queues", 8, "queues to create (-create) or use (-b)")
	fs.BoolVar(&cfg.Create, "create", false, "send UPDATE_AND_CREATE_TOPIC first")
	fs.DurationVar(&cfg.Timeout, "timeout", 3*time.Second, "per-request timeout")
	fs.BoolVar(&cfg.TLS, "tls", false, "send over TLS (certificates not verified)")
	fs.StringVar(&cfg.AccessKey, "ak", "", "access key: sign every send (Java's AclClientRPCHook)")
	fs.StringVar(&cfg.SecretKey, "sk", "", "secret key of -ak")
	cfg.Serialize = codec.SerializeRocketMQ
	fs.Func("serialize", "header encoding: rocketmq (default) | json", func(s string) error {
		switch s {
		case "rocketmq", "ROCKETMQ":
			cfg.Serialize = codec.SerializeRocketMQ
		case "json", "JSON":
			cfg.Serialize = codec.SerializeJSON
		default:
			return fmt.Errorf("unknown serialize type %q", s)
		}
		return nil
	})
	return fs
}

func consumeFlags(cfg *consumeConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("consume", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.NameSrv, "n", "", "name server ip:port (route lookup)")
	fs.StringVar(&cfg.Broker, "b", "", "broker ip:port (pull queues 0..queues-1 directly)")
	fs.StringVar(&cfg.Topic, "t", "BenchmarkTest", "topic")
	fs.StringVar(&cfg.Group, "g", "mqbench_consumer", "consumer group")
	fs.IntVar(&cfg.Queues, "queues", 8, "queues to pull with -b")
	fs.StringVar(&cfg.From, "from", "group", "start offset: group (the group's offset, kept; a new group starts as Java's CONSUME_FROM_LAST_OFFSET) | last (max offset) | first (0)")
	fs.IntVar(&cfg.MaxMsgs, "maxmsgs", 32, "maxMsgNums per pull")
	fs.DurationVar(&cfg.Suspend, "suspend", 15*time.Second, "long-poll hold (suspendTimeoutMillis)")
	fs.DurationVar(&cfg.Duration, "duration", 30*time.Second, "run length (0 = until -count)")
	fs.Int64Var(&cfg.Count, "count", 0, "stop after this many messages (0 = no limit)")
	fs.DurationVar(&cfg.Timeout, "timeout", 5*time.Second, "pull deadline beyond -suspend")
	return fs
}
