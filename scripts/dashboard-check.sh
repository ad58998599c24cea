#!/usr/bin/env bash
# make dashboard-check: apache/rocketmq-dashboard against rocketgo and against
# the Java 5.3.3 reference, every page driven in headless Chromium.
#
#   DASHBOARD_SRC=/path/to/rocketmq-dashboard scripts/dashboard-check.sh
#   EXPORTER_SRC=/path/to/rocketmq-exporter scripts/dashboard-check.sh exporter
#
# The exporter mode (make exporter-check) builds apache/rocketmq-exporter the
# same way (jar into EXPORTER_CACHE, default ~/.cache/rocketgo-exporter), runs
# it against each server after the same seeding, scrapes /metrics once every
# collector ran and compares the metric names and label names (compare-metrics.cjs).
#
# DASHBOARD_SRC   a rocketmq-dashboard source tree (required unless the jar is cached)
# DASHBOARD_CACHE build cache outside the repo (default ~/.cache/rocketgo-dashboard):
#                 src/ (a copy of the tree, with node_modules), rocketmq-dashboard.jar,
#                 driver/node_modules (puppeteer-core)
# DASHBOARD_OUT   screenshots, REST replies and the report (default .dashboard-out, gitignored)
# TARGETS         "ours java" (default) or one of them
# ACL             1 (default): then the ACL 2.0 pages again with authentication
#                 and authorization on (ours-acl/, java-acl/, report-acl.md);
#                 0 skips them, only runs nothing else
# CHROMIUM        browser binary (default /usr/bin/chromium; Debian package chromium)
#
# The dashboard's Maven build downloads Node itself, which cannot work offline:
# the frontend is built with this machine's node/npm and the jar with the
# frontend-maven-plugin skipped (-Dskip.installnodenpm -Dskip.npm); its antrun
# step then copies the prebuilt frontend into the jar.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-dashboard}"
cache="${DASHBOARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rocketgo-dashboard}"
out="${DASHBOARD_OUT:-$repo/.dashboard-out}"
targets="${TARGETS:-ours java}"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
jar="$cache/rocketmq-dashboard.jar"
javalib="$repo/conformance/.cache/java-server/lib"
heap=(-Xms64m -Xmx384m -XX:+UseSerialGC)

# Ports (127.0.0.1 only): picked at random among free ones unless set. A
# broker uses its port, port+1 (HA) and port-2 (VIP).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
pick_base() { # a base B with B-2 … B+2 and B+50 free
	local b i p ok
	for ((i = 0; i < 100; i++)); do
		b=$((21000 + RANDOM % 9000)); ok=1
		for p in $((b - 2)) $((b - 1)) "$b" $((b + 1)) $((b + 2)) $((b + 50)); do port_free "$p" || { ok=0; break; }; done
		if [ "$ok" = 1 ]; then echo "$b"; return; fi
	done
	echo 27911
}
b="$(pick_base)"; OURS_BROKER_PORT="${OURS_BROKER_PORT:-$b}"; OURS_NS_PORT="${OURS_NS_PORT:-$((b + 50))}"
b="$(pick_base)"; JAVA_BROKER_PORT="${JAVA_BROKER_PORT:-$b}"; JAVA_NS_PORT="${JAVA_NS_PORT:-$((b + 50))}"
b="$(pick_base)"; DASH_PORT="${DASH_PORT:-$b}"
EXPORTER_PORT="${EXPORTER_PORT:-$((b + 1))}"
EXPORTER_GRPC_PORT="${EXPORTER_GRPC_PORT:-$((b + 2))}"

log() { echo "dashboard-check: $*" >&2; }
die() { log "$*"; exit 1; }

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
	if [ -n "${javadir:-}" ]; then "$repo/conformance/scripts/javaserver.sh" stop "$javadir" || true; fi
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null || die "$1 not found ($2)"; }
need node "Debian nodejs"
need npm "Debian npm"
need java "a JDK 17"
need mvn "Maven"
[ -x "$CHROMIUM" ] || die "$CHROMIUM not found (apt-get install chromium)"

wait_http() { # URL SECONDS [PID: give up when it exits]
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
		if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then return 1; fi
		sleep 0.2
	done
	return 1
}

wait_port() { # PORT SECONDS
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		if ! port_free "$1"; then return 0; fi
		sleep 0.2
	done
	return 1
}

# ---- build ------------------------------------------------------------------
tree_stamp() { # a fingerprint of the source tree (names, sizes, mtimes)
	(cd "$1" && find . \( -name node_modules -o -name build -o -name target \) -prune -o -type f -printf '%P %s %T@\n' | sort | sha1sum | cut -c1-40)
}

# sync_tree SRC DST: DST becomes a copy of SRC, keeping DST's node_modules,
# frontend-new/build and target (build products) between runs.
sync_tree() {
	mkdir -p "$2"
	find "$2" -mindepth 1 -maxdepth 1 ! -name target ! -name frontend-new -exec rm -rf {} +
	if [ -d "$2/frontend-new" ]; then
		find "$2/frontend-new" -mindepth 1 -maxdepth 1 ! -name node_modules ! -name build ! -name .lock.stamp -exec rm -rf {} +
	fi
	(cd "$1" && tar -cf - --exclude=./target --exclude=./frontend-new/node_modules --exclude=./frontend-new/build .) | (cd "$2" && tar -xf -)
}

build() {
	mkdir -p "$cache"
	if [ -z "${DASHBOARD_SRC:-}" ]; then
		[ -f "$jar" ] || die "DASHBOARD_SRC is not set and $jar is not built (fetch apache/rocketmq-dashboard and point DASHBOARD_SRC at it)"
		log "using cached $jar"
		return
	fi
	[ -f "$DASHBOARD_SRC/pom.xml" ] && [ -d "$DASHBOARD_SRC/frontend-new" ] || die "$DASHBOARD_SRC is not a rocketmq-dashboard tree (pom.xml, frontend-new/)"
	local stamp; stamp="$(tree_stamp "$DASHBOARD_SRC")"
	if [ -f "$jar" ] && [ "$(cat "$cache/jar.stamp" 2>/dev/null)" = "$stamp" ]; then
		log "dashboard jar up to date ($jar)"
		return
	fi
	log "building the dashboard from $DASHBOARD_SRC in $cache/src"
	mkdir -p "$cache/src"
	sync_tree "$DASHBOARD_SRC" "$cache/src"
	(
		cd "$cache/src/frontend-new"
		local lockstamp; lockstamp="$(sha1sum package-lock.json | cut -c1-40)"
		if [ ! -d node_modules ] || [ "$(cat .lock.stamp 2>/dev/null)" != "$lockstamp" ]; then
			# package-lock.json resolves to a mirror host; fetch from the configured registry.
			npm ci --no-audit --no-fund --replace-registry-host=always
			echo "$lockstamp" >.lock.stamp
		fi
		# CI=false: CRA would turn lint warnings into errors.
		CI=false GENERATE_SOURCEMAP=false npm run build
	)
	(
		cd "$cache/src"
		mvn -B -q -Dskip.installnodenpm -Dskip.npm -Dmaven.test.skip=true -DskipTests \
			-Drat.skip=true -Dcheckstyle.skip=true -Dfindbugs.skip=true -Djacoco.skip=true package
	)
	local built; built="$(ls "$cache"/src/target/rocketmq-dashboard-*.jar | grep -v -e sources -e original | head -1)"
	[ -n "$built" ] || die "no jar under $cache/src/target"
	# (unzip names the entry itself: a grep -q under pipefail could cut the
	# listing short and fail on the SIGPIPE)
	unzip -l "$built" BOOT-INF/classes/public/index.html >/dev/null || die "$built has no frontend (public/index.html)"
	cp "$built" "$jar"
	echo "$stamp" >"$cache/jar.stamp"
	log "built $jar"
}

driver() {
	mkdir -p "$cache/driver"
	if [ ! -d "$cache/driver/node_modules/puppeteer-core" ]; then
		(cd "$cache/driver" && { [ -f package.json ] || echo '{"name":"dashboard-driver","private":true}' >package.json; } &&
			PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund puppeteer-core@25)
	fi
}

exporter_build() {
	local ecache="${EXPORTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rocketgo-exporter}"
	exporter_jar="$ecache/rocketmq-exporter.jar"
	mkdir -p "$ecache"
	if [ -z "${EXPORTER_SRC:-}" ]; then
		[ -f "$exporter_jar" ] || die "EXPORTER_SRC is not set and $exporter_jar is not built"
		return
	fi
	[ -f "$EXPORTER_SRC/pom.xml" ] || die "$EXPORTER_SRC is not a rocketmq-exporter tree"
	local stamp; stamp="$(tree_stamp "$EXPORTER_SRC")"
	if [ -f "$exporter_jar" ] && [ "$(cat "$ecache/jar.stamp" 2>/dev/null)" = "$stamp" ]; then return; fi
	mkdir -p "$ecache/src"
	sync_tree "$EXPORTER_SRC" "$ecache/src"
	(cd "$ecache/src" && mvn -B -q -Dmaven.test.skip=true -DskipTests -Drat.skip=true -Dcheckstyle.skip=true -Dlicense.skip=true package)
	cp "$(ls "$ecache"/src/target/rocketmq-exporter-*-exec.jar | head -1)" "$exporter_jar"
	echo "$stamp" >"$ecache/jar.stamp"
	log "built $exporter_jar"
}

# Runs the exporter against NS, waits until every collector has run, saves /metrics.
exporter_run() { # T NS DIR
	local t="$1" ns="$2" dir="$3" every='0/5 * * * * ?'
	port_free "$EXPORTER_PORT" || die "port $EXPORTER_PORT busy (EXPORTER_PORT)"
	# Its start-up asks the name server for the cluster within the client's
	# 5 s; on a loaded machine that can time out and the exporter exits: retry.
	local attempt epid
	for attempt in 1 2 3; do
		setsid java "${heap[@]}" -jar "$exporter_jar" --server.address=127.0.0.1 --server.port="$EXPORTER_PORT" \
			--grpc.server.port="$EXPORTER_GRPC_PORT" --rocketmq.config.namesrvAddr="$ns" \
			--rocketmq.config.rocketmqVersion=V5_3_3 \
			--task.collectTopicOffset.cron="$every" --task.collectProducer.cron="$every" \
			--task.collectConsumerOffset.cron="$every" --task.collectBrokerStatsTopic.cron="$every" \
			--task.collectBrokerStats.cron="$every" --task.collectBrokerRuntimeStats.cron="$every" \
			>"$run/$t.exporter.log" 2>&1 </dev/null &
		epid=$!
		pids+=("$epid")
		if wait_http "http://127.0.0.1:$EXPORTER_PORT/metrics" 180 "$epid"; then break; fi
		if [ "$attempt" = 3 ] || ! grep -q RemotingTimeoutException "$run/$t.exporter.log"; then
			tail -50 "$run/$t.exporter.log" >&2
			die "$t: exporter did not start"
		fi
		log "$t: exporter start-up timed out talking to the name server; retrying"
	done
	# Every collector runs each 5 s; three rounds are enough for all of them.
	local i
	for ((i = 0; i < 60; i++)); do
		curl -fsS "http://127.0.0.1:$EXPORTER_PORT/metrics" >"$dir/metrics.txt" || true
		if grep -q '^rocketmq_brokeruntime' "$dir/metrics.txt" && grep -q '^rocketmq_group_diff' "$dir/metrics.txt" &&
			grep -q '^rocketmq_producer_offset' "$dir/metrics.txt" && [ "$i" -ge 4 ]; then break; fi
		sleep 1
	done
	sleep 6
	curl -fsS "http://127.0.0.1:$EXPORTER_PORT/metrics" >"$dir/metrics.txt"
	cp "$run/$t.exporter.log" "$dir/exporter.log"
	if grep -E 'ERROR|Exception' "$dir/exporter.log" | grep -v 'grpc' >"$dir/exporter-errors.txt"; then
		log "$t: exporter logged errors (see $dir/exporter-errors.txt)"
		return 1
	fi
	return 0
}

# ---- servers ----------------------------------------------------------------
# The auth keys of an ACL run, the same lines for Java and ours (ours ignores
# the provider class names, which name its only implementation); the
# dashboard signs as this super user.
acl_user=rocketmq acl_pass=12345678
auth_conf() {
	cat <<-EOF
		authenticationEnabled=true
		authorizationEnabled=true
		authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider
		authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider
		authorizationProvider=org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider
		authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider
		initAuthenticationUser={"username":"$acl_user","password":"$acl_pass"}
		innerClientAuthenticationCredentials={"accessKey":"$acl_user","secretKey":"$acl_pass"}
	EOF
}

start_ours() { # [acl]; sets ns
	local dir="$run/ours${1:+-$1}"
	mkdir -p "$dir"
	port_free "$OURS_NS_PORT" && port_free "$OURS_BROKER_PORT" || die "ports $OURS_NS_PORT/$OURS_BROKER_PORT busy (OURS_NS_PORT, OURS_BROKER_PORT)"
	cat >"$dir/broker.conf" <<-EOF
		brokerClusterName=DefaultCluster
		brokerName=broker-a
		brokerId=0
		brokerRole=ASYNC_MASTER
		flushDiskType=ASYNC_FLUSH
		brokerIP1=127.0.0.1
		autoCreateTopicEnable=true
		autoCreateSubscriptionGroup=true
		enablePropertyFilter=true
		traceTopicEnable=true
	EOF
	if [ "${1:-}" = acl ]; then auth_conf >>"$dir/broker.conf"; fi
	setsid "$repo/bin/rocketgo" -dataDir "$dir/data" -namesrvListen "127.0.0.1:$OURS_NS_PORT" \
		-brokerListen "127.0.0.1:$OURS_BROKER_PORT" -c "$dir/broker.conf" >"$dir/rocketgo.log" 2>&1 </dev/null &
	pids+=($!)
	local i
	for ((i = 0; i < 150; i++)); do
		grep -q '^rocketgo ready' "$dir/rocketgo.log" && break
		sleep 0.2
	done
	grep -q '^rocketgo ready' "$dir/rocketgo.log" || die "rocketgo not ready; see $dir/rocketgo.log"
	ns="127.0.0.1:$OURS_NS_PORT"
}

start_java() { # [acl]
	javadir="$run/java${1:+-$1}"
	mkdir -p "$javadir"
	port_free "$JAVA_NS_PORT" && port_free "$JAVA_BROKER_PORT" || die "ports $JAVA_NS_PORT/$JAVA_BROKER_PORT busy (JAVA_NS_PORT, JAVA_BROKER_PORT)"
	local extra=""
	if [ "${1:-}" = acl ]; then extra="$(auth_conf)"; fi
	JAVA_EXTRA_OPTS="-Xms128m -Xmx384m -XX:MaxDirectMemorySize=256m" \
		"$repo/conformance/scripts/javaserver.sh" start-namesrv "$JAVA_NS_PORT" "$javadir/ns" >&2
	wait_port "$JAVA_NS_PORT" 60 || die "Java name server not listening; see $javadir/ns/logs"
	BROKER_EXTRA_CONF="$extra" JAVA_EXTRA_OPTS="-Xms128m -Xmx384m -XX:MaxDirectMemorySize=256m" \
		"$repo/conformance/scripts/javaserver.sh" start-broker "127.0.0.1:$JAVA_NS_PORT" "$JAVA_BROKER_PORT" "$javadir/broker" >&2
	wait_port "$JAVA_BROKER_PORT" 90 || die "Java broker not listening; see $javadir/broker/logs"
	ns="127.0.0.1:$JAVA_NS_PORT"
}

# ---- one target -------------------------------------------------------------
check_target() { # ours|java [acl]
	local t="$1" variant="${2:-}" ns dir="$out/$1${2:+-$2}"
	rm -rf "$dir"
	mkdir -p "$dir"
	case "$t" in
	ours) start_ours "$variant" ;;
	java) start_java "$variant" ;;
	*) die "unknown target $t" ;;
	esac
	if [ "$variant" = acl ]; then
		check_acl "$t" "$ns" "$dir"
		return
	fi
	log "$t: name server $ns; seeding"

	local fifo="$run/$t.seed.in"
	rm -f "$fifo" "$dir/seed.json"
	mkfifo "$fifo"
	setsid java "${heap[@]}" -cp "$cache/seed:$javalib/*" Seed "$ns" "$dir/seed.json" \
		<"$fifo" >"$run/$t.seed.log" 2>&1 &
	local seedpid=$!
	pids+=("$seedpid")
	exec 7>"$fifo" # holds the seeder's stdin open; closed below
	local i
	for ((i = 0; i < 600; i++)); do
		[ -s "$dir/seed.json" ] && break
		kill -0 "$seedpid" 2>/dev/null || break
		sleep 0.2
	done
	[ -s "$dir/seed.json" ] || { cat "$run/$t.seed.log" >&2; die "$t: seeding failed"; }

	if [ "$mode" = exporter ]; then
		local erc=0
		exporter_run "$t" "$ns" "$dir" || erc=$?
		exec 7>&-
		cleanup
		return $erc
	fi

	port_free "$DASH_PORT" || die "port $DASH_PORT busy (DASH_PORT)"
	setsid java "${heap[@]}" -jar "$jar" --server.address=127.0.0.1 --server.port="$DASH_PORT" \
		--rocketmq.config.namesrvAddrs[0]="$ns" --rocketmq.config.isVIPChannel=false \
		--rocketmq.config.dataPath="$run/$t.dashdata" --rocketmq.config.proxyAddrs[0]=127.0.0.1:1 \
		--rocketmq.config.proxyAddr=127.0.0.1:1 \
		>"$run/$t.dashboard.log" 2>&1 </dev/null &
	local dashpid=$!
	pids+=("$dashpid")
	wait_http "http://127.0.0.1:$DASH_PORT/" 180 "$dashpid" || { tail -50 "$run/$t.dashboard.log" >&2; die "$t: dashboard did not start"; }
	log "$t: dashboard up on 127.0.0.1:$DASH_PORT; driving Chromium"

	local rc=0
	NODE_PATH="$cache/driver/node_modules" node "$repo/scripts/dashboard/check.cjs" \
		"http://127.0.0.1:$DASH_PORT" "$dir/seed.json" "$dir" || rc=$?
	cp "$run/$t.dashboard.log" "$dir/dashboard.log"
	exec 7>&-
	cleanup
	return $rc
}

# The ACL pages against a server with auth on: no seeding (the clients would
# need credentials), the dashboard signs as the super user.
check_acl() { # T NS DIR
	local t="$1" ns="$2" dir="$3" port
	if [ "$t" = ours ]; then port="$OURS_BROKER_PORT"; else port="$JAVA_BROKER_PORT"; fi
	# What compare.cjs substitutes: only the broker address here.
	printf '{"msgIds":[],"offsetMsgIds":[],"dlqMsgId":"(none)","brokerAddr":"127.0.0.1:%s"}\n' "$port" >"$dir/seed.json"
	port_free "$DASH_PORT" || die "port $DASH_PORT busy (DASH_PORT)"
	setsid java "${heap[@]}" -jar "$jar" --server.address=127.0.0.1 --server.port="$DASH_PORT" \
		--rocketmq.config.namesrvAddrs[0]="$ns" --rocketmq.config.isVIPChannel=false \
		--rocketmq.config.dataPath="$run/$t-acl.dashdata" --rocketmq.config.proxyAddrs[0]=127.0.0.1:1 \
		--rocketmq.config.proxyAddr=127.0.0.1:1 \
		--rocketmq.config.accessKey="$acl_user" --rocketmq.config.secretKey="$acl_pass" \
		>"$run/$t-acl.dashboard.log" 2>&1 </dev/null &
	local dashpid=$!
	pids+=("$dashpid")
	wait_http "http://127.0.0.1:$DASH_PORT/" 180 "$dashpid" || { tail -50 "$run/$t-acl.dashboard.log" >&2; die "$t-acl: dashboard did not start"; }
	# The ACL page picks its broker from the cluster table when it opens:
	# wait until the broker has registered.
	local i
	for ((i = 0; i < 300; i++)); do
		curl -fsS "http://127.0.0.1:$DASH_PORT/cluster/list.query" 2>/dev/null | grep -q '"broker-a"' && break
		sleep 0.2
	done
	log "$t-acl: dashboard up on 127.0.0.1:$DASH_PORT (signing as $acl_user); driving the ACL pages"
	local rc=0
	DASH_STEPS=acl NODE_PATH="$cache/driver/node_modules" node "$repo/scripts/dashboard/check.cjs" \
		"http://127.0.0.1:$DASH_PORT" "$dir/seed.json" "$dir" || rc=$?
	cp "$run/$t-acl.dashboard.log" "$dir/dashboard.log"
	cleanup
	return $rc
}

case "$mode" in
dashboard) build; driver ;;
exporter) exporter_build; out="${EXPORTER_OUT:-$repo/.exporter-out}" ;;
*) die "usage: $0 [dashboard|exporter]" ;;
esac
run="$cache/run"
rm -rf "$run"
mkdir -p "$run" "$out"
if [[ " $targets " == *" ours "* ]]; then
	[ -x "$repo/bin/rocketgo" ] || die "bin/rocketgo missing (make build)"
fi
if [[ " $targets " == *" java "* ]]; then
	"$repo/conformance/scripts/javaserver.sh" fetch
fi
[ -d "$javalib" ] || "$repo/conformance/scripts/javaserver.sh" fetch
mkdir -p "$cache/seed"; rm -f "$cache/seed/Seed.class"
javac -nowarn -cp "$javalib/*" -d "$cache/seed" "$repo/scripts/dashboard/Seed.java" 2>&1 | grep -v '^Note:' >&2 || true
[ -f "$cache/seed/Seed.class" ] || die "Seed.java did not compile"

status=0
if [ "${ACL:-1}" != only ]; then
for t in $targets; do
	check_target "$t" || { log "$t: errors (see $out/$t/)"; status=1; }
done
if [ "$mode" = exporter ] && [[ " $targets " == *" ours "* && " $targets " == *" java "* ]]; then
	node "$repo/scripts/dashboard/compare-metrics.cjs" "$out/ours/metrics.txt" "$out/java/metrics.txt" "$out/report.md" || status=1
	log "report: $out/report.md"
elif [[ " $targets " == *" ours "* && " $targets " == *" java "* ]]; then
	node "$repo/scripts/dashboard/compare.cjs" "$out/ours" "$out/java" "$out/report.md" || status=1
	log "report: $out/report.md"
fi
fi
if [ "$mode" = dashboard ] && [ "${ACL:-1}" != 0 ]; then
	for t in $targets; do
		check_target "$t" acl || { log "$t-acl: errors (see $out/$t-acl/)"; status=1; }
	done
	if [[ " $targets " == *" ours "* && " $targets " == *" java "* ]]; then
		node "$repo/scripts/dashboard/compare.cjs" "$out/ours-acl" "$out/java-acl" "$out/report-acl.md" || status=1
		log "report: $out/report-acl.md"
	fi
fi
exit $status
