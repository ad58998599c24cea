#!/usr/bin/env bash
# gen-proto.sh: regenerate proxy/apiv2/*.pb.go from proxy/apiv2/proto.
#   scripts/gen-proto.sh          write the generated files
#   scripts/gen-proto.sh -check   generate into a temp dir and fail if the
#                                 committed files differ (make verify-gen)
# protoc comes from the system (Debian: protobuf-compiler); the two Go plugins
# are built from the versions go.mod pins (see tools_deps.go), so every machine
# generates the same code; PROTOC names another protoc binary. Without protoc
# the check skips with a message: the committed .pb.go files keep the build
# working. The protoc version line of the generated headers is ignored by the
# check, since protoc only prints it there.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
PROTOC=${PROTOC:-protoc}
mode=${1:-}

if ! command -v "$PROTOC" >/dev/null; then
	if [ "$mode" = -check ]; then
		echo "gen-proto: $PROTOC not found; skipping the proxy/apiv2 staleness check (apt-get install protobuf-compiler)"
		exit 0
	fi
	echo "gen-proto: $PROTOC not found (apt-get install protobuf-compiler)" >&2
	exit 1
fi
inc=""
for d in "$(dirname "$(command -v "$PROTOC")")/../include" /usr/include /usr/local/include; do
	if [ -f "$d/google/protobuf/timestamp.proto" ]; then inc=$d; break; fi
done
if [ -z "$inc" ]; then
	echo "gen-proto: google/protobuf/timestamp.proto not found next to protoc" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GO build -o "$tmp/bin/" google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc

out=$tmp/out
mkdir -p "$out"
"$PROTOC" -I proxy/apiv2/proto -I "$inc" \
	--plugin=protoc-gen-go="$tmp/bin/protoc-gen-go" \
	--plugin=protoc-gen-go-grpc="$tmp/bin/protoc-gen-go-grpc" \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	proxy/apiv2/proto/apache/rocketmq/v2/*.proto
gen=$out/apache/rocketmq/v2

# The version line protoc stamps into each header.
strip() { grep -v -E '^//[[:space:]]+(- )?protoc[[:space:]]+v' "$1"; }

if [ "$mode" = -check ]; then
	stale=0
	for f in "$gen"/*.pb.go; do
		b=$(basename "$f")
		if [ ! -f "proxy/apiv2/$b" ] || ! diff -q <(strip "$f") <(strip "proxy/apiv2/$b") >/dev/null; then
			echo "gen-proto: proxy/apiv2/$b is stale; run make gen-proto" >&2
			stale=1
		fi
	done
	for f in proxy/apiv2/*.pb.go; do
		[ -f "$gen/$(basename "$f")" ] || { echo "gen-proto: $f has no .proto; remove it" >&2; stale=1; }
	done
	exit $stale
fi
rm -f proxy/apiv2/*.pb.go
cp "$gen"/*.pb.go proxy/apiv2/
