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
// # Who may speak for a broker
//
// There is no authentication (issue #20), so a broker's identity is its
// connection: the first connection that registers (CONTROLLER_REGISTER_BROKER)
// or heartbeats as (cluster, brokerName, brokerId) holds that identity on
// this node while it stays open and heard from (a registration or
// heartbeat within the broker's heartbeat timeout). Meanwhile another
// connection's heartbeat or registration in that name is refused
// (CONTROLLER_INVALID_REQUEST), so it can neither keep a dead broker alive,
// nor move its address, nor feed the elect policy forged epochs and
// offsets. A closed connection, or one silent past the timeout, loses
// every identity it held; the broker's next registration or heartbeat
// (a restart, a reconnect) claims it again. Java and our brokers send
// registration, heartbeats, elections and ALTER_SYNC_STATE_SET over one
// remoting client with one connection per address, so this needs
// controllerAddr to name the controllers as controllerDLegerPeers does
// (an IP in one and a host name in the other are two connections).
// Identities are node-local, like liveness: each node learns them from the
// heartbeats every broker sends it.
//
// What each request that names a broker must come from:
//
//	ALTER_SYNC_STATE_SET        the set's master's connection, at the current
//	                            master epoch and SyncStateSet epoch
//	                            (else CONTROLLER_INVALID_MASTER / FENCED_*)
//	ELECT_MASTER                the asking broker's connection
//	  (designateElect false)    (else CONTROLLER_INVALID_REQUEST; brokerId -1,
//	                            "the controller asks", is the leader's own)
//	REGISTER_BROKER, heartbeat  any connection while the identity is free
//
// Controller-triggered elections (a master's heartbeats expired or its
// connection closed, the inactive-master scan) are the leader's own
// decision and need no identity.
//
// Admin operations (mqadmin electMaster = ELECT_MASTER with designateElect,
// cleanBrokerMetadata = CLEAN_BROKER_DATA) come from anywhere, as in Java,
// but never act on a live broker, "live" meaning heartbeating on the
// connection that holds its identity:
//
//   - electMaster only designates a registered, live member of the
//     SyncStateSet (any live member before a set's first election), else
//     CONTROLLER_ELECT_MASTER_FAILED; and while the set's master is live it
//     answers CONTROLLER_MASTER_STILL_EXIST with the current master, Java's
//     answer when the policy keeps the old master. Java's documented use
//     (design.md: elect when the master is offline or unreachable) keeps
//     working; a planned switch-over is done by stopping the master, whose
//     closed connection makes the controller fail over at once.
//   - cleanBrokerMetadata never removes a live broker, nor a whole set with
//     a live member (CONTROLLER_INVALID_CLEAN_BROKER_METADATA, Java's
//     "is still alive" remark). -l (isCleanLivingBroker) only waives Java's
//     refusal of a whole set that still names a master, so a dead set can
//     be cleaned. Liveness is looked up under the set's own cluster, not
//     the request's.
//
// controllerAllowAdminOnLiveBrokers=true (ours, default false) restores
// Java's behaviour for both: electMaster may replace a live master (still
// only by a live in-sync member) and -l cleans live brokers. It is the
// operator's local decision: read from the controller's configuration
// file, refused by UPDATE_CONTROLLER_CONFIG like the peer keys.
//
// NOTIFY_BROKER_ROLE_CHANGED dials only the registered address of a live
// member whose heartbeats report that same address, so a registration
// alone never makes the controller connect anywhere.
//
// Not covered without credentials: whoever registers first holds an
// identity that nobody holds yet (a fresh broker set, an id whose broker is
// down), and APPLY_BROKER_ID adds members for anyone within
// controllerMaxBrokersPerSet. Such a member cannot enter a SyncStateSet (only
// the master proposes it) and so cannot be elected, except by an unclean
// election (enableElectUncleanMaster), which trusts heartbeat epochs and
// offsets.
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
// configuration, writes every key to configStorePath, and refuses the peer
// keys and controllerAllowAdminOnLiveBrokers. Requests that name a broker
// are checked against the connection that holds its identity and admin
// operations never act on a live broker (above; Java checks neither).
//
// # Ports
//
// Each peer of controllerDLegerPeers ("n0-127.0.0.1:9878;n1-…") is served
// on its address for remoting (what brokers put in controllerAddr, as with
// Java, where DLedger shares that port). Raft needs its own port: a peer's
// controllerRaftPeers entry (same syntax) if given, else the same host with
// port + 1 (9878 → 9879).
package controller
