package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/controller/controllertest"
)

// freePair returns a loopback port p with p+1 free too (the controller's
// Raft port, the broker's HA port).
func freePair(t *testing.T) int { return controllertest.FreePortPair(t) }

// syncBuffer is a log sink written by several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type ctlRig struct {
	t   *testing.T
	cli *transport.Client
}

func newCtlRig(t *testing.T) *ctlRig {
	cli := transport.NewClient(transport.ClientConfig{Logger: slog.New(slog.DiscardHandler), DialTimeout: 2 * time.Second})
	t.Cleanup(func() { cli.Close() })
	return &ctlRig{t: t, cli: cli}
}

func (r *ctlRig) call(addr string, f *codec.Frame) (*codec.Frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return r.cli.Invoke(ctx, addr, f)
}

func (r *ctlRig) metadata(ctl string) header.GetMetaDataResponse {
	r.t.Helper()
	resp, err := r.call(ctl, &codec.Frame{Code: int32(codec.ReqControllerGetMetadataInfo), Language: codec.LangJava, Version: codec.ServerVersion})
	require.NoError(r.t, err)
	require.Equal(r.t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var h header.GetMetaDataResponse
	require.NoError(r.t, h.Decode(resp))
	return h
}

// replicaInfo is the controller's GET_REPLICA_INFO (1004) of broker-a.
func (r *ctlRig) replicaInfo(ctl string) (header.GetReplicaInfoResponse, bool) {
	f := &codec.Frame{Code: int32(codec.ReqControllerGetReplicaInfo), Language: codec.LangJava, Version: codec.ServerVersion}
	(&header.GetReplicaInfoRequest{BrokerName: "broker-a"}).Encode(f)
	resp, err := r.call(ctl, f)
	if err != nil || resp.Code != int32(codec.RespSuccess) {
		return header.GetReplicaInfoResponse{}, false
	}
	var h header.GetReplicaInfoResponse
	return h, h.Decode(resp) == nil
}

type epochCache struct {
	BrokerID  int64 `json:"brokerId"`
	EpochList []struct {
		Epoch int32 `json:"epoch"`
	} `json:"epochList"`
}

// epochCache is the broker's GET_BROKER_EPOCH_CACHE (1007).
func (r *ctlRig) epochCache(broker string) (epochCache, bool) {
	resp, err := r.call(broker, &codec.Frame{Code: int32(codec.ReqGetBrokerEpochCache), Language: codec.LangJava, Version: codec.ServerVersion})
	if err != nil || resp.Code != int32(codec.RespSuccess) {
		return epochCache{}, false
	}
	var c epochCache
	return c, json.Unmarshal(resp.Body, &c) == nil
}

func (r *ctlRig) send(broker, topic, msg string) *codec.Frame {
	resp, err := r.call(broker, &codec.Frame{Code: int32(codec.ReqSendMessage), Language: codec.LangGo, Version: 317, Body: []byte(msg), Ext: []codec.KV{
		{Key: "producerGroup", Value: "pg"}, {Key: "topic", Value: topic}, {Key: "defaultTopic", Value: "TBW102"},
		{Key: "defaultTopicQueueNums", Value: "4"}, {Key: "queueId", Value: "0"}, {Key: "sysFlag", Value: "0"},
		{Key: "bornTimestamp", Value: "1"}, {Key: "flag", Value: "0"}}})
	if err != nil {
		return &codec.Frame{Code: -1, Remark: err.Error()}
	}
	return resp
}

var readyRE = regexp.MustCompile(`(?m)^rocketgo ready namesrv=(\S+) broker=(\S+) data=\S+ controller=(\S+)$`)

// controllerModeSetup writes what a user writes for the one-process
// controller-mode set-up: a broker.conf with enableControllerMode=true and
// no controllerAddr. The name server file only shortens the controller's
// Raft timeout so the test takes seconds.
func controllerModeSetup(t *testing.T, dir string) []string {
	conf := filepath.Join(dir, "broker.conf")
	haPort := freePair(t)
	require.NoError(t, os.WriteFile(conf, []byte("enableControllerMode=true\nhaListenPort="+strconv.Itoa(haPort)+"\n"), 0o644))
	nsConf := filepath.Join(dir, "namesrv.conf")
	require.NoError(t, os.WriteFile(nsConf, []byte("controllerRaftElectionTimeoutMillis=500\n"), 0o644))
	return []string{"-dataDir", dir, "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0", "-c", conf,
		"-namesrvConf", nsConf, "-controller", "-controllerListen", fmt.Sprintf("127.0.0.1:%d", freePair(t))}
}

// TestRocketgoEmbeddedControllerMode: -controller runs a single-node
// controller group in the process; a broker.conf that only says
// enableControllerMode=true registers with it, is elected master (the
// controller's GET_REPLICA_INFO names it with epoch 1, the broker's
// GET_BROKER_EPOCH_CACHE says brokerId 0 at epoch 1) and takes sends.
// Stopping closes the broker, then the controller, then the name server.
// A restart of the whole thing on the same data dir keeps the controller's
// state (Raft store): the same controller-assigned id is master at the
// same epoch, and the broker takes sends again.
func TestRocketgoEmbeddedControllerMode(t *testing.T) {
	dir := t.TempDir()
	args := controllerModeSetup(t, dir)
	r := newCtlRig(t)

	var before header.GetReplicaInfoResponse
	for round := range 2 {
		var out bytes.Buffer
		logs := &syncBuffer{}
		stop, err := start(args, &out, slog.New(slog.NewTextHandler(logs, nil)))
		require.NoError(t, err, logs.String())
		stopped := false
		t.Cleanup(func() {
			if !stopped { // a failed round leaves nothing running
				_ = stop()
			}
		})
		m := readyRE.FindStringSubmatch(out.String())
		require.NotNil(t, m, out.String())
		ns, brokerAddr, ctl := m[1], m[2], m[3]
		require.Equal(t, args[len(args)-1], ctl)

		// CONTROLLER_GET_METADATA_INFO (1005) from the controller port.
		md := r.metadata(ctl)
		require.True(t, md.IsLeader)
		require.Equal(t, "group1", md.Group)
		require.Equal(t, "n0", md.ControllerLeaderID)
		require.Equal(t, ctl, md.ControllerLeaderAddress)

		// The broker is master: the controller names it, the broker agrees.
		var ri header.GetReplicaInfoResponse
		require.Eventually(t, func() bool {
			var ok bool
			ri, ok = r.replicaInfo(ctl)
			return ok && ri.MasterAddress == brokerAddr
		}, 15*time.Second, 20*time.Millisecond, "controller never named %s master: %+v\n%s", brokerAddr, ri, logs.String())
		require.Equal(t, int64(1), ri.MasterBrokerID, "the first controller-assigned id")
		var ec epochCache
		require.Eventually(t, func() bool {
			var ok bool
			ec, ok = r.epochCache(brokerAddr)
			return ok && ec.BrokerID == 0 && len(ec.EpochList) > 0 && ec.EpochList[len(ec.EpochList)-1].Epoch == ri.MasterEpoch
		}, 15*time.Second, 20*time.Millisecond, "broker's epoch cache never showed brokerId 0 at epoch %d", ri.MasterEpoch)
		require.Equal(t, int32(1), ec.EpochList[0].Epoch)
		if round == 0 {
			require.Equal(t, int32(1), ri.MasterEpoch, "the first election")
		} else {
			// A fresh controller would refuse the broker's id 1 from its
			// brokerIdentity file: the id is the restored state's. The
			// epoch carries on from there: the same (the master re-took
			// its place) or higher (the controller recorded the master's
			// departure at shutdown, then elected it again).
			require.Equal(t, before.MasterBrokerID, ri.MasterBrokerID, "restart kept the broker id")
			require.GreaterOrEqual(t, ri.MasterEpoch, before.MasterEpoch, "restart kept the epoch")
		}
		before = ri

		// SEND_OK once unfenced (fenced puts store nothing).
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			resp := r.send(brokerAddr, "CtlHello", fmt.Sprint("m", round))
			assert.Equal(c, int32(codec.RespSuccess), resp.Code, resp.Remark)
		}, 15*time.Second, 20*time.Millisecond)
		// and the master registered with the name server.
		route := &codec.Frame{Code: int32(codec.ReqGetRouteinfoByTopic), Language: codec.LangGo, Version: 317, Ext: []codec.KV{{Key: "topic", Value: "CtlHello"}}}
		require.Eventually(t, func() bool {
			resp, err := r.call(ns, route)
			return err == nil && resp.Code == int32(codec.RespSuccess) && bytes.Contains(resp.Body, []byte(brokerAddr))
		}, 15*time.Second, 20*time.Millisecond)

		stopped = true
		require.NoError(t, stop())
		l := logs.String()
		b, c, n := strings.Index(l, `msg="rocketgo: broker stopped"`), strings.Index(l, `msg="controller: stopped"`), strings.Index(l, `msg="namesrv: stopped"`)
		require.True(t, b >= 0 && c > b && n > c, "stop order broker, controller, name server: %d %d %d\n%s", b, c, n, l)
		_, err = net.DialTimeout("tcp", ctl, time.Second)
		require.Error(t, err, "the controller port is closed after stop")
	}
}

// TestRocketgoControllerFromNamesrvConf: without -controller, Java's
// quick-start namesrv.conf keys (enableControllerInNamesrv=true and the
// controllerDLeger* keys) start the controller, as in mqnamesrv; the
// file's name server keys apply too.
func TestRocketgoControllerFromNamesrvConf(t *testing.T) {
	dir := t.TempDir()
	ctl := fmt.Sprintf("127.0.0.1:%d", freePair(t))
	nsConf := filepath.Join(dir, "namesrv.conf")
	require.NoError(t, os.WriteFile(nsConf, []byte(strings.Join([]string{
		"bindAddress=127.0.0.1",
		"listenPort=0",
		"enableControllerInNamesrv = true",
		"controllerDLegerGroup = groupX",
		"controllerDLegerPeers = nx-" + ctl,
		"controllerDLegerSelfId = nx",
		"controllerStorePath = " + filepath.Join(dir, "ctlstore"),
		"controllerRaftElectionTimeoutMillis = 500",
		"noSuchKey = 1",
	}, "\n")), 0o644))
	var out bytes.Buffer
	logs := &syncBuffer{}
	stop, err := start([]string{"-dataDir", dir, "-brokerListen", "127.0.0.1:0", "-namesrvConf", nsConf},
		&out, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	m := readyRE.FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	require.Equal(t, ctl, m[3])
	require.NotEqual(t, "127.0.0.1:9876", m[1], "listenPort=0 from the file")
	md := newCtlRig(t).metadata(ctl)
	require.True(t, md.IsLeader)
	require.Equal(t, "groupX", md.Group)
	require.Equal(t, "nx", md.ControllerLeaderID)
	_, err = os.Stat(filepath.Join(dir, "ctlstore", "raft.db"))
	require.NoError(t, err, "controllerStorePath from the file")
	// Only the key neither server knows is warned about.
	var warned []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "unknown namesrv config key") {
			warned = append(warned, l)
		}
	}
	require.Len(t, warned, 1, logs.String())
	require.Contains(t, warned[0], "key=noSuchKey")
}

// Without -controller or enableControllerInNamesrv, no controller runs and
// the ready line is the old one.
func TestRocketgoNoControllerByDefault(t *testing.T) {
	var out bytes.Buffer
	stop, err := start([]string{"-dataDir", t.TempDir(), "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0"},
		&out, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NoError(t, stop())
	require.NotContains(t, out.String(), "controller=")
}

// The embedded controller needs a fixed port: its Raft address (port+1)
// is kept in the Raft store.
func TestRocketgoControllerNeedsFixedPort(t *testing.T) {
	dir := t.TempDir()
	_, err := start([]string{"-dataDir", dir, "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0",
		"-controller", "-controllerListen", "127.0.0.1:0"}, &bytes.Buffer{}, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "-controllerListen 127.0.0.1:0")
	_, err = os.Stat(filepath.Join(dir, "controller"))
	require.True(t, os.IsNotExist(err), "nothing started")
}
