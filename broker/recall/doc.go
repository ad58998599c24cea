// Package recall holds the recall handle of Java 5.3's message recall
// (RecallMessageHandle), with no broker state. The broker hands one out in
// the response of a send whose message waits in the timer wheel
// (SendMessageResponseHeader.recallHandle, the gRPC SendResultEntry's
// recall_handle); RECALL_MESSAGE presents it back, and the broker writes a
// delete marker for the timer so it is never delivered. The proxy reads the
// broker name out of it to route the recall.
//
// Handle v1: URL-safe base64 (with '=' padding, as java.util.Base64's URL
// encoder writes it) of five fields separated by one space:
//
//	v1 <topic> <brokerName> <timestamp> <messageId>
//
// topic is the message's real topic, timestamp the timer's TIMER_OUT_MS
// plus one (ms), messageId its UNIQ_KEY. Decoding follows Java: padding is
// optional, a raw string is split on single spaces with trailing empty
// fields dropped (String.split), fields beyond the fifth are ignored, and
// the timestamp is not checked here.
package recall
