package popfmt

import (
	"encoding/base64"
	"strconv"
	"unsafe"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// CheckPoint is Java's PopCheckPoint: one popped batch of one queue. Bit i
// of BitMap acknowledges the message at StartOffset+Diff[i].
type CheckPoint struct {
	StartOffset   int64   `json:"so"`
	PopTime       int64   `json:"pt"`
	InvisibleTime int64   `json:"it"`
	BitMap        int32   `json:"bm"`
	Num           int8    `json:"n"`
	QueueID       int32   `json:"q"`
	Topic         string  `json:"t"`
	CID           string  `json:"c"`
	ReviveOffset  int64   `json:"ro"`
	Diff          []int32 `json:"d"`
	BrokerName    string  `json:"bn,omitempty"`
	RePutTimes    string  `json:"rp,omitempty"`
}

// ReviveTime is PopCheckPoint.getReviveTime.
func (c *CheckPoint) ReviveTime() int64 { return c.PopTime + c.InvisibleTime }

// IndexOfAck is PopCheckPoint.indexOfAck: the bit of ackOffset, or -1.
func (c *CheckPoint) IndexOfAck(ackOffset int64) int {
	if ackOffset < c.StartOffset {
		return -1
	}
	if len(c.Diff) > 0 {
		d := ackOffset - c.StartOffset
		for i, v := range c.Diff {
			if int64(v) == d {
				return i
			}
		}
		return -1
	}
	if ackOffset-c.StartOffset < int64(c.Num) {
		return int(ackOffset - c.StartOffset)
	}
	return -1
}

// AckOffsetByIndex is PopCheckPoint.ackOffsetByIndex.
func (c *CheckPoint) AckOffsetByIndex(i int) int64 {
	if len(c.Diff) > 0 && i < len(c.Diff) {
		return c.StartOffset + int64(c.Diff[i])
	}
	return c.StartOffset + int64(i)
}

// Key is the identity a checkpoint and its acks share (Java's merge key:
// topic, group, queue, start offset, pop time, broker name).
func (c *CheckPoint) Key() string {
	return c.Topic + Split + c.CID + Split + strconv.Itoa(int(c.QueueID)) + Split +
		strconv.FormatInt(c.StartOffset, 10) + Split + strconv.FormatInt(c.PopTime, 10) + Split + c.BrokerName
}

// UniqID is PopMessageProcessor.genCkUniqueId (the record's UNIQ_KEY).
func (c *CheckPoint) UniqID() string { return string(c.AppendUniqID(nil)) }

// AppendUniqID appends UniqID.
func (c *CheckPoint) AppendUniqID(dst []byte) []byte {
	dst = append(dst, c.Topic...)
	dst = append(dst, Split...)
	dst = strconv.AppendInt(dst, int64(c.QueueID), 10)
	dst = append(dst, Split...)
	dst = strconv.AppendInt(dst, c.StartOffset, 10)
	dst = append(dst, Split...)
	dst = append(dst, c.CID...)
	dst = append(dst, Split...)
	dst = strconv.AppendInt(dst, c.PopTime, 10)
	dst = append(dst, Split...)
	dst = append(dst, c.BrokerName...)
	dst = append(dst, Split...)
	return append(dst, CKTag...)
}

// AppendJSON appends fastjson's output for the checkpoint: keys sorted,
// null fields omitted, the reviveTime getter included.
func (c *CheckPoint) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"bm":`...)
	dst = strconv.AppendInt(dst, int64(c.BitMap), 10)
	if c.BrokerName != "" {
		dst = append(dst, `,"bn":`...)
		dst = appendString(dst, c.BrokerName)
	}
	dst = append(dst, `,"c":`...)
	dst = appendString(dst, c.CID)
	dst = append(dst, `,"d":[`...)
	for i, d := range c.Diff {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(d), 10)
	}
	dst = append(dst, `],"it":`...)
	dst = strconv.AppendInt(dst, c.InvisibleTime, 10)
	dst = append(dst, `,"n":`...)
	dst = strconv.AppendInt(dst, int64(c.Num), 10)
	dst = append(dst, `,"pt":`...)
	dst = strconv.AppendInt(dst, c.PopTime, 10)
	dst = append(dst, `,"q":`...)
	dst = strconv.AppendInt(dst, int64(c.QueueID), 10)
	dst = append(dst, `,"reviveTime":`...)
	dst = strconv.AppendInt(dst, c.ReviveTime(), 10)
	dst = append(dst, `,"ro":`...)
	dst = strconv.AppendInt(dst, c.ReviveOffset, 10)
	if c.RePutTimes != "" {
		dst = append(dst, `,"rp":`...)
		dst = appendString(dst, c.RePutTimes)
	}
	dst = append(dst, `,"so":`...)
	dst = strconv.AppendInt(dst, c.StartOffset, 10)
	dst = append(dst, `,"t":`...)
	dst = appendString(dst, c.Topic)
	return append(dst, '}')
}

// DecodeCheckPoint parses a checkpoint record's body.
func DecodeCheckPoint(b []byte) (CheckPoint, error) {
	var c CheckPoint
	err := fastjson.Unmarshal(b, &c)
	return c, err
}

// AckMsg is Java's AckMsg; BatchAckMsg adds AckOffsetList (tags "bAck").
type AckMsg struct {
	AckOffset     int64
	StartOffset   int64
	ConsumerGroup string
	Topic         string
	QueueID       int32
	PopTime       int64
	BrokerName    string
	AckOffsetList []int64 // BatchAckMsg only

	// DeliverTime is the record's TIMER_DELIVER_MS (Java: popTime +
	// invisibleTime); not part of the JSON.
	DeliverTime int64 `json:"-"`
}

// Key matches CheckPoint.Key.
func (a *AckMsg) Key() string {
	return a.Topic + Split + a.ConsumerGroup + Split + strconv.Itoa(int(a.QueueID)) + Split +
		strconv.FormatInt(a.StartOffset, 10) + Split + strconv.FormatInt(a.PopTime, 10) + Split + a.BrokerName
}

// UniqID is PopMessageProcessor.genAckUniqueId, the record's UNIQ_KEY.
// compat: for a batch too: Java's appendAck sets genBatchAckUniqueId and
// then overwrites it with genAckUniqueId (ackOffset -1).
func (a *AckMsg) UniqID() string { return string(a.AppendUniqID(nil)) }

// AppendUniqID appends UniqID.
func (a *AckMsg) AppendUniqID(dst []byte) []byte {
	dst = append(dst, a.Topic...)
	dst = append(dst, Split...)
	dst = strconv.AppendInt(dst, int64(a.QueueID), 10)
	dst = append(dst, Split...)
	dst = strconv.AppendInt(dst, a.AckOffset, 10)
	dst = append(dst, Split...)
	dst = append(dst, a.ConsumerGroup...)
	dst = append(dst, Split...)
	dst = strconv.AppendInt(dst, a.PopTime, 10)
	dst = append(dst, Split...)
	dst = append(dst, a.BrokerName...)
	dst = append(dst, Split...)
	return append(dst, AckTag...)
}

// AppendJSON appends fastjson's output (keys sorted; "aol" for a batch).
func (a *AckMsg) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"ao":`...)
	dst = strconv.AppendInt(dst, a.AckOffset, 10)
	if a.AckOffsetList != nil {
		dst = append(dst, `,"aol":[`...)
		for i, o := range a.AckOffsetList {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, o, 10)
		}
		dst = append(dst, ']')
	}
	if a.BrokerName != "" {
		dst = append(dst, `,"bn":`...)
		dst = appendString(dst, a.BrokerName)
	}
	dst = append(dst, `,"c":`...)
	dst = appendString(dst, a.ConsumerGroup)
	dst = append(dst, `,"pt":`...)
	dst = strconv.AppendInt(dst, a.PopTime, 10)
	dst = append(dst, `,"q":`...)
	dst = strconv.AppendInt(dst, int64(a.QueueID), 10)
	dst = append(dst, `,"so":`...)
	dst = strconv.AppendInt(dst, a.StartOffset, 10)
	dst = append(dst, `,"t":`...)
	dst = appendString(dst, a.Topic)
	return append(dst, '}')
}

// ackJSON reads both the short names and Java's alternateNames.
type ackJSON struct {
	AO  *int64  `json:"ao"`
	AO2 *int64  `json:"ackOffset"`
	SO  *int64  `json:"so"`
	SO2 *int64  `json:"startOffset"`
	C   *string `json:"c"`
	C2  *string `json:"consumerGroup"`
	T   *string `json:"t"`
	T2  *string `json:"topic"`
	Q   *int32  `json:"q"`
	Q2  *int32  `json:"queueId"`
	PT  *int64  `json:"pt"`
	PT2 *int64  `json:"popTime"`
	BN  *string `json:"bn"`
	BN2 *string `json:"brokerName"`
	AOL []int64 `json:"aol"`
	AL2 []int64 `json:"ackOffsetList"`
}

func pick[T any](a, b *T) T {
	var z T
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return z
}

// DecodeAckMsg parses an ack or batch-ack record's body.
func DecodeAckMsg(b []byte) (AckMsg, error) {
	var j ackJSON
	if err := fastjson.Unmarshal(b, &j); err != nil {
		return AckMsg{}, err
	}
	a := AckMsg{AckOffset: pick(j.AO, j.AO2), StartOffset: pick(j.SO, j.SO2), ConsumerGroup: pick(j.C, j.C2),
		Topic: pick(j.T, j.T2), QueueID: pick(j.Q, j.Q2), PopTime: pick(j.PT, j.PT2), BrokerName: pick(j.BN, j.BN2)}
	a.AckOffsetList = j.AOL
	if a.AckOffsetList == nil {
		a.AckOffsetList = j.AL2
	}
	return a, nil
}

// BatchAck is one entry of BATCH_ACK_MESSAGE's body (Java's BatchAck).
type BatchAck struct {
	ConsumerGroup string
	Topic         string
	Retry         string
	StartOffset   int64
	QueueID       int32
	ReviveQueueID int32
	PopTime       int64
	InvisibleTime int64
	BitSet        []byte // java.util.BitSet.toByteArray: bit i = byte i/8, bit i%8
}

// Offsets lists StartOffset+i for every set bit i.
func (b *BatchAck) Offsets() []int64 {
	var out []int64
	for i, by := range b.BitSet {
		for j := 0; j < 8; j++ {
			if by&(1<<j) != 0 {
				out = append(out, b.StartOffset+int64(i*8+j))
			}
		}
	}
	return out
}

// BatchAckBody is Java's BatchAckMessageRequestBody.
type BatchAckBody struct {
	BrokerName string
	Acks       []BatchAck
}

// DecodeBatchAckBody parses BATCH_ACK_MESSAGE's body (fastjson's reader:
// short and long names, any order) into a body of its own.
func DecodeBatchAckBody(b []byte) (BatchAckBody, error) {
	var out BatchAckBody
	if err := decodeBatchAckBody(b, &out, false); err != nil {
		return BatchAckBody{}, err
	}
	return out, nil
}

// DecodeBatchAckBodyInto is DecodeBatchAckBody for the broker's ack path:
// out's strings alias b (valid while b is), and out's Acks and their
// BitSets reuse the room a previous decode left, so a warm out decodes
// without allocating.
func DecodeBatchAckBodyInto(b []byte, out *BatchAckBody) error {
	return decodeBatchAckBody(b, out, true)
}

func decodeBatchAckBody(b []byte, out *BatchAckBody, alias bool) error {
	acks := out.Acks[:0]
	*out = BatchAckBody{}
	var rd fastjson.Reader
	if alias {
		rd.ResetAlias(b)
	} else {
		rd.Reset(b)
	}
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "brokerName":
			out.BrokerName = rd.String()
		case "acks":
			for rd.ArrayStart(); rd.More(); {
				var bitSet []byte
				if n := len(acks); n < cap(acks) {
					bitSet = acks[:n+1][n].BitSet[:0] // the room this slot had
				}
				a := BatchAck{}
				var bits string
				for rd.ObjectStart(); rd.More(); {
					switch rd.Key() {
					case "c", "consumerGroup":
						a.ConsumerGroup = rd.String()
					case "t", "topic":
						a.Topic = rd.String()
					case "r", "retry":
						a.Retry = rd.String()
					case "so", "startOffset":
						a.StartOffset = rd.Int()
					case "q", "queueId":
						a.QueueID = int32(rd.Int())
					case "rq", "reviveQueueId":
						a.ReviveQueueID = int32(rd.Int())
					case "pt", "popTime":
						a.PopTime = rd.Int()
					case "it", "invisibleTime":
						a.InvisibleTime = rd.Int()
					case "b", "bitSet":
						bits = rd.String()
					default:
						rd.Skip()
					}
				}
				var err error
				if a.BitSet, err = base64.StdEncoding.AppendDecode(bitSet, unsafe.Slice(unsafe.StringData(bits), len(bits))); err != nil {
					out.Acks = acks[:0]
					return err
				}
				if a.BitSet == nil {
					a.BitSet = []byte{} // DecodeString's empty result
				}
				acks = append(acks, a)
			}
		default:
			rd.Skip()
		}
	}
	out.Acks = acks
	if err := rd.End(); err != nil {
		out.Acks = acks[:0]
		return err
	}
	return nil
}

// AppendBatchAckBody appends the body a Java client sends (tests, tools).
func AppendBatchAckBody(dst []byte, body *BatchAckBody) []byte {
	dst = append(dst, `{"acks":[`...)
	for i := range body.Acks {
		a := &body.Acks[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"b":`...)
		dst = appendString(dst, base64.StdEncoding.EncodeToString(a.BitSet))
		dst = append(dst, `,"c":`...)
		dst = appendString(dst, a.ConsumerGroup)
		dst = append(dst, `,"it":`...)
		dst = strconv.AppendInt(dst, a.InvisibleTime, 10)
		dst = append(dst, `,"pt":`...)
		dst = strconv.AppendInt(dst, a.PopTime, 10)
		dst = append(dst, `,"q":`...)
		dst = strconv.AppendInt(dst, int64(a.QueueID), 10)
		dst = append(dst, `,"r":`...)
		dst = appendString(dst, a.Retry)
		dst = append(dst, `,"rq":`...)
		dst = strconv.AppendInt(dst, int64(a.ReviveQueueID), 10)
		dst = append(dst, `,"so":`...)
		dst = strconv.AppendInt(dst, a.StartOffset, 10)
		dst = append(dst, `,"t":`...)
		dst = appendString(dst, a.Topic)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"brokerName":`...)
	dst = appendString(dst, body.BrokerName)
	return append(dst, '}')
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
