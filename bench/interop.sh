#!/bin/bash
# Inter-op parallelism: latency and slab size with --inter-op N against sequential runs.
#
# usage: bench/interop.sh [-r ROUNDS] [-b BUILD_DIR] [-i ITERS] [-w WARMUP] [-s SIZE] [-3]
# Models: dlrm_small from the zoo (FRT_MODELS_DIR of BUILD_DIR's cache, else
# /work/main/build/models), torchvision's GoogLeNet (Inception v1, random weights, input
# 1x3xSIZExSIZE, default 224) and, with -3, Inception v3 (random weights, aux_logits and
# transform_input off, 1x3x299x299), exported with /usr/bin/python3 into BUILD_DIR/interop/ on
# first use.
# Configurations (T intra-op threads, N inter-op threads), run one after another in each of ROUNDS
# interleaved rounds (default 5), ITERS runs each (default 300 for dlrm_small, ITERS / 10 for
# GoogLeNet), after WARMUP untimed runs for dlrm_small (default 1000; GoogLeNet: flatrt bench's
# default). dlrm_small at 2 threads runs slow for its first ~100 ms on this host (2026-11-23, 1
# intra-op + 2 inter-op threads, 300 timed runs, p50: 180 us after 100 warm-up runs, 120 us after
# 1000; 1 thread 173 us either way; 2 intra-op threads 128 us after 1000), so 100 warm-up runs
# measured that start, not the steady state.
#   dlrm_small  T1 N1, T1 N2, T2 N1
#   googlenet   T2 N1, T2 N2, T1 N1
#   inception_v3 (-3)  T2 N1, T2 N2, T1 N1
# N2 runs are declined at load for both Inception models (the steps in order already keep both
# threads busy); FRT_INTEROP_FORCE=1 in the environment keeps inter-op (bench/pair_bench.c pairs
# the configurations in one process, which is steadier on a shared host).
# Prints per configuration the median over rounds of flatrt bench's p50 and the slab (arena) size,
# then the ratios: dlrm_small N2 vs N1 (T1), GoogLeNet T2 N2 vs T2 N1, slab growth.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=5
build_dir=$repo/build
iters=300
warmup=1000
size=224
v3=0
while getopts ":r:b:i:w:s:3h" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    b) build_dir=$OPTARG ;;
    i) iters=$OPTARG ;;
    w) warmup=$OPTARG ;;
    s) size=$OPTARG ;;
    3) v3=1 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
flatrt=${FLATRT:-$build_dir/flatrt}
models=$(sed -n 's/^FRT_MODELS_DIR:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
models=${models:-/work/main/build/models}
work=$build_dir/interop
mkdir -p "$work"
gnet=$work/googlenet_$size.onnx
if [ ! -f "$gnet" ]; then
    /usr/bin/python3 - "$gnet" "$size" <<'PY'
import sys, torch, torchvision
path, size = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
m = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True).eval()
x = torch.randn(1, 3, size, size)
torch.onnx.export(m, x, path, input_names=["x"], output_names=["y"], opset_version=13)
PY
fi
v3net=$work/inception_v3_299.onnx
if [ $v3 = 1 ] && [ ! -f "$v3net" ]; then
    /usr/bin/python3 - "$v3net" <<'PY'
import sys, torch, torchvision
torch.manual_seed(0)
m = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True,
                                    transform_input=False).eval()
torch.onnx.export(m, torch.randn(1, 3, 299, 299), sys.argv[1], input_names=["x"],
                  output_names=["y"], opset_version=13)
PY
fi
dlrm=$models/dlrm_small/model.onnx
echo "host: $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A p50 arena
run() { # label model iters threads inter_op [flatrt bench options...]
    local out
    out=$("$flatrt" bench "$2" --iters "$3" --threads "$4" --inter-op "$5" "${@:6}" | tail -1)
    p50[$1]+="$(sed -n 's/.* p50_us=\([0-9.]*\).*/\1/p' <<<"$out") "
    arena[$1]=$(sed -n 's/.* arena_bytes=\([0-9]*\).*/\1/p' <<<"$out")
}
giters=$((iters / 10 > 5 ? iters / 10 : 5))
for ((r = 1; r <= rounds; r++)); do
    run dlrm_T1_N1 "$dlrm" "$iters" 1 1 --warmup "$warmup"
    run dlrm_T1_N2 "$dlrm" "$iters" 1 2 --warmup "$warmup"
    run dlrm_T2_N1 "$dlrm" "$iters" 2 1 --warmup "$warmup"
    run gnet_T2_N1 "$gnet" "$giters" 2 1
    run gnet_T2_N2 "$gnet" "$giters" 2 2
    run gnet_T1_N1 "$gnet" "$giters" 1 1
    if [ $v3 = 1 ]; then
        run v3_T2_N1 "$v3net" "$giters" 2 1
        run v3_T2_N2 "$v3net" "$giters" 2 2
        run v3_T1_N1 "$v3net" "$giters" 1 1
    fi
    echo "round $r/$rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
declare -A med
printf "%-12s %12s %12s   %s\n" config p50_us_med arena_bytes "p50 per round"
keys="dlrm_T1_N1 dlrm_T1_N2 dlrm_T2_N1 gnet_T2_N1 gnet_T2_N2 gnet_T1_N1"
[ $v3 = 0 ] || keys+=" v3_T2_N1 v3_T2_N2 v3_T1_N1"
for k in $keys; do
    med[$k]=$(median <<<"${p50[$k]}")
    printf "%-12s %12s %12s   %s\n" "$k" "${med[$k]}" "${arena[$k]}" "${p50[$k]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
echo "dlrm_small speedup, inter-op 2 vs 1 (1 intra-op thread): $(ratio "${med[dlrm_T1_N1]}" "${med[dlrm_T1_N2]}")x"
echo "dlrm_small speedup, inter-op 2 vs intra-op 2:            $(ratio "${med[dlrm_T2_N1]}" "${med[dlrm_T1_N2]}")x"
echo "googlenet speedup, intra-op 2 + inter-op 2 vs intra-op 2:  $(ratio "${med[gnet_T2_N1]}" "${med[gnet_T2_N2]}")x"
echo "slab growth dlrm_small (T1 N2 vs T2 N1, same kernels):      $(ratio "${arena[dlrm_T1_N2]}" "${arena[dlrm_T2_N1]}")x"
echo "slab growth googlenet (T2 N2 vs T2 N1):                     $(ratio "${arena[gnet_T2_N2]}" "${arena[gnet_T2_N1]}")x"
if [ $v3 = 1 ]; then
    echo "inception_v3 speedup, intra-op 2 + inter-op 2 vs intra-op 2: $(ratio "${med[v3_T2_N1]}" "${med[v3_T2_N2]}")x"
    echo "slab growth inception_v3 (T2 N2 vs T2 N1):                 $(ratio "${arena[v3_T2_N2]}" "${arena[v3_T2_N1]}")x"
fi
