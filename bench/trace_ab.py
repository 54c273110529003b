#!/usr/bin/python3
"""trace_ab.py: per-node minimum durations of two flatrt configurations from Chrome traces,
interleaved (layer_ab.sh takes medians of profile means; minima of single runs hold better on a
loaded host).

Usage: /usr/bin/python3 bench/trace_ab.py MODEL.onnx ROUNDS "ENV_A" "ENV_B" [NODE_REGEX]
  ENV_*: space-separated NAME=VALUE pairs for that configuration (e.g. "FRT_FUSE_SE=0", or a
  dummy "X=1"); BIN_A / BIN_B in the environment pick the binaries (default build/flatrt), ARGS
  extra bench arguments. Each round traces 10 runs (`flatrt bench --iters 10 --trace`) per
  configuration; prints per matching node both kernels, minima and B/A, the sums over nodes in
  both, over every matching node of each (a node fused away counts on its side only), and over
  all nodes.
"""
import subprocess, sys, os, re, json, tempfile
model, rounds, ea, eb = sys.argv[1:5]
flt = sys.argv[5] if len(sys.argv) > 5 else ''
binA = os.environ.get('BIN_A', 'build/flatrt'); binB = os.environ.get('BIN_B', 'build/flatrt')
extra = os.environ.get('ARGS', '').split()
TRACE = os.path.join(tempfile.mkdtemp(prefix='trace_ab'), 'trace.json')
def run(env, b):
    e = dict(os.environ)
    for kv in env.split():
        k, v = kv.split('='); e[k] = v
    subprocess.run([b, 'bench', model, '--iters', '10', '--warmup', '3', '--trace', TRACE] + extra, env=e, capture_output=True)
    d = json.load(open(TRACE))
    res = {}
    for ev in d['traceEvents']:
        if ev.get('ph') != 'X' or 'args' not in ev or 'kernel' not in ev['args']: continue
        k = ev['name']; v = (ev['args']['op'], ev['args']['kernel'], ev['dur'])
        if k not in res or v[2] < res[k][2]: res[k] = v
    return res
A = {}; B = {}
for r in range(int(rounds)):
    for env, b, D in ((ea, binA, A), (eb, binB, B)):
        for k, v in run(env, b).items():
            if k not in D or v[2] < D[k][2]: D[k] = v
sa = sb = 0
for k in A:
    if flt and not re.search(flt, k + ' ' + A[k][1]): continue
    if k not in B: continue
    sa += A[k][2]; sb += B[k][2]
    print('%-60s %-10s %-14s %8.1f %-14s %8.1f %5.2f' % (k[-60:], A[k][0], A[k][1], A[k][2], B[k][1], B[k][2], B[k][2] / max(A[k][2], 1e-9)))
ta = sum(v[2] for k, v in A.items() if not flt or re.search(flt, k + ' ' + v[1]))
tb = sum(v[2] for k, v in B.items() if not flt or re.search(flt, k + ' ' + v[1]))
print('sum A %.1f B %.1f  B/A %.3f ; all matching: A %.1f B %.1f' % (sa, sb, sb / max(sa, 1e-9), ta, tb))
print('total A %.1f B %.1f' % (sum(v[2] for v in A.values()), sum(v[2] for v in B.values())))
