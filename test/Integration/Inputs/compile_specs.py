#!/usr/bin/env python3
"""Compiles every spec under the given folders that tkc accepts, all instantiations, with
nvcc for sm_90a, and fails on an nvcc error, a spill, a stack frame or ptxas' potential
performance loss (check_ptxas.py). Specs tkc refuses (the negative tests) are counted and
skipped; a tkc crash (exit other than 0 or 1) fails.

    compile_specs.py TKC NVCC WORKDIR INCLUDE... -- FOLDER...
"""
import concurrent.futures
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_ptxas  # noqa: E402


def main():
    split = sys.argv.index("--")
    tkc, nvcc, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    includes = sys.argv[4:split]
    folders = [Path(f) for f in sys.argv[split + 1:]]
    work.mkdir(parents=True, exist_ok=True)
    specs = sorted(p for f in folders for p in f.rglob("*.yaml") if "repro" not in p.parts)
    accepted, refused, problems = [], 0, []
    for spec in specs:
        out = work / (spec.stem + ".cu")
        r = subprocess.run([tkc, str(spec), "-o", str(out)], capture_output=True, text=True)
        if r.returncode == 1:
            refused += 1
        elif r.returncode == 0:
            accepted.append((spec, out))
        else:
            problems.append("%s: tkc exited %d: %s" % (spec, r.returncode, r.stderr[-300:]))

    def compile_one(item):
        spec, cu = item
        cmd = [nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++20", "-O3",
               "--expt-relaxed-constexpr", "-Xptxas", "-v", "-c", str(cu), "-o",
               str(cu.with_suffix(".o"))] + ["-I" + i for i in includes] + ["-I" + str(work)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return ["%s: nvcc failed: %s" % (spec, r.stderr[-500:])]
        found = []
        text = r.stderr
        kernels = text.count("Compiling entry function")
        for line in check_ptxas.problems(text, kernels):
            found.append("%s: %s" % (spec, line))
        return found

    jobs = int(os.environ.get("LIT_NVCC_JOBS", "2"))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for found in pool.map(compile_one, accepted):
            problems += found
    for p in problems:
        print("error:", p)
    print("%d specs: %d accepted and compiled, %d refused by tkc, %d problems"
          % (len(specs), len(accepted), refused, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
