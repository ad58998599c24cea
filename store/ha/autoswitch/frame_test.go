package autoswitch

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// The encoders produce Java's layouts byte for byte (the values are read
// off AutoSwitchHAClient.sendHandshakeHeader/reportSlaveOffset and
// AutoSwitchHAConnection.buildHandshakeBuffer/buildTransferHeaderBuffer).
func TestFrameLayouts(t *testing.T) {
	hs := AppendSlaveHandshake(nil, SlaveHandshake{SyncFromLastFile: true, AsyncLearner: false, BrokerID: 2})
	require.Equal(t, "00000001"+"0001"+"0000"+"0000000000000002", hex.EncodeToString(hs))
	require.Len(t, hs, SlaveHandshakeSize)

	rep := AppendSlaveReport(nil, 0x0102030405)
	require.Equal(t, "00000002"+"0000000102030405", hex.EncodeToString(rep))
	require.Len(t, rep, SlaveReportSize)

	mh := AppendMasterHandshake(nil, 1<<30, 3, []EpochEntry{{1, 0}, {3, 4096}})
	require.Equal(t, "00000001"+"00000018"+"0000000040000000"+"00000003"+
		"00000001"+"0000000000000000"+"00000003"+"0000000000001000", hex.EncodeToString(mh))
	require.Len(t, mh, MasterHandshakeHeader+2*EpochEntrySize)

	th := AppendTransferHeader(nil, MasterHeader{BodySize: 5, Offset: 4096, Epoch: 3, EpochStartOffset: 4096, ConfirmOffset: 4000})
	require.Equal(t, "00000002"+"00000005"+"0000000000001000"+"00000003"+"0000000000001000"+"0000000000000fa0", hex.EncodeToString(th))
	require.Len(t, th, MasterTransferHeader)
}

func TestSlaveReaderRoundTrip(t *testing.T) {
	var b []byte
	b = AppendSlaveHandshake(b, SlaveHandshake{SyncFromLastFile: false, AsyncLearner: true, BrokerID: 7})
	b = AppendSlaveReport(b, 0)
	b = AppendSlaveReport(b, 123456789)
	r := NewSlaveReader(bytes.NewReader(b))
	var m SlaveMsg
	require.NoError(t, r.Next(&m))
	require.Equal(t, Handshake, m.State)
	require.Equal(t, SlaveHandshake{AsyncLearner: true, BrokerID: 7}, m.Handshake)
	require.NoError(t, r.Next(&m))
	require.Equal(t, SlaveMsg{State: Transfer, Handshake: m.Handshake, Offset: 0}, m)
	require.NoError(t, r.Next(&m))
	require.Equal(t, int64(123456789), m.Offset)
	require.ErrorIs(t, r.Next(&m), io.EOF)
}

func TestSlaveReaderBadInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"state READY":    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"state SUSPEND":  {0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0},
		"state negative": {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0},
		"garbage":        []byte("GET / HTTP/1.1\r\n"),
	} {
		var m SlaveMsg
		require.ErrorIs(t, NewSlaveReader(bytes.NewReader(b)).Next(&m), ErrBadFrame, name)
	}
	var m SlaveMsg
	require.ErrorIs(t, NewSlaveReader(bytes.NewReader(AppendSlaveHandshake(nil, SlaveHandshake{})[:10])).Next(&m), io.ErrUnexpectedEOF)
	require.ErrorIs(t, NewSlaveReader(bytes.NewReader([]byte{0, 0, 0, 2, 1})).Next(&m), io.ErrUnexpectedEOF)
}

func TestMasterReaderRoundTrip(t *testing.T) {
	var b []byte
	b = AppendMasterHandshake(b, 9000, 2, []EpochEntry{{1, 0}, {2, 5000}})
	b = AppendTransferHeader(b, MasterHeader{BodySize: 3, Offset: 9000, Epoch: 2, EpochStartOffset: 5000, ConfirmOffset: 8000})
	b = append(b, 'a', 'b', 'c')
	b = AppendTransferHeader(b, MasterHeader{Offset: 9003, Epoch: 2, EpochStartOffset: 5000, ConfirmOffset: 9003})
	r := NewMasterReader(bytes.NewReader(b), 1<<20)
	h, es, body, err := r.Next(Handshake)
	require.NoError(t, err)
	require.Equal(t, MasterHeader{State: Handshake, BodySize: 24, Offset: 9000, Epoch: 2}, h)
	require.Equal(t, []EpochEntry{{1, 0}, {2, 5000}}, es)
	require.Nil(t, body)
	h, _, body, err = r.Next(Transfer)
	require.NoError(t, err)
	require.Equal(t, MasterHeader{State: Transfer, BodySize: 3, Offset: 9000, Epoch: 2, EpochStartOffset: 5000, ConfirmOffset: 8000}, h)
	require.Equal(t, "abc", string(body))
	h, _, body, err = r.Next(Transfer)
	require.NoError(t, err)
	require.Empty(t, body)
	require.Equal(t, int64(9003), h.ConfirmOffset)
	_, _, _, err = r.Next(Transfer)
	require.ErrorIs(t, err, io.EOF)
}

func TestMasterReaderBadInput(t *testing.T) {
	hs := AppendMasterHandshake(nil, 1, 1, []EpochEntry{{1, 0}})
	tr := AppendTransferHeader(nil, MasterHeader{BodySize: 0, Offset: 0})
	// A frame of the other state: Java's "State not matched".
	_, _, _, err := NewMasterReader(bytes.NewReader(tr), 1<<20).Next(Handshake)
	require.ErrorIs(t, err, ErrStateNotMatched)
	_, _, _, err = NewMasterReader(bytes.NewReader(hs), 1<<20).Next(Transfer)
	require.ErrorIs(t, err, ErrStateNotMatched)
	garbage := []byte("HTTP/1.1 400 Bad Request\r\n\r\n0123456789")
	_, _, _, err = NewMasterReader(bytes.NewReader(garbage), 1<<20).Next(Transfer)
	require.ErrorIs(t, err, ErrStateNotMatched)

	bad := func(h []byte, size int32) []byte {
		b := append([]byte(nil), h...)
		b[4], b[5], b[6], b[7] = byte(uint32(size)>>24), byte(uint32(size)>>16), byte(uint32(size)>>8), byte(size)
		return b
	}
	for name, c := range map[string]struct {
		b    []byte
		want State
	}{
		"handshake not a whole entry":  {bad(hs, 13), Handshake},
		"handshake negative":           {bad(hs, -12), Handshake},
		"handshake too many entries":   {bad(hs, (MaxEpochEntries+1)*EpochEntrySize), Handshake},
		"transfer above the bound":     {bad(tr, 1<<20+1), Transfer},
		"transfer negative":            {bad(tr, -1), Transfer},
		"transfer max int32 announced": {bad(tr, 1<<31-1), Transfer},
	} {
		_, _, _, err := NewMasterReader(bytes.NewReader(c.b), 1<<20).Next(c.want)
		require.ErrorIs(t, err, ErrBadFrame, name)
	}
	// Cut short.
	_, _, _, err = NewMasterReader(bytes.NewReader(hs[:len(hs)-1]), 1<<20).Next(Handshake)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, _, _, err = NewMasterReader(bytes.NewReader(tr[:30]), 1<<20).Next(Transfer)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// A frame announcing the largest allowed body but carrying a few bytes
// allocates about what arrived, not the announced size.
func TestMasterReaderNoAllocAhead(t *testing.T) {
	const max = 64 << 20
	b := AppendTransferHeader(nil, MasterHeader{BodySize: max, Offset: 0})
	b = append(b, make([]byte, 100)...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, _, err := NewMasterReader(bytes.NewReader(b), max).Next(Transfer)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated ahead of the bytes")

	hs := AppendMasterHandshake(nil, 0, 0, nil)
	hs[7] = byte(MaxEpochEntries * EpochEntrySize & 0xff)
	hs[6] = byte(MaxEpochEntries * EpochEntrySize >> 8)
	_, _, _, err = NewMasterReader(bytes.NewReader(hs), max).Next(Handshake)
	require.True(t, errors.Is(err, io.ErrUnexpectedEOF), "%v", err)
}

func FuzzSlaveReader(f *testing.F) {
	f.Add(AppendSlaveReport(AppendSlaveHandshake(nil, SlaveHandshake{BrokerID: 2}), 100))
	f.Add([]byte{0, 0, 0, 9, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewSlaveReader(bytes.NewReader(b))
		var m SlaveMsg
		for i := 0; i < 1000; i++ {
			if err := r.Next(&m); err != nil {
				return
			}
			var out []byte
			if m.State == Handshake {
				out = AppendSlaveHandshake(nil, m.Handshake)
			} else {
				out = AppendSlaveReport(nil, m.Offset)
			}
			require.Contains(t, []State{Handshake, Transfer}, m.State)
			require.NotEmpty(t, out)
		}
	})
}

func FuzzMasterReader(f *testing.F) {
	var b []byte
	b = AppendMasterHandshake(b, 9000, 2, []EpochEntry{{1, 0}, {2, 5000}})
	b = AppendTransferHeader(b, MasterHeader{BodySize: 3, Offset: 9000, Epoch: 2})
	b = append(b, 1, 2, 3)
	f.Add(b)
	f.Add(AppendTransferHeader(nil, MasterHeader{BodySize: 1 << 30}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewMasterReader(bytes.NewReader(b), 1<<16)
		want, pos := Handshake, 0
		for i := 0; i < 1000; i++ {
			h, es, body, err := r.Next(want)
			if err != nil {
				return
			}
			// What decoded re-encodes to the bytes consumed.
			var out []byte
			switch want {
			case Handshake:
				require.LessOrEqual(t, len(es), MaxEpochEntries)
				out = AppendMasterHandshake(nil, h.Offset, h.Epoch, es)
				want = Transfer
			case Transfer:
				require.LessOrEqual(t, len(body), 1<<16)
				out = append(AppendTransferHeader(nil, h), body...)
			}
			require.Equal(t, b[pos:pos+len(out)], out)
			pos += len(out)
		}
	})
}
