// Package popfmt holds the POP consumption formats of the Java broker
// (rocketmq-all 5.3.3), with no broker state: the names of the revive and
// pop-retry topics (KeyBuilder, PopAckConstants), the ExtraInfo strings
// (ExtraInfoUtil) a client sends back in ACK and CHANGE_INVISIBLETIME, and
// the JSON bodies of the revive-log records (PopCheckPoint, AckMsg,
// BatchAckMsg), so a Java broker reading our store finds its own records.
//
// Revive log (topic rmq_sys_REVIVE_LOG_<cluster>, queue = reviveQid):
//
//	tags "ck"   body PopCheckPoint {"bm":..,"bn":..,"c":..,"d":[..],"it":..,"n":..,"pt":..,"q":..,"reviveTime":..,"ro":..,"so":..,"t":..}
//	tags "ack"  body AckMsg        {"ao":..,"bn":..,"c":..,"pt":..,"q":..,"so":..,"t":..}
//	tags "bAck" body BatchAckMsg   AckMsg + "aol":[..]
//
// ExtraInfo (POP_CK), fields separated by one space:
//
//	ckQueueOffset popTime invisibleTime reviveQid retry brokerName queueId msgQueueOffset
//
// retry is "0" (normal topic), "1" (%RETRY%group_topic) or "2" (%RETRY%group+topic).
package popfmt
