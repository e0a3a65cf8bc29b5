#!/usr/bin/env python3
"""Front-end benchmark: how long `tkc --emit=ast` takes on a 1,000-line spec,
process start included (what a user or a build system waits for).

    python3 bench/frontend/run.py [--tkc build/bin/tkc] [--runs 50] [--lines 1000]

Prints the median and writes a JSON record to bench/results/.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tkc", default=os.path.join(ROOT, "build", "bin", "tkc"))
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "big.yaml")
        with open(spec, "w") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "gen_spec.py"), str(args.lines)],
                           stdout=f, check=True)
        with open(spec) as f:
            lines = sum(1 for _ in f)
        cmd = [args.tkc, spec, "--emit=ast", "-o", os.path.join(tmp, "big.ast")]
        subprocess.run(cmd, check=True)  # warm-up; also proves the spec is valid
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(cmd, check=True)
            times.append((time.perf_counter() - start) * 1e3)

    median = statistics.median(times)
    print(f"tkc --emit=ast on a {lines}-line spec: median {median:.2f} ms, "
          f"min {min(times):.2f} ms, max {max(times):.2f} ms over {args.runs} runs")
    if args.no_record:
        return
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    record = {
        "kernel": "frontend",
        "config": f"tkc --emit=ast, {lines}-line spec, process start included",
        "cpu": cpu_name(),
        "commit": commit + ("+dirty" if dirty else ""),
        "date": datetime.date.today().isoformat(),
        "runs": args.runs,
        "median_ms": round(median, 3),
        "min_ms": round(min(times), 3),
        "max_ms": round(max(times), 3),
    }
    out = os.path.join(ROOT, "bench", "results", f"frontend-{record['date']}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    print(f"recorded in {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
