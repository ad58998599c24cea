package message

import "encoding/binary"

// BatchEntry is one message of a SEND_BATCH_MESSAGE body; slices alias the
// body.
type BatchEntry struct {
	Flag       int32
	Body       []byte
	Properties string
}

// BatchIter walks a batch body without allocating.
type BatchIter struct {
	b   []byte
	err error
}

// IterBatch returns an iterator over body.
func IterBatch(body []byte) BatchIter { return BatchIter{b: body} }

// Next decodes the next entry into e; false at the end or on error.
func (it *BatchIter) Next(e *BatchEntry) bool {
	if it.err != nil || len(it.b) == 0 {
		return false
	}
	b := it.b
	be := binary.BigEndian
	if len(b) < 20 {
		it.err = ErrTruncated
		return false
	}
	size := int64(int32(be.Uint32(b)))
	if size < 22 || size > int64(len(b)) {
		it.err = ErrSize
		return false
	}
	r := b[:size]
	bodyLen := int64(int32(be.Uint32(r[16:])))
	if bodyLen < 0 || 20+bodyLen+2 > size {
		it.err = ErrSize
		return false
	}
	p := 20 + int(bodyLen)
	propLen := int(int16(be.Uint16(r[p:])))
	if propLen < 0 || p+2+propLen != len(r) {
		it.err = ErrSize
		return false
	}
	e.Flag = int32(be.Uint32(r[12:]))
	e.Body = r[20:p:p]
	e.Properties = bytesString(r[p+2:])
	it.b = b[size:]
	return true
}

// Err returns the decode error that stopped iteration, if any.
func (it *BatchIter) Err() error { return it.err }

// AppendBatchEntry appends one batch element (what clients send).
func AppendBatchEntry(dst []byte, flag int32, body []byte, props string) []byte {
	size := 22 + len(body) + len(props)
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, body...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(props)))
	return append(dst, props...)
}
