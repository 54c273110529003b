#!/bin/bash
# Per-iteration overhead of ONNX Loop: flatrt vs ONNX Runtime (../shared/tools/ortbench).
#
# usage: bench/loop_overhead.sh [-r ROUNDS] [-b BUILD_DIR] [-n ITERS]
# Generates (in BUILD_DIR/loop_overhead/) a model whose Loop body is almost empty: one Add on a
# float scalar carried value, the condition passed through (Identity), no scan output; the trip
# count M is an input. Each tool runs it with M = 1 and M = 1 + ITERS (default 1000), 1 thread,
# ROUNDS interleaved rounds (default 5); the per-iteration overhead is
# (p50(M = 1 + ITERS) - p50(M = 1)) / ITERS, median over the rounds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=5
build_dir=$repo/build
iters=1000
while getopts ":r:b:n:h" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    b) build_dir=$OPTARG ;;
    n) iters=$OPTARG ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
flatrt=${FLATRT:-$build_dir/flatrt}
ortbench=${ORTBENCH:-$repo/../shared/tools/ortbench/ortbench}
work=$build_dir/loop_overhead
mkdir -p "$work"
/usr/bin/python3 - "$work" "$iters" <<'PY'
import sys, numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
out, iters = sys.argv[1], int(sys.argv[2])
body = helper.make_graph(
    [helper.make_node("Identity", ["cond"], ["cond_out"]),
     helper.make_node("Add", ["v", "one"], ["v2"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v", TensorProto.FLOAT, [])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v2", TensorProto.FLOAT, [])])
g = helper.make_graph(
    [helper.make_node("Loop", ["M", "", "v0"], ["v"], body=body)], "loop_overhead",
    [helper.make_tensor_value_info("M", TensorProto.INT64, []),
     helper.make_tensor_value_info("v0", TensorProto.FLOAT, [])],
    [helper.make_tensor_value_info("v", TensorProto.FLOAT, [])],
    initializer=[numpy_helper.from_array(np.array(1.0, np.float32), "one")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, f"{out}/model.onnx")
np.save(f"{out}/v0.npy", np.array(0.0, np.float32))
np.save(f"{out}/m1.npy", np.array(1, np.int64))
np.save(f"{out}/mn.npy", np.array(1 + iters, np.int64))
PY
p50() { sed -n 's/.*p50_us=\([0-9.e+-]*\).*/\1/p' | tail -1; }
run() { # tool, M file, timed runs
    local tool=$1 mf=$2 n=$3
    if [ "$tool" = flatrt ]; then
        "$flatrt" bench "$work/model.onnx" --input "M=$work/$mf" --input "v0=$work/v0.npy" \
            --threads 1 --iters "$n" --warmup 20 2>/dev/null | p50
    else
        "$ortbench" "$work/model.onnx" --input "M=$work/$mf" --input "v0=$work/v0.npy" \
            --threads 1 --iters "$n" --warmup 20 2>/dev/null | p50
    fi
}
fr=() ; orr=()
for r in $(seq 1 "$rounds"); do
    f1=$(run flatrt m1.npy 2000); fn=$(run flatrt mn.npy 200)
    o1=$(run ort m1.npy 2000); on=$(run ort mn.npy 200)
    fi=$(python3 -c "print('%.1f' % (($fn - $f1) / $iters * 1000))")
    oi=$(python3 -c "print('%.1f' % (($on - $o1) / $iters * 1000))")
    echo "round $r: flatrt M=1 $f1 us, M=$((iters + 1)) $fn us -> $fi ns/iter; ORT M=1 $o1 us, M=$((iters + 1)) $on us -> $oi ns/iter" >&2
    fr+=("$fi"); orr+=("$oi")
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
fm=$(med "${fr[@]}"); om=$(med "${orr[@]}")
echo "loop per-iteration overhead (median of $rounds rounds, 1 thread): flatrt $fm ns, ONNX Runtime $om ns, ratio $(python3 -c "print(round($fm / $om, 3))")"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
