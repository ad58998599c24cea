package body

import "github.com/rocketgo/rocketgo/compat/fastjson"

// AppendJstackRunningInfo writes the ConsumerRunningInfo a gRPC client's
// thread dump answers GET_CONSUMER_RUNNING_INFO with (Java's proxy sets
// jstack on an otherwise new ConsumerRunningInfo): its empty tables as
// fastjson writes them, keys sorted.
func AppendJstackRunningInfo(dst []byte, jstack string) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.StringField("jstack", jstack)
	w.EmptyObjectField("mqPopTable")
	w.EmptyObjectField("mqTable")
	w.EmptyObjectField("properties")
	w.EmptyObjectField("statusTable")
	w.StringsField("subscriptionSet", nil)
	w.EmptyObjectField("userConsumerInfo")
	w.ObjectEnd()
	return w.Buf
}

// ConsumeResult is Java's CMResult, the outcome of CONSUME_MESSAGE_DIRECTLY.
type ConsumeResult string

// The CMResult values.
const (
	CRSuccess    ConsumeResult = "CR_SUCCESS"
	CRLater      ConsumeResult = "CR_LATER"
	CRRollback   ConsumeResult = "CR_ROLLBACK"
	CRCommit     ConsumeResult = "CR_COMMIT"
	CRThrowExc   ConsumeResult = "CR_THROW_EXCEPTION"
	CRReturnNull ConsumeResult = "CR_RETURN_NULL"
)

// ConsumeMessageDirectlyResult is Java's body of the same name.
type ConsumeMessageDirectlyResult struct {
	Order          bool
	AutoCommit     bool
	ConsumeResult  ConsumeResult // "" is Java's null (left out)
	Remark         string        // "" is null
	SpentTimeMills int64
}

// AppendConsumeMessageDirectlyResult writes r as fastjson does.
func AppendConsumeMessageDirectlyResult(dst []byte, r *ConsumeMessageDirectlyResult) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.BoolField("autoCommit", r.AutoCommit)
	w.OptStringField("consumeResult", string(r.ConsumeResult))
	w.BoolField("order", r.Order)
	w.OptStringField("remark", r.Remark)
	w.IntField("spentTimeMills", r.SpentTimeMills)
	w.ObjectEnd()
	return w.Buf
}
