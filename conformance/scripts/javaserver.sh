#!/usr/bin/env bash
# Apache RocketMQ reference server (name server + broker) from Maven Central jars.
#
#   javaserver.sh fetch                          resolve the jars into .cache/java-server/lib
#   javaserver.sh start-namesrv PORT DIR         start a name server on 127.0.0.1:PORT
#   javaserver.sh start-broker NSADDR PORT DIR   start a broker on 127.0.0.1:PORT (HA PORT+1, VIP PORT-2)
#   javaserver.sh stop [DIR]                     stop what start-* started (all under .cache/run by default)
#
# DIR holds the config, the store, ROCKETMQ_HOME, logs and the pid file.
# FOREGROUND=1 makes start-* exec java in the foreground (the Go harness uses
# this and kills the process group itself). JAVA_EXTRA_OPTS adds JVM flags.
# BROKER_EXTRA_CONF / NAMESRV_EXTRA_CONF
# add lines to the generated config (e.g. bindAddress=127.0.0.2 for capture).
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
		printf '%s\n' "${BROKER_EXTRA_CONF:-}"
	} >"$dir/broker.conf"
	launch "$dir" broker org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.conf" -n "$ns"
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
start-namesrv) [ $# -eq 3 ] || { echo "usage: $0 start-namesrv PORT DIR" >&2; exit 2; }; start_namesrv "$2" "$3" ;;
start-broker) [ $# -eq 4 ] || { echo "usage: $0 start-broker NSADDR PORT DIR" >&2; exit 2; }; start_broker "$2" "$3" "$4" ;;
stop) stop "${2:-}" ;;
*) echo "usage: $0 {fetch|start-namesrv PORT DIR|start-broker NSADDR PORT DIR|stop [DIR]}" >&2; exit 2 ;;
esac
