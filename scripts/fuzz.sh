#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -DFRT_FUZZ=ON, in build-fuzz/) and fuzzes each for SECONDS
# (default 3600). Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: onnx_decode pipeline)
#
# The targets run side by side, one libFuzzer process each (2 targets on 2 cores); FUZZ_JOBS=N
# gives each target N processes instead (libFuzzer -fork=N); FUZZ_KEEP_GOING=1 keeps fuzzing past
# crashes, leaks and timeouts (fork mode), to collect several findings in one long run. Seeds come from the committed
# tests/fuzz/corpus/TARGET/ (never written); what the run learns goes to build-fuzz/corpus/TARGET/,
# crashes, leaks and timeouts to build-fuzz/artifacts/TARGET/, logs to build-fuzz/logs/TARGET.log.
# Prints, per target, the executions reached and executions per second. Exits non-zero when any
# target found something (CI runs `scripts/fuzz.sh 60`). Replay a finding with
#   build-fuzz/fuzz_TARGET build-fuzz/artifacts/TARGET/crash-...
# then add it to tests/fuzz/corpus/TARGET/ with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-3600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(onnx_decode pipeline)
bash scripts/setup.sh --fuzz
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
CC=clang cmake -S . -B "$BUILD" -DFRT_FUZZ=ON -DFRT_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j2 --target "${TARGETS[@]/#/fuzz_}" >/dev/null

# A model may legitimately plan a huge slab or output; fuzz_pipeline makes ASan fail allocations
# above 512 MiB (flatrt must answer FRT_ERR_NO_MEMORY), below libFuzzer's -malloc_limit_mb.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pids=()
for t in "${TARGETS[@]}"; do
  mkdir -p "$BUILD/corpus/$t" "$BUILD/artifacts/$t" "$BUILD/logs"
  touch "$BUILD/logs/$t.start"
  args=(-max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -timeout=25 -rss_limit_mb=2560
        -dict=tests/fuzz/onnx.dict -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t/")
  if [ -n "${FUZZ_KEEP_GOING:-}" ]; then
    args+=(-fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  elif [ "${FUZZ_JOBS:-1}" -gt 1 ]; then
    args+=(-fork="$FUZZ_JOBS")
  fi
  echo "fuzz: $t for ${SECONDS_PER_TARGET}s (log $BUILD/logs/$t.log)"
  "$BUILD/fuzz_$t" "${args[@]}" "$BUILD/corpus/$t" "tests/fuzz/corpus/$t" \
    >"$BUILD/logs/$t.log" 2>&1 &
  pids+=($!)
done

fail=0
for i in "${!TARGETS[@]}"; do
  t=${TARGETS[$i]}
  rc=0
  wait "${pids[$i]}" || rc=$?
  log="$BUILD/logs/$t.log"
  # plain mode prints stat:: lines at exit; fork mode prints "#N: ... exec/s: E ..." lines
  execs=$(awk '/^stat::number_of_executed_units:/ {v = $2} END {print v}' "$log")
  rate=$(awk '/^stat::average_exec_per_sec:/ {v = $2} END {print v}' "$log")
  if [ -z "$execs" ]; then
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    rate=$(grep -oE 'exec/s:? [0-9]+' "$log" | tail -1 | awk '{print $NF}')
  fi
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  echo "fuzz: $t: ${execs:-?} executions, ${rate:-?} exec/s, $cov, exit $rc"
  found=$(find "$BUILD/artifacts/$t" -type f -newer "$BUILD/logs/$t.start" | head -5)
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    fail=1
    echo "fuzz: $t FOUND A PROBLEM; artifacts in $BUILD/artifacts/$t: $found" >&2
    grep -E 'ERROR|SUMMARY|fuzz_pipeline:|runtime error' "$log" | head -20 >&2 || true
  fi
done
exit $fail
