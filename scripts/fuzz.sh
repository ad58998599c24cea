#!/usr/bin/env bash
# Run every Go fuzz target of the main module for a fixed time each.
#   scripts/fuzz.sh [duration]     e.g. scripts/fuzz.sh 60s   (default 60s)
#   FUZZMINIMIZETIME=10s GO=go1.26 scripts/fuzz.sh 5m
# Targets are found by scanning *_test.go files for `func FuzzXxx(`.
# Exits non-zero if any target fails; new crashers land in the package's
# testdata/fuzz/FuzzXxx/ directory (review them, fix, and keep them).
set -euo pipefail

FUZZTIME="${1:-60s}"
GO="${GO:-go}"
# Minimizing every new interesting input for Go's default 60s would eat
# the whole budget of a short run.
MINIMIZE="${FUZZMINIMIZETIME:-5s}"
cd "$(dirname "$0")/.."

failed=()
ran=0
while IFS= read -r dir; do
	rel="./${dir#"$PWD"/}"
	[ "$dir" = "$PWD" ] && rel="."
	targets=$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)\(' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/' | sort -u || true)
	for t in $targets; do
		echo "=== $rel $t ($FUZZTIME)"
		ran=$((ran + 1))
		if ! "$GO" test -run '^$' -fuzz "^${t}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$MINIMIZE" "$rel"; then
			failed+=("$rel $t")
		fi
	done
done < <("$GO" list -f '{{.Dir}}' ./...)

echo "ran $ran fuzz targets"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'FAILED: %s\n' "${failed[@]}"
	exit 1
fi
