#!/usr/bin/env bash
# Sets up, builds flatrt and classifies the bundled digit samples with it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target flatrt >/dev/null
bash examples/digits/run.sh build/flatrt
