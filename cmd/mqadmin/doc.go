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
package main
