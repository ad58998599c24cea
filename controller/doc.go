// Package controller is the RocketMQ 5.x controller (RIP-44, "controller
// mode"): it assigns broker ids, keeps each broker set's master, master
// epoch and SyncStateSet, and elects a new master when the old one goes
// silent. Brokers and Java's mqadmin speak the remoting protocol to it
// (CONTROLLER_* codes 1001–1013 and BROKER_HEARTBEAT 904) exactly as to
// Java's controller; among themselves our nodes speak Raft
// (hashicorp/raft), so a group is either all ours or all Java's.
//
// # State and consensus
//
// The replicated state (State, state.go) is, per broker name, one
// brokerSet: cluster, next id to assign, members (id → address and
// registerCheckCode), master id, master epoch, in-sync set and its epoch —
// Java's BrokerReplicaInfo and SyncStateInfo in one record so they cannot
// drift apart. It is the FSM of a hashicorp/raft node (fsm.go):
//
//	request ─▶ decider (leader, writeMu held)     ─▶ result{code, header, body, events}
//	                │ reads State + node-local heartbeats
//	                ▼
//	        raft.Apply(event JSON) ─▶ every node: State.apply(event)  (deterministic)
//	                ▼
//	        response to the broker / mqadmin
//
// As in Java (ReplicasInfoManager + EventSerializer), the leader decides
// with everything it knows, heartbeats included, and replicates only the
// outcome as typed events (AlterSyncStateSet 1, ApplyBrokerId 2,
// ElectMaster 3, CleanBrokerData 5, UpdateBrokerAddress 6); applying an
// event reads nothing but the event and the state. One mutex serializes
// decide+replicate like Java's single event thread. A node serves requests
// only once it is leader and a Raft barrier has applied every earlier
// entry (Java appends an empty entry for the same reason); others answer
// CONTROLLER_NOT_LEADER "The controller is not in leader state". Only
// CONTROLLER_GET_METADATA_INFO, BROKER_HEARTBEAT and the config codes are
// answered by every node.
//
// Storage: <controllerStorePath>/raft.db (raft-boltdb/v2: log and stable
// store) and <controllerStorePath>/snapshots (FileSnapshotStore, 2 kept).
// A snapshot is one JSON document {"format":1,"sets":[brokerSet…]} sorted
// by name; Restore checks the invariants (master and in-sync ids are
// members) before replacing the state. Java's DLedger controller takes no
// snapshots at all and replays its whole log at start.
//
// # Broker liveness is node-local
//
// Heartbeats are not replicated. Each node keeps its own table
// (liveness.go, Java's DefaultBrokerHeartbeatManager): Java brokers send
// BROKER_HEARTBEAT oneway to every controller address they can reach, not
// only to the leader, so a follower's table is as fresh as the leader's and
// a new leader can decide at once. Replicating heartbeats (Java's JRaft
// mode) would put one Raft write per broker per second on the log for data
// that is stale a few seconds later, and JRaft mode's heartbeat scans are
// where Java's bugs are (#8380, #9717, #10416).
//
// The risk of node-local liveness is apache/rocketmq#5712: a new leader
// that has not heard a master yet must not take the silence for a death.
// Two rules cover it. A broker that expires from the table (it was heard,
// then stopped) is judged at once. A master never heard at all is only
// judged by the inactive-master scan, which a new leader skips until it
// has led for controllerElectGraceMillis (10 s, Java's default heartbeat
// timeout); and like Java the scan re-elects only when another member of
// the set is alive.
//
// # Elections
//
// elect.go is Java's DefaultElectPolicy: among alive candidates of the
// SyncStateSet (then of all members with enableElectUncleanMaster), keep
// the old master if alive, else the designated broker (admin electMaster)
// or nobody, else the best by epoch desc, maxOffset desc,
// electionPriority asc (ties: smaller id, where Java's TreeSet keeps an
// arbitrary one). The first election of a set goes to the asking broker.
// After a successful election the leader sends NOTIFY_BROKER_ROLE_CHANGED
// (oneway, as Java) to every live member of the set.
//
// # Deviations from Java, on purpose
//
// Network input is bounded and never corrupts the state: broker ids < 1,
// names over 255 bytes, more than controllerMaxBrokerSets sets or
// controllerMaxBrokersPerSet members are refused with
// CONTROLLER_BROKER_ID_INVALID; the first election only goes to a member;
// the heartbeat table holds at most controllerMaxLiveBrokers entries and a
// claimed heartbeat timeout is capped at 10 minutes. Cleaning a master's id
// clears the master (Java keeps a dangling id). A controller-triggered
// election that finds no candidate replicates one "master lost" event, not
// one per retry. UPDATE_CONTROLLER_CONFIG changes the running
// configuration but is not written back to configStorePath, and refuses
// the peer keys.
//
// # Ports
//
// Each peer of controllerDLegerPeers ("n0-127.0.0.1:9878;n1-…") is served
// on its address for remoting (what brokers put in controllerAddr, as with
// Java, where DLedger shares that port). Raft needs its own port: a peer's
// controllerRaftPeers entry (same syntax) if given, else the same host with
// port + 1 (9878 → 9879).
package controller
