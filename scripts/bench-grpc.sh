#!/usr/bin/env bash
# bench-grpc.sh: the RocketMQ 5 gRPC SDK (rocketmq-client-java 5.0.8,
# conformance/javagrpc GrpcBench) against four setups on 127.0.0.1:
#   native      rocketgo's own gRPC endpoint (name server + broker + endpoint, one process)
#   apache+ours Apache's rocketmq-proxy 5.3.3 (cluster mode) + our mqnamesrv + mqbroker
#   mqproxy+java our mqproxy + the Java name server + broker 5.3.3
#   apache+java Apache's proxy 5.3.3 + the Java name server + broker 5.3.3 (the reference)
# Per setup: start, create topics GrpcBench and GrpcBenchE2E (NORMAL, 8 queues) and the group,
# warm up, then three bounded steps of the driver:
#   send  closed loop, INFLIGHT async sends outstanding, SIZE-byte bodies, STEP s
#   recv  SimpleConsumer receive + async ack of that backlog (THREADS loops), STEP s at most
#   e2e   (its own topic) producer paced at E2E_RATE msg/s, below every setup's send rate, with the receive + ack loop at once, STEP s:
#         end-to-end latency from a send timestamp in a message property
# The proxy's and the broker's utime+stime (/proc/PID/stat) are read before
# and after send and recv (CPU per sent / per acked message), VmRSS after
# the run. Writes OUT (bench/results-grpc.md). Ports 45000-45999.
#
# Knobs: STEP=10 WARMUP=8 INFLIGHT=64 SIZE=1024 THREADS=4 E2E_RATE=100
#        ONLY="native apache+ours mqproxy+java apache+java" (the order run)
#        OUT=bench/results-grpc.md WORK=<tmpdir>
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
STEP="${STEP:-10}"
WARMUP="${WARMUP:-8}"
INFLIGHT="${INFLIGHT:-64}"
SIZE="${SIZE:-1024}"
THREADS="${THREADS:-4}"
E2E_RATE="${E2E_RATE:-100}"
ONLY="${ONLY:-native apache+ours mqproxy+java apache+java}"
OUT="${OUT:-$root/bench/results-grpc.md}"
WORK="${WORK:-$(mktemp -d /tmp/rocketgo-bench-grpc.XXXXXX)}"
bin="$WORK/bin"
javaserver="$root/conformance/scripts/javaserver.sh"
driver="$root/conformance/javagrpc"
mkdir -p "$WORK"
metrics="$WORK/metrics.tsv"
: >"$metrics"

NS_PORT=45876 BR_PORT=45911 GRPC_PORT=45081 REM_PORT=45082
NS=127.0.0.1:$NS_PORT BROKER=127.0.0.1:$BR_PORT ENDPOINT=127.0.0.1:$GRPC_PORT
TOPIC=GrpcBench GROUP=GrpcBenchGroup
# e2e has a topic of its own: no backlog of the send step in its latencies.
E2E_TOPIC=GrpcBenchE2E

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
mkdir -p "$bin"
log "building into $bin"
(cd "$root" && go build -o "$bin/" ./cmd/rocketgo ./cmd/mqnamesrv ./cmd/mqbroker ./cmd/mqproxy ./cmd/mqadmin)
"$javaserver" fetch
"$javaserver" fetch-proxy
if [ ! -f "$driver/target/classes/io/rocketgo/conformance/grpc/GrpcBench.class" ] ||
	[ -n "$(find "$driver/src" -newer "$driver/target/classes/io/rocketgo/conformance/grpc/GrpcBench.class" -name '*.java')" ]; then
	log "building the Java gRPC driver"
	mvn -q -B -f "$driver/pom.xml" package -DskipTests >&2
fi

# Our processes: setsid'd, pid in $WORK/<name>.pid; Java's: javaserver.sh's pid files.
start_ours() { # name args...
	local name="$1"; shift
	setsid "$bin/$name" "$@" >>"$WORK/$name.log" 2>&1 </dev/null &
	echo $! >"$WORK/$name.pid"
	disown
}
stop_pid() { # pid
	local pid="$1"
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done # bounded wait for the exit
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}
stop_all() {
	local f
	for f in "$WORK"/*.pid; do [ -f "$f" ] && stop_pid "$(cat "$f")"; rm -f "$f"; done
	for f in $(find "$WORK/s" -name '*.pid' 2>/dev/null); do stop_pid "$(cat "$f")"; rm -f "$f"; done
	rm -rf "$WORK/s"
}
trap stop_all EXIT
trap "exit 130" INT TERM

wait_until() { # what seconds command...
	local what="$1" secs="$2"; shift 2
	local end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.2 # polling a starting server, bounded by secs
	done
	log "$what not ready within ${secs}s"; return 1
}
registered() { "$bin/mqadmin" clusterList -n "$NS" 2>/dev/null | grep -q "$BROKER"; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_java_ns_broker() {
	"$javaserver" start-namesrv "$NS_PORT" "$WORK/s/ns" >/dev/null
	"$javaserver" start-broker "$NS" "$BR_PORT" "$WORK/s/br" >/dev/null
}
start_our_ns_broker() { # dir
	local d="$1"; mkdir -p "$d"
	printf '%s\n' "listenPort=$NS_PORT" "bindAddress=127.0.0.1" >"$d/namesrv.conf"
	start_ours mqnamesrv -c "$d/namesrv.conf"
	printf '%s\n' brokerClusterName=DefaultCluster brokerName=broker-a brokerId=0 "listenPort=$BR_PORT" \
		brokerIP1=127.0.0.1 bindAddress=127.0.0.1 "storePathRootDir=$d/store" "namesrvAddr=$NS" \
		autoCreateTopicEnable=true >"$d/broker.conf"
	wait_until mqnamesrv 30 listening "$NS_PORT"
	start_ours mqbroker -c "$d/broker.conf" -n "$NS"
}
start_apache_proxy() {
	"$javaserver" start-proxy "$NS" "$GRPC_PORT" "$REM_PORT" "$WORK/s/proxy" >/dev/null
}

# Sets PROXY_PID and BROKER_PID (PROXY_PID empty: the endpoint is in the broker's process).
start_setup() { # setup
	mkdir -p "$WORK/s"
	PROXY_PID="" BROKER_PID=""
	case "$1" in
	native)
		start_ours rocketgo -dataDir "$WORK/s/rocketgo" -namesrvListen "$NS" -brokerListen "$BROKER" -grpcListen "$ENDPOINT"
		BROKER_PID="$(cat "$WORK/rocketgo.pid")" ;;
	apache+ours)
		start_our_ns_broker "$WORK/s/ours"
		BROKER_PID="$(cat "$WORK/mqbroker.pid")"
		wait_until broker 60 registered
		start_apache_proxy
		PROXY_PID="$(cat "$WORK/s/proxy/proxy.pid")" ;;
	mqproxy+java)
		start_java_ns_broker
		BROKER_PID="$(cat "$WORK/s/br/broker.pid")"
		wait_until broker 90 registered
		mkdir -p "$WORK/s/mqproxy"
		printf '{"rocketMQClusterName":"DefaultCluster","namesrvAddr":"%s","proxyMode":"cluster","grpcServerPort":%d,"remotingListenPort":%d,"localServeAddr":"127.0.0.1"}\n' \
			"$NS" "$GRPC_PORT" "$REM_PORT" >"$WORK/s/mqproxy/rmq-proxy.json"
		start_ours mqproxy -pc "$WORK/s/mqproxy/rmq-proxy.json" -bind 127.0.0.1
		PROXY_PID="$(cat "$WORK/mqproxy.pid")" ;;
	apache+java)
		start_java_ns_broker
		BROKER_PID="$(cat "$WORK/s/br/broker.pid")"
		wait_until broker 90 registered
		start_apache_proxy
		PROXY_PID="$(cat "$WORK/s/proxy/proxy.pid")" ;;
	*) log "unknown setup $1"; return 1 ;;
	esac
	wait_until broker 90 registered
	wait_until "gRPC endpoint" 90 listening "$GRPC_PORT"
	local t
	for t in "$TOPIC" "$E2E_TOPIC"; do
		"$bin/mqadmin" updateTopic -n "$NS" -c DefaultCluster -t "$t" -r 8 -w 8 -a +message.type=NORMAL >/dev/null
	done
	"$bin/mqadmin" updateSubGroup -n "$NS" -c DefaultCluster -g "$GROUP" >/dev/null
}

ticks() { if [ -n "$1" ]; then awk '{print $14 + $15}' "/proc/$1/stat"; else echo 0; fi; }
rss_mib() { if [ -n "$1" ]; then awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; else echo -; fi; }
hz="$(getconf CLK_TCK)"

run_driver() { # mode seconds extra... (TOPIC_OF overrides the topic)
	local mode="$1" secs="$2"; shift 2
	timeout $((secs + 90)) java -Xms256m -Xmx1g -cp "$driver/target/classes:$driver/target/lib/*" \
		io.rocketgo.conformance.grpc.GrpcBench --mode "$mode" --endpoint "$ENDPOINT" --topic "${TOPIC_OF:-$TOPIC}" \
		--group "$GROUP" --seconds "$secs" "$@" 2>>"$WORK/driver.log" | tail -1
}
jget() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2], "-"))' "$1" "$2"; }

bench_setup() { # setup
	local s="$1"
	log "$s: starting"
	start_setup "$s"
	# Warm-up: unrecorded sends (JIT, connections, routes), retried while the proxy finishes starting.
	local w ok=""
	for _ in 1 2 3 4 5; do
		w="$(run_driver send "$WARMUP" --inflight "$INFLIGHT" --size "$SIZE" || true)"
		if [ "$(jget "$w" messages 2>/dev/null || echo 0)" != 0 ] && [ "$(jget "$w" messages 2>/dev/null)" != - ]; then ok=1; break; fi
		log "$s: warm-up got $w; again"
	done
	[ -n "$ok" ] || { log "$s: no warm-up sends went through"; stop_all; return 1; }
	# Drain the warm-up backlog so recv measures the step's messages alone.
	run_driver recv 30 --threads "$THREADS" --max "$(jget "$w" messages)" >/dev/null || true

	local p0 b0 p1 b1 p2 b2 sj rj ej load
	p0="$(ticks "$PROXY_PID")" b0="$(ticks "$BROKER_PID")"
	sj="$(run_driver send "$STEP" --inflight "$INFLIGHT" --size "$SIZE")"
	p1="$(ticks "$PROXY_PID")" b1="$(ticks "$BROKER_PID")"
	log "$s send: $sj"
	rj="$(run_driver recv "$STEP" --threads "$THREADS" --max "$(jget "$sj" messages)")"
	p2="$(ticks "$PROXY_PID")" b2="$(ticks "$BROKER_PID")"
	log "$s recv: $rj"
	ej="$(TOPIC_OF="$E2E_TOPIC" run_driver e2e "$STEP" --rate "$E2E_RATE" --threads "$THREADS" --size "$SIZE")"
	log "$s e2e: $ej"
	load="$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$sj" "$rj" "$ej" \
		"$p0" "$p1" "$p2" "$b0" "$b1" "$b2" "$(rss_mib "$PROXY_PID")" "$(rss_mib "$BROKER_PID")" "$load" "$hz" >>"$metrics"
	stop_all
}

for s in $ONLY; do bench_setup "$s" || log "$s: failed, row left out"; done

python3 - "$metrics" "$OUT" "$STEP" "$WARMUP" "$INFLIGHT" "$SIZE" "$THREADS" "$E2E_RATE" "$(git -C "$root" rev-parse --short HEAD)" <<'EOF'
import sys, json
metrics, out, step, warm, inflight, size, threads, rate, rev = sys.argv[1:]
names = {"native": "rocketgo native endpoint (one process)",
         "apache+ours": "Apache proxy 5.3.3 + our mqbroker/mqnamesrv",
         "mqproxy+java": "our mqproxy + Java broker 5.3.3",
         "apache+java": "Apache proxy 5.3.3 + Java broker 5.3.3 (reference)"}
rows = []
for line in open(metrics):
    f = line.rstrip("\n").split("\t")
    s, sj, rj, ej = f[0], json.loads(f[1]), json.loads(f[2]), json.loads(f[3])
    p0, p1, p2, b0, b1, b2 = map(float, f[4:10])
    prss, brss, load, hz = f[10], f[11], f[12], float(f[13])
    us = 1e6 / hz
    sent, acked = max(sj.get("messages", 0), 1), max(rj.get("messages", 0), 1)
    rows.append(dict(s=s, sj=sj, rj=rj, ej=ej, prss=prss, brss=brss, load=load,
        psend=(p1 - p0) * us / sent, precv=(p2 - p1) * us / acked,
        bsend=(b1 - b0) * us / sent, brecv=(b2 - b1) * us / acked, proxy=s != "native"))
def f1(x): return f"{x:,.0f}"
def f2(x): return f"{x:.2f}"
o = ["# gRPC benchmarks: rocketgo beside Apache's proxy and broker (Java gRPC SDK)", "",
     f"`make bench-grpc` (scripts/bench-grpc.sh) at {rev}: the official RocketMQ 5 Java SDK "
     "(rocketmq-client-java 5.0.8, conformance/javagrpc `GrpcBench`) against four setups, all on 127.0.0.1, "
     f"one pass in this order, a fresh server per setup, {warm} s warm-up sends first. Steps of {step} s each: "
     f"**send** closed loop with {inflight} async sends in flight, {size}-byte bodies (msg/s and send latency "
     f"p99); **receive+ack** a SimpleConsumer ({threads} loops of receive(32) + async ack) draining that backlog; "
     f"**e2e** a producer paced at {rate} msg/s with the receive+ack loop at once, latency from the send "
     "timestamp carried in a message property to its receipt. CPU is the process's utime+stime "
     "(/proc/PID/stat) over the send step per sent message plus over the receive step per acked message; "
     "RSS is VmRSS after the steps.", "",
     "**The machine is 2 cores shared with other work (builds, tests, other benchmarks) and the driver "
     "(a JVM) runs on the same cores: absolute figures are low and noisy; read the ratios between rows.** "
     "Load average (1, 5, 15 min) at the end of each row is in the last column.", "",
     "| setup | send msg/s | send p99 ms | receive+ack msg/s | e2e p99 ms | proxy RSS MiB | proxy CPU µs/msg (send + recv) | broker CPU µs/msg (send + recv) | broker RSS MiB | load avg |",
     "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
for r in rows:
    sj, rj, ej = r["sj"], r["rj"], r["ej"]
    pc = f"{f2(r['psend'] + r['precv'])} ({f2(r['psend'])} + {f2(r['precv'])})" if r["proxy"] else "in-process"
    bc = f"{f2(r['bsend'] + r['brecv'])} ({f2(r['bsend'])} + {f2(r['brecv'])})"
    o.append(f"| {names[r['s']]} | {f1(sj.get('tps', 0))} | {sj.get('p99Ms', '-')} | {f1(rj.get('tps', 0))} | "
             f"{ej.get('e2eP99Ms', '-')} | {r['prss'] if r['proxy'] else 'in-process'} | {pc} | {bc} | {r['brss']} | {r['load']} |")
o += ["", "Errors and counts per row (send: sent/errors; receive: acked/errors; e2e: sent/received/errors, p50):", ""]
for r in rows:
    sj, rj, ej = r["sj"], r["rj"], r["ej"]
    o.append(f"- {r['s']}: send {sj.get('messages')}/{sj.get('errors')} p50 {sj.get('p50Ms')} ms; "
             f"receive {rj.get('messages')}/{rj.get('errors')}; e2e {ej.get('sent')}/{ej.get('received')}/{ej.get('errors')} "
             f"p50 {ej.get('e2eP50Ms')} ms")
by = {r["s"]: r for r in rows}
ref = by.get("apache+java")
if ref:
    o += ["", "Ratios against the reference (Apache proxy + Java broker):", ""]
    for r in rows:
        if r is ref: continue
        def ratio(a, b): return f"{a / b:.2f}x" if b else "-"
        tot = lambda x: x["psend"] + x["precv"] + x["bsend"] + x["brecv"]
        o.append(f"- {names[r['s']]}: send msg/s {ratio(r['sj'].get('tps', 0), ref['sj'].get('tps', 0))}, "
                 f"receive+ack msg/s {ratio(r['rj'].get('tps', 0), ref['rj'].get('tps', 0))}, "
                 f"server CPU per message (proxy + broker) {ratio(tot(r), tot(ref))}")
open(out, "w").write("\n".join(o) + "\n")
print("\n".join(o))
EOF
log "metrics in $metrics"
