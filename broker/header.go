package broker

import (
	"errors"
	"strconv"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// Request headers are read with the typed decoders of codec/header, never
// by hand: a number that does not parse is an error, not 0.

// decodeHeader fills h from req's extFields; it returns nil to go on, or
// the answer to a header that does not decode (see headerFailure). For
// handlers off the hot paths: the interface call lets h escape.
func decodeHeader(h header.Header, req *codec.Frame) *codec.Frame {
	return headerFailure(req, h.Decode(req))
}

// headerFailure maps a typed decoder's error to the broker's answer, or
// nil to go on with what was decoded.
//
// compat: Java's fast decoders (SEND_MESSAGE_V2, SEND_BATCH_MESSAGE,
// PULL_MESSAGE, LITE_PULL_MESSAGE headers) parse numbers with
// Integer.parseInt / Long.parseLong, and the NumberFormatException reaches
// NettyRemotingAbstract, which answers SYSTEM_ERROR with the exception's
// text. Java's reflective decoder (the other headers) logs the bad field
// and leaves it null, which mostly fails later the same way; we refuse
// every malformed number at once. An absent required field only logs in
// Java (FastCodesHeader.getAndCheckNotNull, and the reflective decoder
// catches its own "is null" exception), so it is not an error here either:
// the field keeps its default, as before.
func headerFailure(req *codec.Frame, err error) *codec.Frame {
	if err == nil || errors.Is(err, header.ErrMissingField) {
		return nil
	}
	remark := err.Error()
	var fe *header.FieldError
	if errors.As(err, &fe) && errors.Is(fe.Err, header.ErrInvalidField) {
		remark = remarks.NumberFormat(fe.Value)
	}
	return codec.NewResponse(req, int32(codec.RespSystemError), remark)
}

// atoi32 reads a number the broker itself wrote into a stored message's
// properties (REAL_QID and the like); an unparsable one reads as 0. Never
// for request headers, which go through the typed decoders.
func atoi32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}
