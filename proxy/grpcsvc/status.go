package grpcsvc

import (
	"context"
	"errors"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// statusError is a failure with the apache.rocketmq.v2.Code Java's proxy
// answers for it (GrpcProxyException).
type statusError struct {
	code v2.Code
	msg  string
}

func (e *statusError) Error() string { return e.code.String() + ": " + e.msg }

func fail(code v2.Code, msg string) error { return &statusError{code: code, msg: msg} }

func newStatus(code v2.Code, msg string) *v2.Status {
	if msg == "" {
		msg = code.String()
	}
	return &v2.Status{Code: code, Message: msg}
}

func okStatus() *v2.Status { return newStatus(v2.Code_OK, "") }

// remotingCode is ResponseBuilder.buildCode: Java's RESPONSE_CODE_MAPPING,
// INTERNAL_SERVER_ERROR for everything else.
func remotingCode(code int32) v2.Code {
	switch codec.ResponseCode(code) {
	case codec.RespSuccess:
		return v2.Code_OK
	case codec.RespSystemBusy:
		return v2.Code_TOO_MANY_REQUESTS
	case codec.RespRequestCodeNotSupported:
		return v2.Code_NOT_IMPLEMENTED
	case codec.RespSubscriptionGroupNotExist:
		return v2.Code_CONSUMER_GROUP_NOT_FOUND
	case codec.RespTopicNotExist:
		return v2.Code_TOPIC_NOT_FOUND
	}
	return v2.Code_INTERNAL_SERVER_ERROR
}

// remotingStatus is ResponseBuilder.buildStatus(remotingCode, remark).
func remotingStatus(code int32, remark string) *v2.Status {
	return newStatus(remotingCode(code), remark)
}

// errStatus is ResponseBuilder.buildStatus(Throwable).
func errStatus(err error) *v2.Status {
	var se *statusError
	if errors.As(err, &se) {
		return newStatus(se.code, se.msg)
	}
	if errors.Is(err, ErrTopicNotFound) {
		return newStatus(v2.Code_TOPIC_NOT_FOUND, err.Error())
	}
	var be *BrokerError
	if errors.As(err, &be) {
		return remotingStatus(be.Code, be.Remark)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, transport.ErrClientClosed) {
		return newStatus(v2.Code_PROXY_TIMEOUT, err.Error())
	}
	return newStatus(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
}
