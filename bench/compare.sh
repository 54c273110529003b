#!/bin/bash
# Side-by-side latency and memory benchmark: flatrt vs ONNX Runtime (../shared/tools/ortbench).
#
# usage: bench/compare.sh [options] [MODEL...]
#   MODEL...          names of model directories under the models dir
#                     (default: deep_wide mlp resnet18 resnet50 mobilenet_v2 squeezenet1_1;
#                     the exporter also writes lstm gru bert4 gpt2mini mobilenet_v3_small
#                     efficientnet_b0, whose int64 token-id inputs are passed like any other)
#   -r ROUNDS         interleaved rounds (default 5); each round runs `flatrt bench` then
#                     `ortbench` on every model, with the same --input files and --threads
#   -s SECONDS        target timed seconds per benchmark run (default 5); iterations per model
#                     are derived from a short calibration run of flatrt, within [10, 5000]
#   -t THREADS        intra-op threads for both (default 1)
#   -w PREC           flatrt's weights precision: fp32 (default), fp16 or bf16 (`flatrt bench
#                     --weights`; ONNX Runtime runs the model's float32 weights as stored)
#   -d DIR            models dir (default: <repo>/build/models, as written by
#                     tests/models/export_zoo.py; each model is DIR/NAME/model.onnx + in/*.npy)
#   -b BUILD_DIR      flatrt build dir holding the flatrt binary (default: <repo>/build)
#   -o FILE           also write the markdown report to FILE
#   -B BINARY         a second (baseline) flatrt binary, e.g. a build of an older commit: it runs
#                     in every round right after flatrt, on the same inputs and iterations, and
#                     the report adds its p50 and its ratio to ORT (before/after in one run)
#   -k                keep the raw outputs of every run (printed location at the end)
#   -h                this help
# Environment: FLATRT and ORTBENCH override the two binaries.
#
# The report is a markdown table: flatrt p50 and ORT p50 (medians over the rounds of each run's
# p50), their ratio, and the medians of each tool's peak RSS, followed by the machine state (nproc,
# load average before and after, date) and the exact command line. With the defaults the whole
# script takes about 4 to 6 minutes on the project machine (2 vCPUs).
set -euo pipefail

prog=$(basename "$0")
die() {
    echo "$prog: error: $*" >&2
    exit 1
}
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cmdline="$0"
for a in "$@"; do cmdline+=" $(printf '%q' "$a")"; done

rounds=5
seconds=5
threads=1
weights=fp32
models_dir=$repo/build/models
build_dir=$repo/build
out_file=
keep=0
baseline=
while getopts ":r:s:t:w:d:b:o:B:kh" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    s) seconds=$OPTARG ;;
    t) threads=$OPTARG ;;
    w) weights=$OPTARG ;;
    d) models_dir=$OPTARG ;;
    b) build_dir=$OPTARG ;;
    o) out_file=$OPTARG ;;
    B) baseline=$OPTARG ;;
    k) keep=1 ;;
    h)
        usage
        exit 0
        ;;
    :) die "option -$OPTARG needs a value (see -h)" ;;
    *) die "unknown option -$OPTARG (see -h)" ;;
    esac
done
shift $((OPTIND - 1))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(deep_wide mlp resnet18 resnet50 mobilenet_v2 squeezenet1_1)

[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r expects a positive integer, got '$rounds'"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "-t expects a positive integer, got '$threads'"
[[ $weights =~ ^(fp32|fp16|bf16)$ ]] || die "-w expects fp32, fp16 or bf16, got '$weights'"
wargs=() # flatrt's --weights, only when asked (older binaries as -B do not know it)
[ "$weights" = fp32 ] || wargs=(--weights "$weights")
[[ $seconds =~ ^[0-9]*\.?[0-9]+$ ]] || die "-s expects a number of seconds, got '$seconds'"

flatrt=${FLATRT:-$build_dir/flatrt}
[ -z "$baseline" ] || [ -x "$baseline" ] || die "baseline flatrt binary $baseline is not executable"
[ -x "$flatrt" ] || die "flatrt binary not found at $flatrt (build it: cmake --build $build_dir --target flatrt; or set FLATRT / -b)"
ortbench=${ORTBENCH:-$repo/../shared/tools/ortbench/ortbench}
if [ ! -x "$ortbench" ]; then
    builder=$(dirname "$ortbench")/build.sh
    [ -x "$builder" ] || die "ortbench not found at $ortbench and no $builder to build it (set ORTBENCH)"
    echo "$prog: building ortbench with $builder" >&2
    "$builder" >&2 || die "building ortbench failed"
    [ -x "$ortbench" ] || die "ortbench still missing after $builder"
fi
[ -d "$models_dir" ] || die "models dir $models_dir does not exist (export it: /usr/bin/python3 $repo/tests/models/export_zoo.py $models_dir)"
for m in "${models[@]}"; do
    [ -f "$models_dir/$m/model.onnx" ] ||
        die "no $models_dir/$m/model.onnx (models there: $(find "$models_dir" -mindepth 2 -maxdepth 2 -name model.onnx | awk -F/ '{ printf "%s ", $(NF - 1) }'))"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/frt_compare.XXXXXX")
if [ "$keep" -eq 0 ]; then trap 'rm -rf "$work"' EXIT; fi

# value KEY FILE: the value of KEY in the last line (key=value pairs) of FILE.
value() {
    tail -n 1 "$2" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print substr($0, length(k) + 2); found = 1 }
        END { if (!found) exit 1 }'
}

# run_tool LOG CMD...: runs CMD with stdout+stderr in LOG; dies with the log on failure.
run_tool() {
    local log=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        echo "$prog: command failed: $*" >&2
        sed 's/^/  | /' "$log" | tail -n 20 >&2
        exit 1
    fi
    value p50_us "$log" >/dev/null || die "no p50_us in the last line of: $* (log: $log)"
}

# input_args MODEL: "--input NAME=FILE" words for every model input (names from `flatrt info`,
# files in/<sanitized name>.npy), one word per line.
input_args() {
    local dir=$models_dir/$1 info name file
    info=$("$flatrt" info "$dir/model.onnx") || die "flatrt info $dir/model.onnx failed"
    while read -r name; do
        file=$dir/in/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_').npy
        [ -f "$file" ] || die "$1: no input file $file for input '$name'"
        printf -- '--input\n%s=%s\n' "$name" "$file"
    done < <(printf '%s\n' "$info" | awk '/^inputs \(/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1 }')
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)

# Calibration: iterations so one timed run lasts about $seconds.
declare -A iters warm inputs
for m in "${models[@]}"; do
    inputs[$m]=$(input_args "$m") # a failure here stops the script (set -e)
    args=()
    [ -z "${inputs[$m]}" ] || mapfile -t args <<<"${inputs[$m]}"
    log=$work/calib_$m.log
    run_tool "$log" "$flatrt" bench "$models_dir/$m/model.onnx" "${args[@]}" --threads "$threads" \
        ${wargs[@]+"${wargs[@]}"} --iters 5 --warmup 2
    p50=$(value p50_us "$log")
    iters[$m]=$(awk -v s="$seconds" -v p="$p50" 'BEGIN { n = int(s * 1e6 / (p > 1 ? p : 1));
        if (n < 10) n = 10; if (n > 5000) n = 5000; print n }')
    warm[$m]=$(awk -v n="${iters[$m]}" 'BEGIN { w = int(n / 10); print (w < 3 ? 3 : w) }')
    echo "$prog: $m: p50 ~ $p50 us -> $((${iters[$m]})) iterations, ${warm[$m]} warm-up per run" >&2
done

for ((r = 1; r <= rounds; r++)); do
    for m in "${models[@]}"; do
        args=()
        [ -z "${inputs[$m]}" ] || mapfile -t args <<<"${inputs[$m]}"
        model=$models_dir/$m/model.onnx
        flog=$work/flatrt_${m}_$r.log
        olog=$work/ort_${m}_$r.log
        run_tool "$flog" "$flatrt" bench "$model" "${args[@]}" --threads "$threads" \
            ${wargs[@]+"${wargs[@]}"} --iters "${iters[$m]}" --warmup "${warm[$m]}"
        if [ -n "$baseline" ]; then
            run_tool "$work/base_${m}_$r.log" "$baseline" bench "$model" "${args[@]}" \
                --threads "$threads" --iters "${iters[$m]}" --warmup "${warm[$m]}"
        fi
        run_tool "$olog" "$ortbench" "$model" "${args[@]}" --threads "$threads" \
            --iters "${iters[$m]}" --warmup "${warm[$m]}"
        fo=$(value outputs "$flog" || true)
        oo=$(value outputs "$olog" || true)
        if [ "$r" -eq 1 ] && [ "$fo" != "$oo" ]; then
            echo "$prog: warning: $m: outputs differ in name/type/shape: flatrt $fo, ORT $oo" >&2
        fi
        echo "$prog: round $r/$rounds $m: flatrt p50 $(value p50_us "$flog") us,${baseline:+ baseline p50 $(value p50_us "$work/base_${m}_$r.log") us,} ORT p50 $(value p50_us "$olog") us" >&2
    done
done

end=$(date +%s)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
ort_version=$(value ort_version "$work/ort_${models[0]}_1.log" || echo "?")
flatrt_version=$(value flatrt_version "$work/flatrt_${models[0]}_1.log" || echo "?")
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")

report=$work/report.md
{
    echo "## flatrt vs ONNX Runtime, $threads thread(s), median of $rounds interleaved rounds${wargs[@]+, flatrt with $weights weights}"
    echo
    echo "| model | iters/run | flatrt p50 (us) | ORT p50 (us) | flatrt/ORT | per-round ratio range | flatrt peak RSS (KiB) | ORT peak RSS (KiB) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for m in "${models[@]}"; do
        fp=$(for ((r = 1; r <= rounds; r++)); do value p50_us "$work/flatrt_${m}_$r.log"; done | median)
        op=$(for ((r = 1; r <= rounds; r++)); do value p50_us "$work/ort_${m}_$r.log"; done | median)
        fr=$(for ((r = 1; r <= rounds; r++)); do value peak_rss_kib "$work/flatrt_${m}_$r.log"; done | median)
        orss=$(for ((r = 1; r <= rounds; r++)); do value peak_rss_kib "$work/ort_${m}_$r.log"; done | median)
        range=$(for ((r = 1; r <= rounds; r++)); do
            awk -v a="$(value p50_us "$work/flatrt_${m}_$r.log")" -v b="$(value p50_us "$work/ort_${m}_$r.log")" \
                'BEGIN { print (b > 0 ? a / b : 0) }'
        done | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }')
        awk -v m="$m" -v n="${iters[$m]}" -v fp="$fp" -v op="$op" -v fr="$fr" -v orss="$orss" -v range="$range" '
            function us(x) { return x < 10 ? sprintf("%.2f", x) : x < 1000 ? sprintf("%.1f", x) : sprintf("%.0f", x) }
            BEGIN { printf "| %s | %d | %s | %s | %.2f | %s | %d | %d |\n", m, n, us(fp), us(op),
                    (op > 0 ? fp / op : 0), range, fr, orss }'
    done
    if [ -n "$baseline" ]; then
        echo
        echo "| model | baseline p50 (us) | baseline/ORT | flatrt/baseline |"
        echo "|---|---:|---:|---:|"
        for m in "${models[@]}"; do
            fp=$(for ((r = 1; r <= rounds; r++)); do value p50_us "$work/flatrt_${m}_$r.log"; done | median)
            bp=$(for ((r = 1; r <= rounds; r++)); do value p50_us "$work/base_${m}_$r.log"; done | median)
            op=$(for ((r = 1; r <= rounds; r++)); do value p50_us "$work/ort_${m}_$r.log"; done | median)
            awk -v m="$m" -v fp="$fp" -v bp="$bp" -v op="$op" 'BEGIN { printf "| %s | %.2f | %.2f | %.2f |\n",
                m, bp, (op > 0 ? bp / op : 0), (bp > 0 ? fp / bp : 0) }'
        done
        echo
        echo "- baseline: $baseline"
    fi
    echo
    echo "- flatrt $flatrt_version ($flatrt), ONNX Runtime $ort_version via ortbench ($ortbench)"
    echo "- flatrt ISA tier: ${FRT_ISA:-best the host has} (host flags: $(grep -o -w -e avx2 -e avx512f -e avx512bw -e avx512vl -e avx512dq /proc/cpuinfo | sort -u | tr '\n' ' '))"
    echo "- machine: $(nproc) CPUs ($cpu), load average $load_before before, $load_after after"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $((end - start)) s"
    echo "- p50: linear-interpolated median of per-run latencies (both tools time each run with CLOCK_MONOTONIC); peak RSS: ru_maxrss (flatrt) / VmHWM (ortbench)"
    echo "- command: \`$cmdline\`"
} >"$report"
cat "$report"
if [ -n "$out_file" ]; then cp "$report" "$out_file"; fi
if [ "$keep" -eq 1 ]; then echo "raw logs kept in $work" >&2; fi
