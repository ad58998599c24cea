#!/usr/bin/env bash
# bench-compare.sh: rocketgo against the Apache RocketMQ reference broker
# (5.3.3 from Maven, via conformance/scripts/javaserver.sh) on this machine,
# both on 127.0.0.1 with the same flushDiskType, queue count and message size.
# Runs alternate Java, ours, Java, ours ... (PAIRS pairs); the report holds
# medians. Writes bench/results.md (ours, Java, ratio). With JAVA54=1 (the
# default) every pair also runs the second reference, Apache RocketMQ 5.4.0
# (jars in conformance/.cache/java-server/lib-5.4.0, same JVM flags and
# heap), after ours: Java 5.3.3, ours, Java 5.4.0, ... with its own columns.
#
# Load generators, each run against both brokers in the same pairs:
#   mqbench      cmd/mqbench: remoting with pre-encoded frames (every row)
#   go-client    bench/goclient: github.com/apache/rocketmq-client-go/v2
#                (its own go.mod; same version as conformance/go.mod)
#   java-client  bench/java: org.apache.rocketmq:rocketmq-client 5.3.3
#                (Apache's benchmark Producer/Consumer are in rocketmq-example,
#                which Maven Central does not serve; this driver does the same:
#                sync-send threads on one DefaultMQProducer, a push consumer)
#   apache       Apache's own benchmark Producer and Consumer
#                (org.apache.rocketmq.example.benchmark, module "example" of
#                the apache/rocketmq source tree) when APACHE_BENCH_SRC names
#                that tree: compiled by bench/apache/pom.xml against
#                rocketmq-client 5.3.3 into APACHE_CACHE (default
#                ~/.cache/rocketgo-bench/apache), never into the repository.
#                E.g. git --git-dir=<mirror of apache/rocketmq> archive
#                rocketmq-all-5.3.3 example | tar -x -C DIR; APACHE_BENCH_SRC=DIR
# The client rows: send TPS at 8 and 64 threads, consume catch-up TPS from
# the backlog, end-to-end p99 at CLIENT_RATE msg/s (Apache's tools: send TPS
# at 8 and 64 threads over a 9 s window after 10 s of warm-up, and the best
# 9 s window of the backlog catch-up: their own reports).
#
# Java heap profiles (JAVA_HEAP): "fitted" is -Xms1g -Xmx1g
# -XX:MaxDirectMemorySize=1g on javaserver.sh's G1 flags; "stock" is the JVM
# line of Apache's runbroker.sh for JDK >= 9 (-Xms8g -Xmx8g, G1 with its
# region/reserve/IHOP flags, AlwaysPreTouch, MaxDirectMemorySize=15g; the
# -Xmn4g in that script belongs to its JDK < 8 CMS branch only). "both" runs
# every Java session fitted plus, per pair, a Java-only stock-heap session
# (cold start, idle RSS, mqbench send TPS 1/8/64, CPU/msg, backlog consume,
# loaded RSS) shown as its own column.
#
# Restart: each ASYNC_FLUSH session ends by filling the commit log to
# RESTART_GB GiB (mqbench, FILL_SIZE-byte bodies), kill -9, restart, and
# timing exec -> first SEND_OK.
#
# Knobs (environment):
#   STEP=10s      length of each timed step
#   PAIRS=3       Java/ours pairs (medians over them)
#   SIZE=1024     message body bytes
#   QUEUES=8      queues of the benchmark topics
#   BACKLOG=200000 messages in the consume catch-up backlog
#   SEGMENT=1073741824 commit-log segment size given to both brokers
#                 (javaserver.sh alone would give Java 64 MiB)
#   JAVA_HEAP=both fitted | stock | both (see above)
#   CLIENT_RATE=2000 fixed rate of the official clients' end-to-end rows
#   CLIENT_WARMUP=2s uncounted sending before each client send step (JIT)
#   CLIENT_E2E_WARMUP=15 seconds of uncounted paced sending before the
#                 clients' end-to-end step (a fresh push-consumer JVM spends
#                 its first ~20 s compiling: 1.4 cores falling to 0.4 at
#                 2,000 msg/s; the consumer counts from 2 s later)
#   RESTART_GB=4  commit-log size before the kill -9 (GiB)
#   FILL_SIZE=524288 body bytes of the fill messages
#   SKIP_SYNC=1   skip the SYNC_FLUSH sessions
#   SKIP_CLIENTS=1 skip the official-client rows (mqbench only)
#   SKIP_RESTART=1 skip the fill + kill -9 restart
#   KEEP_STORE=1  keep each session's store (default: deleted after the session)
#   OUT=bench/results.md
#   WORK=<tmpdir> data, logs and raw metrics (kept; printed at the end)
#   ONLY=ours|java|java54 run one side only (ratios then show n/a)
#   NOTE=         a sentence the report prints after the load average (e.g. that
#                 the machine was shared)
#   JAVA54=1      also run the Java 5.4.0 broker (0: 5.3.3 only)
#   OURS_NS_PORT=21876 OURS_BROKER_PORT=21911 OURS_GRPC_PORT=8081
#   JAVA_NS_PORT=23876 JAVA_BROKER_PORT=23911 (Java also takes BROKER-2, BROKER+1)
#                 loopback ports (both Java releases share Java's, never at once)
#   SKIP_REPL=1   skip the replication rows: scripts/bench-repl.sh (master/slave
#                 pairs, its own report REPL_OUT=bench/results-repl.md; STEP,
#                 SIZE, QUEUES, SEGMENT, FILL_SIZE, ONLY, KEEP_STORE and its own
#                 knobs such as REPL_PAIRS=PAIRS, CATCHUP_GB=4 pass through)
# A full run with the defaults takes about 35 minutes on 2 cores (one pair at
# the defaults: see the report); STEP=3s PAIRS=1 BACKLOG=50000 is a smoke run
# of about 7 minutes, SKIP_CLIENTS=1 SKIP_RESTART=1 SKIP_SYNC=1 JAVA_HEAP=fitted
# of about 3.
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
JAVA54="${JAVA54:-1}"
SKIP_SYNC="${SKIP_SYNC:-}"
SKIP_CLIENTS="${SKIP_CLIENTS:-}"
SKIP_RESTART="${SKIP_RESTART:-}"
JAVA_HEAP="${JAVA_HEAP:-both}"
CLIENT_RATE="${CLIENT_RATE:-2000}"
CLIENT_WARMUP="${CLIENT_WARMUP:-2s}"
CLIENT_E2E_WARMUP="${CLIENT_E2E_WARMUP:-15}"
RESTART_GB="${RESTART_GB:-4}"
FILL_SIZE="${FILL_SIZE:-524288}"
javaserver="$root/conformance/scripts/javaserver.sh"
APACHE_BENCH_SRC="${APACHE_BENCH_SRC:-}"
APACHE_CACHE="${APACHE_CACHE:-$HOME/.cache/rocketgo-bench/apache}"

# Broker JVM flags appended to javaserver.sh's (later flags win).
HEAP_FITTED="-Xms1g -Xmx1g -XX:MaxDirectMemorySize=1g"
HEAP_STOCK="-Xms8g -Xmx8g -XX:+UseG1GC -XX:G1HeapRegionSize=16m -XX:G1ReservePercent=25 \
-XX:InitiatingHeapOccupancyPercent=30 -XX:SoftRefLRUPolicyMSPerMB=0 -XX:-OmitStackTraceInFastThrow \
-XX:+AlwaysPreTouch -XX:MaxDirectMemorySize=15g -XX:-UseLargePages"
case "$JAVA_HEAP" in
fitted | both) heap_main="$HEAP_FITTED" ;;
stock) heap_main="$HEAP_STOCK" ;;
*) echo "bench-compare: JAVA_HEAP must be fitted, stock or both" >&2; exit 2 ;;
esac

# Below the ephemeral port range (32768+), so client sockets never hold them.
OURS_NS=127.0.0.1:${OURS_NS_PORT:-21876} OURS_BROKER=127.0.0.1:${OURS_BROKER_PORT:-21911}
OURS_GRPC=127.0.0.1:${OURS_GRPC_PORT:-8081}
JAVA_NS_PORT="${JAVA_NS_PORT:-23876}" JAVA_BROKER_PORT="${JAVA_BROKER_PORT:-23911}" # also uses BROKER-2 (VIP) and BROKER+1 (HA)
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
if [ "$ONLY" != ours ] && [ "$ONLY" != java54 ]; then "$javaserver" fetch; fi
if [ "$JAVA54" = 1 ] && [ "$ONLY" != ours ] && [ "$ONLY" != java ]; then ROCKETMQ_SERVER_VERSION=5.4.0 "$javaserver" fetch; fi
javacp=""
if [ -z "$SKIP_CLIENTS" ]; then
	(cd "$root/bench/goclient" && go build -o "$bin/goclient" .)
	# Build output goes under WORK: nothing lands in the repository.
	mvn -q -B -Dstyle.color=never -f "$root/bench/java/pom.xml" -DbuildDir="$WORK/javaclient" package >&2
	javacp="$WORK/javaclient/classes:$WORK/javaclient/lib/*"
fi
apachecp=""
if [ -z "$SKIP_CLIENTS" ] && [ -n "$APACHE_BENCH_SRC" ]; then
	if [ ! -f "$APACHE_BENCH_SRC/example/src/main/java/org/apache/rocketmq/example/benchmark/Producer.java" ]; then
		echo "bench-compare: APACHE_BENCH_SRC=$APACHE_BENCH_SRC has no example/src/main/java/org/apache/rocketmq/example/benchmark/Producer.java" >&2
		exit 2
	fi
	log "building Apache's benchmark Producer/Consumer into $APACHE_CACHE"
	mvn -q -B -Dstyle.color=never -f "$root/bench/apache/pom.xml" -DapacheSrc="$(cd "$APACHE_BENCH_SRC" && pwd)" \
		-DbuildDir="$APACHE_CACHE" package >&2
	apachecp="$APACHE_CACHE/classes:$APACHE_CACHE/lib/*"
fi

# ---- server control -------------------------------------------------------

ns_of() { if [ "$1" = ours ]; then echo "$OURS_NS"; else echo "$JAVA_NS"; fi; }
broker_of() { if [ "$1" = ours ]; then echo "$OURS_BROKER"; else echo "$JAVA_BROKER"; fi; }
broker_pid() { cat "$WORK/$1.broker.pid"; }

# Sides: ours, java (heap_main), java8g (the stock heap, JAVA_HEAP=both only),
# java54 (Java 5.4.0, heap_main); the Java sides use the same name server
# address (never at the same time).
version_of() { if [ "$1" = java54 ]; then echo 5.4.0; else echo 5.3.3; fi; }
start_broker() { # side dir flush
	local side="$1" dir="$2" flush="$3" heap="$heap_main"
	if [ "$side" = java8g ]; then heap="$HEAP_STOCK"; fi
	mkdir -p "$dir"
	if [ "$side" = ours ]; then
		printf 'flushDiskType=%s\nmappedFileSizeCommitLog=%s\n' "$flush" "$SEGMENT" >"$dir/broker.conf"
		setsid "$bin/rocketgo" -dataDir "$dir" -namesrvListen "$OURS_NS" -brokerListen "$OURS_BROKER" -grpcListen "$OURS_GRPC" \
			-c "$dir/broker.conf" >>"$dir/rocketgo.log" 2>&1 </dev/null &
		echo $! >"$WORK/ours.broker.pid"
		disown # kill -9 below is deliberate; no job-control notice
	else
		ROCKETMQ_SERVER_VERSION="$(version_of "$side")" JAVA_EXTRA_OPTS="$heap" BROKER_EXTRA_CONF="$(printf 'flushDiskType=%s\nmappedFileSizeCommitLog=%s' "$flush" "$SEGMENT")" \
			"$javaserver" start-broker "$JAVA_NS" "$JAVA_BROKER_PORT" "$dir/br" >/dev/null
		cp "$dir/br/broker.pid" "$WORK/$side.broker.pid"
	fi
}

start_server() { # side dir flush
	local side="$1" dir="$2"
	if [ "$side" != ours ]; then
		ROCKETMQ_SERVER_VERSION="$(version_of "$side")" "$javaserver" start-namesrv "$JAVA_NS_PORT" "$dir/ns" >/dev/null
		cp "$dir/ns/namesrv.pid" "$WORK/$side.ns.pid"
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
	stop_server java8g 2>/dev/null || true
	stop_server java54 2>/dev/null || true
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

# send_rows side pair pid: mqbench closed-loop sync sends at 1, 8, 64 threads,
# and the broker CPU per message of the 64-thread step.
send_rows() {
	local side="$1" pair="$2" pid="$3" ns t; ns="$(ns_of "$1")"
	for t in 1 8 64; do
		local c0 j; c0="$(cpu_ticks "$pid")"
		j="$(bench produce -n "$ns" -t BenchTopic -mode sync -threads "$t" -conns "$(( t < 4 ? t : 4 ))" \
			-size "$SIZE" -duration "$STEP")"
		rec "$side" "$pair" "send_tps_$t" "$(jq -r '.tps' <<<"$j")"
		rec "$side" "$pair" "send_errors_$t" "$(jq -r '.errorTotal' <<<"$j")"
		if [ "$(jq -r '.errorTotal' <<<"$j")" != 0 ]; then
			rec "$side" "$pair" "send_error_codes_$t" "$(jq -c '.errors' <<<"$j")"
		fi
		if [ "$(jq -r '.errorTotal' <<<"$j")" != 0 ]; then log "  errors: $(jq -c '.errors' <<<"$j")"; fi
		if [ "$t" = 64 ]; then
			local c1 msgs; c1="$(cpu_ticks "$pid")"; msgs="$(jq -r '.messages' <<<"$j")"
			rec "$side" "$pair" cpu_us_per_msg "$(awk -v d="$((c1 - c0))" -v hz="$clk_tck" -v n="$msgs" 'BEGIN { printf "%.2f", (n > 0 ? d * 1e6 / hz / n : 0) }')"
		fi
	done
}

# backlog side pair: fills BenchBacklog with BACKLOG messages (mqbench async)
# and prints how many the broker stored.
backlog() {
	create_topic "$1" BenchBacklog
	bench produce -n "$(ns_of "$1")" -t BenchBacklog -mode async -threads 8 -conns 4 -inflight 64 -size "$SIZE" \
		-count "$BACKLOG" -duration 600s | jq -r '.messages' # sends refused by the broker are not in the backlog
}

# ---- official clients -----------------------------------------------------

jclient_jvm=(-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true -Duser.home="$WORK"
	-Drocketmq.client.logUseSlf4j=false -Drocketmq.client.logLevel=ERROR
	-Drocketmq.client.logRoot="$WORK/javaclient-logs" -Drocketmq.serialize.type=ROCKETMQ)

# client gen produce|consume key=value...: runs the go or java generator and
# prints its JSON summary. Keys: ns topic group threads size rate count, and
# duration warmup idle in seconds.
# A generator that fails prints {} (its rows then show n/a) and the run goes on.
client() {
	local gen="$1" cmd="$2"; shift 2
	local out err="${CLIENT_ERR:-$WORK/${gen}client.log}"
	if [ "$gen" = java ]; then
		out="$(java "${jclient_jvm[@]}" -cp "$javacp" io.rocketgo.bench.Bench "$cmd" "$@" 2>>"$err" || true)"
	else
		out="$(client_go "$cmd" "$@" 2>>"$err" || true)"
	fi
	out="$(grep '^{' <<<"$out" | tail -n 1 || true)"
	if [ -z "$out" ]; then
		log "  $gen-client $cmd failed (see $err)"
		out='{}'
	fi
	printf '%s\n' "$out"
}

client_go() { # produce|consume key=value...: translated to goclient's flags
	local cmd="$1"; shift
	local args=() kv k v
	for kv in "$@"; do
		k="${kv%%=*}" v="${kv#*=}"
		case "$k" in
		ns) args+=(-n "$v") ;;
		topic) args+=(-t "$v") ;;
		group) args+=(-g "$v") ;;
		duration | warmup | idle) args+=("-$k" "${v}s") ;;
		*) args+=("-$k" "$v") ;;
		esac
	done
	"$bin/goclient" "$cmd" "${args[@]}"
}

cwarm="${CLIENT_WARMUP%s}"

# client_send_rows side pair: each official client's sync send TPS at 8 and 64 threads.
client_send_rows() {
	local side="$1" pair="$2" ns gen t j; ns="$(ns_of "$1")"
	for gen in go java; do
		for t in 8 64; do
			j="$(client "$gen" produce ns="$ns" topic=BenchTopic group="${gen}_bench_producer" threads="$t" \
				size="$SIZE" duration="$step_s" warmup="$cwarm")"
			rec "$side" "$pair" "${gen}_send_tps_$t" "$(jq -r '.tps' <<<"$j")"
			rec "$side" "$pair" "${gen}_send_errors_$t" "$(jq -r '.errorTotal' <<<"$j")"
			if [ "$(jq -r '.errorTotal' <<<"$j")" != 0 ]; then log "  errors: $(jq -c '.errors' <<<"$j")"; fi
		done
	done
}

# client_e2e side pair gen: a push consumer of a new topic; mqbench probes
# (one message each) until the consumer has received one (its first
# rebalance and pulls are done: the Java 5.3.3 broker sometimes answers the
# first pulls of a new group SUBSCRIPTION_NOT_LATEST until the client's next
# rebalance, ~20 s), then a producer at CLIENT_RATE msg/s from 32 threads.
# Latency counts messages sent CLIENT_E2E_WARMUP + 2 s or more after the
# consumer's first message (the producer's paced warm-up is not counted).
client_e2e() {
	local side="$1" pair="$2" gen="$3" ns; ns="$(ns_of "$1")"
	local topic="E2E_${gen}_$pair" out="$WORK/$side.$pair.$gen.e2e.json" err="$WORK/$side.$pair.$gen.e2e.log"
	create_topic "$side" "$topic"
	CLIENT_ERR="$err" client "$gen" consume ns="$ns" topic="$topic" group="e2e_${gen}_$pair" \
		duration="$((step_s + CLIENT_E2E_WARMUP + 120))" warmup="$((CLIENT_E2E_WARMUP + 2))" idle=5 >"$out" &
	local cpid=$! i t0; t0="$(date +%s)"
	for i in $(seq 1 60); do
		if grep -q "first message" "$err" 2>/dev/null; then break; fi
		if grep -q started "$err" 2>/dev/null; then
			bench produce -n "$ns" -t "$topic" -mode sync -threads 1 -conns 1 -count 1 -size "$SIZE" -duration 5s >/dev/null || true
		fi
		sleep 0.5
	done
	rec "$side" "$pair" "${gen}_e2e_ready_s" "$(( $(date +%s) - t0 ))"
	local j; j="$(client "$gen" produce ns="$ns" topic="$topic" group="${gen}_e2e_producer" threads=32 size="$SIZE" \
		rate="$CLIENT_RATE" duration="$step_s" warmup="$CLIENT_E2E_WARMUP")"
	wait "$cpid"
	rec "$side" "$pair" "${gen}_e2e_p99_ms" "$(jq -r '.latencyMs.p99' "$out")"
	rec "$side" "$pair" "${gen}_e2e_samples" "$(jq -r '.latencyMs.samples' "$out")"
	rec "$side" "$pair" "${gen}_e2e_send_tps" "$(jq -r '.tps' <<<"$j")" # the rate the producer reached
}

# ---- Apache's benchmark tools ---------------------------------------------------

# apache_start out class args...: starts Apache's Producer or Consumer (they
# run until killed) in the background, reporting every second; its pid is in
# apache_pid. apache_stop ends it.
apache_start() {
	local out="$1" cls="$2"; shift 2
	setsid java "${jclient_jvm[@]}" -cp "$apachecp" "org.apache.rocketmq.example.benchmark.$cls" -ri 1000 "$@" \
		>"$out" 2>&1 </dev/null &
	apache_pid=$!
}
apache_stop() {
	kill -TERM -- "-$apache_pid" 2>/dev/null || kill -TERM "$apache_pid" 2>/dev/null || true
	wait_gone "$apache_pid"
	wait "$apache_pid" 2>/dev/null || true
}

# reports file field: the values of the per-second "field: N" reports so far.
reports() { grep -o "$2: [0-9]*" "$1" 2>/dev/null | awk '{ print $NF }' || true; }

# Apache's tools print, every second, the rate over their last 10 one-second
# snapshots (a 9 s window).
# apache_send_rows side pair: Producer at 8 and 64 threads; its report after
# 10 s of warm-up plus one full window (the JVM start is not counted: the
# count starts at its first report).
apache_send_rows() {
	local side="$1" pair="$2" ns t out i; ns="$(ns_of "$1")"
	for t in 8 64; do
		out="$WORK/$side.$pair.apache.produce.$t.log"
		apache_start "$out" Producer -n "$ns" -t BenchTopic -w "$t" -s "$SIZE"
		for i in $(seq 1 480); do
			if [ "$(reports "$out" "Send TPS" | wc -l)" -ge 20 ]; then break; fi
			sleep 0.5
		done
		apache_stop
		rec "$side" "$pair" "apache_send_tps_$t" "$(reports "$out" "Send TPS" | sed -n 20p)"
	done
}

# apache_consume side pair: Apache's Consumer with a new group reads
# BenchBacklog (a new group starts at offset 0 while the first message is
# still in memory); it stops 3 reports after the last message arrived. The
# row is its best 9 s window (a catch-up shorter than that shows as
# backlog / 9 s on both brokers: keep BACKLOG large enough).
apache_consume() {
	local side="$1" pair="$2" ns out i; ns="$(ns_of "$1")"
	out="$WORK/$side.$pair.apache.consume.log"
	apache_start "$out" Consumer -n "$ns" -t BenchBacklog -g "apache_catchup_$pair"
	for i in $(seq 1 600); do
		# Stop after 3 idle reports that follow at least one busy one.
		if reports "$out" "Consume TPS" | awk '$1 > 0 { busy = 1; idle = 0 } $1 == 0 && busy { idle++ } END { exit !(idle >= 3) }'; then
			break
		fi
		kill -0 "$apache_pid" 2>/dev/null || break
		sleep 0.5
	done
	apache_stop
	rec "$side" "$pair" apache_consume_tps "$(reports "$out" "Consume TPS" | sort -n | tail -n 1)"
}

# ---- restart with a large store ---------------------------------------------

commitlog_max() { # side → the broker's commitLogMaxOffset (empty if it does not answer in 10 s)
	local i v
	for i in $(seq 1 20); do
		v="$("$bin/mqadmin" brokerStatus -n "$(ns_of "$1")" -b "$(broker_of "$1")" -timeout 2s 2>/dev/null |
			awk -F: '$1 ~ /^commitLogMaxOffset/ { gsub(/ /, "", $2); print $2 }' || true)"
		if [ -n "$v" ]; then echo "$v"; return 0; fi
		sleep 0.5
	done
}

# restart_big side pair dir: fills the commit log to RESTART_GB GiB with
# FILL_SIZE-byte messages, kill -9, restarts the broker (the Java name server
# keeps running; ours restarts with its in-process name server) and times
# exec -> first SEND_OK.
restart_big() {
	local side="$1" pair="$2" dir="$3" pid have need; pid="$(broker_pid "$side")"
	create_topic "$side" BenchFill
	local try
	for try in 1 2 3; do # again for sends the broker refused (SYSTEM_BUSY)
		have="$(commitlog_max "$side")"
		need=$(( RESTART_GB * 1073741824 - ${have:-0} ))
		if [ "$need" -le 0 ]; then break; fi
		bench produce -n "$(ns_of "$side")" -t BenchFill -mode async -threads 4 -conns 2 -inflight 4 \
			-size "$FILL_SIZE" -count "$(( need / FILL_SIZE + 1 ))" -duration 900s >>"$WORK/$side.$pair.fill.json"
	done
	local size; size="$(commitlog_max "$side")"
	rec "$side" "$pair" restart_store_mib "$(( ${size:-0} / 1048576 ))"
	kill -KILL "$pid"
	wait_gone "$pid"
	local t0; t0="$(now_ns)"
	start_broker "$side" "$dir" ASYNC_FLUSH
	rec "$side" "$pair" restart_ms "$(first_send "$side" BenchTopic "$t0")"
	size="$(commitlog_max "$side")"
	rec "$side" "$pair" restart_store_after_mib "$(( ${size:-0} / 1048576 ))"
}

# ---- sessions -----------------------------------------------------------------

# open_async side pair dir: starts an ASYNC_FLUSH server and records cold
# start, idle RSS and the send rows (the head of both async sessions).
open_async() {
	local side="$1" pair="$2" dir="$3"
	local t0; t0="$(now_ns)"
	start_server "$side" "$dir" ASYNC_FLUSH
	rec "$side" "$pair" cold_start_ms "$(first_send "$side" BenchCold "$t0")"
	local pid; pid="$(broker_pid "$side")"
	sleep 2
	rec "$side" "$pair" rss_idle_anon_kb "$(rss "$pid" RssAnon)"
	rec "$side" "$pair" rss_idle_file_kb "$(rss "$pid" RssFile)"
	create_topic "$side" BenchTopic
	warmup "$side"
	send_rows "$side" "$pair" "$pid"
}

session_async() { # side pair
	local side="$1" pair="$2" dir="$WORK/$1.$2.async" ns; ns="$(ns_of "$side")"
	log "$side pair $pair: ASYNC_FLUSH session"
	open_async "$side" "$pair" "$dir"
	local pid; pid="$(broker_pid "$side")"

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

	if [ -z "$SKIP_CLIENTS" ]; then
		client_send_rows "$side" "$pair"
		client_e2e "$side" "$pair" go
		client_e2e "$side" "$pair" java
		if [ -n "$apachecp" ]; then apache_send_rows "$side" "$pair"; fi
	fi

	# Consume catch-up from a backlog: each generator reads all of it with a
	# group of its own.
	local stored gen
	stored="$(backlog "$side")"
	rec "$side" "$pair" backlog_msgs "$stored"
	j="$(bench consume -n "$ns" -t BenchBacklog -g "catchup_$pair" -from first -count "$stored" -duration 300s)"
	rec "$side" "$pair" consume_tps "$(jq -r '.tps' <<<"$j")"
	if [ -z "$SKIP_CLIENTS" ]; then
		for gen in go java; do
			j="$(client "$gen" consume ns="$ns" topic=BenchBacklog group="catchup_${gen}_$pair" count="$stored" duration=300)"
			rec "$side" "$pair" "${gen}_consume_tps" "$(jq -r '.tps' <<<"$j")"
			rec "$side" "$pair" "${gen}_consume_msgs" "$(jq -r '.messages' <<<"$j")"
			rec "$side" "$pair" "${gen}_consume_first_ms" "$(jq -r '.firstMs' <<<"$j")"
		done
		if [ -n "$apachecp" ]; then apache_consume "$side" "$pair"; fi
	fi
	rec "$side" "$pair" rss_loaded_anon_kb "$(rss "$pid" RssAnon)"
	rec "$side" "$pair" rss_loaded_file_kb "$(rss "$pid" RssFile)"

	if [ -z "$SKIP_RESTART" ]; then restart_big "$side" "$pair" "$dir"; fi
	stop_server "$side" "$dir"
}

# session_heap pair: the Java broker with the stock 8 GiB heap (JAVA_HEAP=both):
# start, RSS, mqbench send rows, backlog consume, loaded RSS.
session_heap() {
	local side=java8g pair="$1" dir="$WORK/java8g.$1.async" ns; ns="$(ns_of java8g)"
	log "java8g pair $pair: ASYNC_FLUSH session, stock heap"
	open_async "$side" "$pair" "$dir"
	local pid; pid="$(broker_pid "$side")"
	local stored j
	stored="$(backlog "$side")"
	rec "$side" "$pair" backlog_msgs "$stored"
	j="$(bench consume -n "$ns" -t BenchBacklog -g "catchup_$pair" -from first -count "$stored" -duration 300s)"
	rec "$side" "$pair" consume_tps "$(jq -r '.tps' <<<"$j")"
	rec "$side" "$pair" rss_loaded_anon_kb "$(rss "$pid" RssAnon)"
	rec "$side" "$pair" rss_loaded_file_kb "$(rss "$pid" RssFile)"
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
		rec "$side" "$pair" "sync_errors_$t" "$(jq -r '.errorTotal' <<<"$j")"
		if [ "$(jq -r '.errorTotal' <<<"$j")" != 0 ]; then
			rec "$side" "$pair" "sync_error_codes_$t" "$(jq -c '.errors' <<<"$j")"
		fi
	done
	stop_server "$side" "$dir"
}

sides=(java ours)
if [ "$JAVA54" = 1 ]; then sides+=(java54); fi
case "$ONLY" in
ours) sides=(ours) ;;
java) sides=(java) ;;
java54) sides=(java54) ;;
esac

started="$(date -u +%Y-%m-%dT%H:%M:%SZ)" started_s="$(date +%s)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
for pair in $(seq 1 "$PAIRS"); do
	for side in "${sides[@]}"; do session_async "$side" "$pair"; done
	if [ "$JAVA_HEAP" = both ] && [ "$ONLY" != ours ] && [ "$ONLY" != java54 ]; then session_heap "$pair"; fi
	if [ -z "$SKIP_SYNC" ]; then
		for side in "${sides[@]}"; do session_sync "$side" "$pair"; done
	fi
done

mkdir -p "$(dirname "$OUT")"
python3 "$root/bench/report.py" "$metrics" \
	--started "$started" --step "$STEP" --pairs "$PAIRS" --size "$SIZE" --queues "$QUEUES" --backlog "$BACKLOG" --segment "$SEGMENT" \
	--minutes "$(( ($(date +%s) - started_s + 30) / 60 ))" --java-heap "$JAVA_HEAP" --heap-fitted="$HEAP_FITTED" --heap-stock="$HEAP_STOCK" \
	--client-rate "$CLIENT_RATE" --client-warmup "$CLIENT_WARMUP" --client-e2e-warmup "$CLIENT_E2E_WARMUP" --restart-gb "$RESTART_GB" --fill-size "$FILL_SIZE" \
	--skipped "$(printf '%s' "${SKIP_SYNC:+SYNC_FLUSH sessions, }${SKIP_CLIENTS:+official-client rows, }${SKIP_RESTART:+restart, }" | sed 's/, $//')" \
	--load "$load_start (start), $(cut -d' ' -f1-3 /proc/loadavg) (end)" --shared "${NOTE:-}" \
	--rev "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" >"$OUT"
log "wrote $OUT (raw metrics and logs in $WORK)"

if [ -z "${SKIP_REPL:-}" ]; then
	STEP="$STEP" REPL_PAIRS="${REPL_PAIRS:-$PAIRS}" SIZE="$SIZE" QUEUES="$QUEUES" SEGMENT="$SEGMENT" \
		FILL_SIZE="$FILL_SIZE" ONLY="$ONLY" KEEP_STORE="$KEEP_STORE" WORK="$WORK/repl" \
		OUT="${REPL_OUT:-$root/bench/results-repl.md}" "$root/scripts/bench-repl.sh"
fi
