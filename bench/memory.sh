#!/bin/bash
# Memory report: flatrt's planned slab per planner against the lower bound, and peak RSS of
# `flatrt bench` (standard and greedy planners) against ONNX Runtime's ortbench on the same model
# and inputs, 1 thread. Prints a markdown table (also to FILE with -o).
#
# usage: bench/memory.sh [-r ROUNDS] [-d MODELS_DIR] [-b BUILD_DIR] [-o FILE] [MODEL...]
#   MODEL...  default: deep_wide mlp resnet18 resnet50 mobilenet_v2 squeezenet1_1 densenet121
#   -r N      rounds for peak RSS (median reported; default 3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=3 models_dir=$repo/build/models build_dir=$repo/build out_file=
while getopts ":r:d:b:o:h" opt; do
    case $opt in
    r) rounds=$OPTARG ;; d) models_dir=$OPTARG ;; b) build_dir=$OPTARG ;; o) out_file=$OPTARG ;;
    h) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "memory.sh: bad option (see -h)" >&2; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(deep_wide mlp resnet18 resnet50 mobilenet_v2 squeezenet1_1 densenet121)
flatrt=${FLATRT:-$build_dir/flatrt}
ortbench=${ORTBENCH:-$repo/../shared/tools/ortbench/ortbench}
[ -x "$flatrt" ] || { echo "memory.sh: $flatrt not built" >&2; exit 1; }
if [ ! -x "$ortbench" ]; then sh "$repo/../shared/tools/ortbench/build.sh" >&2; fi

kv() { tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
mib() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1024}'; }

report=$(mktemp)
{
echo "| model | lower bound KiB | standard KiB (x) | greedy KiB (x) | none KiB | concats removed | in place | flatrt RSS std / greedy MiB | ORT RSS MiB | RSS ratio (greedy/ORT) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
    dir=$models_dir/$m
    [ -f "$dir/model.onnx" ] || { echo "memory.sh: $dir/model.onnx missing (run tests/models/export_zoo.py)" >&2; exit 1; }
    ins=()
    for f in "$dir"/in/*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
    tab=$("$flatrt" info --memory "$dir/model.onnx" | sed -n '/planners compared/,$p')
    row() { printf '%s\n' "$tab" | awk -v p="$1" -v c="$2" '$1 == p {print $c}'; }
    lb=$(row standard 3); st=$(row standard 2); gr=$(row greedy 2); no=$(row none 2)
    cc=$(row greedy 10); ip=$(row greedy 9)
    rs=() rg=() ro=()
    for ((r = 0; r < rounds; r++)); do
        rs+=("$("$flatrt" bench "$dir/model.onnx" "${ins[@]}" --iters 10 --warmup 2 --planner standard | kv peak_rss_kib)")
        rg+=("$("$flatrt" bench "$dir/model.onnx" "${ins[@]}" --iters 10 --warmup 2 --planner greedy | kv peak_rss_kib)")
        ro+=("$("$ortbench" "$dir/model.onnx" "${ins[@]}" --iters 10 --warmup 2 --threads 1 2>/dev/null | kv peak_rss_kib)")
    done
    ms=$(printf '%s\n' "${rs[@]}" | median); mg=$(printf '%s\n' "${rg[@]}" | median); mo=$(printf '%s\n' "${ro[@]}" | median)
    printf '| %s | %s | %s (%.3f) | %s (%.3f) | %s | %s | %s | %s / %s | %s | %.2f |\n' "$m" \
        "$(mib "$lb")" "$(mib "$st")" "$(awk -v a="$st" -v b="$lb" 'BEGIN{print a/b}')" \
        "$(mib "$gr")" "$(awk -v a="$gr" -v b="$lb" 'BEGIN{print a/b}')" "$(mib "$no")" "$cc" "$ip" \
        "$(awk -v k="$ms" 'BEGIN{printf "%.1f", k/1024}')" "$(awk -v k="$mg" 'BEGIN{printf "%.1f", k/1024}')" \
        "$(awk -v k="$mo" 'BEGIN{printf "%.1f", k/1024}')" "$(awk -v a="$mg" -v b="$mo" 'BEGIN{print a/b}')"
done
echo
echo "Lower bound and slabs: \`flatrt info --memory\` (symbolic dims = 1, the batch the references use). Peak RSS: ru_maxrss of \`flatrt bench --iters 10 --warmup 2\` and ortbench's peak_rss_kib with the same inputs, median of $rounds rounds, 1 thread."
echo "Machine: $(nproc) vCPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC'). Command: $0 $*"
} | tee "$report"
[ -z "$out_file" ] || cp "$report" "$out_file"
rm -f "$report"
