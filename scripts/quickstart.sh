#!/usr/bin/env bash
# Sets up, builds flatrt and classifies the bundled digit samples with it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target flatrt >/dev/null
# the Python binding, when configure found Python 3 and numpy headers (PYTHONPATH=build/python)
if [ -f build/python/flatrt/__init__.py ]; then cmake --build build -j2 --target flatrt_python >/dev/null; fi
bash examples/digits/run.sh build/flatrt
