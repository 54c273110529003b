#!/usr/bin/python3
"""Where intra-op splitting loses time at N threads: per-node and per-kernel comparison of two
`flatrt bench --profile` outputs of one model (1 thread and N threads, same build).

usage: FRT_PROFILE_ALL=1 flatrt bench MODEL --threads 1 --iters 20 --profile > p1.txt
       FRT_PROFILE_ALL=1 flatrt bench MODEL --threads 2 --iters 20 --profile > p2.txt
       bench/split_loss.py p1.txt p2.txt [N=2] [TOP=15]

The loss of a step is N * t_N - t_1 (thread time spent at N threads beyond the 1-thread work:
fork/join, imbalance, parts' overheads, and the idle threads of steps that do not split); the
sum over steps, divided by N, is what a perfect schedule of the same kernels (inter-op beside
intra-op) could save in wall time at most. Prints the kernels by total loss and the TOP nodes.
"""
import collections
import sys


def load(path):
    d, on = {}, False
    for line in open(path):
        if line.startswith("top ") and "nodes by time" in line:
            on = True
            continue
        f = line.split()
        if on and len(f) >= 5 and f[0] != "node":
            try:
                d[f[0]] = (f[1], f[2], float(f[-2]))
            except ValueError:
                on = False
    return d


a, b = load(sys.argv[1]), load(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2
top = int(sys.argv[4]) if len(sys.argv) > 4 else 15
rows = [(n * b[k][2] - a[k][2], k, a[k][0], b[k][1], a[k][2], b[k][2]) for k in a if k in b]
t1, tn = sum(r[4] for r in rows), sum(r[5] for r in rows)
loss = sum(r[0] for r in rows)
print("steps: 1 thread %.0f us, %d threads %.0f us (%.2fx); loss %.0f us of thread time, "
      "at most %.0f us (%.1f%%) of wall time to win back" % (t1, n, tn, t1 / tn, loss, loss / n,
                                                            100 * loss / n / tn))
agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
for r in rows:
    kern = r[3].replace("_split", "").split(":")[-1]
    g = agg[(r[2], kern)]
    g[0] += 1
    g[1] += r[4]
    g[2] += r[5]
print("\n%-14s %-28s %5s %10s %10s %7s %10s" % ("op", "kernel (at N)", "nodes", "t1_us", "tN_us",
                                               "speedup", "loss_us"))
for (op, kern), (c, x, y) in sorted(agg.items(), key=lambda kv: -(n * kv[1][2] - kv[1][1])):
    print("%-14s %-28s %5d %10.0f %10.0f %7.2f %10.0f" % (op, kern, c, x, y, x / y if y else 0,
                                                          n * y - x))
print("\n%-45s %-24s %10s %10s %7s %10s" % ("node", "kernel (at N)", "t1_us", "tN_us", "speedup",
                                            "loss_us"))
for r in sorted(rows, reverse=True)[:top]:
    print("%-45s %-24s %10.0f %10.0f %7.2f %10.0f" % (r[1], r[3], r[4], r[5],
                                                      r[4] / r[5] if r[5] else 0, r[0]))
