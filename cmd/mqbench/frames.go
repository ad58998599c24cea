package main

import (
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// frameSource is what readFrames reads: a connection.
type frameSource interface {
	Read(p []byte) (int, error)
}

// readFrames reads remoting frames from src until it fails and calls each
// for every whole frame in arrival order, with the raw frame (length prefix
// included), its payload, and the time the read that completed it returned.
// Both slices are valid only during the call. The buffer starts at size
// bytes and doubles for a larger frame; with shrink it goes back to size
// once drained past 16 × size (a connection that saw one large reply). It
// returns the read error (io.EOF at a clean end), a framing error, or the
// first error each returns.
func readFrames(src frameSource, size, maxFrame int, shrink bool, each func(frame, payload []byte, at time.Time) error) error {
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), 2*cap(buf))
			copy(nb, buf)
			buf = nb
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		at := time.Now()
		buf = buf[:len(buf)+n]
		for {
			payload, used, ferr := codec.NextFrame(buf, maxFrame)
			if ferr != nil {
				return ferr
			}
			if used == 0 {
				break
			}
			if cerr := each(buf[:used], payload, at); cerr != nil {
				return cerr
			}
			buf = buf[:copy(buf, buf[used:])]
		}
		if shrink && len(buf) == 0 && cap(buf) > 16*size {
			buf = make([]byte, 0, size)
		}
		if err != nil {
			return err
		}
	}
}
