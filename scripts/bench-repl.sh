#!/usr/bin/env bash
# bench-repl.sh: replication rows of `make bench-compare`: a rocketgo
# master/slave pair (bin/mqnamesrv + two bin/mqbroker) against the Apache
# RocketMQ 5.3.3 pair (conformance/scripts/javaserver.sh), same machine, same
# run, sessions alternating Java, ours (REPL_PAIRS pairs; the report holds
# medians). Both pairs: 127.0.0.1, ASYNC_FLUSH, SEGMENT-byte commit-log
# segments, SIZE-byte bodies, brokerIP1=brokerIP2=127.0.0.1 (Java's HA
# server itself binds every interface; it has no bind key), slaveReadEnable=true,
# totalReplicas=2, inSyncReplicas=2. The slave starts once the master's
# route is at the name server (a slave learns the master's HA address from
# its REGISTER_BROKER reply; registering first would cost it 30 s) and every
# step starts once the slave has reported the master's max offset
# (`mqbench hawait`). Writes bench/results-repl.md.
#
# Rows:
#   SYNC_MASTER send TPS   brokerRole=SYNC_MASTER: mqbench produce -mode sync
#                          (one request in flight per producer) at 1/16/64/256
#                          producers over min(N,8) connections, STEP each;
#                          a send returns once the slave has acknowledged it.
#   ASYNC_MASTER send TPS  the same at 64 producers with brokerRole=ASYNC_MASTER
#                          (the "SYNC ≥ 0.7× ASYNC" comparison; both sides).
#   Replication lag        ASYNC_MASTER, `mqbench repllag`: REPL_RATE msg/s
#                          paced sends to queue 0 of a one-queue topic on the
#                          master while GET_MAX_OFFSET of that queue is polled
#                          on the slave every REPL_POLL. Lag of the message at
#                          queue offset k = arrival of the first slave reply
#                          with maxOffset > k − arrival of the master's
#                          SEND_OK with queueOffset k (one monotonic clock).
#                          It covers master write → HA transfer → slave append
#                          → slave consume-queue dispatch, and no consumer
#                          (no pull is held); resolution: one poll interval
#                          plus one poll round trip; a message visible before
#                          its SEND_OK arrived counts 0. p50/p99/max over STEP.
#   Slave catch-up         ASYNC_MASTER: the slave, in sync, is stopped; the
#                          master takes CATCHUP_GB GiB (mqbench produce,
#                          FILL_SIZE-byte bodies); `sync`; the slave starts.
#                          `mqbench hawait -new` polls the master's
#                          GET_BROKER_HA_STATUS every 50 ms: transfer time
#                          = last sample without the slave's connection →
#                          first sample with its slaveAckOffset at the
#                          master's max offset (the slave's own start-up is
#                          not counted; "from exec" is also reported);
#                          MB/s = bytes / transfer time (1 MB = 10^6 bytes).
#   Raw disk               once per run, same filesystem as WORK: dd
#                          if=/dev/zero bs=1M count=CATCHUP_GB×1024
#                          conv=fdatasync (sequential write + one fdatasync),
#                          and the same without conv=fdatasync (page cache).
#
# Knobs (environment):
#   STEP=10s        length of each timed step
#   REPL_PAIRS=${PAIRS:-3} Java/ours pairs (medians over them)
#   SIZE=1024       message body bytes
#   QUEUES=8        queues of the send-TPS topic
#   SEGMENT=1073741824 mappedFileSizeCommitLog of all four brokers
#   REPL_RATE=10000 paced rate of the lag step (msg/s)
#   REPL_POLL=200us slave poll interval of the lag step
#   CATCHUP_GB=4    backlog the slave catches up (GiB); 0 skips catch-up and dd
#   FILL_SIZE=524288 body bytes of the backlog messages
#   SKIP_SYNC_MASTER=1 skip the SYNC_MASTER sessions
#   JAVA_REPL_HEAP="-Xms1g -Xmx1g -XX:MaxDirectMemorySize=1g" JVM flags of both
#                   Java brokers (bench-compare's "fitted" profile)
#   KEEP_STORE=1    keep the stores (default: deleted after each session)
#   OUT=bench/results-repl.md
#   WORK=<tmpdir>   data, logs and raw metrics (kept; printed at the end)
#   ONLY=ours|java  one side only (ratios then show n/a)
#   REPORT_ONLY=1   only rewrite OUT from WORK's metrics-repl.tsv (an earlier run)
#   REV=<rev>       revision named in the report (default: git rev-parse of the tree)
# One pair with the defaults takes about 8 minutes on 2 cores (the catch-up
# writes CATCHUP_GB GiB twice per side); STEP=3s REPL_PAIRS=1 CATCHUP_GB=1 is a
# smoke run of about 4.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
STEP="${STEP:-10s}"
REPL_PAIRS="${REPL_PAIRS:-${PAIRS:-3}}"
SIZE="${SIZE:-1024}"
QUEUES="${QUEUES:-8}"
SEGMENT="${SEGMENT:-1073741824}"
REPL_RATE="${REPL_RATE:-10000}"
REPL_POLL="${REPL_POLL:-200us}"
CATCHUP_GB="${CATCHUP_GB:-4}"
FILL_SIZE="${FILL_SIZE:-524288}"
SKIP_SYNC_MASTER="${SKIP_SYNC_MASTER:-}"
JAVA_REPL_HEAP="${JAVA_REPL_HEAP:--Xms1g -Xmx1g -XX:MaxDirectMemorySize=1g}"
KEEP_STORE="${KEEP_STORE:-}"
OUT="${OUT:-$root/bench/results-repl.md}"
WORK="${WORK:-$(mktemp -d /tmp/bench-repl.XXXXXX)}"
ONLY="${ONLY:-}"
REV="${REV:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
javaserver="$root/conformance/scripts/javaserver.sh"

# Below the ephemeral range; apart from bench-compare's ports. Each broker
# also uses PORT+1 (HA) and PORT-2 (VIP / fast port).
OURS_NS_PORT=22876 OURS_M_PORT=22911 OURS_S_PORT=22921
JAVA_NS_PORT=24876 JAVA_M_PORT=24911 JAVA_S_PORT=24921

bin="$WORK/bin"
metrics="$WORK/metrics-repl.tsv"
mkdir -p "$bin"
cd "$WORK" # nothing the script runs writes into the repository
if [ -z "${REPORT_ONLY:-}" ]; then : >"$metrics"; fi
clk_tck="$(getconf CLK_TCK)"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ -z "${REPORT_ONLY:-}" ]; then # up to the report
for port in $OURS_NS_PORT $OURS_M_PORT $((OURS_M_PORT + 1)) $OURS_S_PORT $((OURS_S_PORT + 1)) \
	$JAVA_NS_PORT $JAVA_M_PORT $((JAVA_M_PORT + 1)) $JAVA_S_PORT $((JAVA_S_PORT + 1)); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "bench-repl: 127.0.0.1:$port is already in use; stop whatever listens there" >&2
		exit 1
	fi
done

log "building into $bin"
(cd "$root" && go build -o "$bin/" ./cmd/mqnamesrv ./cmd/mqbroker ./cmd/mqbench ./cmd/mqadmin)
if [ "$ONLY" != ours ]; then "$javaserver" fetch; fi

# ---- server control -------------------------------------------------------

ns_port() { if [ "$1" = ours ]; then echo $OURS_NS_PORT; else echo $JAVA_NS_PORT; fi; }
ns_of() { echo "127.0.0.1:$(ns_port "$1")"; }
master_of() { if [ "$1" = ours ]; then echo 127.0.0.1:$OURS_M_PORT; else echo 127.0.0.1:$JAVA_M_PORT; fi; }
slave_of() { if [ "$1" = ours ]; then echo 127.0.0.1:$OURS_S_PORT; else echo 127.0.0.1:$JAVA_S_PORT; fi; }
pidfile() { echo "$WORK/$1.$2.pid"; } # side ns|master|slave

# broker_conf side role dir: the keys both implementations read.
broker_conf() {
	local side="$1" role="$2" id=0 port
	port="${3##*:}"
	if [ "$role" = SLAVE ]; then id=1; fi
	printf '%s\n' "brokerId=$id" "brokerRole=$role" "brokerIP2=127.0.0.1" "flushDiskType=ASYNC_FLUSH" \
		"mappedFileSizeCommitLog=$SEGMENT" "slaveReadEnable=true" "totalReplicas=2" "inSyncReplicas=2"
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
		# Later lines of broker.conf override javaserver.sh's defaults
		# (java.util.Properties keeps the last value of a key).
		JAVA_EXTRA_OPTS="$JAVA_REPL_HEAP" BROKER_EXTRA_CONF="$(broker_conf java "$role" "$addr" "$dir")" \
			"$javaserver" start-broker "$(ns_of java)" "${addr##*:}" "$dir" >/dev/null
		cp "$dir/broker.pid" "$(pidfile java "$which")"
	fi
}

wait_gone() { # pid
	local i
	for i in $(seq 1 300); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL -- "-$1" 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
}

stop_pid() { # pidfile
	[ -f "$1" ] || return 0
	local pid; pid="$(cat "$1")"
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	wait_gone "$pid"
	rm -f "$1"
}

stop_pair() { # side [dir]: slave, master, name server at once; drops the stores unless KEEP_STORE
	local w f pids=()
	for w in slave master ns; do
		f="$(pidfile "$1" "$w")"
		[ -f "$f" ] || continue
		pids+=("$(cat "$f")")
		kill -TERM -- "-$(cat "$f")" 2>/dev/null || kill -TERM "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	for w in "${pids[@]}"; do wait_gone "$w"; done
	if [ -n "${2:-}" ] && [ -z "$KEEP_STORE" ]; then rm -rf "$2"/*/store; fi
}

cleanup() {
	stop_pair ours 2>/dev/null || true
	stop_pair java 2>/dev/null || true
	rm -f "$WORK/dd.bin"
}
trap cleanup EXIT
trap "exit 130" INT TERM # run the EXIT trap on Ctrl-C / kill too

bench() { "$bin/mqbench" "$@" -quiet -json; }

rec() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$metrics"; log "  $1 pair $2: $3 = $4"; }

wait_route() { # side topic
	local i
	for i in $(seq 1 600); do
		if "$bin/mqadmin" topicRoute -n "$(ns_of "$1")" -t "$2" -timeout 2s >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	log "no route for $2 at $(ns_of "$1")"; return 1
}

wait_broker() { # addr: until it answers a request (bounded, 180 s)
	local i
	for i in $(seq 1 1800); do
		if "$bin/mqadmin" brokerStatus -b "$1" -timeout 2s >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	log "broker $1 does not answer"; return 1
}

create_topic() { # side topic queues (on the master; a loaded JVM can take more than one 10 s try)
	local try
	for try in 1 2 3; do
		if "$bin/mqadmin" updateTopic -n "$(ns_of "$1")" -b "$(master_of "$1")" -t "$2" -r "$3" -w "$3" -timeout 20s >/dev/null; then
			return 0
		fi
	done
	return 1
}

# in_sync side: until the slave has acknowledged the master's max offset;
# prints that offset.
in_sync() {
	bench hawait -m "$(master_of "$1")" -timeout 120s | jq -r '.target'
}

commitlog_max() { # addr → commitLogMaxOffset (empty if it does not answer in 10 s)
	local i v
	for i in $(seq 1 20); do
		v="$("$bin/mqadmin" brokerStatus -b "$1" -timeout 2s 2>/dev/null |
			awk -F: '$1 ~ /^commitLogMaxOffset/ { gsub(/ /, "", $2); print $2 }' || true)"
		if [ -n "$v" ]; then echo "$v"; return 0; fi
		sleep 0.5
	done
}

# start_pair side role dir: name server, master, topics, then the slave; in sync.
start_pair() {
	local side="$1" role="$2" dir="$3"
	start_ns "$side" "$dir/ns"
	start_broker "$side" master "$role" "$dir/master"
	wait_broker "$(master_of "$side")"
	create_topic "$side" BenchTopic "$QUEUES"
	create_topic "$side" BenchLag 1
	wait_route "$side" BenchTopic
	wait_route "$side" BenchLag
	start_broker "$side" slave SLAVE "$dir/slave"
	wait_broker "$(slave_of "$side")"
	in_sync "$side" >/dev/null
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

warmup() { # side: one unrecorded step of async load (JIT, page cache, pools)
	bench produce -n "$(ns_of "$1")" -t BenchTopic -mode async -threads 8 -conns 4 -inflight 16 \
		-size "$SIZE" -duration "$STEP" >/dev/null || true
}

# send_step side pair prefix threads: one closed-loop sync-send step; the
# 64-producer step also records master+slave CPU per message.
send_step() {
	local side="$1" pair="$2" p="$3" t="$4" j mp sp m0 s0 m1 s1
	mp="$(cat "$(pidfile "$side" master)")" sp="$(cat "$(pidfile "$side" slave)")"
	m0="$(cpu_ticks "$mp")" s0="$(cpu_ticks "$sp")"
	j="$(bench produce -n "$(ns_of "$side")" -t BenchTopic -mode sync -threads "$t" -conns "$(( t < 8 ? t : 8 ))" \
		-size "$SIZE" -duration "$STEP")"
	m1="$(cpu_ticks "$mp")" s1="$(cpu_ticks "$sp")"
	rec "$side" "$pair" loadavg "$(cut -d' ' -f1 /proc/loadavg)" # other work on the machine shows here
	rec "$side" "$pair" "${p}_tps_$t" "$(jq -r '.tps' <<<"$j")"
	rec "$side" "$pair" "${p}_p99_ms_$t" "$(jq -r '.latencyMs.p99' <<<"$j")"
	rec "$side" "$pair" "${p}_errors_$t" "$(jq -r '.errorTotal' <<<"$j")"
	if [ "$(jq -r '.errorTotal' <<<"$j")" != 0 ]; then rec "$side" "$pair" "${p}_error_codes_$t" "$(jq -c '.errors' <<<"$j")"; fi
	if [ "$t" = 64 ]; then
		local n; n="$(jq -r '.messages' <<<"$j")"
		per_msg() { awk -v d="$1" -v hz="$clk_tck" -v n="$n" 'BEGIN { printf "%.2f", (n > 0 ? d * 1e6 / hz / n : 0) }'; }
		rec "$side" "$pair" "${p}_cpu_us_per_msg" "$(per_msg $((m1 - m0 + s1 - s0)))"
		rec "$side" "$pair" "${p}_cpu_master_us_per_msg" "$(per_msg $((m1 - m0)))"
		rec "$side" "$pair" "${p}_cpu_slave_us_per_msg" "$(per_msg $((s1 - s0)))"
	fi
}

# ---- sessions -----------------------------------------------------------------

session_sync() { # side pair
	local side="$1" pair="$2" dir="$WORK/$1.$2.sync" t
	log "$side pair $pair: SYNC_MASTER session"
	start_pair "$side" SYNC_MASTER "$dir"
	warmup "$side"
	for t in 1 16 64 256; do send_step "$side" "$pair" sm "$t"; done
	stop_pair "$side" "$dir"
}

session_async() { # side pair
	local side="$1" pair="$2" dir="$WORK/$1.$2.async" j
	log "$side pair $pair: ASYNC_MASTER session"
	start_pair "$side" ASYNC_MASTER "$dir"
	warmup "$side"
	send_step "$side" "$pair" am 64

	in_sync "$side" >/dev/null
	j="$(bench repllag -m "$(master_of "$side")" -s "$(slave_of "$side")" -t BenchLag -rate "$REPL_RATE" \
		-poll "$REPL_POLL" -size "$SIZE" -duration "$STEP")"
	printf '%s\n' "$j" >"$WORK/$side.$pair.repllag.json"
	rec "$side" "$pair" lag_p50_ms "$(jq -r '.lagMs.p50' <<<"$j")"
	rec "$side" "$pair" lag_p99_ms "$(jq -r '.lagMs.p99' <<<"$j")"
	rec "$side" "$pair" lag_max_ms "$(jq -r '.lagMs.max' <<<"$j")"
	rec "$side" "$pair" lag_ack_p99_ms "$(jq -r '.ackMs.p99' <<<"$j")"
	rec "$side" "$pair" lag_acked "$(jq -r '.acked' <<<"$j")"
	rec "$side" "$pair" lag_missing "$(jq -r '.missing' <<<"$j")"
	rec "$side" "$pair" lag_before_ack "$(jq -r '.beforeAck' <<<"$j")"
	rec "$side" "$pair" lag_poll_us "$(jq -r '.pollUs' <<<"$j")"
	rec "$side" "$pair" lag_errors "$(jq -r '.errorTotal' <<<"$j")"
	if [ "$(jq -r '.errorTotal' <<<"$j")" != 0 ]; then rec "$side" "$pair" lag_error_codes "$(jq -c '.errors' <<<"$j")"; fi

	if [ "$CATCHUP_GB" != 0 ]; then catchup "$side" "$pair" "$dir"; fi
	stop_pair "$side" "$dir"
}

# catchup side pair dir: stop the slave in sync, give the master CATCHUP_GB
# GiB, sync, start the slave, time it to the master's offset.
catchup() {
	local side="$1" pair="$2" dir="$3" base m target have need try t0 t1 j
	m="$(master_of "$side")"
	base="$(in_sync "$side")"
	stop_pid "$(pidfile "$side" slave)"
	create_topic "$side" BenchFill 4
	target=$(( base + CATCHUP_GB * 1073741824 ))
	t0="$(date +%s%N)"
	for try in 1 2 3; do # again for sends the broker refused (SYSTEM_BUSY)
		have="$(commitlog_max "$m")"
		need=$(( target - ${have:-0} ))
		if [ "$need" -le 0 ]; then break; fi
		bench produce -b "$m" -t BenchFill -queues 4 -mode async -threads 4 -conns 2 -inflight 4 \
			-size "$FILL_SIZE" -count "$(( need / FILL_SIZE + 1 ))" -duration 900s >>"$WORK/$side.$pair.fill.json"
	done
	t1="$(date +%s%N)"
	have="$(commitlog_max "$m")"
	rec "$side" "$pair" catchup_fill_mbps "$(awk -v b="$(( ${have:-0} - base ))" -v ns="$((t1 - t0))" 'BEGIN { printf "%.1f", b / (ns / 1e9) / 1e6 }')"
	t0="$(date +%s%N)"
	sync
	rec "$side" "$pair" catchup_sync_s "$(awk -v ns="$(( $(date +%s%N) - t0 ))" 'BEGIN { printf "%.2f", ns / 1e9 }')"
	local mp c0 c1; mp="$(cat "$(pidfile "$side" master)")" c0="$(cpu_ticks "$mp")"
	local ready="$WORK/$side.$pair.hawait.ready" i; rm -f "$ready"
	bench hawait -m "$m" -new -base "$base" -timeout 900s -ready "$ready" >"$WORK/$side.$pair.catchup.json" &
	local wpid=$!
	for i in $(seq 1 300); do # its first sample (the connections without the slave) precedes the slave
		if [ -e "$ready" ] || ! kill -0 "$wpid" 2>/dev/null; then break; fi
		sleep 0.05
	done
	start_broker "$side" slave SLAVE "$dir/slave"
	if ! wait "$wpid"; then log "  catch-up did not finish"; return 0; fi
	c1=$(( $(cpu_ticks "$mp") - c0 + $(cpu_ticks "$(cat "$(pidfile "$side" slave)")") ))
	j="$(cat "$WORK/$side.$pair.catchup.json")"
	# CPU of both brokers from the slave's exec to in sync (start-up included).
	rec "$side" "$pair" catchup_cpu_cores "$(awk -v t="$c1" -v hz="$clk_tck" -v s="$(jq -r '.doneMs / 1000' <<<"$j")" 'BEGIN { printf "%.2f", (s > 0 ? t / hz / s : 0) }')"
	rec "$side" "$pair" catchup_mib "$(( $(jq -r '.bytes' <<<"$j") / 1048576 ))"
	rec "$side" "$pair" catchup_mbps "$(jq -r '.mbps' <<<"$j")"
	rec "$side" "$pair" catchup_transfer_s "$(jq -r '.transferSec' <<<"$j")"
	rec "$side" "$pair" catchup_from_exec_s "$(jq -r '.doneMs / 1000' <<<"$j")"
	rec "$side" "$pair" catchup_master_moved "$(jq -r '.masterMoved' <<<"$j")"
}

# raw_disk: dd on WORK's filesystem, with and without a final fdatasync.
raw_disk() {
	local out
	out="$(LC_ALL=C dd if=/dev/zero of="$WORK/dd.bin" bs=1M count=$((CATCHUP_GB * 1024)) conv=fdatasync 2>&1 | tail -n 1)"
	rec disk 0 dd_fdatasync_mbps "$(awk '{ printf "%.1f", $1 / $(NF - 3) / 1e6 }' <<<"$out")"
	rm -f "$WORK/dd.bin"
	sync
	out="$(LC_ALL=C dd if=/dev/zero of="$WORK/dd.bin" bs=1M count=$((CATCHUP_GB * 1024)) 2>&1 | tail -n 1)"
	rec disk 0 dd_pagecache_mbps "$(awk '{ printf "%.1f", $1 / $(NF - 3) / 1e6 }' <<<"$out")"
	rm -f "$WORK/dd.bin"
	sync
}

sides=(java ours)
case "$ONLY" in
ours) sides=(ours) ;;
java) sides=(java) ;;
esac

started="$(date -u +%Y-%m-%dT%H:%M:%SZ)" started_s="$(date +%s)"
if [ "$CATCHUP_GB" != 0 ]; then raw_disk; fi
# run_session kind side pair: a session that fails (a broker that never
# answers, a step whose tool errs) is logged, its servers stopped, and the run
# goes on; its rows show n/a. (In the background so that set -e still stops
# the session at its first failure.)
run_session() {
	"session_$1" "$2" "$3" &
	if ! wait $!; then
		log "$2 pair $3: $1 session failed; its rows are missing"
		stop_pair "$2" "$WORK/$2.$3.$1"
	fi
}
for pair in $(seq 1 "$REPL_PAIRS"); do
	if [ -z "$SKIP_SYNC_MASTER" ]; then
		for side in "${sides[@]}"; do run_session sync "$side" "$pair"; done
	fi
	for side in "${sides[@]}"; do run_session async "$side" "$pair"; done
done
minutes=$(( ($(date +%s) - started_s + 30) / 60 ))
printf '%s\t%s\n' "$started" "$minutes" >"$WORK/run-info"
fi # REPORT_ONLY
IFS=$'\t' read -r started minutes <"$WORK/run-info"

# ---- report -------------------------------------------------------------------

# med side metric → median over the pairs (empty if none)
med() {
	awk -F'\t' -v s="$1" -v m="$2" '$1 == s && $3 == m && $4 != "" && $4 != "null" { print $4 }' "$metrics" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%s", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
fmt() { # value unit
	if [ -z "$1" ]; then echo n/a; return; fi
	case "$2" in
	msg/s | msg | MiB) awk -v v="$1" 'BEGIN { s = sprintf("%d", v + 0.5); o = ""
		while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
		print s o }' ;;
	MB/s) awk -v v="$1" 'BEGIN { printf "%.0f", v }' ;;
	*) awk -v v="$1" 'BEGIN { printf "%.2f", v }' ;;
	esac
}
ratio() { if [ -z "$1" ] || [ -z "$2" ] || [ "$(awk -v j="$2" 'BEGIN { print (j == 0) }')" = 1 ]; then echo n/a; else awk -v o="$1" -v j="$2" 'BEGIN { printf "%.2f", o / j }'; fi; }
cnt() { awk -F'\t' -v s="$1" -v m="$2" '$1 == s && $3 == m && $4 != "" && $4 != "null" { n++ } END { print n + 0 }' "$metrics"; }
cell() { # side metric unit: the median, marked † when fewer pairs than REPL_PAIRS gave it
	local v n; v="$(med "$1" "$2")" n="$(cnt "$1" "$2")"
	printf '%s' "$(fmt "$v" "$3")"
	if [ -n "$v" ] && [ "$n" -lt "$REPL_PAIRS" ]; then printf '†'; fi
}
# short: some side/metric has fewer values than pairs (error codes appear only with errors)
short="$(awk -F'\t' -v p="$REPL_PAIRS" '$1 != "disk" && $3 !~ /_error_codes_/ { n[$1 SUBSEP $3]++ } END { for (k in n) if (n[k] < p) { print 1; exit } }' "$metrics")"
row() { # label unit metric better
	local o j; o="$(med ours "$3")" j="$(med java "$3")"
	printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$(cell ours "$3" "$2")" "$(cell java "$3" "$2")" "$(ratio "$o" "$j")" "$4"
}
errsum() { # side → "N (CODE×n …)" over every send step and the lag step of every pair
	awk -F'\t' -v s="$1" '$1 == s && $3 ~ /_errors(_[0-9]+)?$/ { n += $4 }
		$1 == s && $3 ~ /_error_codes/ { gsub(/[{}"]/, "", $4); k = split($4, kv, ","); for (i = 1; i <= k; i++) { split(kv[i], p, ":"); c[p[1]] += p[2] } }
		END { printf "%d", n; sep = " ("; for (x in c) { printf "%s%s×%d", sep, x, c[x]; sep = " " } if (sep == " ") printf ")" }' "$metrics"
}

mkdir -p "$(dirname "$OUT")"
{
	echo "# Replication: rocketgo master/slave vs Apache RocketMQ 5.3.3 master/slave"
	echo
	echo "Generated by \`scripts/bench-repl.sh\` (started $started, $minutes min, rev $REV). Medians over $REPL_PAIRS alternating Java/ours pair(s); $STEP per step, $SIZE-byte bodies, ASYNC_FLUSH, commit-log segments of $SEGMENT bytes, \`totalReplicas=2 inSyncReplicas=2 slaveReadEnable=true\` on all four brokers; everything on 127.0.0.1 of one machine ($(nproc) cores). Java brokers: \`$JAVA_REPL_HEAP\`."
	echo
	echo "| metric | unit | ours | Java | ours/Java | better |"
	echo "|---|---|---:|---:|---:|---|"
	if [ -z "$SKIP_SYNC_MASTER" ]; then
		for t in 1 16 64 256; do row "SYNC_MASTER send TPS, $t producer$([ $t = 1 ] || echo s)" msg/s "sm_tps_$t" higher; done
	fi
	row "ASYNC_MASTER send TPS, 64 producers" msg/s am_tps_64 higher
	if [ -z "$SKIP_SYNC_MASTER" ]; then
		for s in ours java; do
			printf -v "sa_$s" '%s' "$(ratio "$(med $s sm_tps_64)" "$(med $s am_tps_64)")"
		done
		printf '| SYNC_MASTER ÷ ASYNC_MASTER send TPS at 64 producers | × | %s | %s | | higher |\n' "$sa_ours" "$sa_java"
		row "SYNC_MASTER send p99, 64 producers" ms sm_p99_ms_64 lower
		row "Master + slave CPU per message, SYNC_MASTER, 64 producers" µs sm_cpu_us_per_msg lower
		row "… of which the master" µs sm_cpu_master_us_per_msg lower
		row "… of which the slave" µs sm_cpu_slave_us_per_msg lower
	fi
	row "Master + slave CPU per message, ASYNC_MASTER, 64 producers" µs am_cpu_us_per_msg lower
	row "… of which the master" µs am_cpu_master_us_per_msg lower
	row "… of which the slave" µs am_cpu_slave_us_per_msg lower
	row "Replication lag p50 at $REPL_RATE msg/s (ASYNC_MASTER)" ms lag_p50_ms lower
	row "Replication lag p99 at $REPL_RATE msg/s (ASYNC_MASTER)" ms lag_p99_ms lower
	row "Replication lag max at $REPL_RATE msg/s (ASYNC_MASTER)" ms lag_max_ms lower
	row "Master send p99 during the lag step" ms lag_ack_p99_ms lower
	row "Lag step: messages acknowledged" msg lag_acked ""
	row "Lag step: acknowledged but not on the slave at the end" msg lag_missing lower
	row "Lag step: mean slave poll interval" µs lag_poll_us ""
	row "Machine load at the end of each send step (1-min loadavg, median)" "" loadavg ""
	printf '| Send errors, all steps of all pairs | msg | %s | %s | | lower |\n' "$(errsum ours)" "$(errsum java)"
	if [ "$CATCHUP_GB" != 0 ]; then
		row "Slave catch-up from a $CATCHUP_GB GiB backlog" MB/s catchup_mbps higher
		row "Slave catch-up: transfer time" s catchup_transfer_s lower
		row "Slave catch-up: slave exec to in sync" s catchup_from_exec_s lower
		row "Slave catch-up: master + slave CPU, slave exec to in sync" cores catchup_cpu_cores lower
		row "Backlog written to the master (slave down)" MB/s catchup_fill_mbps higher
		printf '| Raw disk: dd bs=1M count=%s conv=fdatasync (sequential write + fdatasync) | MB/s | %s | | | |\n' "$((CATCHUP_GB * 1024))" "$(fmt "$(med disk dd_fdatasync_mbps)" MB/s)"
		printf '| Raw disk: the same dd without fdatasync (page cache) | MB/s | %s | | | |\n' "$(fmt "$(med disk dd_pagecache_mbps)" MB/s)"
	fi
	echo
	echo "Definitions. Send TPS: \`mqbench produce -n NS -t BenchTopic -mode sync -threads N -conns min(N,8) -size $SIZE -duration $STEP\` ($QUEUES queues; one request in flight per producer; a SYNC_MASTER send returns once the slave has acknowledged it). CPU: utime+stime of the master and slave processes over the 64-producer step, per message. Lag: \`mqbench repllag -rate $REPL_RATE -poll $REPL_POLL -senders 32 -conns 4\` on a one-queue topic: per message, the arrival of the first slave GET_MAX_OFFSET reply showing its queue offset minus the arrival of the master's SEND_OK (one monotonic clock; no consumer, no held pull; resolution one poll interval plus one poll round trip; a message the slave showed before its SEND_OK arrived counts 0)."
	if [ "$CATCHUP_GB" != 0 ]; then
		echo
		echo "Catch-up: the in-sync slave stops, the master takes $CATCHUP_GB GiB of $FILL_SIZE-byte messages (\`mqbench produce -b MASTER -mode async -threads 4 -conns 2 -inflight 4\`: the 'written to the master' row), \`sync\`, the slave starts; \`mqbench hawait -new\` samples the master's GET_BROKER_HA_STATUS every 50 ms; transfer time runs from the last sample without the slave's HA connection to the first with its slaveAckOffset at the master's max offset (the slave's start-up excluded; 'exec to in sync' includes it); 1 MB = 10^6 bytes; CPU = utime+stime of both brokers from the slave's exec to in sync over that time. Raw disk: dd on the filesystem of the work directory, once per run."
	fi
	echo
	if [ -n "$short" ]; then echo "† median of fewer than $REPL_PAIRS pairs: a session failed (the run's log says which and why)."; echo; fi
	echo "Raw per-run values: metrics-repl.tsv in the work directory."
} >"$OUT"
log "wrote $OUT (raw metrics and logs in $WORK)"
