package ha

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/rocketgo/rocketgo/codec"
)

// Wire sizes (Java DefaultHAClient.REPORT_HEADER_SIZE and
// DefaultHAConnection.TRANSFER_HEADER_SIZE).
const (
	ReportSize      = 8
	FrameHeaderSize = 12
)

// ErrFrameTooLarge refuses a frame whose body size is negative or above
// the reader's bound.
var ErrFrameTooLarge = errors.New("ha: frame body size out of bounds")

// Header is a transfer frame's header.
type Header struct {
	Offset int64 // commit-log offset of the body
	Size   int32 // body length; 0 is a heartbeat
}

// AppendHeader appends h's 12 wire bytes to dst.
func AppendHeader(dst []byte, h Header) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Offset))
	return binary.BigEndian.AppendUint32(dst, uint32(h.Size))
}

// AppendReport appends a slave report of offset to dst.
func AppendReport(dst []byte, offset int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(offset))
}

// growStep bounds how much the body buffer grows ahead of the bytes read.
const growStep = 64 << 10

// FrameReader decodes transfer frames from r. The body returned by Next is
// valid until the next call.
type FrameReader struct {
	r    io.Reader
	max  int
	hdr  [FrameHeaderSize]byte
	body []byte
}

// NewFrameReader reads frames from r, refusing bodies above maxBody bytes.
func NewFrameReader(r io.Reader, maxBody int) *FrameReader {
	return &FrameReader{r: r, max: maxBody}
}

// Next reads one frame. A clean end of stream before a header is io.EOF;
// a frame cut short is io.ErrUnexpectedEOF.
func (f *FrameReader) Next() (Header, []byte, error) {
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return Header{}, nil, err
	}
	h := Header{
		Offset: int64(binary.BigEndian.Uint64(f.hdr[:8])),
		Size:   int32(binary.BigEndian.Uint32(f.hdr[8:])),
	}
	if h.Size < 0 || int(h.Size) > f.max {
		return h, nil, fmt.Errorf("ha: frame at %d of %d bytes (max %d): %w", h.Offset, h.Size, f.max, ErrFrameTooLarge)
	}
	body, err := codec.ReadAnnounced(f.r, f.body, int(h.Size), growStep)
	f.body = body
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return h, nil, fmt.Errorf("ha: frame at %d: %w", h.Offset, err)
	}
	return h, body, nil
}
