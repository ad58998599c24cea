#!/usr/bin/env bash
# bench-security.sh: send TPS and p99 of plaintext, TLS, auth on and both,
# rocketgo against the Apache RocketMQ 5.3.3 reference broker on this
# machine (127.0.0.1, same settings), alternating Java and ours per pair.
# Writes bench/results-security.md (medians over PAIRS).
#
# Each session starts one server (auth off or on: Java 5.3.3's auth keys,
# the same lines for both), warms up, then runs cmd/mqbench's async
# producer for STEP seconds per row: plaintext and -tls (auth off),
# -ak/-sk signed and signed over TLS (auth on, as the super user, so
# authorization passes after its lookup). Sends go straight to the broker
# (-b, 4 queues of an auto-created topic).
#
# MODE=authcost instead measures what auth costs ours alone: PAIRS
# alternating sessions plaintext (auth off), auth (on), plaintext, auth…,
# one row each, and writes the median, spread and load average of each
# into the "Auth cost" section of OUT (between its markers), leaving the
# table above alone.
#
# Knobs: STEP=10s WARMUP=15s PAIRS=2 SIZE=1024 THREADS=8 CONNS=4 INFLIGHT=16
#        OUT=bench/results-security.md WORK=<tmpdir> ONLY=ours|java MODE=all|authcost
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
STEP="${STEP:-10s}"
WARMUP="${WARMUP:-15s}" # unrecorded load first: the JVM compiles its hot paths
PAIRS="${PAIRS:-2}"
SIZE="${SIZE:-1024}"
THREADS="${THREADS:-8}"
CONNS="${CONNS:-4}"
INFLIGHT="${INFLIGHT:-16}"
OUT="${OUT:-$root/bench/results-security.md}"
WORK="${WORK:-$(mktemp -d /tmp/rocketgo-bench-sec.XXXXXX)}"
ONLY="${ONLY:-}"
MODE="${MODE:-all}"
if [ "$MODE" = authcost ]; then ONLY=ours; fi
bin="$WORK/bin"
javaserver="$root/conformance/scripts/javaserver.sh"
metrics="$WORK/metrics.tsv"
: >"$metrics"

OURS_NS=127.0.0.1:19876 OURS_BROKER=127.0.0.1:20911
JAVA_NS_PORT=29876 JAVA_BROKER_PORT=30911
JAVA_NS=127.0.0.1:$JAVA_NS_PORT JAVA_BROKER=127.0.0.1:$JAVA_BROKER_PORT
AK=rocketmq SK=12345678
auth_conf() {
	printf '%s\n' authenticationEnabled=true authorizationEnabled=true \
		authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider \
		authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider \
		authorizationProvider=org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider \
		authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider \
		"initAuthenticationUser={\"username\":\"$AK\",\"password\":\"$SK\"}" \
		"innerClientAuthenticationCredentials={\"accessKey\":\"$AK\",\"secretKey\":\"$SK\"}"
}

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
mkdir -p "$bin"
log "building into $bin"
(cd "$root" && go build -o "$bin/" ./cmd/rocketgo ./cmd/mqbench ./cmd/mqadmin)
if [ "$ONLY" != ours ]; then "$javaserver" fetch; fi

broker_of() { if [ "$1" = ours ]; then echo "$OURS_BROKER"; else echo "$JAVA_BROKER"; fi; }
ns_of() { if [ "$1" = ours ]; then echo "$OURS_NS"; else echo "$JAVA_NS"; fi; }

start() { # side auth dir
	local side="$1" auth="$2" dir="$3" extra="autoCreateTopicEnable=true"
	mkdir -p "$dir"
	if [ "$auth" = on ]; then extra="$extra"$'\n'"$(auth_conf)"; fi
	if [ "$side" = ours ]; then
		printf '%s\n' "$extra" >"$dir/broker.conf"
		setsid "$bin/rocketgo" -dataDir "$dir" -namesrvListen "$OURS_NS" -brokerListen "$OURS_BROKER" \
			-c "$dir/broker.conf" >>"$dir/rocketgo.log" 2>&1 </dev/null &
		echo $! >"$WORK/ours.pid"
		disown
	else
		"$javaserver" start-namesrv "$JAVA_NS_PORT" "$dir/ns" >/dev/null
		BROKER_EXTRA_CONF="$extra" "$javaserver" start-broker "$JAVA_NS" "$JAVA_BROKER_PORT" "$dir/br" >/dev/null
	fi
	local i
	for i in $(seq 1 1200); do
		if "$bin/mqadmin" clusterList -n "$(ns_of "$side")" 2>/dev/null | grep -q "$(broker_of "$side")"; then return 0; fi
		sleep 0.1 # polling a starting server, bounded above
	done
	log "$side did not register"; return 1
}

stop() { # side dir
	if [ "$1" = ours ]; then
		local pid; pid="$(cat "$WORK/ours.pid" 2>/dev/null || true)"
		if [ -n "$pid" ]; then kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL -- "-$pid" 2>/dev/null || true; fi
		rm -f "$WORK/ours.pid"
	else
		"$javaserver" stop "$2/br" >/dev/null 2>&1 || true
		"$javaserver" stop "$2/ns" >/dev/null 2>&1 || true
	fi
	rm -rf "$2"
}
cleanup() { stop ours "$WORK/s-ours" 2>/dev/null || true; stop java "$WORK/s-java" 2>/dev/null || true; }
trap cleanup EXIT
trap "exit 130" INT TERM

produce() { # side duration extra-flags...
	local side="$1" d="$2"; shift 2
	"$bin/mqbench" produce -b "$(broker_of "$side")" -t SecTopic -queues 4 -mode async -threads "$THREADS" \
		-conns "$CONNS" -inflight "$INFLIGHT" -size "$SIZE" -duration "$d" -quiet -json "$@"
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
server_pid() { # side: the broker process (ours: rocketgo, name server inside)
	if [ "$1" = ours ]; then cat "$WORK/ours.pid"; else cat "$WORK/s-java/br/broker.pid"; fi
}
row() { # side pair name flags...
	local side="$1" pair="$2" name="$3"; shift 3
	local pid t0 t1; pid="$(server_pid "$side")"; t0="$(cpu_ticks "$pid")"
	local j; j="$(produce "$side" "$STEP" "$@")"
	t1="$(cpu_ticks "$pid")"
	local tps p99 errs cpu
	tps="$(python3 -c 'import json,sys; print(round(json.load(sys.stdin)["tps"]))' <<<"$j")"
	p99="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["latencyMs"]["p99"])' <<<"$j")"
	errs="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["errorTotal"])' <<<"$j")"
	# Server CPU per message: clock ticks (1/100 s) of user + system time.
	cpu="$(python3 -c 'import json,sys; m=json.load(sys.stdin)["messages"]; print(round(('"$t1"'-'"$t0"')*10000/max(m,1),2))' <<<"$j")"
	local load; load="$(cut -d' ' -f1 /proc/loadavg)"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$side" "$pair" "$name" "$tps" "$p99" "$errs" "$cpu" "$load" >>"$metrics"
	log "  $side pair $pair $name: $tps msg/s p99 $p99 ms errors $errs server CPU $cpu µs/msg"
}

session() { # side pair auth
	local side="$1" pair="$2" auth="$3" dir="$WORK/s-$1"
	log "$side pair $pair auth $auth"
	start "$side" "$auth" "$dir"
	if [ "$auth" = off ]; then
		produce "$side" "$WARMUP" >/dev/null || true # warm-up: creates the topic, JIT, page cache
		row "$side" "$pair" plaintext
		if [ "$MODE" != authcost ]; then row "$side" "$pair" tls -tls; fi
	else
		produce "$side" "$WARMUP" -ak "$AK" -sk "$SK" >/dev/null || true
		row "$side" "$pair" auth -ak "$AK" -sk "$SK"
		if [ "$MODE" != authcost ]; then row "$side" "$pair" tls+auth -tls -ak "$AK" -sk "$SK"; fi
	fi
	stop "$side" "$dir"
}

for pair in $(seq 1 "$PAIRS"); do
	for auth in off on; do
		if [ "$ONLY" != ours ]; then session java "$pair" "$auth"; fi
		if [ "$ONLY" != java ]; then session ours "$pair" "$auth"; fi
	done
done

if [ "$MODE" = authcost ]; then
	python3 - "$metrics" "$OUT" "$STEP" "$SIZE" "$THREADS" "$CONNS" "$INFLIGHT" "$PAIRS" "$(git -C "$root" rev-parse --short HEAD)" <<'EOF'
import sys, statistics, collections, re
metrics, out, step, size, threads, conns, inflight, pairs, rev = sys.argv[1:]
rows = collections.defaultdict(list)  # name -> [(pair, tps, p99, cpu, load, errors)]
for line in open(metrics):
    side, pair, name, t, p, e, c, l = line.rstrip("\n").split("\t")
    rows[name].append((int(pair), float(t), float(p), float(c), float(l), int(e)))
med = statistics.median
def spread(xs): return f"{min(xs):,.0f}–{max(xs):,.0f}"
o = ["<!-- authcost:begin -->", "## Auth cost, ours alone (MODE=authcost)", "",
     f"{pairs} alternating pairs (auth off, auth on, off, on…; a fresh broker per session, warmed up), "
     f"{step} per row, mqbench async producer {threads} threads x {inflight} in flight over {conns} connections, "
     f"{size}-byte bodies, at {rev}. CPU is the broker process's user+system time per message (/proc/PID/stat): "
     "the load generator's own signing is not in it; msg/s includes it, as the producer shares the 2 cores.", "",
     "| row | msg/s median | msg/s min–max | p99 ms median | broker CPU µs/msg median | CPU min–max | load avg (1 min) at each row | errors |",
     "|---|---:|---:|---:|---:|---:|---|---:|"]
for name in ("plaintext", "auth"):
    r = rows[name]
    if not r: continue
    tps = [x[1] for x in r]; p99 = [x[2] for x in r]; cpu = [x[3] for x in r]; load = [x[4] for x in r]
    o.append(f"| {name} | {med(tps):,.0f} | {spread(tps)} | {med(p99):.2f} | {med(cpu):.2f} | {min(cpu):.2f}–{max(cpu):.2f} | "
             f"{', '.join(f'{x:.1f}' for x in load)} | {sum(x[5] for x in r)} |")
pl = {x[0]: x for x in rows["plaintext"]}; au = {x[0]: x for x in rows["auth"]}
ratios = [(au[k][1] / pl[k][1], au[k][3] / pl[k][3]) for k in sorted(pl) if k in au and pl[k][1] > 0 and pl[k][3] > 0]
if ratios:
    tr = [x[0] for x in ratios]; cr = [x[1] for x in ratios]
    o += ["", f"Per pair, auth / plaintext (each auth row against the plaintext row before it): msg/s {med(tr):.3f} "
          f"median ({min(tr):.3f}–{max(tr):.3f}); broker CPU per message {med(cr):.3f} median ({min(cr):.3f}–{max(cr):.3f}). "
          "Pairs (msg/s, CPU): " + ", ".join(f"{a:.2f}/{c:.2f}" for a, c in ratios) + "."]
o.append("<!-- authcost:end -->")
sec = "\n".join(o) + "\n"
try: text = open(out).read()
except FileNotFoundError: text = ""
if "<!-- authcost:begin -->" in text:
    text = re.sub(r"<!-- authcost:begin -->.*?<!-- authcost:end -->\n?", lambda m: sec, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + sec
open(out, "w").write(text)
print(sec)
EOF
	log "metrics in $metrics"
	exit 0
fi

python3 - "$metrics" "$OUT" "$STEP" "$SIZE" "$THREADS" "$CONNS" "$INFLIGHT" "$PAIRS" <<'EOF'
import sys, statistics, collections
metrics, out, step, size, threads, conns, inflight, pairs = sys.argv[1:]
tps, p99, cpu, errs = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(int)
for line in open(metrics):
    side, pair, name, t, p, e, c = line.rstrip("\n").split("\t")[:7]
    tps[(side, name)].append(float(t)); p99[(side, name)].append(float(p)); errs[(side, name)] += int(e)
    cpu[(side, name)].append(float(c))
med = lambda xs: statistics.median(xs) if xs else float("nan")
rows = ["plaintext", "tls", "auth", "tls+auth"]
o = ["# Security cost: plaintext, TLS, auth, both (scripts/bench-security.sh)", "",
     f"mqbench async producer, {threads} threads x {inflight} in flight over {conns} connections, {size}-byte bodies, "
     f"4 queues, {step} per row, medians of {pairs} alternating Java/ours pairs, same machine (2 cores, shared; the load "
     "generator runs there too and signs every send itself, ~1.5 µs of client CPU per message). CPU is the broker "
     "process's user+system time per message (ours: one process with the name server inside).", "",
     "| row | ours msg/s | ours p99 ms | ours CPU µs/msg | Java msg/s | Java p99 ms | Java CPU µs/msg | ours/Java msg/s | ours vs ours plaintext (msg/s, CPU) | errors (ours/Java) |",
     "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
base = med(tps[("ours", "plaintext")])
cbase = med(cpu[("ours", "plaintext")])
for r in rows:
    ot, jt = med(tps[("ours", r)]), med(tps[("java", r)])
    op, jp = med(p99[("ours", r)]), med(p99[("java", r)])
    ratio = f"{ot/jt:.2f}x" if jt == jt and jt > 0 else "n/a"
    oc, jc = med(cpu[("ours", r)]), med(cpu[("java", r)])
    rel = f"{ot/base:.2f}x, {oc/cbase:.2f}x" if base == base and base > 0 and cbase > 0 else "n/a"
    o.append(f"| {r} | {ot:,.0f} | {op:.2f} | {oc:.2f} | {jt:,.0f} | {jp:.2f} | {jc:.2f} | {ratio} | {rel} | {errs[('ours', r)]}/{errs[('java', r)]} |")
import re
try: kept = re.search(r"<!-- authcost:begin -->.*?<!-- authcost:end -->\n?", open(out).read(), flags=re.S)
except FileNotFoundError: kept = None
open(out, "w").write("\n".join(o) + "\n" + ("\n" + kept.group(0) if kept else ""))
print("\n".join(o))
EOF
log "metrics in $metrics"
