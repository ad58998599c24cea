// Command mqproxy is the RocketMQ 5 gRPC proxy in Java's cluster mode: it
// serves apache.rocketmq.v2.MessagingService on grpcServerPort and talks
// plain remoting to the name servers and to whichever brokers own the
// queues, Java's or rocketgo's.
//
//	mqproxy [-pc rmq-proxy.json] [-n namesrvAddr] [-pm cluster]
//
// It reads Java's rmq-proxy.json keys grpcServerPort (8081), namesrvAddr,
// rocketMQClusterName, proxyMode (only "cluster"), maxMessageSize,
// grpcMaxInboundMessageSize, grpcClientIdleTimeMills; remotingListenPort
// is read but remoting clients are not served yet (compat/UNSUPPORTED.md).
// The name server also comes from -n or NAMESRV_ADDR, as Java's.
package main
