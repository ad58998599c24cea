// Package grpcsvc is the RocketMQ 5 gRPC endpoint: the
// apache.rocketmq.v2.MessagingService that the 5.x SDKs call, as a thin
// translation of each call onto RocketMQ remoting requests.
//
// The service never touches broker internals. Everything it does goes
// through one small interface, Backend: route lookups (the name server's
// GET_ROUTEINFO_BY_TOPIC) and remoting requests to a broker address. The
// same service code therefore serves both of Java's proxy modes:
//
//   - local mode (rocketgo, mqbroker with enableGrpcProxy=true): the
//     backend is restricted to this process's broker (LocalBroker), and
//     its requests reach that broker through its remoting port on
//     loopback, so they pass the broker's whole request pipeline
//     (middleware, auth, metrics) like any client's;
//   - cluster mode (cmd/mqproxy): routes from the name server, requests to
//     whichever brokers own the queues, Java's or ours.
//
// The translation follows Java's proxy (rocketmq-proxy 5.3.3,
// grpc/v2/...): QueryRoute hands out this endpoint for every queue; sends
// become SEND_MESSAGE_V2 with Java's properties (UNIQ_KEY, __SHARDINGKEY,
// TIMER_DELIVER_MS, TRAN_MSG …), FIFO queues chosen by Guava's
// consistentHash of the message group; receives are POP_MESSAGE with the
// client's invisible duration and long-polling time, and the receipt handle
// is the POP_CK extraInfo plus the commit log offset (Java's
// ReceiptHandle), which ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME take
// back as extraInfo. Transactional check-backs the broker sends to the
// proxy's remoting connection (CHECK_TRANSACTION_STATE) go to a producer's
// Telemetry stream as RecoverOrphanedTransactionCommand.
//
// Failover: a route watch (watch.go) asks the name server for the broker
// groups every 200 ms and fetches again the cached routes whose group
// addresses changed, so a controller-mode master change reaches the
// endpoint within a second of the name server; a send that fails because
// the broker is gone or not a master re-resolves the route and is sent
// once more within the request's deadline (resolve.go).
//
// Files: server.go (grpc.Server, limits, client metadata), backend.go
// (Backend, the remoting implementation, route cache), watch.go (route
// watch), resolve.go (re-resolve after a failed write), limits.go
// (metadata bound, Telemetry first-command deadline), route.go
// (QueryRoute, QueryAssignment), client.go (Heartbeat, Telemetry,
// settings, NotifyClientTermination), send.go, receive.go (ReceiveMessage,
// message conversion), ack.go (Ack, ChangeInvisibleDuration, DLQ), renew.go (receipt-handle
// auto-renew of auto_renew receives, Java's DefaultReceiptHandleManager),
// txn.go (EndTransaction, check-back), offset.go (offsets,
// RecallMessage), pull.go (PullMessage: PULL_MESSAGE held on the broker),
// status.go (Code mapping), auth.go (the SDKs'
// MQv2-HMAC-SHA1 credentials and ACLs as Java 5.3.3's gRPC
// AuthenticationPipeline/AuthorizationPipeline: interceptors answering
// UNAUTHORIZED statuses), authority.go (cluster mode's users and ACLs from
// a broker, cached), localauth.go (local mode: the broker's auth service
// and the identity forwarded requests are signed with), tls.go (a PROXY protocol
// header first, then TLS by tls.server.mode: permissive sniffs the first
// byte, as Java's ProxyAndTlsProtocolNegotiator).
package grpcsvc
