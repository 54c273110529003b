#!/usr/bin/env bash
# Throughput of concurrent runtimes and speed-up of intra-op threads, interleaved rounds.
#   - per CNN (default resnet18 mobilenet_v2): `flatrt bench --runtimes 1` and `--runtimes 2`
#     (1 intra-op thread each), aggregate throughput_per_s;
#   - resnet50 (or -m50 MODEL): one runtime with --threads 1 and --threads 2, p50 latency.
# Each round runs every configuration once, alternating their order between rounds, so slow
# phases of a shared host hit all configurations alike. Prints the load (uptime) before and after,
# every round's numbers, then the medians and the ratio of the medians.
# -B BINARY: a baseline flatrt (e.g. a build of main) runs the resnet50 threads=1/2 pair in the
# same rounds, right after this build's pair, and its speed-up is printed beside.
# usage: bench/throughput.sh [-b BUILD_DIR] [-B BINARY] [-r ROUNDS] [-n ITERS] [-d MODELS_DIR] [MODEL...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build rounds=5 iters=30 models_dir=${FRT_MODELS_DIR:-build/models} m50=resnet50 base=
while getopts "b:B:r:n:d:m:" o; do
  case $o in
    b) build=$OPTARG ;; B) base=$OPTARG ;; r) rounds=$OPTARG ;; n) iters=$OPTARG ;;
    d) models_dir=$OPTARG ;;
    m) m50=$OPTARG ;;
    *) sed -n 2,11p "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 mobilenet_v2)
bin=$build/flatrt
[ -x "$bin" ] || { echo "throughput.sh: $bin not built" >&2; exit 1; }

# key=value from the last line of a bench run
key() { tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(uptime)"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="1 2"; else order="2 1"; fi
  for m in "${models[@]}"; do
    for R in $order; do
      v=$("$bin" bench "$models_dir/$m/model.onnx" --runtimes "$R" --iters "$iters" --warmup 3 \
          2>/dev/null | key throughput_per_s)
      echo "$v" >> "$tmp/$m.r$R"
      echo "round $r $m runtimes=$R throughput_per_s=$v"
    done
  done
  for t in $order; do
    v=$("$bin" bench "$models_dir/$m50/model.onnx" --threads "$t" --iters "$iters" --warmup 3 \
        2>/dev/null | key p50_us)
    echo "$v" >> "$tmp/$m50.t$t"
    echo "round $r $m50 threads=$t p50_us=$v"
  done
  [ -z "$base" ] && continue
  for t in $order; do
    v=$("$base" bench "$models_dir/$m50/model.onnx" --threads "$t" --iters "$iters" --warmup 3 \
        2>/dev/null | key p50_us)
    echo "$v" >> "$tmp/$m50.base.t$t"
    echo "round $r $m50 baseline threads=$t p50_us=$v"
  done
done
echo "load after: $(uptime)"
echo "--- medians over $rounds rounds"
for m in "${models[@]}"; do
  a=$(median < "$tmp/$m.r1") b=$(median < "$tmp/$m.r2")
  echo "$m: runtimes=1 $a/s, runtimes=2 $b/s, ratio $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b / a}')x"
done
a=$(median < "$tmp/$m50.t1") b=$(median < "$tmp/$m50.t2")
echo "$m50: threads=1 p50 ${a} us, threads=2 p50 ${b} us, speed-up $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')x"
if [ -n "$base" ]; then
  a=$(median < "$tmp/$m50.base.t1") b=$(median < "$tmp/$m50.base.t2")
  echo "$m50 (baseline $base): threads=1 p50 ${a} us, threads=2 p50 ${b} us, speed-up $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')x"
fi
