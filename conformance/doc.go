// Package conformance runs the scenario table (package scenario) with every
// official client against every server combination and reports a matrix.
//
//	make -C conformance test    Go + Java clients against our server
//	make -C conformance matrix  every client × {ours, java, javans-ours, oursns-java} → MATRIX.md
//	make -C conformance golden  re-record codec/testdata/golden through the capture proxy
//	make -C conformance grpc-matrix  the RocketMQ 5 gRPC SDKs (package grpcsdk) × {java,
//	                            ours-behind-java-proxy, native, mqproxy} → GRPC-MATRIX.md (TestGRPC)
//
// Per server the scenarios run in two phases. First every ordinary scenario,
// the clients side by side, each client's list in sequence. Then the restart
// scenarios (scenario.Scenario.Restart: delay_restart, timer_restart,
// txn_restart), every client's all at once, sharing one broker restart
// coordinated by package restart: each reaches its restart point, the gate
// announces a kill time RestartLead ahead, the scenarios send their pending
// work before it, and harness.Cluster.RestartBroker kills the broker
// (SIGKILL by default; CONFORMANCE_RESTART_MODE=term for SIGTERM), keeps it
// down RestartDownFor, starts it on the same store and ports and waits until
// the name server routes it again. The Java driver speaks to the gate over
// its stdin/stdout (see javadriver.Options.Restart).
//
// Delivery-time accuracy: delay, timer and the restart scenarios fail on
// any message consumed before its due time (send time + delay level; the
// tick-rounded timer time) and report lateness min/p50/max in the cell's
// note.
//
// Ports: the harness takes free ports from the OS (brokers below the
// ephemeral range); CONFORMANCE_PORT_RANGE=lo-hi keeps every port it hands
// out inside lo..hi, for runs sharing a machine.
//
// It is its own Go module (nothing in rocketgo imports it) so the official Go
// client and its dependencies stay out of the server's module graph.
package conformance
