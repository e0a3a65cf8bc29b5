#!/usr/bin/env python3
"""Compile every public kittens header on its own with nvcc for sm_90a.

    self_contained.py NVCC "FLAGS" INCLUDE_DIR

Each header gets a translation unit holding only `#include <kittens/...>`; a header that
leans on something it does not include fails here. Prints one line per header.
"""
import concurrent.futures
import os
import shlex
import subprocess
import sys
import tempfile


def main():
    nvcc, flags, inc = sys.argv[1], shlex.split(sys.argv[2]), sys.argv[3]
    root = os.path.join(inc, "kittens")
    headers = sorted(os.path.relpath(os.path.join(d, f), inc)
                     for d, _, fs in os.walk(root) for f in fs if f.endswith(".cuh"))
    if not headers:
        print("no headers found under " + root)
        return 1
    tmp = tempfile.mkdtemp()

    def build(h):
        src = os.path.join(tmp, h.replace("/", "_") + ".cu")
        with open(src, "w") as f:
            f.write("#include <%s>\n" % h)
        p = subprocess.run([nvcc] + flags + ["-c", src, "-o", src + ".o"], capture_output=True, text=True)
        return h, p.returncode, p.stdout + p.stderr

    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for h, rc, log in ex.map(build, headers):
            if rc != 0 or "warning" in log:
                bad += 1
                print("FAIL %s\n%s" % (h, log))
            else:
                print("ok %s" % h)
    print("%d headers, %d failed" % (len(headers), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
