// Command mqnamesrv runs a RocketMQ-compatible name server.
//
//	mqnamesrv [-c namesrv.conf] [-p]
//
// -c reads a Java .properties file with NamesrvConfig/NettyServerConfig
// keys (listenPort, kvConfigPath, orderMessageEnable,
// scanNotActiveBrokerInterval, rocketmqHome, …); unknown keys are logged
// and ignored. -p prints the effective configuration as key=value lines
// and exits. ROCKETMQ_HOME sets rocketmqHome. SIGINT/SIGTERM shut down
// gracefully. Logs go to stderr.
package main
