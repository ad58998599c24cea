package main

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// routeWith builds a topic route for broker group "g-a" with brokerAddrs
// addrs (fastjson's unquoted id keys, as a Java name server writes them).
func routeWith(t *testing.T, addrs string, queues int) *topicRoute {
	t.Helper()
	var r topicRoute
	require.NoError(t, unmarshalFastjson([]byte(slaveRouteJSON(addrs, queues)), &r))
	return &r
}

func slaveRouteJSON(addrs string, queues int) string {
	return fmt.Sprintf(`{"brokerDatas":[{"brokerAddrs":{%s},"brokerName":"g-a","cluster":"C"}],"filterServerTable":{},"queueDatas":[{"brokerName":"g-a","perm":6,"readQueueNums":%d,"topicSysFlag":0,"writeQueueNums":%d}]}`, addrs, queues, queues)
}

func TestRouteQueuesPickMasterElseLowestSlave(t *testing.T) {
	for _, tc := range []struct {
		name      string
		addrs     string
		readAddr  string // "" = no read queues
		slave     bool
		writeAddr string // "" = no write queues
	}{
		{"master only", `0:"m:1"`, "m:1", false, "m:1"},
		{"master and slave", `0:"m:1",1:"s:1"`, "m:1", false, "m:1"},
		{"slave only", `1:"s:1"`, "s:1", true, ""},
		{"two slaves", `2:"s:2",1:"s:1"`, "s:1", true, ""},
		{"none", ``, "", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := routeWith(t, tc.addrs, 2)
			read := r.queues(false)
			if tc.readAddr == "" {
				require.Empty(t, read)
			} else {
				require.Equal(t, []brokerQueues{{Name: "g-a", Addr: tc.readAddr, Slave: tc.slave, Queues: []int{0, 1}}}, read)
			}
			write := r.queues(true)
			if tc.writeAddr == "" {
				require.Empty(t, write, "sends go to a master only")
			} else {
				require.Equal(t, []brokerQueues{{Name: "g-a", Addr: tc.writeAddr, Queues: []int{0, 1}}}, write)
			}
		})
	}
}

// A route whose master is gone (only broker id 1 left, as the name server
// shows it after the master's channel closed) is consumed from the slave,
// as the Java client does; the fake broker plays the slave.
func TestConsumeFromSlaveOnlyRoute(t *testing.T) {
	slave := startFakeBroker(t)
	slave.addTopic("S1", 2)
	pre := baseProduce(slave, "S1")
	pre.NameSrv, pre.Broker, pre.Queues, pre.Count = "", slave.addr, 2, 500
	_, err := runProduce(pre)
	require.NoError(t, err)

	ns := startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{
		codec.ReqGetRouteinfoByTopic: func(req *codec.Frame) *codec.Frame {
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
			resp.Body = []byte(slaveRouteJSON(`1:"`+slave.addr+`"`, 2))
			return resp
		},
	})
	sum, err := runConsume(consumeConfig{NameSrv: ns, Topic: "S1", Group: "cg", Queues: 8, From: "first",
		MaxMsgs: 32, Suspend: time.Second, Duration: 40 * time.Second, Count: 500, Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.Equal(t, uint64(500), sum.Messages)
	require.Zero(t, sum.ErrTotal, "errors: %v", sum.Errors)

	// Producing still needs a master.
	prod := baseProduce(slave, "S1")
	prod.NameSrv, prod.Count = ns, 1
	_, err = runProduce(prod)
	require.ErrorContains(t, err, "no usable queues")
}

// groupFake is a broker with an empty queue 0 of topic G that answers
// QUERY_CONSUMER_OFFSET with 5 and records what pulls and offset updates
// carry.
type groupFake struct {
	addr string

	mu      sync.Mutex
	pulls   []string // "sysFlag/queueOffset/commitOffset"
	updates []string // "queueId/commitOffset"
}

func startGroupFake(t *testing.T) *groupFake {
	g := &groupFake{}
	g.addr = startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{
		codec.ReqQueryConsumerOffset: func(req *codec.Frame) *codec.Frame {
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
			resp.SetInt("offset", 5)
			return resp
		},
		codec.ReqPullMessage: func(req *codec.Frame) *codec.Frame {
			g.mu.Lock()
			g.pulls = append(g.pulls, req.Value("sysFlag")+"/"+req.Value("queueOffset")+"/"+req.Value("commitOffset"))
			g.mu.Unlock()
			hold := time.NewTimer(50 * time.Millisecond) // a short long-poll on an empty queue
			defer hold.Stop()
			<-hold.C
			off, _ := strconv.ParseInt(req.Value("queueOffset"), 10, 64)
			resp := codec.NewResponse(req, int32(codec.RespPullNotFound), "OFFSET_OVERFLOW_ONE")
			setPullHeader(resp, off, off)
			return resp
		},
		codec.ReqUpdateConsumerOffset: func(req *codec.Frame) *codec.Frame {
			g.mu.Lock()
			g.updates = append(g.updates, req.Value("queueId")+"/"+req.Value("commitOffset"))
			g.mu.Unlock()
			return codec.NewResponse(req, int32(codec.RespSuccess), "")
		},
	})
	return g
}

// -from group starts at the group's offset and stores it at the end; it
// commits with the pull to a master, never to a slave (as the Java client
// clears the commit flag for a slave).
func TestConsumeGroupOffsetCommitsToMasterOnly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		brokers func(addr string) string
		flag    string // sysFlag of the pulls
		commit  string
	}{
		{"master", func(a string) string { return `0:"` + a + `"` }, strconv.Itoa(pullFlagCommitOffset | pullFlagSuspend | pullFlagSubscription), "5"},
		{"slave", func(a string) string { return `1:"` + a + `"` }, strconv.Itoa(pullFlagSuspend | pullFlagSubscription), "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGroupFake(t)
			ns := startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{
				codec.ReqGetRouteinfoByTopic: func(req *codec.Frame) *codec.Frame {
					resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
					resp.Body = []byte(slaveRouteJSON(tc.brokers(g.addr), 1))
					return resp
				},
			})
			sum, err := runConsume(consumeConfig{NameSrv: ns, Topic: "G", Group: "cg", Queues: 8, From: "group",
				MaxMsgs: 32, Suspend: time.Second, Duration: 300 * time.Millisecond, Timeout: 10 * time.Second})
			require.NoError(t, err)
			require.Zero(t, sum.Messages)
			g.mu.Lock()
			defer g.mu.Unlock()
			require.NotEmpty(t, g.pulls)
			for _, p := range g.pulls {
				require.Equal(t, tc.flag+"/5/"+tc.commit, p)
			}
			require.Equal(t, []string{"0/5"}, g.updates, "the offset is stored once at the end")
		})
	}
}
