#!/usr/bin/env bash
# Builds flatrt and runs the whole test suite: unit tests, malformed-model tests, CLI tests and the
# end-to-end model zoo (exported from PyTorch into build/models on first use).
# BUILD_DIR and CMAKE_ARGS (e.g. -DFRT_SANITIZE=address,undefined) can be set from outside.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j2
cd "$BUILD_DIR"
ctest --output-on-failure -j2 ${CTEST_ARGS:-}
