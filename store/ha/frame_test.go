package ha

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFrameRoundTrip(t *testing.T) {
	var wire []byte
	wire = AppendHeader(wire, Header{Offset: 1 << 40, Size: 3})
	wire = append(wire, 'a', 'b', 'c')
	wire = AppendHeader(wire, Header{Offset: 1<<40 + 3})
	fr := NewFrameReader(bytes.NewReader(wire), 16)
	h, b, err := fr.Next()
	require.NoError(t, err)
	require.Equal(t, Header{Offset: 1 << 40, Size: 3}, h)
	require.Equal(t, []byte("abc"), b)
	h, b, err = fr.Next()
	require.NoError(t, err)
	require.Equal(t, Header{Offset: 1<<40 + 3}, h)
	require.Empty(t, b)
	_, _, err = fr.Next()
	require.ErrorIs(t, err, io.EOF)
}

// A header claiming a huge or negative body is refused before anything is
// allocated for it; a body cut short is ErrUnexpectedEOF.
func TestFrameBounds(t *testing.T) {
	for _, size := range []int32{-1, 17, 1<<31 - 1} {
		fr := NewFrameReader(bytes.NewReader(AppendHeader(nil, Header{Size: size})), 16)
		_, _, err := fr.Next()
		require.ErrorIs(t, err, ErrFrameTooLarge, "size %d", size)
		require.Zero(t, cap(fr.body))
	}
	wire := append(AppendHeader(nil, Header{Size: 10}), 1, 2, 3)
	_, _, err := NewFrameReader(bytes.NewReader(wire), 16).Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, _, err = NewFrameReader(bytes.NewReader(wire[:5]), 16).Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)

	// A 4 MiB claim followed by 10 bytes grows the buffer by one step, not 4 MiB.
	wire = append(AppendHeader(nil, Header{Size: 4 << 20}), make([]byte, 10)...)
	fr := NewFrameReader(bytes.NewReader(wire), 4<<20)
	_, _, err = fr.Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.LessOrEqual(t, cap(fr.body), 2*growStep)
}

// FuzzFrame: any byte stream decodes without panicking, every body is
// within the bound and as long as its header says, re-encoding a decoded
// frame gives back its bytes, and the buffer never grows far ahead of the
// bytes read.
func FuzzFrame(f *testing.F) {
	f.Add(append(AppendHeader(nil, Header{Offset: 7, Size: 2}), 9, 9), 64)
	f.Add(AppendHeader(nil, Header{Offset: -1, Size: -5}), 64)
	f.Add(AppendHeader(nil, Header{Size: 1 << 30}), 1<<30)
	f.Add([]byte{1, 2, 3}, 4)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 0 || max > 1<<30 {
			max = 1 << 20
		}
		fr := NewFrameReader(bytes.NewReader(data), max)
		pos := 0
		for {
			h, body, err := fr.Next()
			if cap(fr.body) > len(data)+2*growStep {
				t.Fatalf("buffer %d for %d input bytes", cap(fr.body), len(data))
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if int(h.Size) != len(body) || len(body) > max {
				t.Fatalf("header %+v, body %d, max %d", h, len(body), max)
			}
			enc := append(AppendHeader(nil, h), body...)
			if !bytes.Equal(enc, data[pos:pos+len(enc)]) {
				t.Fatal("re-encoded frame differs")
			}
			pos += len(enc)
		}
	})
}
