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
// Memory: what registrations make the route table hold is estimated per
// item in bytes (footprint.go: names, queue and broker data, mappings,
// filter servers, header strings; checked against the Go heap in tests)
// and bounded by maxRouteTableBytes, next to the count bounds. A
// registration past a bound is refused whole with SYSTEM_ERROR naming it;
// a broker registering again replaces its bytes.
//
// UPDATE_NAMESRV_CONFIG refuses, with Java's NO_PERMISSION remark and
// nothing changed, every key compat/blacklist names (paths, bindAddress,
// configBlackList), configBlackList's own entries, keys read only at
// start (listenPort, the pools, the scanner, enableControllerInNamesrv,
// the embedded controller's keys) and maxRouteTableBytes. The whole
// resulting configuration must pass Validate (SYSTEM_ERROR naming the key
// otherwise), and the file it is written to must load back to it, as the
// next start reads it, before anything is applied. Accepted updates are
// written to configStorePath escaped, so no value can add a key there,
// with the file's keys that are not ours (the controller's) kept.
// Like Java, the server listens on every interface unless bindAddress says
// otherwise, and its start-up line says which.
package namesrv
