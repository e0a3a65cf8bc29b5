#!/usr/bin/env python3
"""Sums up patch_boundary.py's stamps (bnd_trace: 132 blocks x 48 tasks x 2 warpgroups x 16
clock64 columns): medians over the tasks that have a task before and after them in their block,
and over both warpgroups, of each stretch of a task boundary in cycles.

    python3 analyze_boundary.py trace.bin
"""
import sys
import numpy as np

a = np.fromfile(sys.argv[1], dtype=np.uint64).reshape(132, 48, 2, 16).astype(np.int64)
rows = []  # (block, task, wg) with the next task's stamps
for b in range(132):
    tasks = [t for t in range(48) if a[b, t, 0, 0] != 0 and a[b, t, 1, 0] != 0]
    for t in tasks:
        if t == 0 or t + 1 not in tasks:
            continue
        for w in range(2):
            rows.append((a[b, t, w], a[b, t + 1, w]))
if not rows:
    sys.exit("no task with a task before and after it (one or two tasks a block?)")
print("task boundaries: %d (block, task, warpgroup) rows" % len(rows))


def show(name, vals):
    v = np.array(vals)
    print("  %-58s median %6d  10th %6d  90th %6d" % (name, np.median(v), np.percentile(v, 10), np.percentile(v, 90)))


# (what, its length from a row r of a task and the row n of the block's next task)
STRETCHES = [
    ("three stages before the last -> first split stage", lambda r, n: r[10] - r[11]),
    ("first split stage -> last stage", lambda r, n: r[0] - r[10]),
    ("last stage -> its left half's products done", lambda r, n: r[1] - r[0]),
    ("left half's store issued (store_part<0>)", lambda r, n: r[2] - r[1]),
    ("-> right half's products done", lambda r, n: r[3] - r[2]),
    ("-> finish entered (template)", lambda r, n: r[4] - r[3]),
    ("finish: the left store's read waited for", lambda r, n: r[5] - r[4]),
    ("finish: the right half's store issued", lambda r, n: r[6] - r[5]),
    ("-> next task's first compute entered", lambda r, n: n[7] - r[6]),
    ("next task's first stage's products done", lambda r, n: n[8] - n[7]),
    ("-> its second compute entered (release_finish, wait)", lambda r, n: n[9] - n[8]),
    ("last stage entered -> next task's first compute entered", lambda r, n: n[7] - r[0]),
    ("three before the last -> next task's second compute", lambda r, n: n[9] - r[11]),
]
for name, length in STRETCHES:
    show(name, [length(r, n) for r, n in rows])
print("  (the same span at the tensor floor: 5 stages of 1024 cycles = 5120)")
