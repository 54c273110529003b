#!/bin/bash
# Reduced-precision weights (frt_options.weights_precision): speed and error per model.
#
# usage: bench/weights_precision.sh [-r ROUNDS] [-s SECONDS] [-t THREADS] [-d DIR] [-b BUILD_DIR]
#                                   [-o FILE] [MODEL...]
#   MODEL...   model directories under DIR (default: mlp deep_wide resnet18 mobilenet_v2 bert4
#              gpt2mini); each is DIR/NAME/model.onnx + in/*.npy
#   -r ROUNDS  interleaved rounds of `flatrt bench` with --weights fp32, fp16, bf16 (default 3)
#   -s SECONDS target timed seconds per bench run (default 2)
#   -t THREADS intra-op threads (default 1)
#   -d DIR     models dir (default <repo>/build/models)   -b BUILD_DIR  (default <repo>/build)
#   -o FILE    also write the markdown table to FILE
#
# For each model: the p50 (median over rounds) with each precision and its ratio to fp32, and the
# error of the fp16 / bf16 outputs against the fp32 outputs on the model's own inputs: max |diff|
# and max |diff| / max |fp32 output| over all float outputs. Half weights cover Gemm and MatMul
# with a constant 2-D B and Conv with constant W on the builtin packed-GEMM convolution (AVX2 /
# AVX-512 tiers); convolutions the oneDNN provider runs (1-thread models when it is built in),
# depthwise convolutions and the portable tier keep fp32 weights. To measure the CNNs with half
# Conv weights, run with FRT_DNNL=0 in the environment (or -t 2: the provider takes 1-thread
# models only). Needs /usr/bin/python3 with numpy.
set -euo pipefail
prog=$(basename "$0")
die() { echo "$prog: error: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=3 seconds=2 threads=1 models_dir=$repo/build/models build_dir=$repo/build out_file=
while getopts ":r:s:t:d:b:o:h" opt; do
    case $opt in
    r) rounds=$OPTARG ;; s) seconds=$OPTARG ;; t) threads=$OPTARG ;; d) models_dir=$OPTARG ;;
    b) build_dir=$OPTARG ;; o) out_file=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    :) die "option -$OPTARG needs a value" ;; *) die "unknown option -$OPTARG (see -h)" ;;
    esac
done
shift $((OPTIND - 1))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mlp deep_wide resnet18 mobilenet_v2 bert4 gpt2mini)
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r expects a positive integer"
flatrt=${FLATRT:-$build_dir/flatrt}
[ -x "$flatrt" ] || die "flatrt binary not found at $flatrt"
py=/usr/bin/python3
"$py" -c 'import numpy' 2>/dev/null || die "$py with numpy is needed"
precs=(fp32 fp16 bf16)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

value() { tail -n 1 "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A args iters
for m in "${models[@]}"; do
    dir=$models_dir/$m
    [ -f "$dir/model.onnx" ] || die "no $dir/model.onnx"
    a=()
    while read -r name; do
        [ -n "$name" ] && [ -f "$dir/in/$name.npy" ] && a+=(--input "$name=$dir/in/$name.npy")
    done < <("$flatrt" info "$dir/model.onnx" | awk '/^inputs \(/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1 }')
    args[$m]="${a[*]}"
    # outputs per precision, for the error columns
    for p in "${precs[@]}"; do
        mkdir -p "$work/$m/$p"
        # shellcheck disable=SC2086
        "$flatrt" run "$dir/model.onnx" ${args[$m]} --weights "$p" --threads "$threads" \
            --output-dir "$work/$m/$p" > /dev/null || die "flatrt run $m --weights $p failed"
    done
    # calibration: iterations for ~seconds per run
    # shellcheck disable=SC2086
    "$flatrt" bench "$dir/model.onnx" ${args[$m]} --iters 20 --warmup 3 > "$work/cal.log"
    iters[$m]=$(awk -v s="$seconds" -v p="$(value p50_us "$work/cal.log")" \
        'BEGIN { n = int(s * 1e6 / (p > 1 ? p : 1)); print (n < 10 ? 10 : n > 5000 ? 5000 : n) }')
done

load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
    for m in "${models[@]}"; do
        for p in "${precs[@]}"; do
            # shellcheck disable=SC2086
            "$flatrt" bench "$models_dir/$m/model.onnx" ${args[$m]} --weights "$p" \
                --threads "$threads" --iters "${iters[$m]}" --warmup $((iters[$m] / 10 + 3)) \
                > "$work/${m}_${p}_$r.log" || die "bench $m $p failed"
            echo "$prog: round $r/$rounds $m $p: p50 $(value p50_us "$work/${m}_${p}_$r.log") us" >&2
        done
    done
done

report() {
    echo "## flatrt with fp32 / fp16 / bf16 weights, $threads thread(s), median of $rounds interleaved rounds"
    echo
    echo "| model | fp32 p50 (us) | fp16 p50 (us) | fp16/fp32 | bf16 p50 (us) | bf16/fp32 | fp16 max abs err | fp16 max rel err | bf16 max abs err | bf16 max rel err |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for m in "${models[@]}"; do
        declare -A p50=()
        for p in "${precs[@]}"; do
            p50[$p]=$(for r in $(seq 1 "$rounds"); do value p50_us "$work/${m}_${p}_$r.log"; done | median)
        done
        err=$("$py" - "$work/$m" <<'EOF'
import sys, os, numpy as np
base = sys.argv[1]
out = []
for p in ("fp16", "bf16"):
    ma, mr = 0.0, 0.0
    for f in sorted(os.listdir(os.path.join(base, "fp32"))):
        a = np.load(os.path.join(base, "fp32", f)); b = np.load(os.path.join(base, p, f))
        if a.dtype.kind != "f":
            continue
        d = float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
        s = float(np.max(np.abs(a))) if a.size else 0.0
        ma = max(ma, d); mr = max(mr, d / s if s > 0 else d)
    out += ["%.3g" % ma, "%.3g" % mr]
print(" ".join(out))
EOF
)
        read -r e16a e16r ebfa ebfr <<< "$err"
        awk -v m="$m" -v a="${p50[fp32]}" -v b="${p50[fp16]}" -v c="${p50[bf16]}" -v e1="$e16a" \
            -v r1="$e16r" -v e2="$ebfa" -v r2="$ebfr" 'BEGIN {
            printf "| %s | %.4g | %.4g | %.2f | %.4g | %.2f | %s | %s | %s | %s |\n",
                   m, a, b, b / a, c, c / a, e1, r1, e2, r2 }'
    done
    echo
    echo "- host: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), ISA tier ${FRT_ISA:-best the host has}; load before/after: $load0 / $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- errors: fp16/bf16 outputs against the fp32-weight outputs of the same build on the model's in/*.npy; rel = max|diff| / max|fp32 output|"
    echo "- half weights cover Gemm and MatMul with a constant 2-D B and Conv on the builtin packed-GEMM convolution; oneDNN-run, depthwise and portable-tier convs keep fp32 (FRT_DNNL=${FRT_DNNL:-unset} for this run)"
}
report | tee ${out_file:+"$out_file"}
