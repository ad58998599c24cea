# rocketgo — see README.md. Everything runs from a fresh clone.
GO      ?= go
PKGS    := ./...
DATA    ?= $(CURDIR)/data
FUZZTIME ?= 60s

.PHONY: build test test-long fuzz bench bench-compare bench-repl bench-scale bench-tail bench-grpc conformance run verify-gen gen gen-proto vet test-failover dashboard-check exporter-check

build:
	$(GO) build -o bin/ ./cmd/...

vet:
	$(GO) vet $(PKGS)

gen: gen-proto
	$(GO) run ./codec/internal/gen

# proxy/apiv2/*.pb.go from proxy/apiv2/proto (needs protoc; the Go plugins
# are the versions go.mod pins, see tools_deps.go).
gen-proto:
	GO=$(GO) ./scripts/gen-proto.sh

# verify-gen fails when generated code is stale (the proto half skips with a
# message when protoc is missing).
verify-gen:
	$(GO) run ./codec/internal/gen -check
	GO=$(GO) ./scripts/gen-proto.sh -check

test: verify-gen vet
	$(GO) test -count=1 -timeout 12m $(PKGS)
	$(GO) test -count=1 -race -timeout 5m ./store/...
	cd bench/tracetail && $(GO) test -count=1 ./...
	ROCKETGO_HOSTILE=1 $(GO) test -count=1 -timeout 5m -run '^TestHostile(MixStaysBounded|SingleAttacks)$$' -v ./cmd/mqbench/
	ROCKETGO_HOSTILE=1 $(GO) test -count=1 -timeout 2m -run '^TestTLSTenThousandIdleHandshakes$$' -v ./codec/transport/
	ROCKETGO_HOSTILE=1 $(GO) test -count=1 -timeout 3m -run '^TestHostileTenThousandIdleStreams$$' -v ./proxy/grpcsvc/
	@if [ -f conformance/go.mod ]; then $(MAKE) --no-print-directory -C conformance test; fi

# Long soak and crash runs (minutes); run by hand before a release.
test-long:
	$(GO) test -count=1 -tags long -timeout 60m $(PKGS)

fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

conformance:
	$(MAKE) --no-print-directory -C conformance matrix

run: build
	./bin/rocketgo -dataDir $(DATA)

# Side-by-side mqbench runs against the Java 5.3.x broker (needs java, mvn,
# jq, python3; ~35 minutes with the defaults; STEP=3s PAIRS=1 for a smoke run).
# APACHE_BENCH_SRC=<apache/rocketmq source tree> adds Apache's benchmark
# Producer/Consumer (built into ~/.cache/rocketgo-bench, never committed).
bench-compare: build
	APACHE_BENCH_SRC="$(APACHE_BENCH_SRC)" ./scripts/bench-compare.sh

# Cost curves, ours vs the Java 5.3.3 name server + broker in one run (topics,
# idle clients, held pulls, consumer groups, restart with a large commit log):
# bench/results-scale.md and bench/scale-*.svg. Needs java, mvn, jq, python3,
# fallocate; ~45 minutes at full sizes, QUICK=1 for reduced ones.
# CURVES=twogroup (root, ip netns; not in the default run): two broker sets
# x 3 replicas under 3 controllers, kill -9 of one set's master while the
# other serves (conformance/failover TestTwoGroup, ~10-20 minutes).
bench-scale: build
	./scripts/bench-scale.sh

bench-tail: build
	./scripts/bench-tail.sh

# Replication rows alone (master/slave pairs, ours vs Java; bench-compare
# runs them too unless SKIP_REPL=1); STEP=3s REPL_PAIRS=1 CATCHUP_GB=1 for a
# smoke run.
bench-repl: build
	./scripts/bench-repl.sh

# gRPC rows: the Java 5 gRPC SDK (conformance/javagrpc GrpcBench) against
# rocketgo's native endpoint, Apache's proxy 5.3.3 + our broker, our mqproxy +
# the Java broker and Apache's proxy + Java broker: bench/results-grpc.md.
# Needs java, mvn, python3; ~10 minutes (STEP=10 s per step).
bench-grpc: build
	./scripts/bench-grpc.sh

# Failover fault injection in network namespaces (root; see conformance/failover).
test-failover:
	$(MAKE) --no-print-directory -C conformance test-failover

# rocketmq-dashboard against ours and against the Java 5.3.3 reference, every
# page driven in headless Chromium (needs node/npm, java, mvn, chromium; not
# part of make test). DASHBOARD_SRC=/path/to/rocketmq-dashboard (a source
# tree; built once into DASHBOARD_CACHE, default ~/.cache/rocketgo-dashboard).
# Screenshots, REST replies and report.md land in .dashboard-out/; then the ACL
# pages with auth on (ACL=0 skips them, ACL=only runs just them).
dashboard-check: build
	DASHBOARD_SRC="$(DASHBOARD_SRC)" ./scripts/dashboard-check.sh

# rocketmq-exporter against ours and against Java (same seeding): its /metrics
# scrape compared by metric and label names. EXPORTER_SRC=/path/to/rocketmq-exporter.
exporter-check: build
	EXPORTER_SRC="$(EXPORTER_SRC)" ./scripts/dashboard-check.sh exporter
