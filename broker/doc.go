// Package broker is the RocketMQ broker: it accepts sends, serves pulls
// (with long polling), tracks clients, consumer offsets, topics and
// subscription groups, runs delayed delivery, retries and transactions, and
// registers itself with name servers.
//
// Broker (broker.go) is the composition root. Each request family has a
// small processor holding only what it uses:
//
//	send.go          SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE: a bounded
//	                 queue stamped on the event loop (fast failure after
//	                 waitTimeMillsInSendQueue), replies from the store's callback
//	pull.go          PULL_MESSAGE, LITE_PULL_MESSAGE: records go out as views of
//	                 the mapped commit log, released after the write
//	pullhold.go      long polling: one hold table, one timer goroutine, woken by
//	                 the store's arrival callback; re-checked after parking
//	pop.go           POP_MESSAGE (5.x
//	                 POP in Java's formats, broker/popfmt): checkpoint to
//	                 rmq_sys_REVIVE_LOG_<cluster>, pop offset in the offset table
//	popnotify.go     NOTIFICATION, POLLING_INFO, PEEK_MESSAGE
//	pophold.go       long-polling POP/NOTIFICATION: per-topic arrival
//	                 generations (no lost wake-up), one timer goroutine
//	popack.go        ACK_MESSAGE, BATCH_ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME
//	poprevive.go     revive service per revive queue: unacked → %RETRY%g_topic
//	                 (RECONSUME_TIMES+1) or %DLQ%g; state rebuilt from the log
//	poporder.go      orderly POP (simplified ConsumerOrderInfoManager)
//	popassign.go     QUERY_ASSIGNMENT, SET/GET_ALL_MESSAGE_REQUEST_MODE
//	client.go        producers and consumers by connection, expiry, notifications
//	clientproc.go    HEART_BEAT (V1 and 5.x V2), UNREGISTER_CLIENT,
//	                 GET_CONSUMER_LIST_BY_GROUP, CHECK_CLIENT_CONFIG
//	offset.go        consumer offsets and queue offset queries
//	offsettable.go   consumerOffset.json
//	topic.go         topics.json, system topics, topic name rules
//	group.go         subscriptionGroup.json
//	register.go      REGISTER_BROKER / UNREGISTER_BROKER with every name server
//	query.go         QUERY_MESSAGE, VIEW_MESSAGE_BY_ID
//	lock.go          LOCK_BATCH_MQ, UNLOCK_BATCH_MQ
//	retry.go         CONSUMER_SEND_MSG_BACK (retry topic with delay, or DLQ)
//	delay.go         delay levels, SCHEDULE_TOPIC_XXXX, delayOffset.json
//	timer.go         5.x timer messages (TIMER_DELIVER_MS …) via rmq_sys_wheel_timer
//	recallproc.go    RECALL_MESSAGE (5.3): a timer delete marker for a recall
//	                 handle (broker/recall) a timer send answered
//	txn.go           half messages, END_TRANSACTION, CHECK_TRANSACTION_STATE
//	reply.go         SEND_REPLY_MESSAGE(_V2), PUSH_REPLY_MESSAGE_TO_CLIENT
//	admin_*.go       admin requests (topics, groups, stats, relays to clients)
//	admin_config.go  UPDATE_BROKER_CONFIG / GET_BROKER_CONFIG
//	admin_consume.go consumer status relay, consume time span, correction
//	                 offsets, broker-wide consume stats, raw consume queue
//	admin_auth.go    ACL 2.0 users and ACLs (AUTH_* 3001–3010) over broker/auth
//	authconf.go      when and where the auth service opens (ACL 2.0 keys)
//	liveconfig.go    the settings an update changes while the broker runs
//
// Filtering uses package broker/filter through one shared cache: TAG and
// SQL92 subscriptions carried by pulls compile there once; heartbeat
// subscriptions compile when the heartbeat registers them (Java's
// ConsumerFilterData), so a pull only looks them up. The checks follow
// Java's order: a subscription must parse (or, from a heartbeat, have
// compiled) before enablePropertyFilter is consulted.
//
// Runtime configuration: UPDATE_BROKER_CONFIG applies the keys listed in
// runtimeKeys at once (processors read them from liveConfig per use); other
// known keys are kept, reported by GET_BROKER_CONFIG and written back to
// the -c file, and apply at the next start. Changing brokerPermission
// re-registers at once with every topic's permission masked, as Java does.
//
// Pooled request state: a pull (pullRequest) and a single send (sendCtx)
// live in pooled structs, with their request leased from the transport.
// Each has one owner at a time and is handed on by exactly one call (a
// write whose done callback frees it, the hold table, the store's
// completion); nothing touches it after that call, which may free it
// before returning. The struct comments list the hand-offs. Race-detector
// builds (strictOwnership here, strictLeases in the transport) never reuse
// a freed struct or lease, so a late touch or a second free fails in tests
// where it happens; other builds log a second free and ignore it.
//
// Headers are decoded with codec/header's typed decoders, per request code
// as Java does (one-letter keys for SEND_MESSAGE_V2, SEND_BATCH_MESSAGE and
// SEND_REPLY_MESSAGE_V2). A number that does not parse is refused with
// SYSTEM_ERROR and the NumberFormatException text Java answers; an absent
// required field keeps its default, as Java only logs it.
//
// Request codes without a processor fall through to the transport's
// default answer, REQUEST_CODE_NOT_SUPPORTED. The VIP port (listenPort-2)
// serves the same table minus the pulls.
//
// Replication (role.go): role, brokerId and the master's broker and HA
// addresses are run-time state (roleState), not Config; Broker.SetRole
// switches at run time. A master serves store/ha's Server on haListenPort
// (<= 0: listenPort+1) and runs the master-only services (delay levels,
// timers, transaction checks); a slave runs store/ha's Client against
// haMasterAddress or the REGISTER_BROKER reply's haServerAddr, and
// refuses sends, send-backs and (unless slaveReadEnable) pulls with Java's
// rejectRequest answer (SYSTEM_BUSY "[REJECTREQUEST]system busy, start
// flow control for a while"), END_TRANSACTION with SLAVE_NOT_AVAILABLE
// and offset resets with SYSTEM_ERROR. FLUSH_SLAVE_TIMEOUT (a SYNC_MASTER
// put that no slave acknowledged within slaveTimeout, inSyncReplicas >= 2)
// counts as stored everywhere, as FLUSH_DISK_TIMEOUT does.
package broker
