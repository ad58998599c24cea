// Package failover is the fault-injection suite of issue #15 (automatic
// failover in controller mode): `make -C conformance test-failover`.
//
// Topology. Every node runs in its own network namespace that the suite
// creates (names start with "rgfo-", so a startup sweep removes leftovers
// of a crashed run): three controllers c0..c2, one name server ns and
// three brokers b0..b2 of one broker set (broker-a). Three bridges in the
// root namespace, also created by the suite, join them with veth pairs:
//
//	data 10.77.0.0/24  name server, brokers (brokerIP1), clients (root ns,
//	                   10.77.0.1 on the bridge)
//	ctl  10.77.1.0/24  controllers (remoting and Raft), brokers
//	ha   10.77.2.0/24  brokers only (brokerIP2: the AutoSwitch HA link)
//
// A partition is a root-side veth taken down with `ip link set … down`:
// the master's ctl link cuts it off from the controllers but not from the
// clients or its slaves; its ha link cuts it off from its slaves only.
//
// Load. The official Go client (rocketmq-client-go/v2) sends keyed
// messages with SendSync from a few goroutines, recording every outcome
// (send start, ack time, status, offsetMsgId), and a push consumer records
// every delivery; both bounded in count and time.
//
// Beside it, in the same Load, the official Java client 5.3.3 does the
// same (load_java.go): conformance/java's FailoverTool in one JVM in the
// root namespace, with as many sender threads, the same pacing, count,
// send timeout (3 s) and retries (2), and a push consumer of its own group;
// each send and delivery is one stdout line (start and end time, status
// or exception, offsetMsgId) that becomes an Ack or Delivery with Client
// "java". Keys are <run>-go-<i> and <run>-java-<i>. StopSending sends
// STOP on the JVM's stdin, Close closes stdin and kills the JVM's process
// group if it has not exited. The Java client keeps its route refresh
// default (pollNameServerInterval 30 s) and, like the Go client, does not
// fetch the route again when a send fails, so it also finds a new master
// only on that timer. Without java on PATH the load is the Go client's
// only and the Java columns say so. The table splits acked and failed
// sends go/java/raw, duplicate and missing deliveries go/java (each
// consumer group should get every stored key once), and reports
// "failover (Java client)" beside the Go client's.
//
// And the gRPC client (load_grpc.go, issue #21): our cmd/mqproxy in
// cluster mode runs for the whole set in the root namespace on 127.0.0.1,
// and conformance/javagrpc's FailoverLoad (the official Java gRPC SDK
// 5.0.8: producer with the SDK's defaults, 3 s request timeout and 3
// attempts, and a SimpleConsumer that acks) sends through it; its lines
// are FailoverTool's and become Acks and Deliveries with Client "grpc".
// A gRPC receipt names no broker, so Check places each gRPC ack by its
// key's record in the final log. The table splits counts
// go/java/grpc/raw and reports "failover (gRPC client)". FAILOVER_GRPC=0
// turns it off; without java it is skipped with the reason.
//
// Faults (faults.go): kill -9 of the master, SIGSTOP of the master then
// SIGCONT, the master cut off from the controllers, the master cut off
// from its slaves, kill -9 of the controller leader, restart of a random
// node, a loop of such restarts, the old master killed while it truncates
// on rejoin (below). After each run the suite reads every queue of the final master
// with raw PULL_MESSAGE and reports (check.go): acknowledged-then-lost
// keys (SEND_OK, absent from the final log), keys stored twice, keys
// delivered twice, the time from the fault to the first acknowledged send
// started after the fault, and split brain: every stored record and every
// acknowledged offsetMsgId is placed in the final master's epoch ranges
// (GET_BROKER_EPOCH_CACHE); an epoch whose records carry two store hosts
// means two brokers accepted writes in one epoch.
//
// restart-loop (faults_restartloop.go): five rounds, each a kill -9 of a
// random node (controller, name server or broker, the master included),
// a random down time of 0.2-2 s and a restart; the next round starts once
// the node answers and a master is named and answers. The log lists the
// nodes restarted.
//
// kill-during-truncation (faults_truncation.go): five rounds, each on the
// master of the moment: its HA link goes down, a few raw sends append
// records only it has (none may be acknowledged), it is killed with
// SIGKILL and the link comes back; once a new master answers, the old one
// is restarted and killed again at its truncation on rejoin, the moment
// its log shows the line (ours: "autoswitch: truncating to the consistent
// point" in out.log, or the store's "store: truncating the commit log";
// Java: "truncateOffset is" in logs/rocketmqlogs/store.log), 0-20 ms
// after it; then it starts for good (the log says where the kill landed:
// before the cut, inside it when recovery finishes an interrupted
// truncation, after it), and once every broker caught up each broker's
// commit log must equal the master's byte for byte up to its end, with
// the same epoch list, and the old master's queue of the cut records must
// be empty again. A round whose old master had nothing to cut says so in
// the run's error column.
//
// The brokers run with allAckInSyncStateSet=true (an ack means every
// member of the SyncStateSet has the message), so lost must be 0.
//
// Beside the Go client, raw SEND_MESSAGE probes go to the broker the
// controller names master (the server-side failover time; the Go client
// refreshes its route only every 30 s, a constant of rocketmq-client-go)
// and to the old master while the fault lasts (a fenced master refuses).
//
// Reference: FAILOVER_KIND=java runs the same topology and faults with
// Java 5.3.3's controllers (ControllerStartup, DLedger), name server and
// brokers from conformance/.cache/java-server/lib; "ours,java" runs both.
// java54 does the same with Java 5.4.0, the second reference (lib-5.4.0,
// `make java-server-5.4`), and every mixed kind below has a 5.4.0 twin
// (java54brokers-oursctl, oursbrokers-java54ctl, mixed54-oursctl,
// mixed-java54ctl: FAILOVER_KIND=java-5.4.0 names the five, java-5.3.3
// the 5.3.3 ones); a set runs one Java release in all its Java roles.
// The client loads stay the Go client, the Java client 5.3.3 and the Java
// gRPC SDK 5.0.8 for every kind.
//
// Mixed sets put our binaries and Java's in one topology (cluster.go's
// RolesOf picks ours or Java per role; the name server always goes with
// the controllers, as a user who swaps one tier keeps the other tier's
// name server; every node reads the same config keys):
//
//	javabrokers-oursctl  Java brokers under our controllers and name server
//	oursbrokers-javactl  our brokers under Java's controllers and name server
//	mixed-oursctl        b0 ours, b1 b2 Java, our controllers and name server
//	mixed-javactl        b0 ours, b1 b2 Java, Java's controllers and name server
//
// In the mixed sets our broker usually starts first and becomes the
// first master, so the first master change makes a Java broker master
// and our broker its slave: both directions of the AutoSwitch HA link,
// and the final-master checks (raw PULL_MESSAGE, GET_BROKER_EPOCH_CACHE)
// against either implementation. FAILOVER_KIND=all runs every kind.
//
// Two broker sets (twogroup.go, TestTwoGroup, not part of make test:
// CONFORMANCE_TWOGROUP=1, or scripts/bench-scale.sh CURVES=twogroup): the
// same controllers and name server with StartGroups(…, 2), broker-a b0..b2
// and broker-b b3..b5, a Go client load (StartGoLoad: unpaced senders and a
// push consumer) on a topic of each set, and kill -9 of broker-a's master;
// each set's send TPS, p50/p99 and errors, and each set's broker CPU, in
// windows before the kill, during A's failover (to the first SEND_OK of
// A's load started after the kill) and after. TWOGROUP_KIND (default
// java,ours) runs the kinds one after the other in one test.
//
// The suite needs root and `ip netns`; without them it skips with the
// reason. FAILOVER_NETNS_PREFIX and FAILOVER_SUBNET (netns.go) move the
// names and addresses (default rgfo-, 10.77) so that two runs can share a
// machine, and FAILOVER_PROXY_PORT puts mqproxy on fixed ports. FAILOVER_RUNS (default 1) repeats every fault; FAILOVER_FAULTS
// (comma list or "all"; default kill9-master,partition-master-controllers,kill-during-truncation)
// selects faults; FAILOVER_HOLD (default 10s) is the length of a stop or a
// partition; FAILOVER_MD names the markdown file the table is written to.
package failover
