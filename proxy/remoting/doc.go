// Package remoting is mqproxy's remoting port (Java's proxy
// remotingListenPort, 8080): RocketMQ remoting clients (4.x and 5.x Java,
// rocketmq-client-go …) use the proxy as their name server and as every
// broker, in front of the brokers of a cluster, Java's or ours. Like Java's
// RemotingProtocolServer (rocketmq-proxy 5.3.3, proxy/remoting) it serves
// the client codes and forwards them to brokers through the remoting
// client, never into a broker's internals:
//
//	GET_ROUTEINFO_BY_TOPIC   the name server's route, every broker address
//	                         replaced by the proxy's (GetTopicRouteActivity)
//	SEND_MESSAGE(_V2), SEND_BATCH_MESSAGE, CONSUMER_SEND_MSG_BACK,
//	END_TRANSACTION, RECALL_MESSAGE, PULL_MESSAGE, LITE_PULL_MESSAGE,
//	POP_MESSAGE, ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME,
//	UPDATE/QUERY_CONSUMER_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP,
//	GET_MIN/MAX_OFFSET, LOCK/UNLOCK_BATCH_MQ
//	                         forwarded as they came to the master of the
//	                         broker group the request names (ext bname, or
//	                         n for SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE; the
//	                         body's first queue for LOCK/UNLOCK), answered
//	                         with the broker's answer; pulls and POPs wait
//	                         their hold + 10 s
//	HEART_BEAT, UNREGISTER_CLIENT
//	                         to every broker group (heartbeats to slaves
//	                         too when they carry consumers); SUCCESS
//	GET_CONSUMER_LIST_BY_GROUP, GET_CONSUMER_CONNECTION_LIST
//	                         forwarded to a broker (ours; Java answers from
//	                         the proxy's own registry)
//	CHECK_CLIENT_CONFIG      SUCCESS
//	anything else            REQUEST_CODE_NOT_SUPPORTED
//
// Every answer carries Java's proxy's MSG_REGION (regionId) and TRACE_ON
// (traceOn) ext fields.
//
// Sessions (session.go). Java's proxy sends everything over one client of
// its own and keeps a registry of its clients' channels; ours gives each
// client connection its own connections to the brokers:
//
//	client ──► proxy conn ─ session ─ transport.Client ──► broker A
//	                                                   └─► broker B
//	broker request on a session connection (CHECK_TRANSACTION_STATE,
//	GET_CONSUMER_RUNNING_INFO, NOTIFY_CONSUMER_IDS_CHANGED, ...)
//	          ──► relayed to that session's client, its answer back
//
// so the brokers see each client's own heartbeat on a channel of its own
// (consumer lists, rebalance and admin tools see the real clients, also in
// a group shared with clients that connect directly), and every callback
// reaches exactly the client it is for. Closing either side closes the
// other; the brokers then drop the client as for one that disconnected.
// The cost is one connection per client and broker (dialed on first use)
// and a goroutine per request waiting on its broker (bounded per
// connection by the transport's MaxInflightPerConn, in all by
// Config.MaxInflight: past it SYSTEM_BUSY).
//
// Clients without broker names (Java clients before 4.9.5 send no bname): Java's proxy
// answers them VERSION_NOT_SUPPORTED "Request doesn't have field bname";
// ours picks the half message's broker for END_TRANSACTION (remembered
// from the prepared send's answer and from relayed check-backs), else the
// broker of the topic's route that serves the queue, else the cluster's
// only broker group. With several broker groups serving one topic, such
// a client's queues of the same id are ambiguous: the first broker by
// route order gets them.
package remoting
