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
//	txn.go           half messages, END_TRANSACTION, CHECK_TRANSACTION_STATE
//	reply.go         SEND_REPLY_MESSAGE(_V2), PUSH_REPLY_MESSAGE_TO_CLIENT
//	admin_*.go       admin requests (topics, groups, stats, relays to clients)
//
// SQL92 filtering (enablePropertyFilter) uses package broker/filter.
//
// Request codes without a processor fall through to the transport's
// default answer, REQUEST_CODE_NOT_SUPPORTED. The VIP port (listenPort-2)
// serves the same table minus the pulls.
package broker
