// Command mqbench is a lean load generator for RocketMQ brokers (ours and
// Java's): it speaks the remoting protocol directly, without a client
// library, so that the numbers measure the broker and not the client.
//
//	mqbench produce -n 127.0.0.1:9876 -t BenchTopic -threads 8 -conns 4 -duration 30s
//	mqbench consume -n 127.0.0.1:9876 -t BenchTopic -g BenchGroup -duration 30s
//
// Send path: every producer goroutine builds its SEND_MESSAGE_V2 (or
// SEND_BATCH_MESSAGE) frames once, per target queue, and per send only
// copies the template into its connection's write buffer and patches three
// fixed-width fields in place:
//
//	frame  = len | hdrLenWord | header ... "opaque" 10 digits ... "g" 13 digits ... | body
//	body   = "RGBENCH1" | sendUnixNanos int64 BE | filler
//
// Opaques cycle through 1000000000..2147483647 so their decimal form is
// always ten digits wide (the JSON header writes the opaque as a number);
// the born timestamp (header key "g", epoch milliseconds) is thirteen digits
// until the year 2286. The body stamp lets the consumer measure end-to-end
// latency with nanosecond resolution when it reads mqbench's own messages;
// other messages fall back to the millisecond born timestamp of the record.
//
// Each connection has one writer goroutine (draining a double-buffered
// byte slice, so concurrent producers share syscalls) and one reader
// goroutine that matches replies by opaque in a fixed ring of in-flight
// send times. Latencies go to per-connection log-bucket histograms (see
// hist.go) merged once a second for the progress line and at the end for
// the summary. Every run ends by itself at -duration or -count.
package main
