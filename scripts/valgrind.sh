#!/usr/bin/env bash
# Valgrind memcheck over the command-line tool on end-to-end models: `flatrt info` and `flatrt run`
# (and a 2-thread `flatrt bench`, and the runtime tests on the tiny models) must finish with no
# invalid read or write, no branch on (or output of) uninitialized memory, no bad free and no
# leaked block (definite, indirect or possible).
# Any such error makes valgrind exit 99 and this script fail.
#
# Uses the release tree (BUILD_DIR, default build), its tiny test models and the exported model
# zoo (FRT_MODELS_DIR, default BUILD_DIR/models); models that are not there are skipped with a
# note. Extra valgrind options can be given in VALGRIND_ARGS (e.g. --track-origins=yes).
#
# Valgrind does not decode AVX-512: flatrt's kernels are capped at AVX2 here (FRT_ISA=avx2; the
# CPUID valgrind shows hides AVX-512 anyway) and OpenBLAS is told to use its Haswell kernels.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --valgrind
BUILD_DIR=${BUILD_DIR:-build}
MODELS=${FRT_MODELS_DIR:-$BUILD_DIR/models}
FLATRT=$BUILD_DIR/flatrt
if [ ! -x "$FLATRT" ]; then
    echo "valgrind.sh: $FLATRT not built (run scripts/test.sh first)" >&2
    exit 1
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

export FRT_ISA=avx2 OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 FRT_CHECK_PLAN=1
VG=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
    --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible
    --num-callers=30 ${VALGRIND_ARGS:-})

passed=0
failed=0
check() { # name, command...
    local name=$1
    shift
    local t0=$SECONDS
    if "${VG[@]}" --log-file="$OUT/vg.log" "$@" > "$OUT/stdout" 2>&1; then
        echo "valgrind: $name: ok ($((SECONDS - t0)) s)"
        passed=$((passed + 1))
    else
        echo "valgrind: $name: FAILED (exit $?)"
        cat "$OUT/stdout" "$OUT/vg.log"
        failed=$((failed + 1))
    fi
}
# --input NAME=FILE for every .npy in a directory
inputs() { for f in "$1"/*.npy; do echo "--input"; echo "$(basename "$f" .npy)=$f"; done; }

DIGITS=examples/digits
check "digits info" "$FLATRT" info "$DIGITS/digits.onnx" --memory
check "digits run" "$FLATRT" run "$DIGITS/digits.onnx" \
    --input "$DIGITS/samples/digit_0_label1.npy" --output-dir "$OUT"
check "digits bench 2 threads" "$FLATRT" bench "$DIGITS/digits.onnx" \
    --iters 3 --warmup 1 --threads 2
# tiny models written by the test suite (models.tiny): a shape subgraph over a symbolic batch,
# external data, aliased views
for m in shape_dynamic external_gemm view_alias; do
    f=$BUILD_DIR/tiny/$m.onnx
    [ -f "$f" ] || { echo "valgrind: $m: skipped ($f not generated)"; continue; }
    mapfile -t args < <(inputs "$BUILD_DIR/tiny/$m/in")
    check "$m run" "$FLATRT" run "$f" "${args[@]}" --output-dir "$OUT"
done
# the runtime API on them: reshape, clone, output modes, runtimes on several threads
if [ -x "$BUILD_DIR/tests/test_runtime" ] && [ -d "$BUILD_DIR/tiny" ]; then
    check "test_runtime" "$BUILD_DIR/tests/test_runtime" "$BUILD_DIR/tiny"
fi
for m in deep_wide mobilenet_v2; do
    d=$MODELS/$m
    if [ ! -f "$d/model.onnx" ]; then
        echo "valgrind: $m: skipped ($d/model.onnx not exported)"
        continue
    fi
    check "$m info" "$FLATRT" info "$d/model.onnx"
    mapfile -t args < <(inputs "$d/in")
    check "$m run" "$FLATRT" run "$d/model.onnx" "${args[@]}" --output-dir "$OUT"
    if [ -d "$d/in8" ]; then # the same runtime path at another batch size
        mapfile -t args < <(inputs "$d/in8")
        check "$m run batch 8" "$FLATRT" run "$d/model.onnx" "${args[@]}" --output-dir "$OUT"
    fi
done
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
