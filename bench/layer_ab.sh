#!/bin/bash
# layer_ab.sh: per-node times of two flatrt configurations, interleaved, medians over rounds.
# usage: bench/layer_ab.sh MODEL_DIR ROUNDS ITERS NODE_REGEX SPEC_A SPEC_B
#   SPEC: an environment assignment for ./build/flatrt (e.g. FRT_WINO_SMALL=0), or BIN=PATH to run
#   another flatrt binary (e.g. BIN=/tmp/lead/base/build/flatrt). Each round runs
#   `flatrt bench MODEL --profile` (FRT_PROFILE_ALL=1) once per spec; prints per matching node
#   the kernel, median and min of its us/run for each spec (node lines of the profile's "nodes by
#   time" table only, whatever their names). On a shared host only such interleaved comparisons
#   mean something.
set -euo pipefail
M=$1
for r in $(seq "$2"); do
    for e in "$5" "$6"; do
        bin=./build/flatrt
        case "$e" in BIN=*) bin=${e#BIN=} ;; esac
        env "$e" FRT_PROFILE_ALL=1 "$bin" bench "$M/model.onnx" --input-dir "$M/in" --profile \
            --iters "$3" --warmup 3 2>&1 |
            awk -v e="$e" -v re="$4" '/nodes by time:$/ {on = 1; next} /^$/ {on = 0}
                on && $1 != "node" && $0 ~ re {print e, $1, $(NF-2), $(NF-1)}'
    done
done | /usr/bin/python3 -c '
import sys, statistics as st, collections
d = collections.defaultdict(list); k = {}
for l in sys.stdin:
    e, n, kern, us = l.split(); d[(n, e)].append(float(us)); k[(n, e)] = kern
for n in sorted(set(n for n, e in d)):
    print(n, " | ".join("%s %s median %.0f (min %.0f) of %d" % (e, k[(n, e)], st.median(d[(n, e)]),
          min(d[(n, e)]), len(d[(n, e)])) for e in sorted(set(e for m, e in d)) if (n, e) in d))
'
