"""Checks that a --emit=manifest JSON describes exactly the launchers a
--emit=cuda header declares: the same kernels in the same order, and for each
the same parameter list (pointers with their C types and constness, then the
size symbols, then the runtime scalars by value with their defaults, then the
stream).

Usage: manifest_vs_header.py MANIFEST.json HEADER.h
"""
import json
import re
import struct
import sys


def as_float(value):
    """`value` rounded to a C++ float, spelled so that equal floats compare equal."""
    return repr(struct.unpack("<f", struct.pack("<f", value))[0])


def normalize(param):
    """A scalar's C++ default (`float scale = 0.088388346f`) as the float it is."""
    m = re.fullmatch(r"(float \w+) = ([-+0-9.eE]+)f", param)
    return "%s = %s" % (m.group(1), as_float(float(m.group(2)))) if m else param


def declared(header_text):
    """(name, [parameter, ...]) for every launcher the header declares."""
    flat = " ".join(header_text.split())
    out = []
    for m in re.finditer(r"tkc::runtime::Status (\w+)\(([^)]*)\);", flat):
        out.append((m.group(1), [normalize(p.strip()) for p in m.group(2).split(",")]))
    return out


def expected(kernel):
    params = []
    for arg in kernel["arguments"]:
        const = "" if arg["role"] == "output" else "const "
        params.append(f"{const}{arg['c_type']} *{arg['name']}")
    params += [f"long long {size}" for size in kernel["sizes"]]
    for s in kernel["scalars"]:
        assert s["c_type"] == "float", s
        default = " = " + as_float(s["default"]) if "default" in s else ""
        params.append(f"float {s['name']}{default}")
    params.append("cudaStream_t stream = 0")
    return params


def main():
    manifest = json.load(open(sys.argv[1]))
    launchers = declared(open(sys.argv[2]).read())
    kernels = manifest["kernels"]
    problems = []
    if [k["name"] for k in kernels] != [name for name, _ in launchers]:
        problems.append("kernels differ: manifest %s, header %s" %
                        ([k["name"] for k in kernels], [n for n, _ in launchers]))
    for kernel, (name, params) in zip(kernels, launchers):
        if expected(kernel) != params:
            problems.append("%s: manifest says %s, header says %s" % (name, expected(kernel), params))
    for p in problems:
        print("error: " + p)
    if not problems:
        print("ok: %d launchers agree" % len(kernels))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
