package codec

import (
	"io"
	"slices"
)

// NextFrame finds the first complete frame at the start of buf. It returns
// the payload (the bytes after the length prefix, aliasing buf) and the
// total number of bytes the frame occupies, or n == 0 when buf does not yet
// hold a whole frame. The length prefix is validated (against max, which
// counts the prefix as Java does) as soon as its four bytes are present, so
// an oversize frame is rejected before its body is read.
func NextFrame(buf []byte, max int) (payload []byte, n int, err error) {
	if len(buf) < 4 {
		return nil, 0, nil
	}
	l, err := FrameLength(buf, max)
	if err != nil {
		return nil, 0, err
	}
	if len(buf) < 4+l {
		return nil, 0, nil
	}
	return buf[4 : 4+l], 4 + l, nil
}

// ReadAnnounced reads exactly n bytes from r into dst[:0], for a length
// read from the wire: the buffer grows by at most step beyond the bytes
// that have really arrived, so a peer that announces more than it sends
// costs what it sent, never what it announced. It returns what was read
// (reusable as dst next time) and io.ReadFull's error when r ends early.
func ReadAnnounced(r io.Reader, dst []byte, n, step int) ([]byte, error) {
	b := dst[:0]
	for len(b) < n {
		k := min(n-len(b), step)
		b = slices.Grow(b, k)
		m, err := io.ReadFull(r, b[len(b):len(b)+k])
		b = b[:len(b)+m]
		if err != nil {
			return b, err
		}
	}
	return b, nil
}
