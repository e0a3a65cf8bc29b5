#!/usr/bin/env python3
"""Where a GEMM block's time goes, from one trace written by harness.cu (see build.sh): per
block and consumer warpgroup, from the kernel's entry to the first stage's arrival (the fill),
through the stages (the K loop), the finish (the accumulator into shared memory and the TMA
store issued) and the wait for the store to have read it (the end), in clock64 cycles of the
block's multiprocessor, each against the loop's floor at the full tensor rate; the launch's
span in %globaltimer time; and, for a build with patch_start.py's stamps, where the cycles
before the first copy go.

    python3 analyze.py trace.bin [tile_m tile_n k_step]   (default 128 256 64)
"""
import sys
import numpy as np

a = np.fromfile(sys.argv[1], dtype=np.uint64).reshape(132, 48, 4, 16).astype(np.int64)
tm, tn, tk = (int(x) for x in sys.argv[2:5]) if len(sys.argv) > 4 else (128, 256, 64)
# One k-step of a tile at 4096 dense bf16 FLOP per cycle and multiprocessor.
step_floor = 2 * tm * tn * tk / 4096
blocks = [b for b in range(132) if a[b, 0, 0, 9] > 0]
t0 = min(a[b, 0, w, 9] for b in blocks for w in (0, 1, 3))
ends = np.array([a[b, 0, :2, 8].max() for b in blocks])
entries = np.array([a[b, 0, 3, 9] for b in blocks])
print("blocks %d; entry %.2f..%.2f us after the first; ends %.2f..%.2f us (span %.2f us)" % (
    len(blocks), (entries.min() - t0) / 1e3, (entries.max() - t0) / 1e3,
    (ends.min() - t0) / 1e3, (ends.max() - t0) / 1e3, (ends.max() - t0) / 1e3))
ghz = [(a[b, 0, w, 14] - a[b, 0, w, 10]) / (a[b, 0, w, 8] - a[b, 0, w, 9])
       for b in blocks for w in (0, 1) if a[b, 0, w, 8] > a[b, 0, w, 9]]
print("SM clock, clock64 over %%globaltimer from entry to end: median %.3f GHz (%.3f..%.3f)" % (
    np.median(ghz), min(ghz), max(ghz)))
if all(a[b, 0, 3, 1] > 0 for b in blocks): # not in a build whose LCF_EVENTS drops column 1
    first_load = np.array([a[b, 0, 3, 1] - a[b, 0, 3, 9] for b in blocks])
    print("producer: entry to first load issued %.0f ns median" % np.median(first_load))
rows = []
for b in blocks:
    ntask = int(np.argmin(np.append(a[b, :47, 0, 12] > 0, False)))
    for w in (0, 1):
        entry, end = a[b, 0, w, 10], a[b, 0, w, 14]
        iters = a[b, :ntask, w, 6].sum()
        first = a[b, 0, w, 11] - entry
        loop = sum(a[b, t, w, 12] - a[b, t, w, 11] for t in range(ntask))
        fin = sum(a[b, t, w, 13] - a[b, t, w, 12] for t in range(ntask))
        last = end - a[b, ntask - 1, w, 13]
        rows.append((b, w, ntask, iters, first, loop, fin, last, end - entry))
r = np.array(rows, dtype=float)
def show(name, col, per=None):
    x = r[:, col] if per is None else r[:, col] / per
    print("  %-34s median %9.0f  min %9.0f  max %9.0f" % (name, np.median(x), x.min(), x.max()))
print("cycles per block and warpgroup (%d rows; tasks a block %d..%d, k-steps %d..%d):" % (
    len(r), r[:, 2].min(), r[:, 2].max(), r[:, 3].min(), r[:, 3].max()))
show("entry -> first stage arrived", 4)
show("first stage -> stages done (loop)", 5)
show("finish (tasks' sum)", 6)
show("last finish -> end (store read)", 7)
show("entry -> end", 8)
floor = r[:, 3] * step_floor
print("  loop floor at the full rate: %.0f (%.0f a k-step); loop / floor median %.3f; "
      "whole block / floor median %.3f" % (np.median(floor), step_floor,
                                          np.median(r[:, 5] / floor), np.median(r[:, 8] / floor)))
print("  loop per k-step: median %.0f cycles (floor %.0f)" % (np.median(r[:, 5] / r[:, 3]), step_floor))
# How far apart the two warpgroups run: each task's last stage done, warpgroup 1's minus 0's.
lag = [a[b, t, 1, 12] - a[b, t, 0, 12] for b in blocks
       for t in range(int(np.argmin(np.append(a[b, :47, 0, 12] > 0, False))))]
print("  last stage done, warpgroup 1 minus warpgroup 0: median %.0f cycles (10th %.0f, 90th %.0f)" % (
    np.median(lag), np.percentile(lag, 10), np.percentile(lag, 90)))

# Where a block's cycles past the floor go, for the blocks that ran the most tasks: before its
# first stage, between its first stage and its last (the boundaries' share), and after.
parts = []
for b in blocks:
    ntask = int(np.argmin(np.append(a[b, :47, 0, 12] > 0, False)))
    entry = min(a[b, 0, 0, 10], a[b, 0, 1, 10])
    first = min(a[b, 0, 0, 11], a[b, 0, 1, 11])
    done = max(a[b, ntask - 1, 0, 12], a[b, ntask - 1, 1, 12])
    end = max(a[b, 0, 0, 14], a[b, 0, 1, 14])
    floor = a[b, :ntask, 0, 6].sum() * step_floor
    parts.append((ntask, first - entry, done - first - floor, end - done))
parts = np.array(parts, dtype=float)
most = parts[parts[:, 0] == parts[:, 0].max()]
per = (" (%.0f a boundary)" % (np.median(most[:, 2]) / (most[0, 0] - 1))) if most[0, 0] > 1 else ""
print("  blocks of %d tasks (%d): past the floor %.0f cycles before the first stage, %.0f between "
      "the first stage and the last%s, %.0f after (medians)" % (
          most[0, 0], len(most), np.median(most[:, 1]), np.median(most[:, 2]), per,
          np.median(most[:, 3])))

# What the stages waited on: the consumers' waits for stages after a task's first (column 15),
# and the producer's wait for the previous finish to release the stages its block aliases.
for label, ts in (("the first task", lambda n: [0]), ("later tasks", lambda n: range(1, n))):
    waits, fin = [], []
    for b in blocks:
        ntask = int(np.argmin(np.append(a[b, :47, 0, 12] > 0, False)))
        for t in ts(ntask):
            waits += [a[b, t, w, 15] for w in (0, 1)]
            if a[b, t, 3, 6] > 0:
                fin.append(a[b, t, 3, 6] - a[b, t, 3, 5])
    if waits:
        print("  %s: consumers waited for stages %.0f cycles a task (median; 90th %.0f); the producer "
              "for the finish %.0f (median; 90th %.0f)" % (
                  label, np.median(waits), np.percentile(waits, 90),
                  np.median(fin) if fin else 0, np.percentile(fin, 90) if fin else 0))

# patch_start.py's stamps (task slot 47), relative to the producer's entry.
if all(a[b, 47, 3, 0] > 0 for b in blocks):
    points = [("thread 0: semaphores initialised", 0, 1), ("producer: past the barrier", 3, 2),
              ("producer: past setmaxnreg", 3, 3), ("producer: task 0's common_setup", 3, 4),
              ("producer: past the first empty wait", 3, 5), ("producer: first copies issued", 3, 6),
              ("consumer 0: past the barrier", 0, 2), ("consumer 0: past setmaxnreg", 0, 3),
              ("consumer 0: task 0's common_setup", 0, 4), ("consumer 0: next task's common_setup", 0, 5),
              ("consumer 0: setup done", 0, 6)]
    print("cycles from the producer's entry to (median / min / max over blocks):")
    for name, w, c in points:
        d = np.array([a[b, 47, w, c] - a[b, 47, 3, 0] for b in blocks])
        print("  %-40s %6.0f %6.0f %6.0f" % (name, np.median(d), d.min(), d.max()))
    d = np.array([a[b, 0, w, 11] - a[b, 47, 3, 0] for b in blocks for w in (0, 1)])
    print("  %-40s %6.0f %6.0f %6.0f" % ("consumers: first stage arrived", np.median(d), d.min(), d.max()))
    # patch_arrival.py's stamps: the stages' arrival as a thread that only waits for them saw it.
    if all(a[b, 47, 3, 11] > 0 for b in blocks):
        for name, c in (("observer: began waiting", 11), ("observer: stage 0 arrived", 7),
                        ("observer: stage 1 arrived", 8), ("observer: stage 2 arrived", 9),
                        ("observer: stage 3 arrived", 10)):
            d = np.array([a[b, 47, 3, c] - a[b, 47, 3, 0] for b in blocks])
            print("  %-40s %6.0f %6.0f %6.0f" % (name, np.median(d), d.min(), d.max()))
