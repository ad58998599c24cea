// Command mqproxy is the RocketMQ proxy in Java's cluster mode: it serves
// apache.rocketmq.v2.MessagingService on grpcServerPort and remoting
// clients on remotingListenPort, and talks plain remoting to the name
// servers and to whichever brokers own the queues, Java's or rocketgo's.
//
//	mqproxy [-pc rmq-proxy.json] [-n namesrvAddr] [-pm cluster]
//
// It reads Java's rmq-proxy.json keys grpcServerPort (8081), namesrvAddr,
// rocketMQClusterName, proxyMode (only "cluster"), maxMessageSize,
// grpcMaxInboundMessageSize, grpcClientIdleTimeMills. On
// remotingListenPort (8080) it serves remoting clients (4.x and 5.x Java,
// rocketmq-client-go) that take it as their name server and as every
// broker (package proxy/remoting), with remotingAccessAddr (the host its
// routes hand out), regionId and traceOn. The name server also comes from
// -n or NAMESRV_ADDR, as Java's; -bind applies to both ports.
package main
