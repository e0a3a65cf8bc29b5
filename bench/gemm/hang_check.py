#!/usr/bin/env python3
"""Runs bench/gemm/run.py's first anchor shapes again and again, each run in its own process
with a time limit, and reports the runs that did not finish: an intermittent hang shows up
as one of them.

    python3 bench/gemm/hang_check.py --lib libtkcgemm.so [--runs 10] [--shapes 3] [--limit 30]

One run is what run.py does for each of the first `--shapes` anchor shapes (2048^3, 4096^3,
8192^3 by default): per variant a check launch on poisoned output, then the paired protocol's
20 warm-up and 200 timed rounds against torch. A run takes about 9 s on an H100; one still
going after `--limit` seconds is killed and counted as a hang, with the result rows it had
printed (the shape and variant after the last row is where it stopped). The exit status is 1
when any run hung or failed.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = """
import sys
sys.path.insert(0, {here!r})
import run
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
    args = ap.parse_args()
    code = CHILD.format(here=HERE, shapes=args.shapes, lib=os.path.abspath(args.lib))
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
    print(f"{bad} of {args.runs} runs hung or failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
