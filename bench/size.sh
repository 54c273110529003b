#!/usr/bin/env bash
# Binary sizes of the full library and of selective builds (docs/selective.md).
#
#   bash bench/size.sh [-o OUT_DIR] [-m MODELS_DIR] [MODEL_NAME...]
#
# Builds the full library without oneDNN (FRT_USE_DNNL=OFF, otherwise the default options) in
# OUT_DIR/full, traces each model (default: mobilenet_v2 resnet18 deep_wide bert4 from MODELS_DIR,
# <repo>/build/models unless FRT_MODELS_DIR says otherwise) with its CLI, builds a selective
# library from each trace in OUT_DIR/sel-<model> (cmake -DFRT_SELECT) and prints the stripped sizes
# of libflatrt.so and of examples/minimal_run (linked statically against that build's
# libflatrt.a), plus whether minimal_run's output hashes equal the full build's. Extra cmake
# arguments for the selective builds: SELECT_ARGS (e.g. "-DFRT_SELECT_LTO=OFF").
# For a model whose ops all have ahead-of-time writers (`flatrt compile` succeeds), a second row
# "<model> aot": a runtime-only build (-DFRT_SELECT=<trace> -DFRT_AOT_ONLY=ON) in OUT_DIR/aot-<model>
# whose minimal_run runs the compiled program (no libflatrt.so is built there: "-"); "outputs"
# compares its hashes with the full build's minimal_run on the ONNX model. Other models print
# why compile refused them.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$src/build-size
models=${FRT_MODELS_DIR:-$src/build/models}
while getopts "o:m:" opt; do
  case $opt in
    o) out=$OPTARG ;;
    m) models=$OPTARG ;;
    *) echo "usage: $0 [-o OUT_DIR] [-m MODELS_DIR] [MODEL_NAME...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(mobilenet_v2 resnet18 deep_wide bert4)
mkdir -p "$out"
out=$(cd "$out" && pwd)

stripped() { strip -o "$out/.stripped" "$1" && stat -c %s "$out/.stripped"; }
build() { # dir, targets, cmake args...
  local dir=$1 targets=$2; shift 2
  cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DFRT_USE_DNNL=OFF -DFRT_BUILD_TESTS=OFF \
        -DFRT_BUILD_PYTHON=OFF "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  # shellcheck disable=SC2086
  cmake --build "$dir" -j2 --target $targets >"$dir.build.log" 2>&1 ||
    { tail -n 40 "$dir.build.log"; exit 1; }
}

echo "building the full library in $out/full" >&2
build "$out/full" "flatrt flatrt_shared minimal_run"
full_so=$(stripped "$out/full/libflatrt.so")
full_run=$(stripped "$out/full/minimal_run")
printf '%-14s %10s %8s %12s  %s\n' build libflatrt.so "of full" minimal_run "outputs"
printf '%-14s %10d %8s %12d  %s\n' full "$full_so" "100%" "$full_run" "-"
for m in "${names[@]}"; do
  model=$models/$m/model.onnx
  [ -f "$model" ] || { echo "no model $model" >&2; exit 1; }
  "$out/full/flatrt" trace "$model" -o "$out/$m.yaml" 2>/dev/null
  echo "building the selective library for $m" >&2
  # shellcheck disable=SC2086
  build "$out/sel-$m" "flatrt_shared minimal_run" -DFRT_SELECT="$out/$m.yaml" ${SELECT_ARGS:-}
  so=$(stripped "$out/sel-$m/libflatrt.so")
  run=$(stripped "$out/sel-$m/minimal_run")
  same=differ
  if "$out/full/minimal_run" "$model" >"$out/$m.full.txt" &&
     "$out/sel-$m/minimal_run" "$model" >"$out/$m.sel.txt" &&
     cmp -s "$out/$m.full.txt" "$out/$m.sel.txt"; then same=identical; fi
  printf '%-14s %10d %7.1f%% %12d  %s\n' "$m" "$so" "$(awk -v a="$so" -v b="$full_so" 'BEGIN { print 100 * a / b }')" "$run" "$same"
  # the ahead-of-time runner: the program compiled by the full CLI, run by a runtime-only build
  if "$out/full/flatrt" compile "$model" -o "$out/$m.frtp" 2>"$out/$m.compile.txt"; then
    echo "building the runtime-only (AOT) library for $m" >&2
    # shellcheck disable=SC2086
    build "$out/aot-$m" "minimal_run" -DFRT_SELECT="$out/$m.yaml" -DFRT_AOT_ONLY=ON ${SELECT_ARGS:-}
    run=$(stripped "$out/aot-$m/minimal_run")
    same=differ
    if "$out/aot-$m/minimal_run" "$out/$m.frtp" >"$out/$m.aot.txt" &&
       cmp -s "$out/$m.full.txt" "$out/$m.aot.txt"; then same=identical; fi
    printf '%-14s %10s %8s %12d  %s\n' "$m aot" - - "$run" "$same"
  else
    printf '%-14s %s\n' "$m aot" "not compiled: $(sed 's/^flatrt: error: //' "$out/$m.compile.txt" | head -n 1)"
  fi
done
rm -f "$out/.stripped"
