// ort_profile.js: ONNX Runtime's per-node times for one model, 1 intra-op thread (ORT_THREADS=n
// for n), to set against `flatrt bench MODEL --profile [--threads n]` layer by layer.
//
// Usage: node bench/ort_profile.js MODEL_DIR [RUNS=200] [WARMUP=20]
//   MODEL_DIR holds model.onnx and in/<input name>.npy (the layout of build/models/<model>).
//   NODE_PATH or ORT_NODE may name the onnxruntime-node package; default is
//   /work/shared/tools/ortbench/.ort/node_modules/onnxruntime-node.
// Prints one line per node: median us over the timed runs, node name, op type, output-name
// hint (ORT's fused nodes keep the name of their first node; the output names map them to
// flatrt's steps), then the sum of medians and the median whole-run time. ORT_STAT=min prints
// each node's minimum instead of its median (set against bench/node_rate.py's minima).
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');

const ortPath = process.env.ORT_NODE ||
  '/work/shared/tools/ortbench/.ort/node_modules/onnxruntime-node';
const ort = require(ortPath);

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not .npy');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hoff = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hoff, hoff + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
    .map((s) => s.trim()).filter((s) => s.length).map(Number);
  const data = buf.subarray(hoff + hlen);
  const ab = data.buffer.slice(data.byteOffset, data.byteOffset + data.length);
  const types = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array],
    '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array] };
  const t = types[descr];
  if (!t) throw new Error(file + ': dtype ' + descr + ' not handled');
  return new ort.Tensor(t[0], new t[1](ab), shape);
}

function median(a) {
  const s = a.slice().sort((x, y) => x - y);
  return s.length ? s[s.length >> 1] : 0;
}

async function main() {
  const dir = process.argv[2];
  const runs = Number(process.argv[3] || 200);
  const warm = Number(process.argv[4] || 20);
  if (!dir) { console.error('usage: node bench/ort_profile.js MODEL_DIR [RUNS] [WARMUP]'); process.exit(2); }
  const prefix = path.join(os.tmpdir(), 'ortprof_' + process.pid);
  const sess = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    intraOpNumThreads: Number(process.env.ORT_THREADS || 1), interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix,
  });
  const feeds = {};
  for (const name of sess.inputNames) feeds[name] = readNpy(path.join(dir, 'in', name + '.npy'));
  for (let i = 0; i < warm; i++) await sess.run(feeds);
  for (let i = 0; i < runs; i++) await sess.run(feeds);
  sess.endProfiling();
  await sess.release();
  const files = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('ortprof_' + process.pid));
  const ev = JSON.parse(fs.readFileSync(path.join(os.tmpdir(), files[0]), 'utf8'));
  for (const f of files) fs.unlinkSync(path.join(os.tmpdir(), f));
  const per = new Map();
  const order = [];
  const whole = [];
  for (const e of ev) {
    if (e.cat === 'Session' && e.name === 'model_run') whole.push(e.dur);
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const n = e.name.slice(0, -'_kernel_time'.length);
    if (!per.has(n)) { per.set(n, { d: [], op: e.args.op_name, out: (e.args.output_type_shape || []).length }); order.push(n); }
    per.get(n).d.push(e.dur);
  }
  let sum = 0;
  for (const n of order) {
    const p = per.get(n);
    const d = p.d.slice(Math.min(warm, p.d.length - runs > 0 ? p.d.length - runs : 0));
    const m = process.env.ORT_STAT === 'min' ? Math.min(...d) : median(d);
    sum += m;
    console.log(m.toFixed(0).padStart(7) + '  ' + n + '  ' + p.op);
  }
  console.log('sum of node medians ' + sum.toFixed(0) + ' us; model_run median ' +
    median(whole.slice(warm)).toFixed(0) + ' us');
}
main().catch((e) => { console.error(e); process.exit(1); });
