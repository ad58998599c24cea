package codec

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
