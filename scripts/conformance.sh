#!/usr/bin/env bash
# Runs the ONNX node test suite (generated from Debian's python3-onnx) through `flatrt check` and
# checks that every case in tests/conformance/expected_pass.txt passes.
# Usage: scripts/conformance.sh [BUILD_DIR] [--markdown OUT.md]
# Writes BUILD_DIR/conformance/report.txt (one line per case). Exit status 1 when a listed case
# fails. The suite is generated once into BUILD_DIR/onnx-suite.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
shift || true
suite="$BUILD_DIR/onnx-suite"
if [ ! -d "$suite/node" ]; then
  /usr/bin/python3 tests/conformance/gen_node_suite.py "$suite" >/dev/null
fi
mkdir -p "$BUILD_DIR/conformance"
report="$BUILD_DIR/conformance/report.txt"
set +e
"$BUILD_DIR/flatrt" check "$suite"/node/* >"$report"
set -e
tail -n 1 "$report"
/usr/bin/python3 tests/conformance/report.py "$report" "$suite/node" \
  tests/conformance/expected_pass.txt "$@"
