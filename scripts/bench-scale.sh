#!/usr/bin/env bash
# bench-scale.sh: how costs grow, rocketgo against the Apache RocketMQ 5.3.3
# name server + broker (conformance/scripts/javaserver.sh) in one run, each
# point Java first, then ours, on fresh servers (ours: cmd/mqnamesrv and
# cmd/mqbroker, two processes as Java's; both brokers get the same
# broker.conf). Everything listens on 127.0.0.1; every load is bounded
# (cmd/mqbench scale modes); every process started is stopped.
#
# Curves (each a table in OUT and an SVG plot beside it):
#   topics    N topics x 8 queues in topics.json at start: REGISTER_BROKER
#             body bytes and name-server reply time (a relay between broker and
#             name server logs them), broker start (exec -> first SEND_OK),
#             route-query latency, broker RSS, UPDATE_AND_CREATE_TOPIC latency
#             (it rewrites topics.json before answering) and topics.json write
#             time seen with inotify
#   idle      N idle clients (one connection each, producer + consumer in
#             groups of 10) heartbeating every 5 s: RSS per client, CPU per
#             heartbeat
#   hold      N held long-polling pulls: RSS per pull, wake latency (one message
#             per queue -> every held pull of that queue answered)
#   offsets   G consumer groups x 8 queues committing every second: CPU per
#             commit, consumerOffset.json write time (inotify) and size
#   restart   kill -9 with S GiB of commit log, then exec -> first SEND_OK. The
#             log is filled with zero-body messages and each finished segment
#             is made sparse (fallocate --dig-holes: only all-zero blocks, so the
#             content is unchanged), so 64 GiB needs a few hundred MiB of disk
#   twogroup  (not in the default CURVES: CURVES=twogroup, root) two broker sets
#             x 3 replicas under 3 controllers in the failover suite's network
#             namespaces (conformance/failover TestTwoGroup), Java's 5.3.3
#             controllers + name server + brokers, then ours, in one go test
#             run: a Go client load on a topic of each set, kill -9 of set A's
#             master; send TPS, p50/p99 and errors of each set before, during
#             (kill -> A's load acknowledged again) and after, CPU of each set's
#             brokers (~8 minutes)
#
# A mode that fails (a server that does not answer in time) leaves its rows
# n/a; the run goes on.
#
# Knobs (environment):
#   TOPICS="1000 10000 50000"  CLIENTS="1000 5000 10000"  PULLS="1000 10000"
#   CONSUMER_GROUPS=1000  RESTART_GB="4 16 64"  QUEUES=8  SEGMENT=1073741824
#   CURVES="topics idle hold offsets restart"  the curves to run (add twogroup
#                  for the two-group failover row; CURVES=twogroup alone)
#   QUICK=1        reduced sizes (TOPICS="500 2000 5000" CLIENTS="200 500 1000"
#                  PULLS="200 1000" CONSUMER_GROUPS=200 RESTART_GB="1 2 4") unless set
#   WINDOW=20s     measured window of idle and offsets
#   ONLY=ours|java one side only
#   TWOGROUP_NETNS_PREFIX=rgtg- TWOGROUP_SUBNET=10.79  namespaces of twogroup
#   DISK_MAX_PCT=65 stop a fill when the file system is fuller than this
#   OUT=bench/results-scale.md  PLOTS=bench (scale-*.svg)  WORK=<tmpdir>
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${QUICK:-}" ]; then
	TOPICS="${TOPICS:-500 2000 5000}" CLIENTS="${CLIENTS:-200 500 1000}" PULLS="${PULLS:-200 1000}"
	CONSUMER_GROUPS="${CONSUMER_GROUPS:-200}" RESTART_GB="${RESTART_GB:-1 2 4}"
fi
TOPICS="${TOPICS:-1000 10000 50000}"
CLIENTS="${CLIENTS:-1000 5000 10000}"
PULLS="${PULLS:-1000 10000}"
CONSUMER_GROUPS="${CONSUMER_GROUPS:-1000}"
RESTART_GB="${RESTART_GB:-4 16 64}"
QUEUES="${QUEUES:-8}"
SEGMENT="${SEGMENT:-1073741824}"
CURVES="${CURVES:-topics idle hold offsets restart}"
WINDOW="${WINDOW:-20s}"
ONLY="${ONLY:-}"
DISK_MAX_PCT="${DISK_MAX_PCT:-65}"
OUT="${OUT:-$root/bench/results-scale.md}"
PLOTS="${PLOTS:-$root/bench}"
WORK="${WORK:-$(mktemp -d /tmp/bench-scale.XXXXXX)}"
javaserver="$root/conformance/scripts/javaserver.sh"
HEAP_FITTED="-Xms1g -Xmx1g -XX:MaxDirectMemorySize=1g"

# Ports below the ephemeral range; not bench-compare's, so both can coexist.
OURS_NS_PORT=22876 OURS_BROKER_PORT=22911 OURS_RELAY=127.0.0.1:22877
JAVA_NS_PORT=24876 JAVA_BROKER_PORT=24911 JAVA_RELAY=127.0.0.1:24877 # Java also takes 24909, 24912

bin="$WORK/bin"
metrics="$WORK/metrics.tsv"
mkdir -p "$bin"
cd "$WORK"
: >"$metrics"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

for port in $OURS_NS_PORT $OURS_BROKER_PORT 22877 $JAVA_NS_PORT $JAVA_BROKER_PORT 24877 24909 24912; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "bench-scale: 127.0.0.1:$port is in use" >&2
		exit 1
	fi
done

log "building into $bin"
(cd "$root" && go build -o "$bin/" ./cmd/mqnamesrv ./cmd/mqbroker ./cmd/mqbench ./cmd/mqadmin)
if [ "$ONLY" != ours ]; then "$javaserver" fetch; fi

ns_port() { if [ "$1" = ours ]; then echo $OURS_NS_PORT; else echo $JAVA_NS_PORT; fi; }
broker_port() { if [ "$1" = ours ]; then echo $OURS_BROKER_PORT; else echo $JAVA_BROKER_PORT; fi; }
relay_of() { if [ "$1" = ours ]; then echo $OURS_RELAY; else echo $JAVA_RELAY; fi; }
ns_of() { echo "127.0.0.1:$(ns_port "$1")"; }
broker_of() { echo "127.0.0.1:$(broker_port "$1")"; }
bpid() { cat "$WORK/$1.broker.pid"; }
store_of() { if [ "$1" = ours ]; then echo "$2/store"; else echo "$2/br/store"; fi; }

wait_gone() {
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
stop_all() { # side
	stop_pid "$WORK/$1.broker.pid"
	stop_pid "$WORK/$1.relay.pid"
	stop_pid "$WORK/$1.ns.pid"
}
cleanup() { stop_all ours 2>/dev/null || true; stop_all java 2>/dev/null || true; }
trap cleanup EXIT
trap "exit 130" INT TERM

broker_conf() { # side dir nsaddr → the lines both brokers get
	local side="$1" dir="$2" ns="$3" store; store="$(store_of "$side" "$dir")"
	printf '%s\n' "brokerClusterName=DefaultCluster" "brokerName=broker-a" "brokerId=0" "brokerRole=ASYNC_MASTER" \
		"flushDiskType=ASYNC_FLUSH" "namesrvAddr=$ns" "brokerIP1=127.0.0.1" "listenPort=$(broker_port "$side")" \
		"bindAddress=127.0.0.1" "haListenPort=$(( $(broker_port "$side") + 1 ))" "storePathRootDir=$store" \
		"storePathCommitLog=$store/commitlog" "mappedFileSizeCommitLog=$SEGMENT" "autoCreateTopicEnable=true" \
		"autoCreateSubscriptionGroup=true" "diskMaxUsedSpaceRatio=95" "diskSpaceCleanForciblyRatio=95" \
		"diskSpaceWarningLevelRatio=95" "cleanFileForciblyEnable=false"
	# The shared disk's reserved blocks put its used ratio (size - available)
	# near 80-85 %, past the defaults (75 % delete expired, 85 % delete
	# forcibly) at which both brokers drop commit-log segments early; the
	# restart curve needs them kept. The fill stops at DISK_MAX_PCT instead.
}

start_ns() { # side dir
	local side="$1" dir="$2"
	mkdir -p "$dir"
	if [ "$side" = ours ]; then
		printf 'listenPort=%s\nbindAddress=127.0.0.1\n' "$OURS_NS_PORT" >"$dir/namesrv.conf"
		setsid "$bin/mqnamesrv" -c "$dir/namesrv.conf" >>"$dir/namesrv.log" 2>&1 </dev/null &
		echo $! >"$WORK/ours.ns.pid"
	else
		JAVA_EXTRA_OPTS="" "$javaserver" start-namesrv "$JAVA_NS_PORT" "$dir/ns" >/dev/null
		cp "$dir/ns/namesrv.pid" "$WORK/java.ns.pid"
	fi
	wait_port "$(ns_port "$side")"
}

start_relay() { # side dir: broker -> relay -> name server
	local side="$1" dir="$2"
	setsid "$bin/mqbench" scale regproxy -listen "$(relay_of "$side")" -target "$(ns_of "$side")" \
		-log "$dir/registrations.jsonl" -duration 60m >"$dir/relay.json" 2>>"$dir/relay.log" </dev/null &
	echo $! >"$WORK/$side.relay.pid"
	wait_port "$(relay_of "$side" | cut -d: -f2)"
}

start_broker() { # side dir (the name server and relay are running)
	local side="$1" dir="$2"
	if [ "$side" = ours ]; then
		{ broker_conf ours "$dir" "$(relay_of ours)"; echo "listenIP=127.0.0.1"; } >"$dir/broker.conf"
		setsid "$bin/mqbroker" -c "$dir/broker.conf" -n "$(relay_of ours)" >>"$dir/broker.log" 2>&1 </dev/null &
		echo $! >"$WORK/ours.broker.pid"
		disown
	else
		JAVA_EXTRA_OPTS="$HEAP_FITTED" BROKER_EXTRA_CONF="$(broker_conf java "$dir" "$(relay_of java)")" \
			"$javaserver" start-broker "$(relay_of java)" "$JAVA_BROKER_PORT" "$dir/br" >/dev/null
		cp "$dir/br/broker.pid" "$WORK/java.broker.pid"
	fi
}

wait_port() { # port (a JVM on this shared machine can take minutes to listen)
	local i
	for i in $(seq 1 3600); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	log "port $1 never opened"; return 1
}

now_ns() { date +%s%N; }

# first_send side topic t0: one-message sends until SEND_OK; ms since t0.
first_send() {
	local deadline=$(( $(date +%s) + 300 )) n
	while [ "$(date +%s)" -lt "$deadline" ]; do
		n="$("$bin/mqbench" produce -b "$(broker_of "$1")" -t "$2" -queues 1 -count 1 -mode sync -threads 1 -conns 1 \
			-size 64 -timeout 2s -duration 5s -quiet -json 2>/dev/null | jq -r '.messages' 2>/dev/null || true)"
		if [ "$n" = 1 ]; then echo $(( ($(now_ns) - $3) / 1000000 )); return 0; fi
		sleep 0.05
	done
	echo nan
}

rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$metrics"; log "  $1 $2 $3 $4 = $5"; }
rss_kb() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status"; }

# java_heap_kb pid: heap in use after a full GC (jcmd), kB; "" for ours.
java_heap_kb() {
	jcmd "$1" GC.run >/dev/null 2>&1 || return 0
	jcmd "$1" GC.heap_info 2>/dev/null | awk '/garbage-first heap/ { for (i = 1; i <= NF; i++) if ($i == "used") { v = $(i + 1); sub(/K,?/, "", v); print v; exit } }'
}

mqadm() { "$bin/mqadmin" "$@"; }
create_topic() { # side topic queues
	mqadm updateTopic -n "$(ns_of "$1")" -b "$(broker_of "$1")" -t "$2" -r "$3" -w "$3" >/dev/null
}

# open side dir [topics]: name server, relay, broker (with N topics in
# topics.json); records start time and registration.
open_servers() {
	local side="$1" dir="$2" topics="${3:-0}" store
	rm -rf "$dir"; mkdir -p "$dir"
	store="$(store_of "$side" "$dir")"
	if [ "$topics" -gt 0 ]; then
		"$bin/mqbench" scale topicsjson -out "$store/config/topics.json" -topics "$topics" -queues "$QUEUES" >"$dir/topicsjson.json"
	fi
	start_ns "$side" "$dir"
	start_relay "$side" "$dir"
	START_T0="$(now_ns)"
	start_broker "$side" "$dir"
}

close_servers() { # side dir
	stop_all "$1"
	rm -rf "$2/store" "$2/br/store"
}

# ---- curves -------------------------------------------------------------------

# curve_twogroup: both kinds in one TestTwoGroup run (it starts, stops and
# removes its namespaces and processes; its metrics lines go to $metrics).
curve_twogroup() {
	local dir="$WORK/twogroup" kinds="java,ours"
	case "$ONLY" in ours) kinds=ours ;; java) kinds=java ;; esac
	log "twogroup: $kinds (load $(loadavg))"
	mkdir -p "$dir"
	# Its own namespace prefix and subnet: a fault suite (rgfo-, 10.77) may run beside it.
	(cd "$root/conformance" && CONFORMANCE_TWOGROUP=1 TWOGROUP_KIND="$kinds" TWOGROUP_DIR="$dir" \
		FAILOVER_NETNS_PREFIX="${TWOGROUP_NETNS_PREFIX:-rgtg-}" FAILOVER_SUBNET="${TWOGROUP_SUBNET:-10.79}" \
		TWOGROUP_METRICS="$metrics" go test -count=1 -v -timeout 50m -run '^TestTwoGroup$' ./failover/) \
		>"$dir/test.log" 2>&1 || log "twogroup: TestTwoGroup failed or skipped (see $dir/test.log)"
	grep -E 'killed|broker-[ab] ' "$dir/test.log" >&2 || true
	find "$dir" -type d -name store -prune -exec rm -rf {} + # logs stay, stores go
}

curve_topics() { # side n
	local side="$1" n="$2" dir="$WORK/$1.topics.$2" pid
	log "$side: topics $n (load $(loadavg))"
	open_servers "$side" "$dir" "$n"
	rec topics "$n" "$side" start_ms "$(first_send "$side" ScaleT000000 "$START_T0")"
	pid="$(bpid "$side")"
	# The first registration carrying every topic: its body and reply time,
	# and when (after exec) it was answered.
	local i reg=""
	for i in $(seq 1 900); do
		reg="$(jq -c "select(.bodyBytes > $((n * 100)) and .code == 0)" "$dir/registrations.jsonl" 2>/dev/null | head -n 1 || true)"
		if [ -n "$reg" ]; then break; fi
		sleep 0.1
	done
	if [ -n "$reg" ]; then
		rec topics "$n" "$side" reg_body_kb "$(jq -r '.bodyBytes / 1024 | floor' <<<"$reg")"
		rec topics "$n" "$side" reg_reply_ms "$(jq -r '.replyMs' <<<"$reg")"
		rec topics "$n" "$side" reg_done_ms "$(( $(jq -r '.atUnixMs' <<<"$reg") - START_T0 / 1000000 ))"
		rec topics "$n" "$side" reg_compressed "$(jq -r '.compressed' <<<"$reg")"
	fi
	local r; r="$("$bin/mqbench" scale routes -n "$(ns_of "$side")" -topics "$n" -count 500 || true)"
	rec topics "$n" "$side" route_p50_ms "$(jq -r '.latencyMs.p50' <<<"$r")"
	rec topics "$n" "$side" route_p99_ms "$(jq -r '.latencyMs.p99' <<<"$r")"
	rec topics "$n" "$side" route_missing "$(jq -r '.missing + .failed' <<<"$r")"
	sleep 2
	rec topics "$n" "$side" rss_mb "$(( $(rss_kb "$pid") / 1024 ))"
	if [ "$side" = java ]; then rec topics "$n" "$side" java_heap_mb "$(( $(java_heap_kb "$pid" || echo 0) / 1024 ))"; fi
	# 20 creates, each rewriting topics.json (N + i topics); inotify times the file writes.
	"$bin/mqbench" scale watch -dir "$(store_of "$side" "$dir")/config" -file topics.json -duration 15s >"$dir/watch.json" &
	local wpid=$!
	sleep 0.5
	r="$("$bin/mqbench" scale mktopics -b "$(broker_of "$side")" -count 20 -queues "$QUEUES" -duration 14s || true)"
	wait "$wpid" || true
	rec topics "$n" "$side" persist_write_p50_ms "$(jq -r '.writeMs.p50' "$dir/watch.json")"
	rec topics "$n" "$side" persists_seen "$(jq -r '.persists' "$dir/watch.json")"
	rec topics "$n" "$side" create_p50_ms "$(jq -r '.latencyMs.p50' <<<"$r")"
	rec topics "$n" "$side" create_max_ms "$(jq -r '.latencyMs.max' <<<"$r")"
	rec topics "$n" "$side" topics_json_kb "$(( $(stat -c %s "$(store_of "$side" "$dir")/config/topics.json") / 1024 ))"
	# Registrations after the creates: count and the largest body.
	rec topics "$n" "$side" reg_count "$(wc -l <"$dir/registrations.jsonl")"
	rec topics "$n" "$side" reg_max_kb "$(jq -s 'map(.bodyBytes) | max / 1024 | floor' "$dir/registrations.jsonl")"
	close_servers "$side" "$dir"
}

curve_idle() { # side n
	local side="$1" n="$2" dir="$WORK/$1.idle.$2" r
	log "$side: idle clients $n (load $(loadavg))"
	open_servers "$side" "$dir"
	first_send "$side" IdleTopic "$START_T0" >/dev/null
	create_topic "$side" IdleTopic "$QUEUES"
	r="$("$bin/mqbench" scale idle -b "$(broker_of "$side")" -pid "$(bpid "$side")" -clients "$n" -window "$WINDOW" || true)"
	echo "$r" >"$dir/idle.json"
	rec idle "$n" "$side" ramp_ms "$(jq -r '.rampMs | floor' <<<"$r")"
	rec idle "$n" "$side" rss_per_client_kb "$(jq -r '.rssPerClientKB * 10 | floor / 10' <<<"$r")"
	rec idle "$n" "$side" rss_mb "$(jq -r '.rssAfterKB / 1024 | floor' <<<"$r")"
	rec idle "$n" "$side" cpu_us_per_hb "$(jq -r '.cpuUsPerHeartbeat * 10 | floor / 10' <<<"$r")"
	rec idle "$n" "$side" net_cpu_us_per_hb "$(jq -r '.netCpuUsPerHeartbeat * 10 | floor / 10' <<<"$r")"
	rec idle "$n" "$side" hb_p99_ms "$(jq -r '.heartbeatMs.p99' <<<"$r")"
	rec idle "$n" "$side" hb_failed "$(jq -r '.failed' <<<"$r")"
	rec idle "$n" "$side" threads "$(jq -r '.threads' <<<"$r")"
	close_servers "$side" "$dir"
}

curve_hold() { # side n
	local side="$1" n="$2" dir="$WORK/$1.hold.$2" r
	log "$side: held pulls $n (load $(loadavg))"
	open_servers "$side" "$dir"
	first_send "$side" HoldWarm "$START_T0" >/dev/null
	create_topic "$side" HoldTopic "$QUEUES"
	sleep 1
	r="$("$bin/mqbench" scale hold -b "$(broker_of "$side")" -pid "$(bpid "$side")" -t HoldTopic -pulls "$n" -queues "$QUEUES" || true)"
	echo "$r" >"$dir/hold.json"
	rec hold "$n" "$side" rss_per_pull_kb "$(jq -r '.rssPerPullKB * 100 | floor / 100' <<<"$r")"
	rec hold "$n" "$side" rss_mb "$(jq -r '.rssHeldKB / 1024 | floor' <<<"$r")"
	rec hold "$n" "$side" wake_p50_ms "$(jq -r '.wakeMs.p50' <<<"$r")"
	rec hold "$n" "$side" wake_p99_ms "$(jq -r '.wakeMs.p99' <<<"$r")"
	rec hold "$n" "$side" wake_max_ms "$(jq -r '.wakeMs.max' <<<"$r")"
	rec hold "$n" "$side" woken "$(jq -r '.woken' <<<"$r")"
	rec hold "$n" "$side" not_held "$(jq -r '.early + .notWoken' <<<"$r")"
	close_servers "$side" "$dir"
}

curve_offsets() { # side groups
	local side="$1" n="$2" dir="$WORK/$1.offsets.$2" r w
	log "$side: consumer groups $n (load $(loadavg))"
	open_servers "$side" "$dir"
	first_send "$side" OffsetWarm "$START_T0" >/dev/null
	create_topic "$side" OffsetTopic "$QUEUES"
	local wsec; wsec="${WINDOW%s}"
	"$bin/mqbench" scale offsets -b "$(broker_of "$side")" -pid "$(bpid "$side")" -t OffsetTopic -groups "$n" \
		-queues "$QUEUES" -window "$WINDOW" -ready "$dir/window.ready" >"$dir/offsets.json" &
	local opid=$! i
	for i in $(seq 1 3000); do
		if [ -e "$dir/window.ready" ] || ! kill -0 "$opid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	# consumerOffset.json persists inside the commit window (every 5 s on both).
	w="$("$bin/mqbench" scale watch -dir "$(store_of "$side" "$dir")/config" -file consumerOffset.json \
		-duration "$(( wsec > 2 ? wsec - 1 : 1 ))s" || true)"
	wait "$opid" || true
	r="$(cat "$dir/offsets.json")"
	rec offsets "$n" "$side" create_groups_ms "$(jq -r '.createGroupsMs | floor' <<<"$r")"
	rec offsets "$n" "$side" commits "$(jq -r '.commits' <<<"$r")"
	rec offsets "$n" "$side" commit_failed "$(jq -r '.failed' <<<"$r")"
	rec offsets "$n" "$side" cpu_us_per_commit "$(jq -r '.cpuUsPerCommit * 10 | floor / 10' <<<"$r")"
	rec offsets "$n" "$side" net_cpu_us_per_commit "$(jq -r '.netCpuUsPerCommit * 10 | floor / 10' <<<"$r")"
	rec offsets "$n" "$side" commit_p99_ms "$(jq -r '.commitMs.p99' <<<"$r")"
	rec offsets "$n" "$side" rss_mb "$(jq -r '.rssAfterKB / 1024 | floor' <<<"$r")"
	rec offsets "$n" "$side" persist_write_p50_ms "$(jq -r '.writeMs.p50' <<<"$w")"
	rec offsets "$n" "$side" persist_write_max_ms "$(jq -r '.writeMs.max' <<<"$w")"
	rec offsets "$n" "$side" persists_seen "$(jq -r '.persists' <<<"$w")"
	rec offsets "$n" "$side" offsets_json_kb "$(( $(stat -c %s "$(store_of "$side" "$dir")/config/consumerOffset.json" 2>/dev/null || echo 0) / 1024 ))"
	close_servers "$side" "$dir"
}

disk_pct() { df -P "$WORK" | awk 'NR == 2 { printf "%d\n", $3 * 100 / ($3 + $4) }'; }

# dig_loop dir stopfile fillpid marks: makes every commit-log segment but the last three
# (one being written, up to two preallocated) sparse (all-zero blocks only), until stopfile exists; stops the fill when
# the disk gets fuller than DISK_MAX_PCT.
dig_loop() {
	local cl="$1" stop="$2" fillpid="$3" marks="$4"
	mkdir -p "$marks" # not in the commit-log directory: brokers take every file there for a segment
	while [ ! -e "$stop" ]; do
		local files; mapfile -t files < <(ls "$cl" 2>/dev/null | sort)
		local k
		for ((k = 0; k + 3 < ${#files[@]}; k++)); do
			if [ ! -e "$marks/${files[$k]}" ]; then
				fallocate --dig-holes "$cl/${files[$k]}" && touch "$marks/${files[$k]}"
			fi
		done
		if [ "$(disk_pct)" -gt "$DISK_MAX_PCT" ]; then
			log "disk over $DISK_MAX_PCT %: stopping the fill"
			kill "$fillpid" 2>/dev/null || true
		fi
		sleep 1
	done
}

curve_restart() { # side: fill to each size in turn, kill -9, restart
	local side="$1" dir="$WORK/$1.restart" pid gb cl have
	log "$side: restart curve (load $(loadavg))"
	open_servers "$side" "$dir"
	first_send "$side" FillTopic "$START_T0" >/dev/null
	create_topic "$side" FillTopic "$QUEUES"
	cl="$(store_of "$side" "$dir")/commitlog"
	have=0
	for gb in $RESTART_GB; do
		local stopf="$dir/dig.stop.$gb"
		"$bin/mqbench" scale fill -b "$(broker_of "$side")" -t FillTopic -queues "$QUEUES" \
			-bytes "$(( gb * 1073741824 - have ))" -duration 40m >"$dir/fill.$gb.json" &
		local fpid=$!
		dig_loop "$cl" "$stopf" "$fpid" "$dir/dug" &
		local dpid=$!
		wait "$fpid" || true
		have=$(( have + $(jq -r '.bytes' "$dir/fill.$gb.json" 2>/dev/null || echo 0) ))
		rec restart "$gb" "$side" fill_s "$(jq -r '.seconds | floor' "$dir/fill.$gb.json" 2>/dev/null || echo nan)"
		sleep 2 # let the flusher catch up a little: a kill -9 with dirty pages is the case measured
		pid="$(bpid "$side")"
		kill -KILL "$pid"
		wait_gone "$pid"
		touch "$stopf"; wait "$dpid" || true
		# The segments the dig loop skipped (the last three: the one being written and
		# up to two preallocated, as Java allocates next and next-next) stay as written.
		rec restart "$gb" "$side" data_gib "$(awk -v b="$have" 'BEGIN { printf "%.2f", b / 1073741824 }')"
		rec restart "$gb" "$side" segments_gib "$(du -s --apparent-size -B1 "$cl" | awk '{printf "%.1f", $1 / 1073741824}')"
		rec restart "$gb" "$side" disk_mib "$(du -s -B1 "$cl" | awk '{printf "%d", $1 / 1048576}')"
		sync
		local t0; t0="$(now_ns)"
		start_broker "$side" "$dir"
		rec restart "$gb" "$side" restart_ms "$(first_send "$side" FillTopic "$t0")"
		sleep 1
		rec restart "$gb" "$side" rss_mb "$(( $(rss_kb "$(bpid "$side")") / 1024 ))"
	done
	close_servers "$side" "$dir"
}

sides=(java ours)
case "$ONLY" in ours) sides=(ours) ;; java) sides=(java) ;; esac

started="$(date -u +%Y-%m-%dT%H:%M:%SZ)" started_s="$(date +%s)"
load_start="$(loadavg)"
for curve in $CURVES; do
	case "$curve" in
	topics) for n in $TOPICS; do for s in "${sides[@]}"; do curve_topics "$s" "$n"; done; done ;;
	idle) for n in $CLIENTS; do for s in "${sides[@]}"; do curve_idle "$s" "$n"; done; done ;;
	hold) for n in $PULLS; do for s in "${sides[@]}"; do curve_hold "$s" "$n"; done; done ;;
	offsets) for s in "${sides[@]}"; do curve_offsets "$s" "$CONSUMER_GROUPS"; done ;;
	restart) for s in "${sides[@]}"; do curve_restart "$s"; done ;;
	twogroup) curve_twogroup ;;
	*) echo "bench-scale: unknown curve $curve" >&2; exit 2 ;;
	esac
	printf 'load\t%s\t-\tload\t%s\n' "$curve" "$(loadavg)" >>"$metrics"
done

python3 "$root/scripts/bench-scale-report.py" "$metrics" --out "$OUT" --plots "$PLOTS" \
	--started "$started" --minutes "$(( ($(date +%s) - started_s + 30) / 60 ))" --load-start "$load_start" \
	--rev "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" --quick "${QUICK:-}"
log "wrote $OUT and $PLOTS/scale-*.svg (raw metrics in $metrics)"
