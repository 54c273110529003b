#!/usr/bin/env python3
"""Writes a self-contained HTML page that draws a Chrome trace (the JSON of `flatrt bench --trace`
or frt_runtime_write_trace) as a timeline: one lane per thread (nested steps one row deeper),
complete events ("ph": "X") coloured by op type, an overview of every traced run and the run
--run K (default: the fastest) drawn across the full width with labels, and a legend with each op type's share of the
time. It is a small viewer for documentation screenshots (headless Chromium can render it, see
scripts/trace_screenshot.sh); Perfetto (ui.perfetto.dev) and chrome://tracing open the same JSON.

usage: trace_view.py TRACE.json OUT.html [--title TEXT] [--run K (1-based; 0 = the fastest)]"""
import argparse
import json
import sys

PAGE = r"""<!doctype html>
<html><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { font: 13px sans-serif; margin: 16px; background: #fff; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px 0; }
.sub { color: #555; margin-bottom: 10px; }
h2 { font-size: 14px; margin: 14px 0 4px 0; }
svg text { font: 11px sans-serif; }
#legend span { display: inline-block; margin: 2px 12px 2px 0; }
#legend i { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; margin-right: 4px; }
#tip { position: fixed; display: none; background: #ffe; border: 1px solid #999; padding: 4px;
       font: 11px monospace; white-space: pre; pointer-events: none; }
</style></head><body>
<h1>__TITLE__</h1>
<div class="sub" id="sub"></div>
<h2 id="h_all"></h2><svg id="all"></svg>
<h2 id="h_run"></h2><svg id="run"></svg>
<div id="legend"></div><div id="tip"></div>
<script>
const trace = __TRACE__;
const RUN = __RUN__;
const W = Math.max(900, window.innerWidth - 40), LANE = 22, LEFT = 150;
const events = (Array.isArray(trace) ? trace : trace.traceEvents).filter(e => e.ph === "X");
const names = {};
for (const e of (Array.isArray(trace) ? trace : trace.traceEvents))
  if (e.ph === "M" && e.name === "thread_name") names[e.pid + "/" + e.tid] = e.args.name;
events.sort((a, b) => a.ts - b.ts);
const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                 "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#bcbd22"];
const cats = [...new Set(events.map(e => e.cat || e.name))];
const total = {};
for (const e of events) total[e.cat || e.name] = (total[e.cat || e.name] || 0) + e.dur;
cats.sort((a, b) => total[b] - total[a]);
const color = c => palette[cats.indexOf(c) % palette.length];
const lanes = [...new Set(events.map(e => e.pid + "/" + e.tid))];
const depthOf = e => (e.args && e.args.depth) || 0;
const maxDepth = {};
for (const e of events) { const l = e.pid + "/" + e.tid; maxDepth[l] = Math.max(maxDepth[l] || 0, depthOf(e)); }
const laneY = {};
let y = 18;
for (const l of lanes) { laneY[l] = y; y += (maxDepth[l] + 1) * LANE + 8; }
const H = y + 4;
// runs: each depth-0 occurrence of the first step's name starts one
const first = events.find(e => depthOf(e) === 0);
const starts = events.filter(e => depthOf(e) === 0 && e.name === first.name).map(e => e.ts);
const tip = document.getElementById("tip");

function draw(id, t0, t1, labels) {
  const svg = document.getElementById(id), ns = "http://www.w3.org/2000/svg";
  svg.setAttribute("width", W); svg.setAttribute("height", H);
  const sx = t => LEFT + (t - t0) / (t1 - t0) * (W - LEFT - 10);
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(ns, tag);
    for (const k in attrs) n.setAttribute(k, attrs[k]);
    if (text !== undefined) n.textContent = text;
    svg.appendChild(n); return n;
  };
  // time axis in ms
  const span = (t1 - t0) / 1000, steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
  const step = steps.find(s => span / s <= 12) || 10000;
  for (let ms = Math.ceil(t0 / 1000 / step) * step; ms * 1000 <= t1; ms += step) {
    const x = sx(ms * 1000);
    add("line", {x1: x, x2: x, y1: 12, y2: H, stroke: "#ddd"});
    add("text", {x: x + 2, y: 10, fill: "#666"}, ms + " ms");
  }
  for (const l of lanes) {
    add("text", {x: 0, y: laneY[l] + 15}, names[l] || ("thread " + l.split("/")[1]));
    add("line", {x1: LEFT, x2: W, y1: laneY[l] - 3, y2: laneY[l] - 3, stroke: "#eee"});
  }
  for (const e of events) {
    if (e.ts + e.dur < t0 || e.ts > t1) continue;
    const l = e.pid + "/" + e.tid, x0 = sx(Math.max(e.ts, t0)), x1 = sx(Math.min(e.ts + e.dur, t1));
    const yy = laneY[l] + depthOf(e) * LANE, w = Math.max(x1 - x0, 0.6);
    const r = add("rect", {x: x0, y: yy, width: w, height: LANE - 3, fill: color(e.cat || e.name),
                           stroke: w > 3 ? "#fff" : "none", "stroke-width": 0.5});
    const a = e.args || {};
    const info = `${e.name}\n${a.op || e.cat} ${a.kernel || ""}\nshape ${a.shape || "?"}\n` +
                 `${(e.dur / 1000).toFixed(3)} ms, in ${a.in_bytes} B, out ${a.out_bytes} B`;
    r.addEventListener("mousemove", ev => { tip.style.display = "block"; tip.textContent = info;
      tip.style.left = ev.clientX + 12 + "px"; tip.style.top = ev.clientY + 12 + "px"; });
    r.addEventListener("mouseout", () => tip.style.display = "none");
    if (labels && w > 34) {
      const text = (a.op || e.cat || e.name) + (w > 110 && a.shape ? " " + a.shape : "");
      const c = Math.floor((w - 4) / 6.2);
      add("text", {x: x0 + 2, y: yy + 13, fill: "#fff", "pointer-events": "none"},
          text.length > c ? text.slice(0, Math.max(c - 1, 1)) + "\u2026" : text);
    }
  }
}

const tEnd = Math.max(...events.map(e => e.ts + e.dur));
const runs = starts.length;
const runSpan = i => {
  const a = starts[i], b = i + 1 < runs ? starts[i + 1] : tEnd;
  return [a, Math.max(...events.filter(e => e.ts >= a && e.ts < b).map(e => e.ts + e.dur))];
};
let k = Math.min(RUN, runs - 1);
if (k < 0) { // the fastest run
  k = 0;
  for (let i = 1; i < runs; i++) {
    const s = runSpan(i), f = runSpan(k);
    if (s[1] - s[0] < f[1] - f[0]) k = i;
  }
}
const [r0, runEnd] = runSpan(k);
const busy = {};
for (const e of events) if (depthOf(e) === 0) busy[e.tid] = (busy[e.tid] || 0) + e.dur;
document.getElementById("sub").textContent =
  `${events.length} step events, ${runs} runs, ${lanes.length} thread lane(s); ` +
  `producer: ${(trace.otherData && trace.otherData.producer) || "?"}. Rendered by scripts/trace_view.py.`;
document.getElementById("h_all").textContent = `All ${runs} traced runs (${(tEnd / 1000).toFixed(1)} ms)`;
document.getElementById("h_run").textContent =
  `Run ${k + 1} of ${runs}${RUN < 0 ? " (the fastest)" : ""}: ${((runEnd - r0) / 1000).toFixed(2)} ms`;
draw("all", 0, tEnd, false);
draw("run", r0, runEnd, true);
const all = Object.values(total).reduce((a, b) => a + b, 0);
document.getElementById("legend").innerHTML = cats.map(c =>
  `<span><i style="background:${color(c)}"></i>${c} ${(100 * total[c] / all).toFixed(1)}%</span>`).join("");
</script></body></html>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--title", default=None)
    ap.add_argument("--run", type=int, default=0,
                    help="run to draw in full (1-based; default 0: the fastest)")
    a = ap.parse_args()
    with open(a.trace) as f:
        trace = json.load(f)
    evs = trace if isinstance(trace, list) else trace.get("traceEvents", [])
    if not any(e.get("ph") == "X" for e in evs):
        sys.exit("trace_view.py: no complete events in " + a.trace)
    title = a.title or a.trace
    page = (PAGE.replace("__TITLE__", title.replace("&", "&amp;").replace("<", "&lt;"))
            .replace("__RUN__", str(a.run - 1))
            .replace("__TRACE__", json.dumps(trace).replace("</", "<\\/")))
    with open(a.out, "w") as f:
        f.write(page)


if __name__ == "__main__":
    main()
