#!/usr/bin/env bash
# Installs the official RocketMQ 5 gRPC SDKs the gRPC conformance drivers use
# (conformance/grpcsdk), into conformance/.cache/grpc-sdk (gitignored):
#
#   grpcsdk.sh install-python   rocketmq-python-client into a venv: .cache/grpc-sdk/py
#   grpcsdk.sh install-node     rocketmq-client-nodejs into .cache/grpc-sdk/node
#   grpcsdk.sh install          both; a missing toolchain prints one line and is not an error
#
# Versions: PY_SDK_VERSION (5.1.2), NODE_SDK_VERSION (1.0.8). The Java SDK
# (rocketmq-client-java 5.0.8) is a Maven module: conformance/javagrpc.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cache="$here/.cache/grpc-sdk"
py_version="${PY_SDK_VERSION:-5.1.2}"
node_version="${NODE_SDK_VERSION:-1.0.8}"

install_python() {
	if ! command -v python3 >/dev/null; then
		echo "grpcsdk: python3 not found; the Python SDK column reports skip"; return 0
	fi
	if [ -f "$cache/py/.complete-$py_version" ]; then return 0; fi
	mkdir -p "$cache"
	python3 -m venv "$cache/py"
	"$cache/py/bin/pip" install -q --disable-pip-version-check "rocketmq-python-client==$py_version"
	touch "$cache/py/.complete-$py_version"
}

install_node() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "grpcsdk: node/npm not found; the Node.js SDK column reports skip"; return 0
	fi
	if [ -f "$cache/node/.complete-$node_version" ]; then return 0; fi
	mkdir -p "$cache/node"
	cd "$cache/node"
	[ -f package.json ] || echo '{"name":"rocketgo-grpc-conformance","private":true}' >package.json
	npm install --no-audit --no-fund --loglevel=error "rocketmq-client-nodejs@$node_version"
	touch "$cache/node/.complete-$node_version"
}

case "${1:-}" in
install-python) install_python ;;
install-node) install_node ;;
install) install_python || echo "grpcsdk: Python SDK install failed"; install_node || echo "grpcsdk: Node.js SDK install failed" ;;
*) echo "usage: $0 {install|install-python|install-node}" >&2; exit 2 ;;
esac
