// Command mqadmin is a small Go counterpart of Apache RocketMQ's mqadmin:
// the same subcommand and flag names, output laid out like Java's tables,
// speaking the remoting protocol to name servers and brokers through
// codec/transport.
//
//	mqadmin updateTopic -n 127.0.0.1:9876 -c DefaultCluster -t T -r 8 -w 8
//	mqadmin topicStatus -n 127.0.0.1:9876 -t T
//	mqadmin sendMessage -n 127.0.0.1:9876 -t T -p hello
//
// -n falls back to the NAMESRV_ADDR environment variable; several name
// servers are separated by ';' and tried in turn.
//
// Controller mode (controller.go) has Java's commands and flags:
// getControllerMetaData -a, getSyncStateSet -a (-b name | -c cluster),
// electMaster -a -c -bn name -b id, cleanBrokerMetadata -a -bn [-c] [-b
// ids] [-l], getControllerConfig -a, updateControllerConfig -a -k -v and
// getBrokerEpoch (-b name | -c cluster, brokers found via -n). Commands
// that touch replicated state ask -a for the leader and send there.
package main
