#!/bin/bash
# cpu_ratio.sh: CPU time per run (user + sys) of flatrt and ONNX Runtime on one model, for a
# host shared with other work, where wall-clock p50s (bench/compare.sh) drift with the load but
# the CPU time a process gets charged drifts less (it still grows with contention for caches and
# memory). Each tool runs the model N1 and N2 times (plus 1 warm-up) under /usr/bin/time; the
# difference of the two runs' CPU times over N2 - N1 is the time per run without the load.
# usage: bench/cpu_ratio.sh MODELS_DIR NAME [FLATRT]   (MODELS_DIR/NAME/{model.onnx,in/*.npy})
#   env: N1 (default 3), N2 (default 13), ORTBENCH (default ../shared/tools/ortbench/ortbench)
# Prints: NAME flatrt_cpu_ms/run X ort_cpu_ms/run Y ratio X/Y (1 thread; /usr/bin/time's 10 ms
# resolution over N2 - N1 runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
d=$1/$2
F=${3:-$here/../build/flatrt}
O=${ORTBENCH:-$here/../../shared/tools/ortbench/ortbench}
N1=${N1:-3}
N2=${N2:-13}
cpu() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print ($1 + $2) * 1000}'; }
inp=()
for f in "$d"/in/*.npy; do inp+=(--input "$(basename "$f" .npy)=$f"); done
fa=$(cpu "$F" bench "$d/model.onnx" --input-dir "$d/in" --iters "$N1" --warmup 1)
fb=$(cpu "$F" bench "$d/model.onnx" --input-dir "$d/in" --iters "$N2" --warmup 1)
oa=$(cpu "$O" "$d/model.onnx" --iters "$N1" --warmup 1 "${inp[@]}")
ob=$(cpu "$O" "$d/model.onnx" --iters "$N2" --warmup 1 "${inp[@]}")
awk -v n="$2" -v fa="$fa" -v fb="$fb" -v oa="$oa" -v ob="$ob" -v k="$((N2 - N1))" \
    'BEGIN { f = (fb - fa) / k; o = (ob - oa) / k;
             printf "%s flatrt_cpu_ms/run %.2f ort_cpu_ms/run %.2f ratio %.2f\n", n, f, o, f / o }'
