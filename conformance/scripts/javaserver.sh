#!/usr/bin/env bash
# Apache RocketMQ reference server (name server + broker) from Maven Central jars.
#
#   javaserver.sh fetch                          resolve the jars into .cache/java-server/lib
#   javaserver.sh start-namesrv PORT DIR         start a name server on 127.0.0.1:PORT
#   javaserver.sh start-broker NSADDR PORT DIR   start a broker on 127.0.0.1:PORT (HA PORT+1, VIP PORT-2)
#   javaserver.sh fetch-proxy                    resolve Apache's proxy into .cache/java-proxy/lib
#   javaserver.sh start-proxy NSADDR GRPC_PORT REMOTING_PORT DIR
#                                                start rocketmq-proxy in cluster mode in front of the
#                                                brokers NSADDR lists (gRPC on GRPC_PORT, remoting on
#                                                REMOTING_PORT)
#   javaserver.sh stop [DIR]                     stop what start-* started (all under .cache/run by default)
#
# DIR holds the config, the store, ROCKETMQ_HOME, logs and the pid file.
# FOREGROUND=1 makes start-* exec java in the foreground (the Go harness uses
# this and kills the process group itself). JAVA_EXTRA_OPTS adds JVM flags.
# BROKER_EXTRA_CONF / NAMESRV_EXTRA_CONF
# add lines to the generated config (e.g. bindAddress=127.0.0.2 for capture).
# PROXY_EXTRA_CONF adds "key": value pairs (comma-separated JSON members) to
# the generated rmq-proxy.json. PROXY_JVM_OPTS replaces the proxy's heap flags.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cache="$here/.cache"
version="${ROCKETMQ_SERVER_VERSION:-5.3.3}"
# 5.3.3, the reference, lives in lib/ (tests look there); another version
# (ROCKETMQ_SERVER_VERSION=5.4.0) in lib-<version>/, so jars never mix.
lib="$cache/java-server/lib"
if [ "$version" != 5.3.3 ]; then lib="$cache/java-server/lib-$version"; fi
jvm=(-server -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxDirectMemorySize=512m
     -XX:-OmitStackTraceInFastThrow -XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true)
# JAVA_EXTRA_OPTS: JVM flags appended to the above (a later -Xms/-Xmx/-XX wins);
# scripts/bench-compare.sh passes its heap profiles this way.
read -r -a extra_opts <<<"${JAVA_EXTRA_OPTS:-}"
jvm+=("${extra_opts[@]}")

fetch() {
	if [ -f "$lib/.complete-$version" ]; then return 0; fi
	mkdir -p "$lib"
	local offline=()
	if [ -n "${MVN_OFFLINE:-}" ]; then offline=(-o); fi
	mvn -q -B "${offline[@]}" -f "$here/scripts/server-pom.xml" -Drocketmq.server.version="$version" \
		dependency:copy-dependencies -DoutputDirectory="$lib" >&2
	touch "$lib/.complete-$version"
}

# The proxy has its own classpath (profile `proxy` of server-pom.xml): it
# brings grpc and its netty, which the broker's classpath does not need.
proxylib="$cache/java-proxy/lib"
fetch_proxy() {
	if [ -f "$proxylib/.complete-$version" ]; then return 0; fi
	mkdir -p "$proxylib"
	local offline=()
	if [ -n "${MVN_OFFLINE:-}" ]; then offline=(-o); fi
	mvn -q -B "${offline[@]}" -f "$here/scripts/server-pom.xml" -P proxy -Drocketmq.server.version="$version" \
		dependency:copy-dependencies -DoutputDirectory="$proxylib" >&2
	touch "$proxylib/.complete-$version"
}

prepare() { # DIR
	mkdir -p "$1/home" "$1/logs" "$1/store"
}

launch() { # DIR NAME MAINCLASS ARGS...
	local dir="$1" name="$2"; shift 2
	local cmd=(java "${jvm[@]}" -Duser.home="$dir" -Drocketmq.home.dir="$dir/home"
		-cp "$lib/*" "$@")
	export ROCKETMQ_HOME="$dir/home"
	if [ -n "${FOREGROUND:-}" ]; then
		echo $$ >"$dir/$name.pid"
		exec "${cmd[@]}"
	fi
	setsid "${cmd[@]}" >"$dir/logs/$name.out" 2>&1 </dev/null &
	echo $! >"$dir/$name.pid"
	echo "$name pid $! logs $dir/logs"
}

start_namesrv() { # PORT DIR
	local port="$1" dir="$2"
	fetch; prepare "$dir"
	{
		echo "listenPort=$port"
		echo "bindAddress=127.0.0.1"
		echo "rocketmqHome=$dir/home"
		echo "orderMessageEnable=true"
		printf '%s\n' "${NAMESRV_EXTRA_CONF:-}"
	} >"$dir/namesrv.conf"
	launch "$dir" namesrv org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf"
}

start_broker() { # NSADDR PORT DIR
	local ns="$1" port="$2" dir="$3"
	fetch; prepare "$dir"
	{
		echo "brokerClusterName=DefaultCluster"
		echo "brokerName=broker-a"
		echo "brokerId=0"
		echo "brokerRole=ASYNC_MASTER"
		echo "flushDiskType=ASYNC_FLUSH"
		echo "namesrvAddr=$ns"
		echo "brokerIP1=127.0.0.1"
		echo "listenPort=$port"
		echo "bindAddress=127.0.0.1"
		echo "haListenPort=$((port + 1))"
		echo "rocketmqHome=$dir/home"
		echo "storePathRootDir=$dir/store"
		echo "storePathCommitLog=$dir/store/commitlog"
		echo "mappedFileSizeCommitLog=67108864"
		echo "autoCreateTopicEnable=true"
		echo "autoCreateSubscriptionGroup=true"
		echo "enablePropertyFilter=true"
		echo "traceTopicEnable=true"
		# Faster transaction check-back than the defaults (6 s / 30 s) so the
		# scenario fits its deadline.
		echo "transactionTimeOut=2000"
		echo "transactionCheckInterval=3000"
		# Message recall (5.3) is off by default; the recall scenario needs it.
		echo "recallMessageEnable=true"
		printf '%s\n' "${BROKER_EXTRA_CONF:-}"
	} >"$dir/broker.conf"
	launch "$dir" broker org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.conf" -n "$ns"
}

start_proxy() { # NSADDR GRPC_PORT REMOTING_PORT DIR
	local ns="$1" grpc="$2" remoting="$3" dir="$4"
	fetch_proxy; prepare "$dir"
	mkdir -p "$dir/home/conf"
	# Cluster mode: the proxy is a remoting client of NSADDR's brokers.
	# localServeAddr is what the proxy advertises to its gRPC clients in
	# routes. minInvisibleTimeMillsForRecv (10 s by default) is lowered so the
	# redelivery scenarios fit their deadlines; the proxy's own caches of
	# topic and group configs refresh faster than the default 20 s.
	# Apache's proxy has no bind-address key: its gRPC and remoting servers
	# listen on every interface (of this sandboxed machine) on the given ports.
	cat >"$dir/home/conf/rmq-proxy.json" <<-EOF
	{
	  "rocketMQClusterName": "DefaultCluster",
	  "namesrvAddr": "$ns",
	  "proxyMode": "cluster",
	  "grpcServerPort": $grpc,
	  "remotingListenPort": $remoting,
	  "localServeAddr": "127.0.0.1",
	  "minInvisibleTimeMillsForRecv": 1000,
	  "topicConfigCacheRefreshSeconds": 2,
	  "subscriptionGroupConfigCacheRefreshSeconds": 2,
	  "topicRouteServiceCacheRefreshSeconds": 2,
	  "enablePrintJstack": false${PROXY_EXTRA_CONF:+,
	  $PROXY_EXTRA_CONF}
	}
	EOF
	read -r -a heap <<<"${PROXY_JVM_OPTS:--Xms256m -Xmx512m -XX:MaxDirectMemorySize=256m}"
	local pjvm=(-server "${heap[@]}" -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow
		-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true)
	local cmd=(java "${pjvm[@]}" -Duser.home="$dir" -Drocketmq.home.dir="$dir/home"
		-cp "$proxylib/*" org.apache.rocketmq.proxy.ProxyStartup
		-pc "$dir/home/conf/rmq-proxy.json" -pm cluster -n "$ns")
	export ROCKETMQ_HOME="$dir/home" RMQ_PROXY_HOME="$dir/home"
	if [ -n "${FOREGROUND:-}" ]; then
		echo $$ >"$dir/proxy.pid"
		exec "${cmd[@]}"
	fi
	setsid "${cmd[@]}" >"$dir/logs/proxy.out" 2>&1 </dev/null &
	echo $! >"$dir/proxy.pid"
	echo "proxy pid $! logs $dir/logs"
}

stop() { # [DIR]
	local root="${1:-$cache/run}"
	local f
	for f in $(find "$root" -name '*.pid' 2>/dev/null); do
		local pid; pid="$(cat "$f")"
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		rm -f "$f"
	done
}

case "${1:-}" in
fetch) fetch ;;
fetch-proxy) fetch_proxy ;;
start-proxy) [ $# -eq 5 ] || { echo "usage: $0 start-proxy NSADDR GRPC_PORT REMOTING_PORT DIR" >&2; exit 2; }; start_proxy "$2" "$3" "$4" "$5" ;;
start-namesrv) [ $# -eq 3 ] || { echo "usage: $0 start-namesrv PORT DIR" >&2; exit 2; }; start_namesrv "$2" "$3" ;;
start-broker) [ $# -eq 4 ] || { echo "usage: $0 start-broker NSADDR PORT DIR" >&2; exit 2; }; start_broker "$2" "$3" "$4" ;;
stop) stop "${2:-}" ;;
*) echo "usage: $0 {fetch|fetch-proxy|start-namesrv PORT DIR|start-broker NSADDR PORT DIR|start-proxy NSADDR GRPC_PORT REMOTING_PORT DIR|stop [DIR]}" >&2; exit 2 ;;
esac
