package message

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
)

// ErrUnsupportedCompression is returned for LZ4 and ZSTD bodies.
var ErrUnsupportedCompression = errors.New("message: unsupported compression type")

// DefaultMaxDecompressed bounds Decompress's output when the caller gives
// no bound: Java producers refuse a body over their maxMessageSize
// (default 4 MiB) before compressing it, so a real body inflates to at
// most that; this leaves room for producers configured 16 times higher
// and stops a zlib bomb after 64 MiB of work.
const DefaultMaxDecompressed = 64 << 20

// Decompress returns the uncompressed body of a record with sysFlag flag.
// Uncompressed bodies are returned as is. Only zlib (legacy and ZLIB type
// bits) is supported. max bounds the output size (0 = DefaultMaxDecompressed);
// a body that inflates past it is refused once max+1 bytes are out.
func Decompress(body []byte, flag int32, max int) ([]byte, error) {
	if !IsCompressed(flag) {
		return body, nil
	}
	switch Compression(flag) {
	case CompressionLegacy, CompressionZLIB:
	default:
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedCompression, Compression(flag))
	}
	if max <= 0 {
		max = DefaultMaxDecompressed
	}
	r, err := zlib.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("message: zlib body: %w", err)
	}
	defer r.Close()
	out, err := inflateAll(r, max)
	if err != nil {
		return nil, fmt.Errorf("message: zlib body: %w", err)
	}
	return out, nil
}

// inflateAll reads r to its end into one exact-size slice, in blocks that
// grow to 1 MiB: memory follows what really comes out (about twice the
// result; io.ReadAll's append growth allocated 2.4 times the limit before
// refusing a bomb), and reading stops once max is passed.
func inflateAll(r io.Reader, max int) ([]byte, error) {
	var blocks [][]byte
	total, size := 0, 4<<10
	for total <= max {
		b := make([]byte, min(size, max+1-total))
		n, err := io.ReadFull(r, b)
		blocks = append(blocks, b[:n])
		total += n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, 1<<20)
	}
	if total > max {
		return nil, fmt.Errorf("decompressed body exceeds %d bytes", max)
	}
	if len(blocks) == 1 {
		return blocks[0], nil
	}
	out := make([]byte, 0, total)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out, nil
}

// CompressZlib compresses body with zlib at level (Java producers use 5).
func CompressZlib(body []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, fmt.Errorf("message: zlib level %d: %w", level, err)
	}
	if _, err := w.Write(body); err != nil {
		return nil, fmt.Errorf("message: zlib write: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("message: zlib close: %w", err)
	}
	return buf.Bytes(), nil
}
