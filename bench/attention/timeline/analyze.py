#!/usr/bin/env python3
"""Summary of one trace written by harness.cu (see run.sh): when blocks end and how much
block-time idles after the block's last task; per task and warpgroup the median time of setup,
the wait for the first stage, the first stage's compute, the other stages' (and per stage),
finish and the whole; blocks' start-to-start task time, for full tasks and those whose rows
only one warpgroup computes; how far apart a task's warpgroups reach their first stage; and
when blocks end, grouped by their task count and lone tasks.

    python3 analyze.py trace.bin

The trace holds 132 blocks (one per SM of an H100 or H200) and a block's first 48 tasks.
"""
import warnings
warnings.simplefilter("ignore", RuntimeWarning)
import sys, numpy as np
a = np.fromfile(sys.argv[1], dtype=np.uint64).reshape(132, 48, 4, -1).astype(np.int64)
t0 = a[:, :, :, 0][a[:, :, :, 0] > 0].min()
def rel(x): return (x - t0) / 1000.0  # us
valid = a[:, :, 0, 0] > 0
# How many of a task's three warpgroups computed on it (one: a lone task).
def computing(b, t): return int((a[b, t, :3, 6] > 0).sum())
ntask = valid.sum(1)
end = np.array([rel(a[b, ntask[b]-1, :3, 5].max()) for b in range(132)])
start = np.array([rel(a[b, 0, :3, 0].min()) for b in range(132)])
print("tasks per block: min %d max %d; block start %.1f..%.1f us; end %.1f..%.1f us (mean %.1f)" % (ntask.min(), ntask.max(), start.min(), start.max(), end.min(), end.max(), end.mean()))
# idle at end: sum over blocks (span - end)
span = end.max()
print("span %.1f us; blocks' idle after their end: %.1f%% of block-time" % (span, 100 * (span - end).sum() / (132 * span)))
# per task, per wg: durations
rows = []
for b in range(132):
    for t in range(ntask[b]):
        for w in range(3):
            e = rel(a[b, t, w, :6]); ci = a[b, t, w, 6]
            rows.append((b, t, w, ci, e[1]-e[0], e[2]-e[1] if ci > 0 else np.nan, e[3]-e[2] if ci > 0 else np.nan, e[4]-e[3] if ci > 0 else np.nan, e[5]-e[4], e[5]-e[0]))
r = np.array(rows, dtype=float)
for ci in sorted(set(r[:, 3])):
    m = r[:, 3] == ci
    print("compute_iters=%d: n=%d  setup %.2f  firstwait %.2f  firstcompute %.2f  rest %.2f (%.3f/iter)  finish %.2f  total %.2f us" % (
        ci, m.sum(), *[np.nanmedian(r[m, k]) for k in (4, 5, 6, 7)], np.nanmedian(r[m, 7]) / max(ci - 1, 1), np.nanmedian(r[m, 8]), np.nanmedian(r[m, 9])))
# task duration (block-level): from min start of WGs to next task's start
d = []
for b in range(132):
    for t in range(ntask[b] - 1):
        d.append((a[b, t, :3, 6].max(), (a[b, t+1, :3, 0].min() - a[b, t, :3, 0].min()) / 1000.0))
d = np.array(d, dtype=float)
if len(d):
    for ci in sorted(set(d[:, 0])):
        m = d[:, 0] == ci
        print("block task with max iters %d: start-to-start median %.2f us (p10 %.2f p90 %.2f) n=%d" % (ci, np.median(d[m, 1]), np.percentile(d[m, 1], 10), np.percentile(d[m, 1], 90), m.sum()))
# lone: tasks where only one wg computes
lone = []
full = []
for b in range(132):
    for t in range(ntask[b] - 1):
        nc = computing(b, t)
        dd = (a[b, t+1, :3, 0].min() - a[b, t, :3, 0].min()) / 1000.0
        (lone if nc == 1 else full if nc == 3 else []).append(dd)
if lone: print("lone task start-to-start %.2f us vs full %.2f (n %d / %d)" % (np.median(lone), np.median(full), len(lone), len(full)))
# WG phase spread at task start: max-min of setup start across wgs
sp = [ (a[b, t, :3, 2].max() - a[b, t, :3, 2].min()) / 1000.0 for b in range(132) for t in range(ntask[b]) if computing(b, t) == 3]
print("spread of WGs' first-stage arrival within a task: median %.2f us p90 %.2f" % (np.median(sp), np.percentile(sp, 90)))
# Blocks grouped by what they ran (their task count, and how many of those tasks one warpgroup
# computed alone): when each group ends shows whether the end is set by whole tasks or by jitter.
groups = {}
for b in range(132):
    lone_b = sum(computing(b, t) == 1 for t in range(ntask[b]))
    groups.setdefault((int(ntask[b]), lone_b), []).append(end[b])
for (n, l), e in sorted(groups.items()):
    print("blocks with %d tasks, %d of them lone: %d, end mean %.1f min %.1f max %.1f us" % (n, l, len(e), np.mean(e), min(e), max(e)))
