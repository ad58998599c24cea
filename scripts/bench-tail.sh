#!/usr/bin/env bash
# bench-tail.sh: the tail table of issue #23, rocketgo (cmd/mqnamesrv +
# cmd/mqbroker) against the Apache RocketMQ 5.3.3 name server + broker
# (conformance/scripts/javaserver.sh) in one run, sessions alternating Java,
# ours (PAIRS pairs; the report holds each pair's figures and their median).
# Everything listens on 127.0.0.1, ASYNC_FLUSH, SIZE-byte bodies, the same
# broker.conf keys on both sides. Writes bench/results-tail.md.
#
# Sessions per side and pair, each on fresh servers and an empty store:
#   single   name server + one broker. After WARMUP of paced sends, for each
#            rate of RATES: open-loop sync sends (`mqbench produce -mode sync
#            -rate R -threads 16 -conns 4`, latency from each message's
#            scheduled time, so a stall counts for every message it delays),
#            STEP long: p50 / p99 / p99.9 / max and the broker's CPU per
#            message; then end to end at the same rate: `mqbench consume
#            -from last` (one held pull per queue) while paced async sends
#            run, latency = pull reply arrival − the message's born time.
#   syncpair brokerRole=SYNC_MASTER + SLAVE, inSyncReplicas=2: open-loop sync
#            sends at PAIR_RATE (a SEND_OK means the slave has it).
#   asyncpair brokerRole=ASYNC_MASTER + SLAVE: `mqbench repllag` at
#            PAIR_RATE: master SEND_OK → the slave's GET_MAX_OFFSET shows it
#            (poll every 200 µs).
# Each step records the 1-minute load average when it ends, and /proc/stat's
# steal time over the step (the VM's CPU taken by the host).
#
# Knobs (environment):
#   PAIRS=3  STEP=10s  WARMUP=15s (paced sends before the first step: the JVM
#            compiles its hot paths in the first ~10 s)
#    SIZE=1024  QUEUES=4
#   RATES="5000 10000"  PAIR_RATE=10000
#   SESSIONS="single syncpair asyncpair"
#   ONLY=ours|java  one side only
#   OUT=bench/results-tail.md  WORK=<tmpdir> (kept: logs, raw metrics)
#   JAVA_HEAP="-Xms1g -Xmx1g -XX:MaxDirectMemorySize=1g"
# One pair with the defaults takes about 7 minutes on 2 cores; PAIRS=1
# STEP=3s WARMUP=2s is a smoke run of 3 (Java is then still compiling).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
PAIRS="${PAIRS:-3}"
STEP="${STEP:-10s}"
WARMUP="${WARMUP:-15s}"
SIZE="${SIZE:-1024}"
QUEUES="${QUEUES:-4}"
RATES="${RATES:-5000 10000}"
PAIR_RATE="${PAIR_RATE:-10000}"
SESSIONS="${SESSIONS:-single syncpair asyncpair}"
ONLY="${ONLY:-}"
OUT="${OUT:-$root/bench/results-tail.md}"
WORK="${WORK:-$(mktemp -d /tmp/bench-tail.XXXXXX)}"
JAVA_HEAP="${JAVA_HEAP:--Xms1g -Xmx1g -XX:MaxDirectMemorySize=1g}"
REV="${REV:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
javaserver="$root/conformance/scripts/javaserver.sh"

# Below the ephemeral range, apart from bench-compare's, bench-repl's and
# bench-scale's. Each broker also uses PORT+1 (HA) and PORT-2 (fast port).
OURS_NS_PORT=25876 OURS_M_PORT=25911 OURS_S_PORT=25921
JAVA_NS_PORT=26876 JAVA_M_PORT=26911 JAVA_S_PORT=26921

bin="$WORK/bin"
metrics="$WORK/metrics-tail.tsv"
mkdir -p "$bin"
cd "$WORK"
: >"$metrics"
clk_tck="$(getconf CLK_TCK)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

for port in $OURS_NS_PORT $OURS_M_PORT $((OURS_M_PORT + 1)) $OURS_S_PORT $((OURS_S_PORT + 1)) \
	$JAVA_NS_PORT $JAVA_M_PORT $((JAVA_M_PORT + 1)) $JAVA_S_PORT $((JAVA_S_PORT + 1)); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "bench-tail: 127.0.0.1:$port is already in use" >&2
		exit 1
	fi
done

log "building into $bin"
(cd "$root" && go build -o "$bin/" ./cmd/mqnamesrv ./cmd/mqbroker ./cmd/mqbench ./cmd/mqadmin)
if [ "$ONLY" != ours ]; then "$javaserver" fetch; fi

ns_of() { if [ "$1" = ours ]; then echo 127.0.0.1:$OURS_NS_PORT; else echo 127.0.0.1:$JAVA_NS_PORT; fi; }
master_of() { if [ "$1" = ours ]; then echo 127.0.0.1:$OURS_M_PORT; else echo 127.0.0.1:$JAVA_M_PORT; fi; }
slave_of() { if [ "$1" = ours ]; then echo 127.0.0.1:$OURS_S_PORT; else echo 127.0.0.1:$JAVA_S_PORT; fi; }
pidfile() { echo "$WORK/$1.$2.pid"; } # side ns|master|slave

broker_conf() { # side role addr dir: the keys both implementations read
	local side="$1" role="$2" id=0 port="${3##*:}"
	if [ "$role" = SLAVE ]; then id=1; fi
	printf '%s\n' "brokerId=$id" "brokerRole=$role" "brokerIP2=127.0.0.1" "flushDiskType=ASYNC_FLUSH" "slaveReadEnable=true"
	if [ -n "$with_slave" ]; then printf '%s\n' "totalReplicas=2" "inSyncReplicas=2"; fi
	if [ "$side" = ours ]; then
		printf '%s\n' "brokerClusterName=DefaultCluster" "brokerName=broker-a" "listenPort=$port" \
			"bindAddress=127.0.0.1" "brokerIP1=127.0.0.1" "namesrvAddr=$(ns_of ours)" "storePathRootDir=$4/store"
	fi
}

start_ns() { # side dir
	mkdir -p "$2"
	if [ "$1" = ours ]; then
		printf 'listenPort=%s\nbindAddress=127.0.0.1\n' $OURS_NS_PORT >"$2/namesrv.conf"
		setsid "$bin/mqnamesrv" -c "$2/namesrv.conf" >>"$2/namesrv.log" 2>&1 </dev/null &
		echo $! >"$(pidfile ours ns)"
	else
		"$javaserver" start-namesrv $JAVA_NS_PORT "$2" >/dev/null
		cp "$2/namesrv.pid" "$(pidfile java ns)"
	fi
}

start_broker() { # side master|slave role dir
	local side="$1" which="$2" role="$3" dir="$4" addr
	if [ "$which" = master ]; then addr="$(master_of "$side")"; else addr="$(slave_of "$side")"; fi
	mkdir -p "$dir"
	if [ "$side" = ours ]; then
		broker_conf ours "$role" "$addr" "$dir" >"$dir/broker.conf"
		setsid "$bin/mqbroker" -c "$dir/broker.conf" >>"$dir/broker.log" 2>&1 </dev/null &
		echo $! >"$(pidfile ours "$which")"
	else
		JAVA_EXTRA_OPTS="$JAVA_HEAP" BROKER_EXTRA_CONF="$(broker_conf java "$role" "$addr" "$dir")" \
			"$javaserver" start-broker "$(ns_of java)" "${addr##*:}" "$dir" >/dev/null
		cp "$dir/broker.pid" "$(pidfile java "$which")"
	fi
}

wait_gone() { # pid
	local i
	for i in $(seq 1 300); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL -- "-$1" 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
}

stop_side() { # side [dir]: every server of the side; drops the stores
	local w f pids=()
	for w in slave master ns; do
		f="$(pidfile "$1" "$w")"
		[ -f "$f" ] || continue
		pids+=("$(cat "$f")")
		kill -TERM -- "-$(cat "$f")" 2>/dev/null || kill -TERM "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	for w in "${pids[@]}"; do wait_gone "$w"; done
	if [ -n "${2:-}" ]; then rm -rf "$2"/*/store "$2"/*/br/store; fi
	sync # the next session does not write behind this one's dirty pages
}

cleanup() {
	stop_side ours 2>/dev/null || true
	stop_side java 2>/dev/null || true
}
trap cleanup EXIT
trap "exit 130" INT TERM

bench() { "$bin/mqbench" "$@" -quiet -json; }
rec() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$metrics"; log "  $1 pair $2: $3 = $4"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
steal_ticks() { awk '$1 == "cpu" {print $9}' /proc/stat; }

wait_broker() { # addr (bounded, 180 s)
	local i
	for i in $(seq 1 1800); do
		if "$bin/mqadmin" brokerStatus -b "$1" -timeout 2s >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	log "broker $1 does not answer"; return 1
}

create_topic() { # side topic queues: on the master, then until the name server routes it
	local try i
	for try in 1 2 3; do
		if "$bin/mqadmin" updateTopic -n "$(ns_of "$1")" -b "$(master_of "$1")" -t "$2" -r "$3" -w "$3" -timeout 20s >/dev/null; then
			break
		fi
	done
	for i in $(seq 1 600); do
		if "$bin/mqadmin" topicRoute -n "$(ns_of "$1")" -t "$2" -timeout 2s >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	log "no route for $2 at $(ns_of "$1")"; return 1
}

with_slave=""
start_set() { # side role dir [slave]: name server, master, topics, the slave in sync
	with_slave="${4:-}"
	start_ns "$1" "$3/ns"
	start_broker "$1" master "$2" "$3/master"
	wait_broker "$(master_of "$1")"
	create_topic "$1" TailTopic "$QUEUES"
	create_topic "$1" TailLag 1
	if [ -n "${4:-}" ]; then
		start_broker "$1" slave SLAVE "$3/slave"
		wait_broker "$(slave_of "$1")"
		bench hawait -m "$(master_of "$1")" -timeout 120s >/dev/null
	fi
}

# latency_rows side pair prefix json: p50/p99/p99.9/max of a report's latencyMs.
latency_rows() {
	local k
	for k in p50 p99 p999 max; do rec "$1" "$2" "${3}_${k}_ms" "$(jq -r ".${5:-latencyMs}.$k" <<<"$4")"; done
}

# open_step side pair prefix rate pids...: open-loop sync sends; CPU of pids.
open_step() {
	local side="$1" pair="$2" p="$3" rate="$4" j c0=0 c1=0 s0 s1 pid n
	shift 4
	for pid in "$@"; do c0=$((c0 + $(cpu_ticks "$pid"))); done
	s0="$(steal_ticks)"
	j="$(bench produce -n "$(ns_of "$side")" -t TailTopic -mode sync -rate "$rate" -threads 16 -conns 4 \
		-size "$SIZE" -duration "$STEP")"
	s1="$(steal_ticks)"
	for pid in "$@"; do c1=$((c1 + $(cpu_ticks "$pid"))); done
	n="$(jq -r '.messages' <<<"$j")"
	latency_rows "$side" "$pair" "$p" "$j"
	rec "$side" "$pair" "${p}_tps" "$(jq -r '.tps' <<<"$j")"
	rec "$side" "$pair" "${p}_errors" "$(jq -r '.errorTotal' <<<"$j")"
	rec "$side" "$pair" "${p}_cpu_us_per_msg" "$(awk -v d=$((c1 - c0)) -v hz="$clk_tck" -v n="$n" 'BEGIN { printf "%.1f", (n > 0 ? d * 1e6 / hz / n : 0) }')"
	rec "$side" "$pair" "${p}_load" "$(cut -d' ' -f1 /proc/loadavg)"
	rec "$side" "$pair" "${p}_steal_pct" "$(awk -v d=$((s1 - s0)) -v hz="$clk_tck" -v s="${STEP%s}" -v c="$(nproc)" 'BEGIN { printf "%.1f", d * 100 / hz / s / c }')"
}

e2e_step() { # side pair prefix rate
	local side="$1" pair="$2" p="$3" rate="$4" out="$WORK/$1.$2.$3.json" cpid
	bench consume -n "$(ns_of "$side")" -t TailTopic -g "tail_${p}_$pair" -from last -duration "$((${STEP%s} + 4))s" >"$out" &
	cpid=$!
	sleep 1.5 # the consumer reads the max offsets before the first send
	bench produce -n "$(ns_of "$side")" -t TailTopic -mode async -rate "$rate" -threads 4 -conns 2 \
		-inflight 256 -size "$SIZE" -duration "$STEP" >/dev/null
	wait "$cpid"
	latency_rows "$side" "$pair" "$p" "$(cat "$out")"
	rec "$side" "$pair" "${p}_msgs" "$(jq -r '.messages' "$out")"
}

warmup() { # side
	bench produce -n "$(ns_of "$1")" -t TailTopic -mode sync -rate "${RATES##* }" -threads 16 -conns 4 \
		-size "$SIZE" -duration "$WARMUP" >/dev/null || true
}

session() { # name side pair
	local s="$1" side="$2" pair="$3" dir="$WORK/$2.$3.$1" rate
	log "$side pair $pair: $s (load $(cut -d' ' -f1-3 /proc/loadavg))"
	case "$s" in
	single)
		start_set "$side" ASYNC_MASTER "$dir"
		warmup "$side"
		for rate in $RATES; do
			open_step "$side" "$pair" "single_send_$rate" "$rate" "$(cat "$(pidfile "$side" master)")"
			e2e_step "$side" "$pair" "single_e2e_$rate" "$rate"
		done ;;
	syncpair)
		start_set "$side" SYNC_MASTER "$dir" slave
		warmup "$side"
		open_step "$side" "$pair" "syncpair_send_$PAIR_RATE" "$PAIR_RATE" \
			"$(cat "$(pidfile "$side" master)")" "$(cat "$(pidfile "$side" slave)")" ;;
	asyncpair)
		start_set "$side" ASYNC_MASTER "$dir" slave
		warmup "$side"
		local j
		j="$(bench repllag -m "$(master_of "$side")" -s "$(slave_of "$side")" -t TailLag -rate "$PAIR_RATE" \
			-poll 200us -size "$SIZE" -duration "$STEP")"
		latency_rows "$side" "$pair" "asyncpair_lag_$PAIR_RATE" "$j" lagMs
		latency_rows "$side" "$pair" "asyncpair_send_$PAIR_RATE" "$j" ackMs
		rec "$side" "$pair" "asyncpair_lag_${PAIR_RATE}_missing" "$(jq -r '.missing' <<<"$j")"
		rec "$side" "$pair" "asyncpair_lag_${PAIR_RATE}_load" "$(cut -d' ' -f1 /proc/loadavg)" ;;
	*) echo "bench-tail: unknown session $s" >&2; exit 2 ;;
	esac
	stop_side "$side" "$dir"
}

sides=(java ours)
case "$ONLY" in ours) sides=(ours) ;; java) sides=(java) ;; esac
for pair in $(seq 1 "$PAIRS"); do
	for s in $SESSIONS; do
		for side in "${sides[@]}"; do session "$s" "$side" "$pair"; done
	done
done

python3 "$root/scripts/bench-tail-report.py" "$metrics" "$OUT" "$REV" "$started" "$load_start" \
	"$(cut -d' ' -f1-3 /proc/loadavg)" "PAIRS=$PAIRS STEP=$STEP SIZE=$SIZE QUEUES=$QUEUES RATES=$RATES PAIR_RATE=$PAIR_RATE"
log "report: $OUT; raw metrics and logs: $WORK"
