#!/usr/bin/env python3
"""Runs bench/gemm/run.py's first anchor shapes again and again, each run in its own process
with a time limit, and reports the runs that did not finish: an intermittent hang shows up
as one of them.

    python3 bench/gemm/hang_check.py --lib libtkcgemm.so [--runs 10] [--shapes 3] [--limit 30]
        [--dump-after SECONDS]

One run is what run.py does for each of the first `--shapes` anchor shapes (2048^3, 4096^3,
8192^3 by default): per variant a check launch on poisoned output, then the paired protocol's
20 warm-up and 200 timed rounds against torch. A run takes about 9 s on an H100; one still
going after `--limit` seconds is killed and counted as a hang, with the result rows it had
printed (the shape and variant after the last row is where it stopped). A library built from
`variants/progress_words.py` is armed to print its progress words 8 s before the limit (or
`--dump-after` seconds after CUDA is up, and again 4 s later); a hung
run's last dump is printed after its rows (decode it with `progress_words.py --decode`). The exit
status is 1 when any run hung or failed.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = """
import ctypes, sys
sys.path.insert(0, {here!r})
import run
import torch
lib = ctypes.CDLL({lib!r})
if hasattr(lib, "tkc_progress_arm"):  # a build from variants/progress_words.py
    torch.zeros(1, device="cuda")
    if lib.tkc_progress_arm({arm}) != 0:
        sys.exit("tkc_progress_arm failed")
run.SHAPES = run.SHAPES[:{shapes}]
sys.argv = ["run.py", "--lib", {lib!r}, "--commit", "hang-check"]
run.main()
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--shapes", type=int, default=3)
    ap.add_argument("--limit", type=float, default=30.0)
    ap.add_argument("--dump-after", type=int,
                    help="seconds into a run at which a library with progress words prints them "
                         "(default: 8 s before the limit)")
    args = ap.parse_args()
    arm = args.dump_after if args.dump_after else max(1, int(args.limit) - 8)
    code = CHILD.format(here=HERE, shapes=args.shapes, lib=os.path.abspath(args.lib), arm=arm)
    bad = 0
    for r in range(1, args.runs + 1):
        try:
            done = subprocess.run([sys.executable, "-u", "-c", code], capture_output=True,
                                  text=True, timeout=args.limit)
            rows = [l for l in done.stdout.splitlines() if l.startswith("gemm_")]
            if done.returncode != 0:
                bad += 1
                print(f"run {r}: FAILED (exit {done.returncode}) after {len(rows)} rows\n"
                      f"{done.stderr[-2000:]}", flush=True)
            else:
                print(f"run {r}: ok, {len(rows)} rows", flush=True)
        except subprocess.TimeoutExpired as e:
            bad += 1
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rows = [l for l in out.splitlines() if l.startswith("gemm_")]
            print(f"run {r}: HANG (still running after {args.limit:.0f} s) after {len(rows)} rows",
                  flush=True)
            for row in rows[-2:]:
                print("  " + row, flush=True)
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            dump = err[err.rfind("PROGRESS "):] if "PROGRESS " in err else ""
            if dump:  # the last dump of the progress words (variants/progress_words.py --decode)
                print(dump, end="", flush=True)
    print(f"{bad} of {args.runs} runs hung or failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
