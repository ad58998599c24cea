// Package apiv2 holds the RocketMQ 5 gRPC wire types (protobuf package
// apache.rocketmq.v2) and the MessagingService / Admin service stubs,
// generated from our own .proto files in proto/apache/rocketmq/v2.
//
//	proto/apache/rocketmq/v2/definition.proto  domain types, Code   (Java MQDomain)
//	proto/apache/rocketmq/v2/service.proto     requests, MessagingService (MQService)
//	proto/apache/rocketmq/v2/admin.proto       Admin service        (MQAdmin)
//	*.pb.go, *_grpc.pb.go                       generated; never edit
//
// The .proto files are the single source of truth, written after Apache
// rocketmq-apis as served in org.apache.rocketmq:rocketmq-proto 2.1.1:
//   - make gen-proto regenerates the Go files (protoc + the plugin versions
//     go.mod pins through tools_deps.go);
//   - make verify-gen fails when they are stale (skips without protoc);
//   - drift_test.go compares every message, field, enum value and rpc with
//     the descriptors inside Apache's jar, dumped by conformance's
//     TestProtoDrift (java/.../ProtoDump.java; runs in make test when java
//     and mvn are installed).
//
// compat: the descriptor names are Apache's (apache/rocketmq/v2/*.proto in
// package apache.rocketmq.v2), so a binary cannot link both this package and
// another Go copy of the same files (such as rocketmq-clients' golang/v5
// protocol package): the protobuf registry would see them twice.
package apiv2
