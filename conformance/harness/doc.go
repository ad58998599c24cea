// Package harness starts the servers the conformance scenarios run against
// and waits until they serve.
//
// A Cluster is one name server plus one broker, each either ours (bin/ from
// `make build`) or the Apache RocketMQ 5.3 reference server (Maven jars via
// scripts/javaserver.sh). Every process runs in its own process group on free
// 127.0.0.1 ports with a temp store; Close kills the groups.
//
//	Kind          name server         broker
//	ours          bin/rocketgo (one process for both)
//	java          Java NamesrvStartup Java BrokerStartup
//	javans-ours   Java NamesrvStartup bin/mqbroker
//	oursns-java   bin/mqnamesrv       Java BrokerStartup
//
// Readiness = TCP connect plus GET_BROKER_CLUSTER_INFO listing the broker,
// polled with a deadline; the request is built by the independent decoder
// in package capture, not by rocketgo's codec.
//
// RestartBroker stops the broker of a running cluster (SIGKILL or SIGTERM;
// for ours the rocketgo process, name server included), keeps it down a
// while, starts it again on the same store and ports, and waits until it
// answers and the name server routes it again.
package harness
