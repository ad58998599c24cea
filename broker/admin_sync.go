package broker

import (
	"encoding/binary"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store/timer"
)

// syncAdmin serves the tables a slave's metadata sync reads from its
// master (broker/slavesync.go, Java's SlaveSynchronize).
type syncAdmin struct {
	topics  *topicTable
	offsets *offsetTable
	delay   *delayService
}

func (a *syncAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqGetAllConsumerOffset, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = a.offsets.encode()
		return resp
	})
	r.Handle(codec.ReqGetAllDelayOffset, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = a.delay.encode()
		return resp
	})
	r.Handle(codec.ReqGetSystemTopicListFromBroker, pool, a.systemTopics)
}

// systemTopics answers GET_SYSTEM_TOPIC_LIST_FROM_BROKER with a TopicList.
func (a *syncAdmin) systemTopics(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	_, topics := a.topics.snapshot()
	b := append([]byte(nil), `{"topicList":[`...)
	n := 0
	for _, tc := range topics {
		if !a.topics.isSystem(tc.TopicName) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = codec.AppendJSONString(b, tc.TopicName)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = append(b, "]}"...)
	return resp
}

// emptyMessageRequestModes is what Java's MessageRequestModeManager.encode
// writes when no consumer group set a request mode.
const emptyMessageRequestModes = `{"messageRequestModeMap":{}}`

// timerCheckpointWireSize is TimerCheckpoint.encode: seven longs.
const timerCheckpointWireSize = 56

// registerMasterSync adds the master-side answers a Java slave's
// SlaveSynchronize asks for and the other admin handlers do not cover.
// timerEnabled is timerWheelEnable; storeRoot holds config/timercheck.
func registerMasterSync(r *transport.Router, pool *transport.Pool, timerEnabled bool, storeRoot string) {
	// GET_ALL_MESSAGE_REQUEST_MODE is served by the assignment processor
	// (popassign.go), next to SET_MESSAGE_REQUEST_MODE.

	// GET_TIMER_CHECK_POINT: the last checkpoint the timer wrote, in
	// TimerCheckpoint.encode's layout.
	ckPath := timer.CheckpointPath(storeRoot)
	r.Handle(codec.ReqGetTimerCheckPoint, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		if !timerEnabled {
			return codec.NewResponse(req, int32(codec.RespSystemError), remarks.CheckpointNull)
		}
		ck, found, err := timer.ReadCheckpoint(ckPath)
		if err != nil {
			return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
		}
		if !found {
			ck.Timestamp = time.Now().UnixMilli() // a fresh Java DataVersion
		}
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = appendTimerCheckpoint(nil, &ck)
		return resp
	})

	// GET_TIMER_METRICS: we keep no per-topic timing counts, so the answer
	// is Java's empty TimerMetricsSerializeWrapper with a version that
	// stays put (a Java slave re-applies only when it changes).
	metricsVersion := body.TopicVersion{Timestamp: time.Now().UnixMilli()}
	r.Handle(codec.ReqGetTimerMetrics, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		if !timerEnabled {
			return codec.NewResponse(req, int32(codec.RespSystemError), remarks.TimerMessageStoreNull)
		}
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		b := append([]byte(nil), `{"dataVersion":`...)
		b = body.AppendTopicVersion(b, metricsVersion)
		resp.Body = append(b, `,"timingCount":{}}`...)
		return resp
	})
}

func appendTimerCheckpoint(dst []byte, c *timer.Checkpoint) []byte {
	for _, v := range []int64{c.LastReadTimeMs, c.LastTimerLogFlushPos, c.LastTimerQueueOffset,
		c.MasterTimerQueueOffset, c.StateVersion, c.Timestamp, c.Counter} {
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}
