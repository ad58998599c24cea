#!/usr/bin/env bash
# bench-compare.sh: rocketgo against the Apache RocketMQ reference broker
# (5.3.x from Maven, via conformance/scripts/javaserver.sh) on this machine,
# both on 127.0.0.1 with the same flushDiskType, queue count and message size,
# driven by mqbench. Runs alternate Java, ours, Java, ours ... (PAIRS pairs);
# the report holds medians. Writes bench/results.md (ours, Java, ratio).
#
# Knobs (environment):
#   STEP=10s      length of each timed step
#   PAIRS=3       Java/ours pairs (medians over them)
#   SIZE=1024     message body bytes
#   QUEUES=8      queues of the benchmark topics
#   BACKLOG=200000 messages in the consume catch-up backlog
#   SEGMENT=1073741824 commit-log segment size given to both brokers
#                 (javaserver.sh alone would give Java 64 MiB)
#   KEEP_STORE=1  keep each session's store (default: deleted after the session)
#   OUT=bench/results.md
#   WORK=<tmpdir> data, logs and raw metrics (kept; printed at the end)
#   ONLY=ours|java run one side only (ratios then show n/a)
#   SKIP_SYNC=1   skip the SYNC_FLUSH session
# A full run with the defaults takes about 15-20 minutes on 2 cores; STEP=3s
# PAIRS=1 BACKLOG=50000 is a smoke run of about 3 minutes.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
STEP="${STEP:-10s}"
PAIRS="${PAIRS:-3}"
SIZE="${SIZE:-1024}"
QUEUES="${QUEUES:-8}"
BACKLOG="${BACKLOG:-200000}"
SEGMENT="${SEGMENT:-1073741824}"
KEEP_STORE="${KEEP_STORE:-}"
OUT="${OUT:-$root/bench/results.md}"
WORK="${WORK:-$(mktemp -d /tmp/bench-compare.XXXXXX)}"
ONLY="${ONLY:-}"
SKIP_SYNC="${SKIP_SYNC:-}"
javaserver="$root/conformance/scripts/javaserver.sh"

# Below the ephemeral port range (32768+), so client sockets never hold them.
OURS_NS=127.0.0.1:21876 OURS_BROKER=127.0.0.1:21911
JAVA_NS_PORT=23876 JAVA_BROKER_PORT=23911 # also uses 23909 (VIP) and 23912 (HA)
JAVA_NS=127.0.0.1:$JAVA_NS_PORT JAVA_BROKER=127.0.0.1:$JAVA_BROKER_PORT

bin="$WORK/bin"
metrics="$WORK/metrics.tsv"
mkdir -p "$bin"
cd "$WORK" # nothing the script runs writes into the repository
: >"$metrics"
step_s="${STEP%s}"
clk_tck="$(getconf CLK_TCK)"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

for addr in "$OURS_NS" "$OURS_BROKER" "$JAVA_NS" "$JAVA_BROKER"; do
	if (exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}") 2>/dev/null; then
		echo "bench-compare: $addr is already in use; stop whatever listens there" >&2
		exit 1
	fi
done

log "building into $bin"
(cd "$root" && go build -o "$bin/" ./cmd/rocketgo ./cmd/mqbench ./cmd/mqadmin)
if [ "$ONLY" != ours ]; then "$javaserver" fetch; fi

# ---- server control -------------------------------------------------------

ns_of() { if [ "$1" = ours ]; then echo "$OURS_NS"; else echo "$JAVA_NS"; fi; }
broker_of() { if [ "$1" = ours ]; then echo "$OURS_BROKER"; else echo "$JAVA_BROKER"; fi; }
broker_pid() { cat "$WORK/$1.broker.pid"; }

start_broker() { # side dir flush
	local side="$1" dir="$2" flush="$3"
	mkdir -p "$dir"
	if [ "$side" = ours ]; then
		printf 'flushDiskType=%s\nmappedFileSizeCommitLog=%s\n' "$flush" "$SEGMENT" >"$dir/broker.conf"
		setsid "$bin/rocketgo" -dataDir "$dir" -namesrvListen "$OURS_NS" -brokerListen "$OURS_BROKER" \
			-c "$dir/broker.conf" >>"$dir/rocketgo.log" 2>&1 </dev/null &
		echo $! >"$WORK/ours.broker.pid"
		disown # kill -9 below is deliberate; no job-control notice
	else
		BROKER_EXTRA_CONF="$(printf 'flushDiskType=%s\nmappedFileSizeCommitLog=%s' "$flush" "$SEGMENT")" "$javaserver" start-broker "$JAVA_NS" "$JAVA_BROKER_PORT" "$dir/br" >/dev/null
		cp "$dir/br/broker.pid" "$WORK/java.broker.pid"
	fi
}

start_server() { # side dir flush
	local side="$1" dir="$2"
	if [ "$side" = java ]; then
		"$javaserver" start-namesrv "$JAVA_NS_PORT" "$dir/ns" >/dev/null
		cp "$dir/ns/namesrv.pid" "$WORK/java.ns.pid"
	fi
	start_broker "$@"
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

stop_server() { # side [dir]: stops it and, unless KEEP_STORE, drops its store
	stop_pid "$WORK/$1.broker.pid"
	stop_pid "$WORK/$1.ns.pid"
	if [ -n "${2:-}" ] && [ -z "$KEEP_STORE" ]; then
		rm -rf "$2/store" "$2/br/store"
	fi
}

cleanup() {
	stop_server ours 2>/dev/null || true
	stop_server java 2>/dev/null || true
}
trap cleanup EXIT
trap "exit 130" INT TERM # run the EXIT trap on Ctrl-C / kill too

# ---- measurements ---------------------------------------------------------

rec() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$metrics"; log "  $1 pair $2: $3 = $4"; }

now_ns() { date +%s%N; }

# first_send side topic start_ns: polls with one-message sends straight to the
# broker until one returns SEND_OK; prints the ms since start_ns.
first_send() {
	local broker; broker="$(broker_of "$1")"
	local deadline=$(( $(date +%s) + 180 ))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		local n
		n="$("$bin/mqbench" produce -b "$broker" -t "$2" -queues 1 -count 1 -mode sync -threads 1 -conns 1 \
			-size "$SIZE" -timeout 2s -duration 5s -quiet -json 2>/dev/null | jq -r '.messages' 2>/dev/null || true)"
		if [ "$n" = 1 ]; then
			echo $(( ($(now_ns) - $3) / 1000000 ))
			return 0
		fi
		sleep 0.05
	done
	echo "nan"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; } # pid RssAnon|RssFile, kB

bench() { "$bin/mqbench" "$@" -quiet -json; }

# warmup side: one unrecorded step of async load (JIT, page cache, pools).
warmup() {
	bench produce -n "$(ns_of "$1")" -t BenchTopic -mode async -threads 8 -conns 4 -inflight 16 \
		-size "$SIZE" -duration "$STEP" >/dev/null || true
}

# wait_route side topic: until the name server routes topic (Java registers
# brokers and topics asynchronously).
wait_route() {
	local ns; ns="$(ns_of "$1")"
	local i
	for i in $(seq 1 600); do
		if "$bin/mqadmin" topicRoute -n "$ns" -t "$2" -timeout 2s >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	log "no route for $2 at $ns"; return 1
}

create_topic() { # side topic
	"$bin/mqadmin" updateTopic -n "$(ns_of "$1")" -b "$(broker_of "$1")" -t "$2" -r "$QUEUES" -w "$QUEUES" >/dev/null
	wait_route "$1" "$2"
}

peak_of() { # side pair → max send TPS recorded
	awk -F'\t' -v s="$1" -v p="$2" '($1 == s && $2 == p && $3 ~ /^send_tps_/ && $4 + 0 > m) { m = $4 + 0 } END { printf "%d\n", m }' "$metrics"
}

# e2e side pair rate label: consumer from the end, producer at a fixed rate.
e2e() {
	local side="$1" pair="$2" rate="$3" label="$4" ns; ns="$(ns_of "$side")"
	local out="$WORK/$side.$pair.e2e.$label.json"
	local threads=4 conns=2
	if [ "$rate" -le 10 ]; then threads=1 conns=1; fi
	bench consume -n "$ns" -t BenchTopic -g "e2e_${label}_$pair" -from last -duration "$((step_s + 4))s" >"$out" &
	local cpid=$!
	sleep 1.5 # the consumer reads max offsets before the producer starts
	bench produce -n "$ns" -t BenchTopic -mode async -rate "$rate" -threads "$threads" -conns "$conns" \
		-inflight 256 -size "$SIZE" -duration "$STEP" >/dev/null
	wait "$cpid"
	rec "$side" "$pair" "e2e_p99_ms_${label}" "$(jq -r '.latencyMs.p99' "$out")"
	rec "$side" "$pair" "e2e_msgs_${label}" "$(jq -r '.messages' "$out")"
}

session_async() { # side pair
	local side="$1" pair="$2" dir="$WORK/$1.$2.async" ns; ns="$(ns_of "$side")"
	log "$side pair $pair: ASYNC_FLUSH session"
	local t0; t0="$(now_ns)"
	start_server "$side" "$dir" ASYNC_FLUSH
	rec "$side" "$pair" cold_start_ms "$(first_send "$side" BenchCold "$t0")"
	local pid; pid="$(broker_pid "$side")"
	sleep 2
	rec "$side" "$pair" rss_idle_anon_kb "$(rss "$pid" RssAnon)"
	rec "$side" "$pair" rss_idle_file_kb "$(rss "$pid" RssFile)"
	create_topic "$side" BenchTopic
	warmup "$side"

	local t
	for t in 1 8 64; do
		local c0 j; c0="$(cpu_ticks "$pid")"
		j="$(bench produce -n "$ns" -t BenchTopic -mode sync -threads "$t" -conns "$(( t < 4 ? t : 4 ))" \
			-size "$SIZE" -duration "$STEP")"
		rec "$side" "$pair" "send_tps_$t" "$(jq -r '.tps' <<<"$j")"
		rec "$side" "$pair" "send_errors_$t" "$(jq -r '.errorTotal' <<<"$j")"
		if [ "$(jq -r '.errorTotal' <<<"$j")" != 0 ]; then log "  errors: $(jq -c '.errors' <<<"$j")"; fi
		if [ "$t" = 64 ]; then
			local c1 msgs; c1="$(cpu_ticks "$pid")"; msgs="$(jq -r '.messages' <<<"$j")"
			rec "$side" "$pair" cpu_us_per_msg "$(awk -v d="$((c1 - c0))" -v hz="$clk_tck" -v n="$msgs" 'BEGIN { printf "%.2f", (n > 0 ? d * 1e6 / hz / n : 0) }')"
		fi
	done

	# Open loop at half of Java's peak (this pair's Java session runs first).
	local peak rate j
	peak="$(peak_of java "$pair")"
	if [ "$peak" = 0 ]; then peak="$(peak_of "$side" "$pair")"; fi
	rate="$(awk -v p="$peak" 'BEGIN { printf "%d", (p / 2 > 1 ? p / 2 : 1) }')"
	j="$(bench produce -n "$ns" -t BenchTopic -mode async -rate "$rate" -threads 8 -conns 4 -inflight 512 \
		-size "$SIZE" -duration "$STEP")"
	rec "$side" "$pair" openloop_rate "$rate"
	rec "$side" "$pair" openloop_p99_ms "$(jq -r '.latencyMs.p99' <<<"$j")"
	rec "$side" "$pair" openloop_tps "$(jq -r '.tps' <<<"$j")"

	e2e "$side" "$pair" 5000 5k
	e2e "$side" "$pair" 1 1ps

	# Consume catch-up from a backlog.
	create_topic "$side" BenchBacklog
	local stored
	stored="$(bench produce -n "$ns" -t BenchBacklog -mode async -threads 8 -conns 4 -inflight 64 -size "$SIZE" \
		-count "$BACKLOG" -duration 600s | jq -r '.messages')" # sends refused by the broker are not in the backlog
	j="$(bench consume -n "$ns" -t BenchBacklog -g "catchup_$pair" -from first -count "$stored" -duration 300s)"
	rec "$side" "$pair" backlog_msgs "$stored"
	rec "$side" "$pair" consume_tps "$(jq -r '.tps' <<<"$j")"
	rec "$side" "$pair" rss_loaded_anon_kb "$(rss "$pid" RssAnon)"
	rec "$side" "$pair" rss_loaded_file_kb "$(rss "$pid" RssFile)"

	# Restart after kill -9 (the Java name server keeps running; ours restarts
	# with its in-process name server).
	kill -KILL "$pid"
	wait_gone "$pid"
	t0="$(now_ns)"
	start_broker "$side" "$dir" ASYNC_FLUSH
	rec "$side" "$pair" restart_ms "$(first_send "$side" BenchTopic "$t0")"
	stop_server "$side" "$dir"
}

session_sync() { # side pair
	local side="$1" pair="$2" dir="$WORK/$1.$2.sync" ns; ns="$(ns_of "$side")"
	log "$side pair $pair: SYNC_FLUSH session"
	start_server "$side" "$dir" SYNC_FLUSH
	first_send "$side" BenchCold "$(now_ns)" >/dev/null
	create_topic "$side" BenchTopic
	warmup "$side"
	local t j
	for t in 1 16 64 256; do
		j="$(bench produce -n "$ns" -t BenchTopic -mode sync -threads "$t" -conns "$(( t < 8 ? t : 8 ))" \
			-size "$SIZE" -duration "$STEP")"
		rec "$side" "$pair" "sync_tps_$t" "$(jq -r '.tps' <<<"$j")"
	done
	stop_server "$side" "$dir"
}

sides=(java ours)
case "$ONLY" in
ours) sides=(ours) ;;
java) sides=(java) ;;
esac

started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
for pair in $(seq 1 "$PAIRS"); do
	for side in "${sides[@]}"; do session_async "$side" "$pair"; done
	if [ -z "$SKIP_SYNC" ]; then
		for side in "${sides[@]}"; do session_sync "$side" "$pair"; done
	fi
done

mkdir -p "$(dirname "$OUT")"
python3 "$root/bench/report.py" "$metrics" \
	--started "$started" --step "$STEP" --pairs "$PAIRS" --size "$SIZE" --queues "$QUEUES" --backlog "$BACKLOG" --segment "$SEGMENT" \
	--rev "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" >"$OUT"
log "wrote $OUT (raw metrics and logs in $WORK)"
