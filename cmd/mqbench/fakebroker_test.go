package main

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// fakeBroker is a name server and broker in one transport.Server: it
// routes every topic it knows to itself, stores sends in memory as Java
// stored records, and serves pulls with a short hold.
type fakeBroker struct {
	t    *testing.T
	srv  *transport.Server
	addr string

	mu      sync.Mutex
	topics  map[string]int                // topic → queue count
	queues  map[string][][]byte           // "topic/qid" → stored records
	wake    chan struct{}                 // closed and replaced on every append
	deny    map[string]codec.ResponseCode // topic → code answered to sends
	sends   int                           // send requests seen
	maxOffs int                           // GET_MAX_OFFSET requests seen
	creates int
}

func startFakeBroker(t *testing.T) *fakeBroker {
	fb := &fakeBroker{t: t, topics: map[string]int{}, queues: map[string][][]byte{},
		wake: make(chan struct{}), deny: map[string]codec.ResponseCode{}}
	pool := transport.NewPool("fake", 4, 10000)
	t.Cleanup(pool.Close)
	r := transport.NewRouter()
	r.Handle(codec.ReqGetRouteinfoByTopic, nil, fb.route)
	r.Handle(codec.ReqGetBrokerClusterInfo, nil, fb.clusterInfo)
	r.Handle(codec.ReqUpdateAndCreateTopic, nil, fb.createTopic)
	r.Handle(codec.ReqSendMessageV2, nil, fb.send)
	r.Handle(codec.ReqSendBatchMessage, nil, fb.send)
	r.Handle(codec.ReqGetMaxOffset, nil, fb.maxOffset)
	r.Handle(codec.ReqPullMessage, pool, fb.pull)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	fb.srv = transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: log}, r)
	require.NoError(t, fb.srv.Start())
	t.Cleanup(func() { require.NoError(t, fb.srv.Close()) })
	fb.mu.Lock()
	fb.addr = fb.srv.Addr()
	fb.mu.Unlock()
	return fb
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func (fb *fakeBroker) addTopic(topic string, queues int) {
	fb.mu.Lock()
	fb.topics[topic] = queues
	fb.mu.Unlock()
}

func (fb *fakeBroker) denySends(topic string, code codec.ResponseCode) {
	fb.mu.Lock()
	fb.deny[topic] = code
	fb.mu.Unlock()
}

func (fb *fakeBroker) maxOffsetCalls() int {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.maxOffs
}

// stored counts the messages stored for topic over all queues.
func (fb *fakeBroker) stored(topic string) int {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	n := 0
	for q := 0; q < fb.topics[topic]; q++ {
		n += len(fb.queues[topic+"/"+strconv.Itoa(q)])
	}
	return n
}

func (fb *fakeBroker) route(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	fb.mu.Lock()
	n, ok := fb.topics[req.Value("topic")]
	addr := fb.addr
	fb.mu.Unlock()
	if !ok {
		return codec.NewResponse(req, int32(codec.RespTopicNotExist), "No topic route info in name server for the topic: "+req.Value("topic"))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = fmt.Appendf(nil, `{"brokerDatas":[{"brokerAddrs":{"0":"%s"},"brokerName":"fake-a","cluster":"C"}],"filterServerTable":{},"queueDatas":[{"brokerName":"fake-a","perm":6,"readQueueNums":%d,"topicSysFlag":0,"writeQueueNums":%d}]}`, addr, n, n)
	return resp
}

func (fb *fakeBroker) clusterInfo(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	fb.mu.Lock()
	addr := fb.addr
	fb.mu.Unlock()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	// fastjson's bare integer keys, as a Java name server writes them.
	resp.Body = fmt.Appendf(nil, `{"brokerAddrTable":{"fake-a":{"brokerAddrs":{0:"%s"},"brokerName":"fake-a","cluster":"C"}},"clusterAddrTable":{"C":["fake-a"]}}`, addr)
	return resp
}

func (fb *fakeBroker) createTopic(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	n, err := strconv.Atoi(req.Value("writeQueueNums"))
	if err != nil || req.Value("topic") == "" {
		return codec.NewResponse(req, int32(codec.RespSystemError), "bad header")
	}
	fb.mu.Lock()
	fb.topics[req.Value("topic")] = n
	fb.creates++
	fb.mu.Unlock()
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// record encodes one stored message (IPv4 hosts, V1 magic).
func record(qid int32, qoff int64, born int64, body []byte, topic string) []byte {
	r := make([]byte, 0, 91+len(body)+len(topic))
	r = binary.BigEndian.AppendUint32(r, uint32(91+len(body)+len(topic)))
	r = binary.BigEndian.AppendUint32(r, 0xDAA320A7)
	r = binary.BigEndian.AppendUint32(r, 0) // crc
	r = binary.BigEndian.AppendUint32(r, uint32(qid))
	r = binary.BigEndian.AppendUint32(r, 0) // flag
	r = binary.BigEndian.AppendUint64(r, uint64(qoff))
	r = binary.BigEndian.AppendUint64(r, 0) // physical offset
	r = binary.BigEndian.AppendUint32(r, 0) // sysflag
	r = binary.BigEndian.AppendUint64(r, uint64(born))
	r = append(r, 127, 0, 0, 1, 0, 0, 0x30, 0x39)
	r = binary.BigEndian.AppendUint64(r, uint64(time.Now().UnixMilli()))
	r = append(r, 127, 0, 0, 1, 0, 0, 0x2A, 0x9F)
	r = binary.BigEndian.AppendUint32(r, 0) // reconsume
	r = binary.BigEndian.AppendUint64(r, 0) // prepared offset
	r = binary.BigEndian.AppendUint32(r, uint32(len(body)))
	r = append(r, body...)
	r = append(r, byte(len(topic)))
	r = append(r, topic...)
	return binary.BigEndian.AppendUint16(r, 0)
}

func (fb *fakeBroker) send(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	topic := req.Value("b")
	qid, err1 := strconv.Atoi(req.Value("e"))
	born, err2 := strconv.ParseInt(req.Value("g"), 10, 64)
	if err1 != nil || err2 != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), "bad send header")
	}
	var bodies [][]byte
	if req.Value("m") == "true" {
		for b := req.Body; len(b) > 0; {
			total := int(binary.BigEndian.Uint32(b))
			bl := int(binary.BigEndian.Uint32(b[16:]))
			bodies = append(bodies, b[20:20+bl])
			b = b[total:]
		}
	} else {
		bodies = [][]byte{req.Body}
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.sends++
	if code, ok := fb.deny[topic]; ok {
		return codec.NewResponse(req, int32(code), "denied")
	}
	n, ok := fb.topics[topic]
	if !ok || qid >= n {
		return codec.NewResponse(req, int32(codec.RespTopicNotExist), "topic["+topic+"] not exist, apply first please!")
	}
	key := topic + "/" + strconv.Itoa(qid)
	first := len(fb.queues[key])
	for _, b := range bodies {
		fb.queues[key] = append(fb.queues[key], record(int32(qid), int64(len(fb.queues[key])), born, b, topic))
	}
	close(fb.wake)
	fb.wake = make(chan struct{})
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Ext = []codec.KV{{Key: "msgId", Value: "7F00000100002A9F0000000000000000"},
		{Key: "queueId", Value: strconv.Itoa(qid)}, {Key: "queueOffset", Value: strconv.Itoa(first)}}
	return resp
}

func (fb *fakeBroker) maxOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	fb.mu.Lock()
	n := len(fb.queues[req.Value("topic")+"/"+req.Value("queueId")])
	fb.maxOffs++
	fb.mu.Unlock()
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.SetInt("offset", int64(n))
	return resp
}

func (fb *fakeBroker) pull(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	key := req.Value("topic") + "/" + req.Value("queueId")
	off, _ := strconv.ParseInt(req.Value("queueOffset"), 10, 64)
	maxN, _ := strconv.Atoi(req.Value("maxMsgNums"))
	hold := time.NewTimer(200 * time.Millisecond) // a short long-poll
	defer hold.Stop()
	for {
		fb.mu.Lock()
		q := fb.queues[key]
		wake := fb.wake
		fb.mu.Unlock()
		if int(off) < len(q) {
			end := min(len(q), int(off)+maxN)
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "FOUND")
			for _, r := range q[off:end] {
				resp.Body = append(resp.Body, r...)
			}
			setPullHeader(resp, int64(end), int64(len(q)))
			return resp
		}
		select {
		case <-wake:
			continue
		case <-hold.C:
		}
		resp := codec.NewResponse(req, int32(codec.RespPullNotFound), "OFFSET_OVERFLOW_ONE")
		setPullHeader(resp, off, int64(len(q)))
		return resp
	}
}

func setPullHeader(resp *codec.Frame, next, maxOff int64) {
	resp.SetInt("nextBeginOffset", next)
	resp.SetInt("minOffset", 0)
	resp.SetInt("maxOffset", maxOff)
	resp.SetInt("suggestWhichBrokerId", 0)
}
