// Package ha is the broker's classic master/slave replication, Apache
// RocketMQ's DefaultHAService wire (not the AutoSwitch/controller one), on
// plain net: a Server on the master's haListenPort and a Client on the
// slave. There is no handshake; both ends speak two messages on one TCP
// connection:
//
//	slave → master, repeated (report):
//	  0 offset int64 BE   the slave's received commit-log end
//
//	master → slave, repeated (transfer frame):
//	  0 offset int64 BE   commit-log offset of the body's first byte
//	  8 size   int32 BE   body length (0: heartbeat)
//	 12 body              raw commit-log bytes, never across a segment
//
// Master (Server): one reader and one writer goroutine per slave. The
// first report decides where the transfer starts: a report of 0 (an empty
// slave) starts at the beginning of the master's last segment, as Java
// does; any other value starts there. The writer streams frames of at most
// TransferBatchSize (haTransferBatchSize, 32 KiB) from Store.ReadRaw, waits
// on WatchRaw when caught up, and sends an empty frame after
// HeartbeatInterval (haSendHeartbeatInterval, 5 s) of silence. Every report
// is the slave's acknowledgement: clamped to what this connection sent (a
// slave never acknowledges more than the master wrote; apache/rocketmq#3015),
// the per-slave acks are reduced with store.QuorumOffset(InSyncReplicas)
// into Store.AckReplicated. A first report past the master's end, a report
// that goes backwards, or nothing read for HousekeepingInterval
// (haHousekeepingInterval, 20 s) closes that connection only.
//
// Slave (Client): connects to the master HA address (SetMasterAddr at run
// time; "" disconnects), reports its received offset on connect, after
// each appended frame when it grew, and every HeartbeatInterval, and
// appends each frame's body with Store.AppendRaw. A frame whose offset is
// not the slave's received end (Java: "master pushed offset not equal the
// max phy offset in slave"), a frame larger than MaxFrameBody, an append
// error or nothing read for HousekeepingInterval closes the connection;
// the client reconnects with a doubling backoff up to ReconnectInterval.
//
// Where this differs from Java (on purpose): Java's master takes every
// report as the ack, even one that went backwards or past its end
// (apache/rocketmq#3015), waits forever for a first report past its end
// or below its first segment, and has no write timeout; here those close
// the connection or clamp the ack, and a socket write is bounded by
// HousekeepingInterval. The slave reports ReceivedOffset (written plus
// the head of a record still arriving) where Java reports its max
// physical offset; the master resumes from it just as well. The caller
// keeps Server.SetInSyncReplicas and the store's SetInSyncReplicas equal.
//
// The frame decoder (FrameReader) never allocates a length read from the
// wire before the bytes arrive: a body larger than its bound is refused
// and the buffer grows only as bytes are read.
package ha
