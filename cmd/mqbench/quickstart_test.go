package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/namesrv"
)

// startNamesrvAndBroker runs a name server and a broker in this process, as
// rocketgo does, on 127.0.0.1 ports with a temporary store; both close when
// the test ends. It returns the name server's address.
func startNamesrvAndBroker(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	nsCfg := namesrv.Default()
	nsCfg.BindAddress, nsCfg.ListenPort = "127.0.0.1", 0
	nsCfg.KVConfigPath = filepath.Join(dir, "namesrv", "kvConfig.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "namesrv", "namesrv.properties")
	ns, err := namesrv.New(nsCfg, log.With("component", "namesrv"))
	require.NoError(t, err)
	require.NoError(t, ns.Start())
	t.Cleanup(func() { require.NoError(t, ns.Close()) })

	cfg := broker.DefaultConfig()
	cfg.BrokerName = "broker-a"
	cfg.BrokerIP1, cfg.ListenIP, cfg.ListenPort = "127.0.0.1", "127.0.0.1", 0
	cfg.FastListen = false
	cfg.StorePathRootDir = filepath.Join(dir, "store")
	cfg.MappedFileSizeCommitLog = 16 << 20
	cfg.NamesrvAddr = ns.Addr()
	b, err := broker.New(cfg, broker.Deps{Logger: log.With("component", "broker")})
	require.NoError(t, err)
	require.NoError(t, b.Start())
	t.Cleanup(func() { require.NoError(t, b.Close()) }) // before the name server (cleanups run last first)
	return ns.Addr()
}

// quickStartCommands returns the mqbench command lines of README.md's
// quick start, split into arguments (without "./bin/mqbench").
func quickStartCommands(t *testing.T) [][]string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var cmds [][]string
	for _, line := range strings.Split(string(readme), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "./bin/mqbench "); ok {
			cmds = append(cmds, strings.Fields(rest))
		}
	}
	require.Len(t, cmds, 2, "README's quick start runs mqbench twice")
	require.Equal(t, "produce", cmds[0][0])
	require.Equal(t, "consume", cmds[1][0])
	return cmds
}

// onNamesrv points a documented command at ns instead of 127.0.0.1:9876
// and appends extra (later flags win).
func onNamesrv(t *testing.T, args []string, ns string, extra ...string) []string {
	t.Helper()
	out := append([]string(nil), args...)
	i := indexOf(out, "-n")
	require.GreaterOrEqual(t, i, 0, "documented command has -n: %v", args)
	require.Equal(t, "127.0.0.1:9876", out[i+1])
	out[i+1] = ns
	return append(out, extra...)
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func runJSON(t *testing.T, args []string) Summary {
	t.Helper()
	var out, errOut bytes.Buffer
	require.NoError(t, run(args, &out, &errOut), "mqbench %v: %s", args, errOut.String())
	var sum Summary
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum), out.String())
	return sum
}

// groupOffsets sums the offsets the broker stores for group over topic's
// readable queues (a queue without one counts 0).
func groupOffsets(t *testing.T, ns, topic, group string) int64 {
	t.Helper()
	bqs, err := resolveQueues(ns, "", topic, 0, false)
	require.NoError(t, err)
	var total int64
	for _, bq := range bqs {
		for _, q := range bq.Queues {
			resp, err := invokeOnce(bq.Addr, newRequest(codec.ReqQueryConsumerOffset,
				"consumerGroup", group, "topic", topic, "queueId", strconv.Itoa(q), "setZeroIfNotFound", "false"))
			require.NoError(t, err)
			if resp.Code == int32(codec.RespQueryNotFound) {
				continue
			}
			require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
			off, err := strconv.ParseInt(resp.Value("offset"), 10, 64)
			require.NoError(t, err)
			total += off
		}
	}
	return total
}

// The quick start, as README.md writes it (only -count added, so produce
// does not run its 10 s and consume ends when it has everything): the
// consumer of a new group gets back what the producer sent, as a Java
// consumer with CONSUME_FROM_LAST_OFFSET does on a young topic; the group's
// offsets are stored, and running consume again reads only what is new.
func TestQuickStartConsumesWhatWasProduced(t *testing.T) {
	ns := startNamesrvAndBroker(t)
	cmds := quickStartCommands(t)
	quiet := []string{"-json", "-quiet"}

	prod := runJSON(t, onNamesrv(t, cmds[0], ns, append([]string{"-count", "2000", "-timeout", "15s"}, quiet...)...))
	require.Equal(t, uint64(2000), prod.Messages, "errors: %v", prod.Errors)
	topic := cmds[0][indexOf(cmds[0], "-t")+1]
	group := cmds[1][indexOf(cmds[1], "-g")+1]

	cons := runJSON(t, onNamesrv(t, cmds[1], ns, append([]string{"-count", "2000"}, quiet...)...))
	require.Equal(t, uint64(2000), cons.Messages, "the documented consume gets the produced messages back")
	require.Zero(t, cons.ErrTotal, "errors: %v", cons.Errors)
	require.Equal(t, int64(2000), groupOffsets(t, ns, topic, group), "the group's offsets are stored at the end")

	prod = runJSON(t, onNamesrv(t, cmds[0], ns, append([]string{"-count", "300", "-timeout", "15s"}, quiet...)...))
	require.Equal(t, uint64(300), prod.Messages, "errors: %v", prod.Errors)
	cons = runJSON(t, onNamesrv(t, cmds[1], ns, append([]string{"-count", "300"}, quiet...)...))
	require.Equal(t, uint64(300), cons.Messages, "a second run goes on from the group's offsets")
	require.Equal(t, int64(2300), groupOffsets(t, ns, topic, group))
}
