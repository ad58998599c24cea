// Package grpcsdk runs the official RocketMQ 5 gRPC SDKs against a proxy's
// gRPC endpoint (issue #21, Show): the scenario table (which topic type and
// consumer-group settings each scenario needs), the broker-side setup of
// those topics and groups over remoting, one driver per SDK (Java
// rocketmq-client-java 5.0.8 built from conformance/javagrpc, Python
// rocketmq-python-client 5.1.2 and Node.js rocketmq-client-nodejs 1.0.8
// installed by scripts/grpcsdk.sh), and the matrix file GRPC-MATRIX.md.
//
// Every driver takes scenario arguments "name:timeoutSeconds" and prints one
// line per scenario: "PASS name seconds[: detail]" or "FAIL name seconds:
// reason" (or "SKIP name: reason" for a scenario the SDK has no API for).
package grpcsdk
