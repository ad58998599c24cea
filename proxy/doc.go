// Package proxy will own the RocketMQ 5 gRPC front: the
// apache.rocketmq.v2.MessagingService endpoint that the 5.x SDKs (Java, Go,
// C++, Rust, ...) call, and the mqproxy command's wiring. Like the Java
// proxy in "local" mode it is a translation of each gRPC call onto the
// broker's one request pipeline, never a second path to the handlers.
//
// Today only the wire types exist, in proxy/apiv2; the server and the
// translation come later (issue #21).
package proxy
