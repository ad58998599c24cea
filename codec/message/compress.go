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

// Decompress returns the uncompressed body of a record with sysFlag flag.
// Uncompressed bodies are returned as is. Only zlib (legacy and ZLIB type
// bits) is supported. max bounds the output size (0 = 64 MiB).
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
		max = 64 << 20
	}
	r, err := zlib.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("message: zlib body: %w", err)
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("message: zlib body: %w", err)
	}
	if len(out) > max {
		return nil, fmt.Errorf("message: decompressed body exceeds %d bytes", max)
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
