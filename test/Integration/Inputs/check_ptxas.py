#!/usr/bin/env python3
"""Reads nvcc -Xptxas -v output and fails unless exactly N kernels were
compiled, none of them spills or uses a stack frame, and ptxas reports no
potential performance loss (e.g. C7518: wgmma serialized).

    check_ptxas.py PTXAS_LOG N
"""
import re
import sys


def problems(text, expected):
    """What is wrong in ptxas' report `text` of `expected` kernels (empty: nothing)."""
    kernels = re.findall(r"Compiling entry function '([^']+)'", text)
    frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                        text)
    problems = []
    if len(kernels) != expected:
        problems.append(f"expected {expected} kernels, ptxas compiled {len(kernels)}")
    if len(frames) < len(kernels):
        problems.append("ptxas printed fewer resource reports than kernels")
    for name, (stack, stores, loads) in zip(kernels, frames):
        if int(stores) or int(loads) or int(stack):
            problems.append(f"{name}: {stack} bytes stack, {stores}/{loads} bytes spilled")
    for line in text.splitlines():
        if "Potential Performance Loss" in line:
            problems.append(line.strip())
    return problems


def main():
    text = open(sys.argv[1]).read()
    found = problems(text, int(sys.argv[2]))
    for p in found:
        print("error:", p)
    kernels = len(re.findall(r"Compiling entry function '([^']+)'", text))
    print(f"{kernels} kernels, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
