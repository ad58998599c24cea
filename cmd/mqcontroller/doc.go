// Command mqcontroller runs a RocketMQ-compatible controller node (the
// standalone deployment of Java's bin/mqcontroller).
//
//	mqcontroller -c controller.conf [-p]
//
// -c reads a Java .properties file with ControllerConfig keys:
// controllerDLegerGroup, controllerDLegerPeers ("n0-127.0.0.1:9878;n1-…"),
// controllerDLegerSelfId, controllerStorePath, enableElectUncleanMaster,
// scanNotActiveBrokerInterval, scanInactiveMasterInterval,
// notifyBrokerRoleChanged, electMasterMaxRetryCount, … and ours
// (controllerRaftPeers, controllerElectGraceMillis,
// controllerRaftElectionTimeoutMillis, controllerMaxLiveBrokers,
// controllerMaxBrokerSets, controllerMaxBrokersPerSet); see package
// controller. Unknown keys (Java's JRaft and netty keys among them) are
// logged and ignored.
//
// The node serves brokers and mqadmin on its own peer address (the port
// brokers put in controllerAddr) and speaks Raft on that port + 1 unless
// controllerRaftPeers says otherwise. -p prints the effective
// configuration and exits. ROCKETMQ_HOME sets rocketmqHome. SIGINT/SIGTERM
// shut down gracefully. Logs go to stderr.
package main
