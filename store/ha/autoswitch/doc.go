// Package autoswitch is the broker's controller-mode replication, Apache
// RocketMQ's AutoSwitch HA protocol (RIP-44), on plain net: a Server on
// the master's haListenPort and a Client on each slave, with the epoch
// file (store/epoch) deciding where a returning slave's log diverged.
// Both run on the replication core of store/ha (ha.Hub, ha.Link: session,
// reconnect and backoff, heartbeat, report checks, transfer loop, append);
// this package adds only its handshake (conn.Prepare, Client's Open), the
// epoch-cut transfer (conn.Limit, the 36-byte header), the truncation and
// the SyncStateSet (syncstate.go). Every integer is big-endian; every frame starts with the sender's
// connection state (HAConnectionState ordinal: 1 HANDSHAKE, 2 TRANSFER).
//
//	slave → master
//	  HANDSHAKE (16)  state=1 int32 | isSyncFromLastFile int16 |
//	                  isAsyncLearner int16 | slaveBrokerId int64
//	  TRANSFER  (12)  state=2 int32 | slaveMaxOffset int64   (report/ack)
//
//	master → slave
//	  HANDSHAKE (20+12N) state=1 | bodySize=12N int32 | masterMaxPhyOffset
//	                  int64 | lastEpoch int32 | N × {epoch int32, startOffset int64}
//	  TRANSFER  (36+n) state=2 | bodySize int32 | offset int64 | epoch int32 |
//	                  epochStartOffset int64 | confirmOffset int64 | n log bytes
//
// Sequence: the slave connects and sends HANDSHAKE with its broker id;
// the master answers with its epoch entries and max offset; the slave
// computes the consistent point (epoch.ConsistentPoint: the newest local
// epoch the master has with the same start offset, cut at the smaller of
// the two ends), truncates its store (Store.TruncateTo, crash-safe) and
// its epoch file to it (no common epoch: the handshake fails and the
// connection closes; an empty epoch file, a new replica: nothing is
// truncated), switches to TRANSFER and reports its offset. The master
// starts the transfer there (a report of 0: the start of its last segment
// when the slave asked isSyncFromLastFile, else its first segment) and
// streams TRANSFER frames of at most haTransferBatchSize: never across a
// segment, never across an epoch (a frame is cut at the epoch's end; the
// next one carries the next entry; the last epoch is unbounded), with an
// empty frame every haSendHeartbeatInterval of silence. The slave checks
// each frame's offset against its received end, appends a new epoch to
// its epoch file before the frame's bytes, appends the bytes
// (Store.AppendRaw), bounds its confirm offset by the master's
// (SetConfirmLimit(min(confirmOffset, local max))) and reports its max
// physical offset (whole records, as Java's slave: a Java master
// dispatches every record starting below its confirm offset, so an ack
// inside a record would expose a record the slave lacks).
//
// SyncStateSet (master): a slave whose report reaches what the master had
// when it last sent is caught up at that time; a caught-up slave outside
// the set whose offset is at least the confirm offset and the current
// epoch's start is proposed to the set (OnSyncStateSetChanged: the broker
// sends ALTER_SYNC_STATE_SET and hands the controller's answer back with
// SetSyncStateSet). Every CheckSyncStateSetPeriod members not caught up
// for MaxTimeSlaveNotCatchup, or not connected, are proposed out; an
// in-sync slave whose last connection closes is proposed out at once.
// While a proposal is pending, acknowledgements and the confirm offset
// wait for the union of the confirmed and the proposed set, so a member
// leaves the wait only once the controller agreed. With
// AllAckInSyncStateSet the confirm offset (what consumers may see, on the
// master and, through the frames, on the slaves) is the smallest ack of
// the members, and a put needs every member's ack (the Server sets the
// store's in-sync replica count to the set's size and feeds
// Store.AckReplicated with store.QuorumOffset of the members' acks);
// without it puts need InSyncReplicas of any slaves, as classic HA.
//
// Where this differs from Java (on purpose): acks are clamped to what the
// connection sent (apache/rocketmq#3015); a report going backwards, a
// first report outside the master's log, a second handshake, a report
// before the handshake or any state other than HANDSHAKE/TRANSFER closes
// the connection (Java switches the connection's state to the slave's);
// the slave reports at once after a truncation (Java waits a heartbeat
// interval); a SyncStateSet member connected but without a report holds
// the confirm offset (Java skips it); a proposal is delivered once per
// change and offered again every CheckSyncStateSetPeriod while
// unconfirmed (Java notifies on every ack); a transfer start that no
// epoch holds closes the connection (Java heartbeats forever); frames are
// labelled with the epoch of their bytes (Java labels the frame cut at an
// epoch's end with the next epoch — the Client accepts both); a data
// frame whose epoch contradicts the slave's epoch file closes the
// connection (Java's append fails quietly); a Java master's cut frame
// (labelled with the next epoch, so a Java slave never records the epoch
// of those bytes — seen on the wire, testdata/README.md) makes the Client
// append the handshake's entry for the frame's offset first, so its epoch
// file equals the master's; an epoch appended while a slave is connected
// bounds the current one at once (Java labels the rest of the connection
// with the old epoch). BeginMasterEpoch drops an
// epoch that wrote nothing before appending the new one
// (apache/rocketmq#9689). The truncation is crash-safe: the store's cut is
// durable before the epoch file changes, and a kill between the two
// leaves the stale entry for the next handshake to drop
// (apache/rocketmq#10666).
//
// The broker (controller mode) drives it on role changes:
//
//	to master (epoch e): close the Client; Store.SetRole(SyncMaster or
//	  AsyncMaster); BeginMasterEpoch(epochFile, e, MaxPhyOffset); NewServer
//	  (LocalBrokerID = its controller id, OnSyncStateSetChanged → an
//	  ALTER_SYNC_STATE_SET to the controller leader); SetSyncStateSet with
//	  the controller's set (from REGISTER_BROKER / ELECT_MASTER) and after
//	  every answer (ALTER_SYNC_STATE_SET, GET_REPLICA_INFO,
//	  NOTIFY_BROKER_ROLE_CHANGED); Start. Re-elected without a change:
//	  BeginMasterEpoch only (the Server follows the new epoch).
//	to slave (master epoch e): CheckSlaveEpoch(epochFile, e); close the
//	  Server; Store.SetRole(Slave); NewClient (BrokerID = its controller
//	  id), SetMasterAddr(the master's HA address), Start.
//	put check: InSyncReplicasNums against minInSyncReplicas
//	  (IN_SYNC_REPLICAS_NOT_ENOUGH) before a put.
//
// The decoders (SlaveReader, MasterReader) never allocate a length read
// from the wire before the bytes arrive (codec.ReadAnnounced) and bound
// the handshake's entries (MaxEpochEntries) and a transfer's body
// (MaxFrameBody).
package autoswitch
