// Package broker is the RocketMQ broker: it accepts sends, serves pulls
// (with long polling), tracks clients, consumer offsets, topics and
// subscription groups, and registers itself with name servers.
//
// Broker (broker.go) is the composition root. Each request family has a
// small processor holding only what it uses:
//
//	send.go        SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE
//	pull.go        PULL_MESSAGE, LITE_PULL_MESSAGE
//	pullhold.go    long-polling hold table and its single timer goroutine
//	client.go      HEART_BEAT, UNREGISTER_CLIENT, consumer lists, notifications
//	offset.go      consumer offsets and the offset queries
//	topic.go       topic table (topics.json) and system topics
//	group.go       subscription groups (subscriptionGroup.json)
//	register.go    REGISTER_BROKER / UNREGISTER_BROKER to every name server
//	query.go       QUERY_MESSAGE, VIEW_MESSAGE_BY_ID
//	lock.go        LOCK_BATCH_MQ, UNLOCK_BATCH_MQ
//	retry.go       CONSUMER_SEND_MSG_BACK, retry and DLQ topics
//	admin_*.go     admin requests
//
// Request codes without a processor fall through to the transport's
// default answer, REQUEST_CODE_NOT_SUPPORTED.
package broker
