#!/bin/sh
# Ahead-of-time programs in CI (docs/selective.md "Ahead-of-time programs"): `flatrt compile`
# writes each MODEL's program with the full CLI; a nested runtime-only build (-DFRT_SELECT=<the
# models' trace> -DFRT_AOT_ONLY=ON, with AddressSanitizer + UndefinedBehaviorSanitizer) runs them
# with examples/minimal_run, whose output hashes must equal the full build's minimal_run on the
# ONNX models. Then the loader's validation on the first program: truncations and one-byte changes
# (tests/selective/aot_mutate.c, in one process under the sanitizers) each give a clear error or a
# clean run, never a crash or a sanitizer report; a program at another ISA tier, an ONNX file, and
# `flatrt compile` of a model with an op that has no writer (nothing written) are refused with
# their messages.
#
#   aot_check.sh FULL_FLATRT FULL_MINIMAL_RUN SOURCE_DIR WORK_DIR OTHER_MODEL MODEL...
set -eu
full=$1 fullrun=$2 src=$3 work=$4 other=$5
shift 5
export FRT_DNNL=0
unset FRT_CHECK_PLAN
rm -rf "$work"
mkdir -p "$work"
i=0
for model in "$@"; do
  "$full" compile "$model" -o "$work/model$i.frtp"
  i=$((i + 1))
done
"$full" trace "$@" -o "$work/sel.yaml"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DFRT_SELECT="$work/sel.yaml" \
      -DFRT_AOT_ONLY=ON -DFRT_SANITIZE=address,undefined -DCMAKE_C_COMPILER="${CC:-cc}" \
      >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2 --target minimal_run aot_mutate >"$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log"; exit 1; }
run="$work/build/minimal_run"
# allocator_may_return_null: a program asking for absurd run memory gets its clean error (as
# without ASan), not an ASan abort
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=99"

i=0
for model in "$@"; do
  "$fullrun" "$model" >"$work/full$i.txt"
  "$run" "$work/model$i.frtp" >"$work/aot$i.txt"
  cat "$work/aot$i.txt"
  cmp "$work/full$i.txt" "$work/aot$i.txt"
  echo "aot: the program of $model gives the full build's outputs"
  i=$((i + 1))
done
model=$1
prog="$work/model0.frtp"

# expect_fail FILE PATTERN: minimal_run fails cleanly (status 1) naming PATTERN
expect_fail() {
  set +e
  "$run" "$1" >"$work/out.txt" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne 1 ] || ! grep -q "$2" "$work/out.txt"; then
    echo "expected a clean failure ($2) for $1, got status $rc:"; cat "$work/out.txt"; exit 1
  fi
}
expect_fail "$model" "not a flatrt program"
FRT_ISA=portable expect_fail "$prog" "written for ISA tier"
# truncated and changed programs, in one process (tests/selective/aot_mutate.c)
"$work/build/aot_mutate" "$prog"
# a model with an op that has no writer: compile names it and writes nothing
if "$full" compile "$other" -o "$work/other.frtp" >"$work/other.txt" 2>&1; then
  echo "compile wrote a program for $other"; exit 1
fi
grep -q "no ahead-of-time writer" "$work/other.txt" || { cat "$work/other.txt"; exit 1; }
[ ! -e "$work/other.frtp" ] || { echo "a program was written for $other"; exit 1; }
cat "$work/other.txt"
echo "aot: ok"
