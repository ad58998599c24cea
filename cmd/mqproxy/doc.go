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
//
// Credentials and TLS as Java's proxy: authenticationEnabled,
// authorizationEnabled, authenticationWhitelist, authorizationWhitelist
// (gRPC message names) check the SDKs' MQv2-HMAC-SHA1 signature and ACLs
// against users and ACLs read from a broker of rocketMQClusterName
// (AUTH_GET_USER / AUTH_GET_ACL, cached userCacheRefreshSeconds 20,
// userCacheExpiredSeconds 300, userCacheMaxNum 20000);
// enableAclRpcHookForClusterMode=true signs everything sent to name
// servers and brokers with innerClientAuthenticationCredentials (needed
// when the brokers check signatures). The gRPC port serves TLS by
// tls.server.mode (default permissive: TLS and plaintext on one port) with
// tlsTestModeEnable (default true, a self-signed certificate) or
// tlsCertPath / tlsKeyPath; the file's "tls.*" members stand for Java's
// -Dtls.* properties.
package main
