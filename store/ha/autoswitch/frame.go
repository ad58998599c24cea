package autoswitch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/rocketgo/rocketgo/codec"
)

// State is Java's HAConnectionState; its ordinal leads every frame.
type State int32

// Connection states (HAConnectionState ordinals).
const (
	Ready     State = 0
	Handshake State = 1
	Transfer  State = 2
	Suspend   State = 3
	Shutdown  State = 4
)

func (s State) String() string {
	switch s {
	case Ready:
		return "READY"
	case Handshake:
		return "HANDSHAKE"
	case Transfer:
		return "TRANSFER"
	case Suspend:
		return "SUSPEND"
	case Shutdown:
		return "SHUTDOWN"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Wire sizes (Java AutoSwitchHAClient and AutoSwitchHAConnection
// HANDSHAKE_HEADER_SIZE, TRANSFER_HEADER_SIZE, EPOCH_ENTRY_SIZE).
const (
	SlaveHandshakeSize    = 16 // state, two int16 flags, slave broker id
	SlaveReportSize       = 12 // state, slave max offset
	MasterHandshakeHeader = 20 // state, body size, master max offset, last epoch
	MasterTransferHeader  = 36 // + epoch start offset, confirm offset
	EpochEntrySize        = 12 // epoch, start offset
	// MaxEpochEntries bounds a handshake's entry list: Java's master
	// builds it in a buffer of 1000 entries.
	MaxEpochEntries = 1000
)

// Errors of the frame readers.
var (
	// ErrStateNotMatched closes a connection that received a frame of a
	// state other than its own (Java: "State not matched").
	ErrStateNotMatched = errors.New("autoswitch: state not matched")
	// ErrBadFrame refuses a frame whose sizes are out of bounds.
	ErrBadFrame = errors.New("autoswitch: frame out of bounds")
)

// SlaveHandshake is the slave's first message.
type SlaveHandshake struct {
	SyncFromLastFile bool  // isSyncFromLastFile
	AsyncLearner     bool  // isAsyncLearner
	BrokerID         int64 // the controller-assigned id of the slave
}

// AppendSlaveHandshake appends h's 16 wire bytes to dst.
func AppendSlaveHandshake(dst []byte, h SlaveHandshake) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(Handshake))
	dst = binary.BigEndian.AppendUint16(dst, flag(h.SyncFromLastFile))
	dst = binary.BigEndian.AppendUint16(dst, flag(h.AsyncLearner))
	return binary.BigEndian.AppendUint64(dst, uint64(h.BrokerID))
}

// AppendSlaveReport appends a TRANSFER report of offset (12 bytes).
func AppendSlaveReport(dst []byte, offset int64) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(Transfer))
	return binary.BigEndian.AppendUint64(dst, uint64(offset))
}

func flag(b bool) uint16 {
	if b {
		return 1
	}
	return 0
}

// SlaveMsg is one decoded slave message: a handshake or a report.
type SlaveMsg struct {
	State     State
	Handshake SlaveHandshake // State == Handshake
	Offset    int64          // State == Transfer: the slave's max offset
}

// SlaveReader decodes the slave's messages on the master. It allocates
// nothing: both messages have fixed sizes.
type SlaveReader struct {
	r   io.Reader
	buf [SlaveHandshakeSize]byte
}

// NewSlaveReader reads slave messages from r.
func NewSlaveReader(r io.Reader) *SlaveReader { return &SlaveReader{r: r} }

// Next reads one message. A state other than HANDSHAKE or TRANSFER is
// ErrBadFrame (Java: "Current state illegal"). A clean end of stream
// before a message is io.EOF; one cut short is io.ErrUnexpectedEOF.
func (s *SlaveReader) Next(m *SlaveMsg) error {
	if _, err := io.ReadFull(s.r, s.buf[:4]); err != nil {
		return err
	}
	m.State = State(int32(binary.BigEndian.Uint32(s.buf[:4])))
	var n int
	switch m.State {
	case Handshake:
		n = SlaveHandshakeSize
	case Transfer:
		n = SlaveReportSize
	default:
		return fmt.Errorf("%w: slave sent state %v", ErrBadFrame, m.State)
	}
	if _, err := io.ReadFull(s.r, s.buf[4:n]); err != nil {
		return cutShort(err)
	}
	b := s.buf[:n]
	if m.State == Handshake {
		m.Handshake = SlaveHandshake{
			// compat: Java tests each flag for == 1.
			SyncFromLastFile: binary.BigEndian.Uint16(b[4:6]) == 1,
			AsyncLearner:     binary.BigEndian.Uint16(b[6:8]) == 1,
			BrokerID:         int64(binary.BigEndian.Uint64(b[8:16])),
		}
		m.Offset = 0
		return nil
	}
	m.Offset = int64(binary.BigEndian.Uint64(b[4:12]))
	return nil
}

func cutShort(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// EpochEntry is one entry of the master's handshake body.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// MasterHeader is a master frame's header. Handshake frames use State,
// BodySize, Offset (the master's max physical offset) and Epoch (its last
// epoch); transfer frames also EpochStartOffset and ConfirmOffset, and
// Offset is the commit-log offset of the body.
type MasterHeader struct {
	State            State
	BodySize         int32
	Offset           int64
	Epoch            int32
	EpochStartOffset int64
	ConfirmOffset    int64
}

// AppendMasterHandshake appends a HANDSHAKE frame (header and the entries)
// to dst.
func AppendMasterHandshake(dst []byte, maxOffset int64, lastEpoch int32, entries []EpochEntry) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(Handshake))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(entries)*EpochEntrySize))
	dst = binary.BigEndian.AppendUint64(dst, uint64(maxOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(lastEpoch))
	for _, e := range entries {
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.Epoch))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.StartOffset))
	}
	return dst
}

// AppendTransferHeader appends a TRANSFER header (36 bytes) to dst; the
// body (h.BodySize commit-log bytes) follows it on the wire.
func AppendTransferHeader(dst []byte, h MasterHeader) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(Transfer))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.BodySize))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Offset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Epoch))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.EpochStartOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(h.ConfirmOffset))
}

// growStep bounds how much a body buffer grows ahead of the bytes read.
const growStep = 64 << 10

// MasterReader decodes the master's frames on the slave. The body and the
// entries returned by Next are valid until the next call.
type MasterReader struct {
	r       io.Reader
	max     int
	hdr     [MasterTransferHeader]byte
	body    []byte
	entries []EpochEntry
}

// NewMasterReader reads master frames from r, refusing transfer bodies
// above maxBody bytes.
func NewMasterReader(r io.Reader, maxBody int) *MasterReader {
	return &MasterReader{r: r, max: maxBody}
}

// Next reads one frame; want is the connection's current state, and a
// frame of another state is ErrStateNotMatched (the connection closes, as
// Java's). For a HANDSHAKE frame the entries are returned; for a TRANSFER
// frame the body. A body size that is negative, above the bound, or (for a
// handshake) not a whole number of at most MaxEpochEntries entries is
// ErrBadFrame; nothing is allocated for it. A clean end of stream before a
// header is io.EOF; a frame cut short is io.ErrUnexpectedEOF.
func (m *MasterReader) Next(want State) (MasterHeader, []EpochEntry, []byte, error) {
	var h MasterHeader
	if _, err := io.ReadFull(m.r, m.hdr[:MasterHandshakeHeader]); err != nil {
		return h, nil, nil, err
	}
	b := m.hdr[:]
	h.State = State(int32(binary.BigEndian.Uint32(b[0:4])))
	h.BodySize = int32(binary.BigEndian.Uint32(b[4:8]))
	h.Offset = int64(binary.BigEndian.Uint64(b[8:16]))
	h.Epoch = int32(binary.BigEndian.Uint32(b[16:20]))
	if h.State != want {
		return h, nil, nil, fmt.Errorf("%w: master %v, slave %v", ErrStateNotMatched, h.State, want)
	}
	switch h.State {
	case Handshake:
		if h.BodySize < 0 || h.BodySize%EpochEntrySize != 0 || int(h.BodySize)/EpochEntrySize > MaxEpochEntries {
			return h, nil, nil, fmt.Errorf("%w: handshake body of %d bytes", ErrBadFrame, h.BodySize)
		}
		body, err := codec.ReadAnnounced(m.r, m.body, int(h.BodySize), growStep)
		m.body = body
		if err != nil {
			return h, nil, nil, fmt.Errorf("autoswitch: handshake body: %w", cutShort(err))
		}
		m.entries = m.entries[:0]
		for i := 0; i+EpochEntrySize <= len(body); i += EpochEntrySize {
			m.entries = append(m.entries, EpochEntry{
				Epoch:       int32(binary.BigEndian.Uint32(body[i : i+4])),
				StartOffset: int64(binary.BigEndian.Uint64(body[i+4 : i+12])),
			})
		}
		return h, m.entries, nil, nil
	case Transfer:
		if _, err := io.ReadFull(m.r, m.hdr[MasterHandshakeHeader:]); err != nil {
			return h, nil, nil, cutShort(err)
		}
		h.EpochStartOffset = int64(binary.BigEndian.Uint64(b[20:28]))
		h.ConfirmOffset = int64(binary.BigEndian.Uint64(b[28:36]))
		if h.BodySize < 0 || int(h.BodySize) > m.max {
			return h, nil, nil, fmt.Errorf("%w: transfer at %d of %d bytes (max %d)", ErrBadFrame, h.Offset, h.BodySize, m.max)
		}
		body, err := codec.ReadAnnounced(m.r, m.body, int(h.BodySize), growStep)
		m.body = body
		if err != nil {
			return h, nil, nil, fmt.Errorf("autoswitch: transfer at %d: %w", h.Offset, cutShort(err))
		}
		return h, nil, body, nil
	}
	return h, nil, nil, fmt.Errorf("%w: a slave waits for %v", ErrBadFrame, h.State)
}
