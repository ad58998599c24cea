// Package namesrv is the name server: the route table brokers register
// into and clients query, broker liveness, and the KV configuration store.
//
//	broker ──REGISTER_BROKER (30 s)──► routeTable ◄── GET_ROUTEINFO_BY_TOPIC ── client
//	       ──BROKER_HEARTBEAT──────►   (RWMutex)   ◄── cluster/topic lists ──── admin
//	                                      ▲
//	   scanner (scanNotActiveBrokerInterval): drop brokers silent for
//	   brokerChannelExpiredTime; transport OnClose: drop at once
//
//	kvStore: namespace → key → value, rewritten atomically to kvConfigPath
//	         on every change, loaded at start
//
// The composition root is Server (namesrv.go); handlers.go maps request
// codes to routeTable/kvStore calls; everything runs on two worker pools
// (route queries on their own, like Java's client request executor), never
// on the event loop.
//
// UPDATE_NAMESRV_CONFIG refuses, with Java's NO_PERMISSION remark and
// nothing changed, every key compat/blacklist names (paths, bindAddress,
// configBlackList) and configBlackList's own entries; accepted updates are
// written to configStorePath escaped, so no value can add a key there.
// Like Java, the server listens on every interface unless bindAddress says
// otherwise, and its start-up line says which.
package namesrv
