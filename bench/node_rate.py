#!/usr/bin/python3
"""node_rate.py: per-node minimum times of flatrt (Chrome traces, ROUNDS x 10 runs) with each
convolution's GFLOP/s and, for depthwise/grouped ones, the GB/s of its input + output image
(they are bound by bytes, not FMAs), to set each layer against the core's limits
(/work/shared/docs/limits.md: ~100 GFLOP/s FMA, L2 83 GB/s per core on Zen 3).

Usage: /usr/bin/python3 bench/node_rate.py MODEL.onnx [ROUNDS=3] [THREADS=1]
  BIN (environment) picks the binary (default build/flatrt). Prints, per traced node in run
  order: min us, kernel, conv shape (Cin->Cout kxk /s @ output HxW), GFLOP/s, GB/s; then the
  sums by kind (1x1, depthwise, other conv, rest). ORT=RUNS (environment) adds ONNX Runtime's
  per-node minima over RUNS profiled runs (bench/ort_profile.js, ORT_STAT=min; MODEL.onnx's
  directory must hold in/) and their ratio, its fused nodes mapped back to the convolution
  they start from.
"""
import json, os, subprocess, sys, tempfile
import onnx
from onnx import shape_inference

model = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
threads = sys.argv[3] if len(sys.argv) > 3 else '1'
binp = os.environ.get('BIN', 'build/flatrt')
TRACE = os.path.join(tempfile.mkdtemp(prefix='node_rate'), 'trace.json')
best, order = {}, []
for r in range(rounds):
    subprocess.run([binp, 'bench', model, '--iters', '10', '--warmup', '3', '--threads', threads,
                    '--trace', TRACE], capture_output=True, check=True)
    for ev in json.load(open(TRACE))['traceEvents']:
        if ev.get('ph') != 'X' or 'kernel' not in ev.get('args', {}):
            continue
        k = ev['name']
        if k not in best:
            order.append(k)
        if k not in best or ev['dur'] < best[k][1]:
            best[k] = (ev['args']['kernel'], ev['dur'])

m = shape_inference.infer_shapes(onnx.load(model))
shape = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
         for v in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input)}
init = {t.name: list(t.dims) for t in m.graph.initializer}
info = {}
for n in m.graph.node:
    if n.op_type != 'Conv' or n.input[1] not in init:
        continue
    w, xs, ys = init[n.input[1]], shape.get(n.input[0]), shape.get(n.output[0])
    if not xs or not ys:
        continue
    a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
    g = a.get('group', 1)
    st = a.get('strides', [1, 1])[0]
    P = ys[2] * ys[3]
    fl = 2.0 * ys[1] * P * w[1] * w[2] * w[3]
    by = 4.0 * (xs[1] * xs[2] * xs[3] + ys[1] * P)
    kind = '1x1' if w[2] == 1 and w[3] == 1 and g == 1 else ('dw' if g > 1 else 'conv')
    info[n.name] = (kind, '%d->%d %dx%d/%d g%d @%dx%d' % (xs[1], ys[1], w[2], w[3], st, g, ys[2], ys[3]),
                    fl, by)
ort = {}
if os.environ.get('ORT'):
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(['node', os.path.join(here, 'ort_profile.js'), os.path.dirname(os.path.abspath(model)),
                          os.environ['ORT'], '20'], capture_output=True, text=True,
                         env=dict(os.environ, ORT_STAT='min', ORT_THREADS=threads)).stdout
    prod = {o: n for n in m.graph.node for o in n.output}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3 or not f[0].isdigit():
            continue
        t = f[1][:-len('_nchwc')] if f[1].endswith('_nchwc') else f[1]
        n, hops = prod.get(t), 0
        while n is not None and n.op_type != 'Conv' and hops < 4:
            n, hops = prod.get(n.input[0]), hops + 1
        key = n.name if n is not None and n.op_type == 'Conv' else f[1]
        ort[key] = ort.get(key, 0) + float(f[0])
tot = {}
for k in order:
    kern, us = best[k]
    kind, desc, fl, by = info.get(k, ('rest', '', 0, 0))
    t = tot.setdefault(kind, [0, 0.0, 0.0])
    t[0] += 1; t[1] += us; t[2] += fl
    rate = ' %6.1f GF/s' % (fl / us / 1e3) if fl else ''
    bw = ' %6.1f GB/s' % (by / us / 1e3) if kind == 'dw' else ''
    o = ' ORT %6.0f %4.2f' % (ort[k], us / max(ort[k], 1)) if k in ort else ''
    print('%8.1f  %-22s %-34s %s%s%s  %s' % (us, kern[:22], desc, rate, bw, o, k[-40:]))
print('by kind: ' + ', '.join('%s %d nodes %.0f us %.1f GF/s' % (k, v[0], v[1], v[2] / max(v[1], 1) / 1e3)
                              for k, v in sorted(tot.items())))
print('sum of minima %.0f us' % sum(v[1] for v in best.values()) +
      ('; ORT %.0f us' % sum(ort.values()) if ort else ''))
