"""Probe edit: a warpgroup's row block within its task rotates from task to task (built in
8cb10cc for causal kernels of three or more consumer warpgroups, tkc_block).

In the generated kernels warpgroup w always takes the task's w-th 64-row block. In a causal
head a task's blocks need ceil(rows / BKV) stages each, so the last position needs up to one
stage more than the first in every task: per head at N = 1024 (128-key stages) the three
positions need 21 / 24 / 27 stages, and the first warpgroup, a task ahead at most, waits.
Here warpgroup w takes position (w + task_iter) % NUM_CONSUMER_WARPGROUPS, so over three
tasks each takes each position once. Its q copy, its named barrier and its finish copy stay
its own (indexed by the warpgroup); only the rows it computes on move.

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>.
"""
import re, sys

path = sys.argv[1]
src = open(path).read()
n_decl = src.count("const int tkc_wg = kittens::warpgroupid();")
src = src.replace(
    "const int tkc_wg = kittens::warpgroupid();",
    "const int tkc_wgid = kittens::warpgroupid();\n"
    "      const int tkc_wg = (tkc_wgid + args.task_iter) % NUM_CONSUMER_WARPGROUPS;")
# The warpgroup's own buffers and barrier.
src = src.replace("[tkc_wg]", "[tkc_wgid]")
src = src.replace("sync(1 + tkc_wg)", "sync(1 + tkc_wgid)")
# The next task's q: its position is the next task's.
src, n_next = re.subn(
    r"args\.next_common\.i \* (\d+) \+ tkc_wg\b",
    r"args.next_common.i * \1 + (tkc_wgid + args.task_iter + 1) % NUM_CONSUMER_WARPGROUPS", src)
if n_decl == 0 or n_next == 0:
    sys.exit("rotate_positions: pattern not found")
open(path, "w").write(src)
print(f"rotate_positions: {n_decl} functions, {n_next} next-task loads", file=sys.stderr)
