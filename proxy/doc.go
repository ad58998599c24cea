// Package proxy owns the RocketMQ 5 gRPC front: the
// apache.rocketmq.v2.MessagingService endpoint that the 5.x SDKs (Java, Go,
// C++, Rust, ...) call, and the mqproxy command's logic. Like Java's proxy
// it is a translation of each gRPC call onto RocketMQ remoting requests,
// never a second path to the broker's handlers.
//
//	apiv2/    wire types generated from our .proto files (rocketmq-proto 2.1.1)
//	grpcsvc/  the MessagingService on a Backend: local mode (rocketgo,
//	          mqbroker enableGrpcProxy=true) and cluster mode (cmd/mqproxy)
package proxy
