#!/bin/sh
# Selective builds in CI (docs/selective.md): traces a model with the full CLI, builds a selective
# flatrt from the trace (a nested cmake project, -DFRT_SELECT), runs the model with both CLIs on the
# same inputs and requires byte-identical outputs; then checks that a model needing an op the
# selection left out fails at load with the message naming the op and the selection file.
#
#   selective_check.sh NAME FULL_FLATRT SOURCE_DIR WORK_DIR MODEL INPUT_ARGS OTHER_MODEL [CLASSIFY]
#                      [KEEP] [BIG_SHAPE]
#
# INPUT_ARGS: the --input arguments of `flatrt run` (space separated); OTHER_MODEL: a model with
# an op outside the selection; CLASSIFY (optional): also build the digits example over the
# selective library and check its labels. oneDNN is switched off (FRT_DNNL=0) for the trace and the
# full run, so both builds run the builtin kernels on this host's ISA tier.
# KEEP (optional, cmake -DFRT_SELECT_KEEP): optional features the build keeps; the script checks
# that the kept ones work (describe: `flatrt info --nodes`; step_trace: `flatrt bench --trace`)
# and that the others are refused with the message naming the feature and the selection.
# A selection traced above the portable tier is also run at FRT_ISA=portable, where Conv and Gemm
# need kernel classes (FRT_KERNEL_BUILT) that such a trace never records: load must refuse it
# naming the kernel (or, for a model without them, run).
# BIG_SHAPE (optional, e.g. batch=8): a --shape under which the model's Gemm takes a product path
# (blocked GEMM) that the trace at the default shape did not record: the full build runs it, the
# selective one refuses it naming the path and the selection.
set -eu
name=$1 full=$2 src=$3 work=$4 model=$5 inputs=$6 other=$7 classify=${8:-} keep=${9:-}
big=${10:-}
export FRT_DNNL=0
unset FRT_CHECK_PLAN # a selective build refuses it (checked below)
rm -rf "$work"
mkdir -p "$work"
sel="$work/$name.yaml"
"$full" trace "$model" -o "$sel"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DFRT_SELECT="$sel" \
      -DFRT_SELECT_KEEP="$keep" -DCMAKE_C_COMPILER="${CC:-cc}" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
targets="flatrt flatrt_shared minimal_run"
[ -n "$classify" ] && targets="$targets classify"
cmake --build "$work/build" -j2 --target $targets >"$work/build.log" 2>&1 || { tail -n 60 "$work/build.log"; exit 1; }
selrt="$work/build/flatrt"

# the same outputs, bit for bit
mkdir -p "$work/out-full" "$work/out-sel"
set --
for a in $inputs; do set -- "$@" --input "$a"; done
"$full" run "$model" "$@" --output-dir "$work/out-full" >/dev/null
"$selrt" run "$model" "$@" --output-dir "$work/out-sel" >/dev/null
n=0
for f in "$work/out-full"/*.npy; do
  cmp "$f" "$work/out-sel/$(basename "$f")"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no outputs written"; exit 1; }
echo "$name: $n output(s) identical to the full build"

# the minimal runner on the selective library agrees with the full CLI's kernels too
"$work/build/minimal_run" "$model" >"$work/minimal.txt"
cat "$work/minimal.txt"

if [ -n "$classify" ]; then
  out=$(cd "$src/examples/digits" && "$work/build/classify" digits.onnx samples/digit_1_label6.npy samples/digit_2_label7.npy)
  echo "$out"
  [ "$out" = "$(printf 'samples/digit_1_label6.npy 6\nsamples/digit_2_label7.npy 7')" ]
fi

# optional features: kept ones work, the others are refused with one clear message
keepl=";$(echo "$keep" | tr ',' ';');"
case "$keepl" in
  *";describe;"*) "$selrt" info --nodes "$model" >"$work/info.txt"
                  grep -q "^nodes (" "$work/info.txt" || { cat "$work/info.txt"; exit 1; } ;;
  *) if "$selrt" info --nodes "$model" >"$work/info.txt" 2>&1; then
       echo "describe ran on a build without it"; exit 1
     fi
     grep -q "feature 'describe' not in this build's selection ($name\.yaml)" "$work/info.txt" ||
       { cat "$work/info.txt"; exit 1; } ;;
esac
case "$keepl" in
  *";step_trace;"*) "$selrt" bench "$model" --iters 1 --trace "$work/trace.json" >/dev/null
                    grep -q '"traceEvents"' "$work/trace.json" ;;
  *) if "$selrt" bench "$model" --iters 1 --trace "$work/trace.json" >"$work/trace.txt" 2>&1; then
       echo "step_trace ran on a build without it"; exit 1
     fi
     grep -q "feature 'step_trace' not in this build's selection ($name\.yaml)" "$work/trace.txt" ||
       { cat "$work/trace.txt"; exit 1; } ;;
esac
echo "$name: optional features kept: ${keep:-none}; the others refused"

# traced with one thread: the thread pool is left out and more threads are refused at load
if ! grep -q "^features: .*thread_pool" "$sel"; then
  if "$selrt" run "$model" "$@" --threads 2 --output-dir "$work/out-threads" >"$work/threads.txt" 2>&1; then
    echo "ran with 2 threads on a build without the thread pool"; exit 1
  fi
  grep -q "feature 'thread_pool' not in this build's selection ($name\.yaml)" "$work/threads.txt" ||
    { cat "$work/threads.txt"; exit 1; }
  echo "$name: 2 threads refused (no thread_pool in the selection)"
fi

# traced with float32 weights: half-precision weight storage is left out and refused at load
if ! grep -q "^features: .*half_weights" "$sel"; then
  if "$selrt" run "$model" "$@" --weights fp16 --output-dir "$work/out-f16" >"$work/f16.txt" 2>&1; then
    echo "ran with fp16 weights on a build without half_weights"; exit 1
  fi
  grep -q "weights_precision fp16: feature 'half_weights' not in this build's selection ($name\.yaml)" \
    "$work/f16.txt" || { cat "$work/f16.txt"; exit 1; }
  echo "$name: --weights fp16 refused (no half_weights in the selection)"
fi

# traced without sequence values: a model with one (a sequence input beside a Flatten, which the
# selection has) is refused at load
if ! grep -q "^features: .*sequences" "$sel" && grep -q "op: Flatten," "$sel"; then
  if "$selrt" run "$src/tests/selective/seq_input_flatten.onnx" --random >"$work/seq.txt" 2>&1; then
    echo "a model with a sequence input loaded on a build without sequences"; exit 1
  fi
  grep -q "feature 'sequences' not in this build's selection ($name\.yaml)" \
    "$work/seq.txt" || { cat "$work/seq.txt"; exit 1; }
  echo "$name: a sequence input refused (no sequences in the selection)"
fi

# traced without subgraphs: a model with one (an If over two Flattens) is refused by the decoder
if ! grep -q "^features: .*subgraphs" "$sel"; then
  if "$selrt" run "$src/tests/selective/if_flatten.onnx" --random >"$work/sub.txt" 2>&1; then
    echo "a model with a subgraph loaded on a build without subgraphs"; exit 1
  fi
  grep -q "is a subgraph: feature 'subgraphs' not in this build's selection ($name\.yaml)" \
    "$work/sub.txt" || { cat "$work/sub.txt"; exit 1; }
  echo "$name: a subgraph refused (no subgraphs in the selection)"
fi

# the AVX2 conv tile's tails are compiled as traced (src/ops/conv.h): a 5-channel 1x1 Conv needs a
# 1-row sub-tile, which a trace that ran only 4- and 2-row tails left out; refused at run, named
if grep -q '"builtin:conv_gemm_avx2_r' "$sel" && ! grep -q '"builtin:conv_gemm_avx2_r1"' "$sel"; then
  if "$selrt" run "$src/tests/selective/conv_rows5.onnx" --random >"$work/rows5.txt" 2>&1; then
    echo "a Conv needing a left-out tile tail ran"; exit 1
  fi
  grep -q "Conv with 5 output channels per group and 16 positions: kernel 'conv_gemm_avx2_r1' not in this build's selection ($name\.yaml)" \
    "$work/rows5.txt" || { cat "$work/rows5.txt"; exit 1; }
  echo "$name: a left-out conv tile tail refused"
fi

# the plan checker is not in selective builds: FRT_CHECK_PLAN=1 is refused at load
if FRT_CHECK_PLAN=1 "$selrt" run "$model" "$@" --output-dir "$work/out-check" >"$work/check.txt" 2>&1; then
  echo "FRT_CHECK_PLAN=1 ran on a selective build"; exit 1
fi
grep -q "FRT_CHECK_PLAN=1: the plan checker is not in this selective build ($name\.yaml)" \
  "$work/check.txt" || { cat "$work/check.txt"; exit 1; }
echo "$name: FRT_CHECK_PLAN=1 refused"

# traced with the standard planner only: greedy is left out and refused at load
if grep -q "^features: .*planner_standard" "$sel" && ! grep -q "^features: .*planner_greedy" "$sel"; then
  if "$selrt" run "$model" "$@" --planner greedy --output-dir "$work/out-greedy" >"$work/greedy.txt" 2>&1; then
    echo "ran with the greedy planner on a build without it"; exit 1
  fi
  grep -q "planner 'greedy' not in this build's selection ($name\.yaml)" "$work/greedy.txt" ||
    { cat "$work/greedy.txt"; exit 1; }
  echo "$name: planner greedy refused (not in the selection)"
fi

# kernel classes the trace did not record: refused at load, naming the kernel and the selection
if ! grep -q "^isa: \[portable\]" "$sel"; then
  if FRT_ISA=portable "$selrt" run "$model" "$@" --output-dir "$work/out-portable" >"$work/portable.txt" 2>&1; then
    ! grep -Eq "op: (Conv|Gemm)," "$sel" || { echo "ran at the portable tier without its kernels"; exit 1; }
  else
    cat "$work/portable.txt"
    grep -Eq "kernel '[a-z0-9_]+' of op '[A-Za-z]+' not in this build's selection \($name\.yaml\)" "$work/portable.txt"
  fi
fi

# Gemm's run-time product paths: a shape whose path the trace did not see is refused at run
if [ -n "$big" ]; then
  grep -q '"builtin:gemm_run_sgemm"' "$sel" && { echo "the trace already has gemm_run_sgemm"; exit 1; }
  "$full" run "$model" --random --shape "$big" >/dev/null
  if "$selrt" run "$model" --random --shape "$big" >"$work/big.txt" 2>&1; then
    echo "ran --shape $big without the blocked GEMM"; exit 1
  fi
  grep -q "Gemm with M=[0-9]*: kernel 'gemm_run_sgemm' not in this build's selection ($name\.yaml)" \
    "$work/big.txt" || { cat "$work/big.txt"; exit 1; }
  echo "$name: --shape $big refused (gemm_run_sgemm not in the selection)"
fi

# traced without external data: a model with a tensor in another file is refused at load
if ! grep -q "^features: .*external_data" "$sel"; then
  ext="$src/tests/fuzz/corpus/pipeline/tiny_external_gemm.onnx"
  if "$selrt" run "$ext" >"$work/external.txt" 2>&1; then
    echo "a model with external data loaded on a build without it"; exit 1
  fi
  grep -q "feature 'external_data' not in this build's selection ($name\.yaml)" "$work/external.txt" ||
    { cat "$work/external.txt"; exit 1; }
  echo "$name: external data refused (not in the selection)"
fi

# a model outside the selection fails at load with one message naming the op and the file
if "$selrt" run "$other" >"$work/other.txt" 2>&1; then
  echo "$other ran on a build selected for $name"; exit 1
fi
cat "$work/other.txt"
grep -Eq "op(s)? '[A-Za-z]+' \(ai\.onnx\).* not in this build's selection \($name\.yaml\)" "$work/other.txt"
echo "$name: selective build ok"
