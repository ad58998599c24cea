package goclient

import (
	"context"
	"fmt"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// Sender is a started Go v2 producer for replication scenarios that look
// at each send's status (SEND_OK, FLUSH_SLAVE_TIMEOUT, …).
type Sender struct {
	p rocketmq.Producer
}

// NewSender starts a producer of group (also its instance name) that sends
// once per call (no client retries).
func NewSender(namesrv, group string) (*Sender, error) {
	Quiet()
	p, err := rocketmq.NewProducer(producer.WithNameServer(primitive.NamesrvAddr{namesrv}),
		producer.WithGroupName(group), producer.WithInstanceName(group),
		producer.WithRetry(0), producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start producer: %w", err)
	}
	return &Sender{p: p}, nil
}

// Send sends one message with SendSync and returns the status's name
// (SendOK, SendFlushSlaveTimeout, …) and the queue it went to.
func (s *Sender) Send(ctx context.Context, topic string, body []byte) (status string, queueID int, queueOffset int64, err error) {
	r, err := s.p.SendSync(ctx, primitive.NewMessage(topic, body))
	if err != nil {
		return "", 0, 0, err
	}
	return StatusName(r.Status), r.MessageQueue.QueueId, r.QueueOffset, nil
}

// Close shuts the producer down.
func (s *Sender) Close() { _ = s.p.Shutdown() }

// StatusName names a Go client send status as its constant.
func StatusName(s primitive.SendStatus) string {
	switch s {
	case primitive.SendOK:
		return "SendOK"
	case primitive.SendFlushDiskTimeout:
		return "SendFlushDiskTimeout"
	case primitive.SendFlushSlaveTimeout:
		return "SendFlushSlaveTimeout"
	case primitive.SendSlaveNotAvailable:
		return "SendSlaveNotAvailable"
	case primitive.SendUnknownError:
		return "SendUnknownError"
	}
	return fmt.Sprintf("SendStatus(%d)", s)
}
