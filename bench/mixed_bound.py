#!/usr/bin/python3
"""Upper bound on what a per-step mixed inter-op policy could gain over running the steps in order
split over 2 threads, from per-step 1-thread times (docs/architecture.md, inter-op: GoogLeNet).

usage: FRT_PROFILE_ALL=1 flatrt bench MODEL --threads 1 --iters 30 --profile > prof.txt
       bench/mixed_bound.py MODEL prof.txt [OVERHEAD_US=20 | prof2.txt]
       (prof2.txt: the same with --threads 2; then a step's split speedup is its measured
       t1 / t2 instead of the model below, pools are solo only by the threshold, and the
       schedules with the steps that split worse than E alone are simulated too)

Model: a step of t us runs on 2 threads in t / s(t), s(t) = 2t / (t + 2 o) (a fixed cost o per
split: the fork/join and the imbalance), pools 1.1x. The baseline is the sum of t / s(t). The mixed
schedule is simulated in 1 us ticks on 2 threads by the DAG of the ONNX graph (steps not in the
profile, fused into others, count as edges): a free thread first joins the other's running
splittable step (rate s(t) while both work on it), else takes the ready step with the longest
chain behind it; steps under X us and pools run on one thread only. No scheduling costs: a bound.
"""
import functools
import sys

import onnx



def read_prof(path):
    t, on = {}, False
    for line in open(path):
        if line.startswith("top ") and "nodes by time" in line:
            on = True
            continue
        f = line.split()
        if on and len(f) >= 5 and f[0] != "node":
            try:
                t[f[0]] = float(f[-2])
            except ValueError:
                on = False
    return t


model, prof = sys.argv[1], sys.argv[2]
arg3 = sys.argv[3] if len(sys.argv) > 3 else "20"
t2 = None
try:
    o = float(arg3)
except ValueError:
    o, t2 = 0.0, read_prof(arg3)
m = onnx.load(model, load_external_data=False)
t1 = read_prof(prof)
allnodes = {n.name: n for n in m.graph.node}
prod = {out: n.name for n in m.graph.node for out in n.output}
kept = {n.name for n in m.graph.node if n.name in t1 or n.op_type == "Concat"}


@functools.lru_cache(None)
def deps(name):
    r = set()
    for i in allnodes[name].input:
        p = prod.get(i)
        if p is not None:
            r |= {p} if p in kept else deps(p)
    return frozenset(r)


steps = [n.name for n in m.graph.node if n.name in kept]
T = {s: t1.get(s, 0.0) for s in steps}
pool = {s: "Pool" in allnodes[s].op_type for s in steps}
succ = {s: [] for s in steps}
for s in steps:
    for d in deps(s):
        succ[d].append(s)


def sp(s):
    if t2 is not None:
        return T[s] / t2[s] if T[s] > 0 and t2.get(s, 0) > 0 else 1.0
    return 1.0 if T[s] <= 0 else 1.1 if pool[s] else 2 * T[s] / (T[s] + 2 * o)


seq = sum(T[s] / sp(s) for s in steps)
prio = {}
for s in reversed(steps):
    prio[s] = T[s] / sp(s) + max([prio[q] for q in succ[s]] + [0])


def simulate(x, eff=0.0):
    solo = {s: T[s] < x or (pool[s] and t2 is None) or sp(s) < eff for s in steps}
    pend = {s: len(deps(s)) for s in steps}
    ready = [s for s in steps if not pend[s]]
    rem = dict(T)
    thr, now, done = [None, None], 0.0, 0

    def finish(s):
        nonlocal done
        done += 1
        for q in succ[s]:
            pend[q] -= 1
            if not pend[q]:
                ready.append(q)

    while done < len(steps):
        for z in [s for s in ready if T[s] <= 0]:
            ready.remove(z)
            finish(z)
        for i in range(2):
            if thr[i] is None:
                other = thr[1 - i]
                if other and other[1] == "own" and not solo[other[0]]:
                    thr[i] = (other[0], "help")
                elif ready:
                    ready.sort(key=lambda s: -prio[s])
                    thr[i] = (ready.pop(0), "own")
        running = {}
        for th in thr:
            if th:
                running[th[0]] = running.get(th[0], 0) + 1
        if not running:
            continue
        now += 1.0
        for s, k in running.items():
            rem[s] -= 1.0 if k == 1 else sp(s)
            if rem[s] <= 0:
                thr = [None if th and th[0] == s else th for th in thr]
                finish(s)
    return now


print("1 thread %.0f us; steps in order split over 2 threads (%s) %.0f us (%.2fx)"
      % (sum(T.values()), "measured" if t2 else "o = %.0f us" % o, seq, sum(T.values()) / seq))
for x in (0, 30, 60, 100, 150, 250, 400, 1000):
    r = simulate(x)
    print("steps under %3d us%s alone: %.0f us, %.3fx of the steps in order"
          % (x, "" if t2 else " and pools", r, seq / r))
if t2:
    for e in (1.3, 1.5, 1.6, 1.7, 1.8, 1.9):
        r = simulate(0, e)
        print("steps that split under %.1fx alone: %.0f us, %.3fx of the steps in order"
              % (e, r, seq / r))
