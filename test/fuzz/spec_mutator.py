#!/usr/bin/env python3
"""A structure-aware mutation fuzzer for tkc specs (Python 3.11, standard library only).

It starts from the shipped specs (kernels-spec/*.yaml) and a few test specs, applies one to
six mutations that know the spec language (numbers, tile shapes, stage counts, warpgroups,
dtypes, identifiers, statements, operators, operator chains, deep nesting, YAML structure,
whole lines), runs `tkc MUTANT -o OUT.cu` (or --emit=ir/ast/manifest) with a time limit and
checks the outcome:

  * exit 0, 1 or 2 is fine; exit 1 must print a located message (`FILE:LINE:COL: error:`
    with LINE inside the file, or `tkc: error:` for file-level problems);
  * any other exit code (3 is tkc's internal error), a signal, a run over --timeout seconds
    (5 by default), an exit 1 without a located message, or an exit 0 that wrote no output
    file is a FAILURE: the mutant is saved under --out with the reason, and the run goes on.

With --nvcc-sample K, up to K accepted mutants (chosen among those whose CUDA differs from
every seed's and from each other's) are restricted to one instantiation with --param and
compiled by nvcc for sm_90a with `-Xptxas -v`; nvcc failing, or ptxas reporting spill
stores or loads, is a FAILURE.

Mutant N of seed S is the same on every machine and with any --jobs: `--print-mutant N
--seed S` writes it to stdout. `--reduce FILE` shrinks a saved failing mutant while it fails
the same way (lines, then tokens) and writes FILE.min.yaml.

Exit status: 1 if there was any failure, else 0. See docs/Testing.md.
"""
import argparse
import concurrent.futures
import hashlib
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SHIPPED_SEEDS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "kernels-spec").glob("*.yaml"))
# Test specs that compile (and two that fail a budget), with other keys and forms than the
# shipped ones: a finish-block store, linear order, select, a deferred scale, masked bounds,
# rows from the end, setup buffers, stages: auto, a shared-memory and a register overflow; a
# layout, a store added into a global, a read per column, a store every stage, a transposed
# left operand.
TEST_SEEDS = [
    "test/Emit/finish-block.yaml",
    "test/Emit/linear-order.yaml",
    "test/Emit/select.yaml",
    "test/Passes/defer-scale.yaml",
    "test/Passes/masked-bounds.yaml",
    "test/Passes/rows-from-end.yaml",
    "test/Passes/setup-buffers.yaml",
    "test/Passes/stages-auto.yaml",
    "test/Passes/smem-overflow.yaml",
    "test/Passes/register-overflow.yaml",
    "test/Sema/loop-stop-gemm.yaml",
    "test/Emit/attention-layout.yaml",
    "test/Emit/gemm-accumulate.yaml",
    "test/Emit/attention-key-bias.yaml",
    "test/Emit/attention-weights.yaml",
    "test/Emit/gemm-transpose-a.yaml",
]

TOP_KEYS = ["kernel", "arch", "template", "params", "select", "constants", "globals", "scalars",
            "tiles", "grid", "producer", "consumer"]
SPEC_KEYS = set(TOP_KEYS) | {
    "dtype", "dims", "when", "default", "check", "space", "shape", "stages", "of", "per", "count",
    "tasks", "loop", "start", "order", "loop_order", "last_wave", "tail", "whole_tiles", "load",
    "warpgroups", "state", "setup", "compute", "finish", "smem", "reg", "consumer_warpgroup",
    "auto", "lcf", "sm_90a", "sm_90", "sm_80", "bf16", "f16", "f32", "true", "false", "if",
    "else", "and", "or", "not", "grouped", "linear", "forward", "alternate", "whole", "layout",
    "sequences", "requires", "i32", "f8e4m3", "f8e5m2"}
FUNCTIONS = ["exp2", "exp", "log2", "log", "sqrt", "rcp", "tanh", "abs", "gelu", "max", "min",
             "where", "row", "col", "rowmax", "rowsum"]
NAMED_CONSTANTS = ["inf", "log2e", "ln2", "pi"]
DTYPES = ["bf16", "f16", "f32", "fp8", "i32", "f64", "bf16x2", "BF16", "int", ""]
# Names that are keywords or well-known identifiers of C++, CUDA and the generated code.
RESERVED_NAMES = [
    "do", "int", "new", "args", "stream", "delete", "class", "struct", "template", "typename",
    "this", "operator", "float", "double", "char", "void", "auto", "const", "static", "return",
    "if", "else", "for", "while", "switch", "case", "default", "goto", "register", "volatile",
    "union", "namespace", "using", "friend", "private", "public", "true", "false", "nullptr",
    "NULL", "sizeof", "asm", "inline", "extern", "signed", "unsigned", "long", "short", "bool",
    "enum", "export", "typedef", "virtual", "explicit", "mutable", "throw", "try", "catch",
    "and", "or", "not", "xor", "bitand", "compl", "concept", "requires", "co_await",
    "decltype", "alignas", "alignof", "noexcept", "static_assert", "thread_local", "main",
    "std", "kittens", "tkc", "runtime", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "warpSize", "__global__", "__device__", "__shared__", "__syncthreads", "dim3",
    "cudaStream_t", "cudaError_t", "uint32_t", "int64_t", "size_t", "half", "printf", "assert",
    "T", "_", "__x", "_Reserved", "__restrict__", "errno", "EOF", "INFINITY", "nan", "NaN",
    "Status", "status", "launch", "kernel", "grid", "block", "smem", "tma", "stage", "phase",
    "task", "warpgroup", "lane", "warp", "tid", "acc", "out", "in", "self", "params", "globals",
    "tiles", "state", "setup", "compute", "finish", "load", "loop", "tail", "start", "order",
    "t0", "t1", "p", "s", "x", "i", "j", "k", "m", "n", "b", "h", "M", "N", "K", "B", "H", "D",
    "A", "C", "Q", "O", "L", "R", "V", "WG", "QR", "BKV", "scale", "bias", "causal", "wide",
]
# Identifiers of the CUDA and header tkc writes (kittens' and the launchers'): a spec name
# spelt like one of them is how a collision in the generated code would show. A fixed list,
# so that a mutant does not depend on the tkc that runs it.
GENERATED_NAMES = [
    "args", "stream", "layout", "input_block", "common", "globals", "traits", "kittens",
    "tkc_e", "tkc_wg", "tkc_out", "tkc_row", "tkc_k", "tkc_v", "tkc_x", "tkc_p_bf16", "held0",
    "held1", "iter", "num_iters", "store_part", "release_finish", "block_entry",
    "launch_persistent", "cudaStream_t", "cudaError_t", "cudaSuccess", "laneid", "warpid",
    "warpgroupid", "accumulator", "result_tile", "scratch_block", "finish_block", "tile_map",
    "consumer_state", "common_setup", "common_state", "inputs_arrived", "inputs_finished",
    "setup_arrived", "EARLY_STAGES", "INPUT_STAGES", "SAFE_STAGES", "SPLIT_STAGES",
    "RING_START", "NUM_CONSUMER_WARPGROUPS", "CONSUMER_REGISTERS", "DYNAMIC_SHARED_BYTES",
    "gelu_tanh", "fast_div", "rt_fl", "rt_bf", "st_bf", "gl", "a_tile", "q_tile", "m_count",
    "i_div", "tkc_span_A", "tkc_tail_k", "gemm_none_kernel", "attention_fwd_D128_kernel",
    "check_cuda", "tma_error", "semaphore", "producer", "consumer", "row_vector", "col_vec",
    "input", "output", "result", "paired_task", "serpentine_task", "to_string", "size",
    "string", "fmaxf", "expect_bytes", "load_async", "mma_AB", "warpgroup", "element",
]
NUMBERS_16 = [16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 320,
              384, 448, 512, 1024]
NUMBERS_ODD = [0, 1, 2, 3, 7, 8, 15, 17, 24, 33, 63, 65, 100, 127, 129, 255, 257, 1000, 4095,
               65536, -1, -16, -64, 2147483647, 2147483648, 4294967296, 9223372036854775807,
               9223372036854775808, 10 ** 30]
NUMBERS_FLOAT = ["0.5", "1.0", "0.125", "1e-6", "1e309", "-0.0", "1e38", "3.4e39", ".5", "5.",
                 "0x40", "1_000", "0o17", "+64", "64.0", "6.4e1", "nan", ".inf", "-.inf",
                 "1e-320", "00064"]
OPERATORS = ["+", "-", "*", "/", "@", "==", "!=", "<", "<=", ">", ">=", "and", "or", "%", "**",
             "//", "&", "|", "^", "<<", ">>"]
ASSIGN_OPS = ["=", "+=", "-=", "*=", "/=", "@=", "%=", "==", ":="]
CHAIN_LENGTHS = [10, 11, 16, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 500,
                 511, 512, 1000, 1023, 1024, 2000, 4095, 4096, 5000]
NEST_DEPTHS = [2, 8, 16, 31, 32, 33, 63, 64, 65, 100, 127, 128, 255, 256, 257, 500, 1000,
               2000, 5000]

KEY_RE = re.compile(r"^(\s*)(-\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:(?=\s|$)(.*)$")
BLOCK_RE = re.compile(r"^\s*[|>][-+0-9]*\s*(#.*)?$")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![A-Za-z0-9_])")
FLOW_KEY_RE = re.compile(r"[{,]\s*([A-Za-z_][A-Za-z0-9_]*)\s*:")
LOCATED_RE = re.compile(r":(\d+):(\d+): error: ")
SPILL_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


# --------------------------------------------------------------------------------------------
# The spec, as lines with a little structure.

class Spec:
    """The mutant's lines, and what each is: a key line (indent, key, value), a line of a
    block scalar (a statement), a blank or comment line; top-level sections; defined names."""

    def __init__(self, text):
        self.lines = text.split("\n")
        self.analyse()

    def text(self):
        return "\n".join(self.lines)

    def analyse(self):
        self.keys = {}        # line index -> (indent, key, value)
        self.stmts = []       # line indices of block-scalar (statement) lines
        self.section = {}     # line index -> top-level key it lies under
        self.block_of = {}    # statement line index -> its block's key line index
        names = set()
        block_indent = None
        block_key = None
        top = None
        parent_stack = []     # (indent, key)
        for idx, line in enumerate(self.lines):
            stripped = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            if block_indent is not None:
                if not stripped or indent > block_indent:
                    if stripped and not stripped.startswith("#"):
                        self.stmts.append(idx)
                        self.block_of[idx] = block_key
                        self.section[idx] = top
                        lhs = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/]?=)(?!=)", line)
                        if lhs:
                            names.add(lhs.group(1))
                    continue
                block_indent = None
            if not stripped or stripped.startswith("#"):
                continue
            m = KEY_RE.match(line)
            if not m:
                self.section[idx] = top
                continue
            key, value = m.group(3), m.group(4).strip()
            self.keys[idx] = (indent, key, value)
            while parent_stack and parent_stack[-1][0] >= indent:
                parent_stack.pop()
            parent = parent_stack[-1][1] if parent_stack else None
            if indent == 0:
                top = key
            self.section[idx] = top
            if parent in ("globals", "tiles", "scalars", "constants", "params", "select",
                          "state"):
                names.add(key)
            for fk in FLOW_KEY_RE.finditer(value):
                if fk.group(1) not in SPEC_KEYS or top == "grid":
                    names.add(fk.group(1))
            of = re.search(r"of:\s*\[([^\]]*)\]", value)
            if of:
                names.update(n.strip() for n in of.group(1).split(",") if n.strip())
            if key == "kernel" and IDENT_RE.fullmatch(value or ""):
                names.add(value)
            parent_stack.append((indent, key))
            if BLOCK_RE.match(value):
                block_indent = indent
                block_key = idx
        self.names = sorted(n for n in names if IDENT_RE.fullmatch(n))

    def key_lines(self, key=None, section=None):
        return [i for i, (ind, k, v) in self.keys.items()
                if (key is None or k == key) and (section is None or self.section.get(i) == section)]

    def extent(self, idx):
        """Lines idx .. end-1 form the entry at idx (its more-indented children)."""
        indent = len(self.lines[idx]) - len(self.lines[idx].lstrip(" "))
        end = idx + 1
        while end < len(self.lines):
            line = self.lines[end]
            if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                break
            end += 1
        return end


def strip_comments(text):
    """Drops full-line comments (the RUN and CHECK lines of test specs, prose in the shipped
    ones): mutating them would only waste runs."""
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))


# --------------------------------------------------------------------------------------------
# Mutations. Each takes (spec, rng, pool) and returns a description, or None when it does not
# apply; it changes spec.lines in place.

def pick(rng, seq):
    return seq[rng.randrange(len(seq))] if seq else None


def new_name(rng, spec, pool):
    r = rng.random()
    if r < 0.55:
        return pick(rng, RESERVED_NAMES + pool.generated_names)
    if r < 0.7:
        return pick(rng, spec.names) or "x"
    if r < 0.8:
        return pick(rng, FUNCTIONS + NAMED_CONSTANTS)
    if r < 0.9:
        return rng.choice("abcxyz_") * rng.choice([63, 64, 65, 127, 128, 255, 256, 1000, 5000])
    return pick(rng, ["x1", "_1", "A_", "a__b", "__", "é", "x-y", "1x", "x.y", "X" * 2, "ᵀ"])


def random_number(rng):
    r = rng.random()
    if r < 0.5:
        return str(pick(rng, NUMBERS_16))
    if r < 0.85:
        return str(pick(rng, NUMBERS_ODD))
    return pick(rng, NUMBERS_FLOAT)


def m_number(spec, rng, pool):
    cands = [(i, m) for i, l in enumerate(spec.lines) for m in NUMBER_RE.finditer(l)]
    if not cands:
        return None
    i, m = pick(rng, cands)
    new = random_number(rng)
    line = spec.lines[i]
    spec.lines[i] = line[:m.start()] + new + line[m.end():]
    return f"number line {i + 1}: {m.group(0)} -> {new}"


def m_shape(spec, rng, pool):
    cands = [i for i, l in enumerate(spec.lines) if re.search(r"shape:\s*\[", l)]
    if not cands:
        return None
    i = pick(rng, cands)
    line = spec.lines[i]
    m = re.search(r"shape:\s*\[([^\]]*)\]", line)
    dims = [d.strip() for d in m.group(1).split(",")]
    r = rng.random()
    if r < 0.6:
        j = rng.randrange(len(dims))
        dims[j] = str(pick(rng, NUMBERS_16 if rng.random() < 0.7 else NUMBERS_ODD))
    elif r < 0.75:
        dims = [str(pick(rng, NUMBERS_16)) for _ in dims]
    elif r < 0.85:
        dims.append(str(pick(rng, NUMBERS_16)))
    elif r < 0.92:
        dims = dims[:rng.randrange(len(dims) + 1)]
    else:
        dims = [pick(rng, spec.names) or "D" for _ in dims]
    new = "shape: [" + ", ".join(dims) + "]"
    spec.lines[i] = line[:m.start()] + new + line[m.end():]
    return f"shape line {i + 1}: {new}"


def set_flow_value(line, key, value):
    """Replaces `key: VALUE` inside a flow mapping or a plain key line."""
    m = re.search(r"(\b" + key + r":\s*)([^,}\]]+|\[[^\]]*\])", line)
    if m:
        return line[:m.start(2)] + value + line[m.end(2):]
    return None


def m_stages(spec, rng, pool):
    cands = [i for i in range(len(spec.lines)) if spec.section.get(i) == "tiles"
             and i in spec.keys and spec.keys[i][0] > 0]
    if not cands:
        return None
    i = pick(rng, cands)
    r = rng.random()
    value = str(rng.randint(1, 8)) if r < 0.75 else pick(
        rng, ["0", "9", "16", "64", "65", "auto", "-1", "Auto", "2.0", "[2]", "WG", "D", "1000000"])
    line = spec.lines[i]
    new = set_flow_value(line, "stages", value)
    if new is None:
        if "}" in line:
            k = line.rindex("}")
            new = line[:k] + f", stages: {value}" + line[k:]
        else:
            return None
    spec.lines[i] = new
    return f"stages line {i + 1}: {value}"


def m_warpgroups(spec, rng, pool):
    cands = spec.key_lines("warpgroups")
    value = str(rng.randint(1, 4)) if rng.random() < 0.75 else pick(
        rng, ["0", "5", "8", "-1", "WG", "D", "QR", "2 if causal else 3", "[2]", "{a: 1}", "auto",
              "1e3", "4294967298"])
    if not cands:
        cons = spec.key_lines("consumer")
        if not cons:
            return None
        spec.lines.insert(cons[0] + 1, f"  warpgroups: {value}")
        return f"warpgroups added: {value}"
    i = pick(rng, cands)
    ind = spec.keys[i][0]
    spec.lines[i] = " " * ind + f"warpgroups: {value}"
    return f"warpgroups line {i + 1}: {value}"


def m_dtype(spec, rng, pool):
    cands = [(i, m) for i, l in enumerate(spec.lines) for m in re.finditer(r"\b(bf16|f16|f32)\b", l)]
    if not cands:
        return None
    i, m = pick(rng, cands)
    new = pick(rng, ["bf16", "f16", "f32"]) if rng.random() < 0.8 else pick(rng, DTYPES)
    line = spec.lines[i]
    spec.lines[i] = line[:m.start()] + new + line[m.end():]
    return f"dtype line {i + 1}: {m.group(0)} -> {new}"


def m_rename(spec, rng, pool):
    if not spec.names:
        return None
    old = pick(rng, spec.names)
    new = new_name(rng, spec, pool)
    pat = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(old) + r"(?![A-Za-z0-9_])")
    spec.lines = [pat.sub(lambda _: new, l) for l in spec.lines]
    return f"rename {old} -> {new[:40]} (everywhere)"


def m_rename_one(spec, rng, pool):
    cands = [(i, m) for i, l in enumerate(spec.lines) for m in IDENT_RE.finditer(l)
             if m.group(0) in spec.names or m.group(0) in FUNCTIONS]
    if not cands:
        return None
    i, m = pick(rng, cands)
    new = new_name(rng, spec, pool)
    line = spec.lines[i]
    spec.lines[i] = line[:m.start()] + new + line[m.end():]
    return f"rename one {m.group(0)} -> {new[:40]} line {i + 1}"


def m_dup_line(spec, rng, pool):
    idx = spec.stmts if spec.stmts and rng.random() < 0.5 else range(len(spec.lines))
    i = pick(rng, list(idx))
    if i is None:
        return None
    to = rng.randrange(len(spec.lines) + 1) if rng.random() < 0.2 else i + 1
    spec.lines.insert(to, spec.lines[i])
    return f"duplicate line {i + 1} at {to + 1}"


def m_del_line(spec, rng, pool):
    idx = spec.stmts if spec.stmts and rng.random() < 0.5 else range(len(spec.lines))
    i = pick(rng, list(idx))
    if i is None:
        return None
    del spec.lines[i]
    return f"delete line {i + 1}"


def m_swap_stmts(spec, rng, pool):
    if len(spec.stmts) < 2:
        return None
    a, b = rng.sample(spec.stmts, 2)
    if rng.random() < 0.5:
        # two statements of the same body, then keep each one's indentation
        same = [s for s in spec.stmts if spec.block_of.get(s) == spec.block_of.get(a) and s != a]
        if same:
            b = pick(rng, same)
    la, lb = spec.lines[a], spec.lines[b]
    ia, ib = la[:len(la) - len(la.lstrip())], lb[:len(lb) - len(lb.lstrip())]
    spec.lines[a], spec.lines[b] = ia + lb.lstrip(), ib + la.lstrip()
    return f"swap lines {a + 1} and {b + 1}"


def m_swap_lines(spec, rng, pool):
    if len(spec.lines) < 2:
        return None
    a = rng.randrange(len(spec.lines) - 1)
    spec.lines[a], spec.lines[a + 1] = spec.lines[a + 1], spec.lines[a]
    return f"swap lines {a + 1} and {a + 2}"


def operand(rng, spec):
    r = rng.random()
    if r < 0.6 and spec.names:
        return pick(rng, spec.names)
    if r < 0.75:
        return random_number(rng)
    if r < 0.85:
        return pick(rng, NAMED_CONSTANTS)
    return f"{pick(rng, FUNCTIONS)}({pick(rng, spec.names) or 'x'})"


def m_insert_stmt(spec, rng, pool):
    if not spec.stmts:
        return None
    at = pick(rng, spec.stmts)
    line = spec.lines[at]
    indent = line[:len(line) - len(line.lstrip())]
    x = pick(rng, spec.names) or "x"
    y, z = operand(rng, spec), operand(rng, spec)
    templates = [
        f"{x} = {x} + 1", f"{x} = {x} + {y}", f"{x} = {x} * {y}", f"{x} += {y}", f"{x} -= {x}",
        f"{x} = 0", f"{x} = -inf", f"{x} = {y} @ {z}", f"{x} = {y} @ {z}.T", f"{x} += {y} @ {z}",
        f"{x} = rowmax({y})", f"{x} = rowsum({x})", f"{x} = where({y} > {z}, {y}, {z})",
        f"{x} = max({x}, {y})", f"{x} = {x}", f"{x} = {x}.T", f"{new_name(rng, spec, pool)} = {y}",
        f"{x} = exp2({x} - {y})", f"{x}[{y}, {z}] = {x}", f"{x}[...] = {y}", f"{x} = {y}[{z}]",
        f"{x}({y})", f"mask({x}, causal)", f"{x} = {y} if {z}", f"{x} = {x} + 1  if {y}",
        f"{x} = {y}; {y} = {x}", f"{x} = (", f"{x} = {y} / 0", f"{x} = {y} * 1e309",
        f"{x} = row({y}) - col({z})", f"{x} = {x} * rcp({y})", f"{x} = gelu({x}) + tanh({y})",
    ]
    stmt = pick(rng, templates)
    spec.lines.insert(at + (rng.random() < 0.5), indent + stmt)
    return f"insert statement at {at + 1}: {stmt[:60]}"


OP_TOKEN_RE = re.compile(r"(?<=\s)(\+=|-=|\*=|/=|==|!=|<=|>=|[-+*/@<>=]|and|or)(?=\s)")


def m_operator(spec, rng, pool):
    lines = spec.stmts + [i for i, l in enumerate(spec.lines) if re.search(r"[-+*/] ", l)
                          and spec.section.get(i) in ("constants", "grid", "select", "scalars",
                                                      "globals", "tiles")]
    cands = [(i, m) for i in lines for m in OP_TOKEN_RE.finditer(spec.lines[i])]
    if not cands:
        return None
    i, m = pick(rng, cands)
    new = pick(rng, ASSIGN_OPS if m.group(0).endswith("=") and m.group(0) not in
               ("==", "!=", "<=", ">=") and rng.random() < 0.5 else OPERATORS)
    line = spec.lines[i]
    spec.lines[i] = line[:m.start()] + new + line[m.end():]
    return f"operator line {i + 1}: {m.group(0)} -> {new}"


def split_rhs(line):
    """(prefix up to and including the assignment operator, rhs, suffix ' if ...')."""
    m = re.match(r"^(\s*[^=#]*?(?:[-+*/]?=)(?!=)\s*)(.*?)(\s+if\s+.*)?$", line)
    if not m or not m.group(2):
        return None
    return m.group(1), m.group(2), m.group(3) or ""


def expression_lines(spec):
    """Statement lines, and key lines whose value is an expression (constants, grid extents,
    select conditions, scalar defaults and checks)."""
    out = [i for i in spec.stmts if split_rhs(spec.lines[i])]
    for i, (ind, key, value) in spec.keys.items():
        if spec.section.get(i) in ("constants", "select") and ind > 0 and value:
            out.append(i)
    return out


def replace_expression(spec, i, make):
    line = spec.lines[i]
    if i in spec.keys:
        ind, key, value = spec.keys[i]
        comment = ""
        if " #" in value:
            value, comment = value.split(" #", 1)
            comment = " #" + comment
        new = make(value.strip().strip('"'))
        spec.lines[i] = line[:line.index(":") + 1] + " " + new + comment
        return True
    parts = split_rhs(line)
    if not parts:
        return False
    pre, rhs, suf = parts
    spec.lines[i] = pre + make(rhs) + suf
    return True


def m_parens(spec, rng, pool):
    cands = expression_lines(spec)
    if not cands:
        return None
    i = pick(rng, cands)
    n = pick(rng, NEST_DEPTHS)
    if rng.random() < 0.5:
        ok = replace_expression(spec, i, lambda e: "(" * n + e + ")" * n)
    else:
        line = spec.lines[i]
        ms = list(IDENT_RE.finditer(line))
        if not ms:
            return None
        m = pick(rng, ms)
        spec.lines[i] = line[:m.start()] + "(" * n + m.group(0) + ")" * n + line[m.end():]
        ok = True
    return f"parentheses x{n} line {i + 1}" if ok else None


def m_chain(spec, rng, pool):
    cands = expression_lines(spec)
    if not cands:
        return None
    i = pick(rng, cands)
    n = pick(rng, CHAIN_LENGTHS)
    ops = [pick(rng, ["+", "-", "*", "/", "and", "or", "@", "==", "<"])]
    if rng.random() < 0.3:
        ops = ["+", "-", "*", "/"]
    line = spec.lines[i]
    idents = [m.group(0) for m in IDENT_RE.finditer(line) if m.group(0) not in FUNCTIONS]

    def make(e):
        r = rng.random()
        term = e if r < 0.25 and len(e) < 40 else f"({e})" if r < 0.4 and len(e) < 40 else (
            pick(rng, idents) if idents and r < 0.85 else random_number(rng))
        out = [term]
        for _ in range(n - 1):
            out.append(pick(rng, ops) if len(ops) > 1 else ops[0])
            out.append(term)
        return " ".join(out)

    ok = replace_expression(spec, i, make)
    return f"chain of {n} terms ({'/'.join(ops)}) line {i + 1}" if ok else None


def m_nest_calls(spec, rng, pool):
    cands = expression_lines(spec)
    if not cands:
        return None
    i = pick(rng, cands)
    n = pick(rng, NEST_DEPTHS)
    x = pick(rng, spec.names) or "x"
    form = rng.randrange(6)

    def make(e):
        e = e if len(e) < 60 else x
        if form == 0:
            f = pick(rng, ["exp2", "abs", "tanh", "rcp", "sqrt", "gelu", "rowmax", "log2"])
            return f + "(" * 1 + (f + "(") * (n - 1) + e + ")" * n
        if form == 1:
            return "max(" * n + e + (", " + x + ")") * n
        if form == 2:
            return "-" * n + e if rng.random() < 0.5 else "- " * n + e
        if form == 3:
            return "not " * n + e
        if form == 4:
            return (x + "[") * n + "0" + "]" * n
        return "where(" * n + e + (f", {x}, {x})") * n

    ok = replace_expression(spec, i, make)
    return f"nested form {form} x{n} line {i + 1}" if ok else None


def m_yaml_nest(spec, rng, pool):
    """Deep YAML nesting as a value: flow lists or mappings, or an indented block."""
    cands = [i for i, (ind, k, v) in spec.keys.items()]
    if not cands:
        return None
    i = pick(rng, cands)
    ind, key, value = spec.keys[i]
    n = pick(rng, [5, 30, 60, 62, 63, 64, 65, 66, 100, 1000, 5000])
    form = rng.randrange(3)
    if form == 0:
        v = "[" * n + (value or "1") + "]" * n
        spec.lines[i] = " " * ind + f"{key}: {v}"
    elif form == 1:
        v = "{a: " * n + "1" + "}" * n
        spec.lines[i] = " " * ind + f"{key}: {v}"
    else:
        n = min(n, 200)
        end = spec.extent(i)
        block = [" " * ind + f"{key}:"] + [" " * (ind + 2 * (d + 1)) + f"a{d}:" for d in range(n)]
        block[-1] += " 1"
        spec.lines[i:end] = block
    return f"yaml nesting form {form} x{n} at {key} line {i + 1}"


def m_drop_key(spec, rng, pool):
    cands = list(spec.keys)
    if not cands:
        return None
    i = pick(rng, cands)
    end = spec.extent(i)
    key = spec.keys[i][1]
    del spec.lines[i:end]
    return f"drop key {key} line {i + 1} ({end - i} lines)"


def m_dup_key(spec, rng, pool):
    cands = list(spec.keys)
    if not cands:
        return None
    i = pick(rng, cands)
    end = spec.extent(i)
    block = spec.lines[i:end]
    if rng.random() < 0.5:
        spec.lines[end:end] = block
    else:
        # the same key, a different value
        spec.lines.insert(end, spec.lines[i].split(":", 1)[0] + ": " + operand(rng, spec))
    return f"duplicate key {spec.keys[i][1]} line {i + 1}"


def m_flow_key(spec, rng, pool):
    """Drops, duplicates or adds a key inside a flow mapping {a: x, b: y}."""
    cands = [i for i, l in enumerate(spec.lines) if "{" in l and ":" in l.split("{", 1)[1]]
    if not cands:
        return None
    i = pick(rng, cands)
    line = spec.lines[i]
    start, end = line.index("{"), line.rfind("}")
    if end < start:
        return None
    items = [s for s in re.split(r",(?![^\[]*\])", line[start + 1:end])]
    r = rng.random()
    if r < 0.4 and items:
        del items[rng.randrange(len(items))]
    elif r < 0.7 and items:
        items.append(pick(rng, items))
    else:
        items.insert(rng.randrange(len(items) + 1), " " + pick(rng, sorted(SPEC_KEYS)) + ": " +
                     operand(rng, spec))
    spec.lines[i] = line[:start + 1] + ",".join(items).strip() + line[end:]
    return f"flow mapping line {i + 1}: {line[start:end + 1][:50]} -> edited"


def m_scalar_shape(spec, rng, pool):
    """A scalar value as a list or mapping, a list as a scalar, empty, null, quoted."""
    cands = [i for i, (ind, k, v) in spec.keys.items()]
    if not cands:
        return None
    i = pick(rng, cands)
    ind, key, value = spec.keys[i]
    lead = spec.lines[i][:spec.lines[i].index(key)]
    r = rng.randrange(9)
    if r == 0:
        v = f"[{value}]"
    elif r == 1:
        v = f"{{{value or 'a'}: {value or 1}}}"
    elif r == 2:
        m = re.match(r"\[([^,\]]*)", value)
        v = m.group(1) if m else value + ", " + value
    elif r == 3:
        v = ""
    elif r == 4:
        v = pick(rng, ["~", "null", "[]", "{}", "''", '""', "-", "? a"])
    elif r == 5:
        v = f'"{value}"' if not value.startswith('"') else value.strip('"')
    elif r == 6:
        v = "&a " + value if value else "&a"
    elif r == 7:
        v = pick(rng, ["*a", "!!str " + value, "!!binary " + value, "|", ">", "|-", ">+", "|2"])
    else:
        v = f"[{value}, {value}]"
    spec.lines[i] = lead + f"{key}: {v}".rstrip()
    return f"value shape {key} line {i + 1}: {v[:40]}"


def m_block_style(spec, rng, pool):
    cands = [i for i, (ind, k, v) in spec.keys.items() if BLOCK_RE.match(v)]
    if not cands:
        return None
    i = pick(rng, cands)
    ind, key, value = spec.keys[i]
    r = rng.randrange(3)
    if r == 0:
        style = pick(rng, [">", "|-", "|+", ">-", "|2", "|9", "|1", "|0", "||"])
        spec.lines[i] = " " * ind + f"{key}: {style}"
        return f"block style {key}: {style}"
    end = spec.extent(i)
    body = [l.strip() for l in spec.lines[i + 1:end] if l.strip()]
    if r == 1:
        joined = "; ".join(body).replace('"', "'")
        spec.lines[i:end] = [" " * ind + f'{key}: "{joined}"']
        return f"block {key} as one quoted line"
    # re-indent the body unevenly
    new = [spec.lines[i]]
    for l in spec.lines[i + 1:end]:
        new.append((" " * rng.choice([ind, ind + 1, ind + 2, ind + 3, ind + 4, ind + 8])) + l.strip()
                   if l.strip() and rng.random() < 0.3 else l)
    spec.lines[i:end] = new
    return f"block {key} reindented"


def m_indent(spec, rng, pool):
    if not spec.lines:
        return None
    i = rng.randrange(len(spec.lines))
    d = pick(rng, [-2, -1, 1, 2, 4])
    line = spec.lines[i]
    spec.lines[i] = " " * max(0, len(line) - len(line.lstrip(" ")) + d) + line.lstrip(" ")
    if rng.random() < 0.1:
        spec.lines[i] = "\t" + spec.lines[i]
    return f"indent line {i + 1} by {d}"


def m_condition(spec, rng, pool):
    cands = [i for i, l in enumerate(spec.lines) if re.search(r"\bif\b|\bwhen:", l)]
    r = rng.random()
    if cands and r < 0.6:
        i = pick(rng, cands)
        line = spec.lines[i]
        rr = rng.randrange(5)
        if rr == 0:
            line = re.sub(r"\bif\s+", "if not ", line, count=1)
        elif rr == 1:
            line = re.sub(r"\s+if\s+[^#]*$", "", line)
        elif rr == 2:
            extra = operand(rng, spec) + " or "
            line = re.sub(r"(\bif\s+)", lambda m: m.group(1) + extra, line, count=1)
        elif rr == 3:
            cond = operand(rng, spec) + " == " + operand(rng, spec)
            line = re.sub(r"(when:\s*)([^,}]+)", lambda m: m.group(1) + cond, line, count=1)
        else:
            line = re.sub(r"\belse\b.*$", "", line)
        spec.lines[i] = line
        return f"condition line {i + 1}"
    if not spec.stmts:
        return None
    i = pick(rng, spec.stmts)
    cond = pick(rng, [f"{operand(rng, spec)} == {operand(rng, spec)}", "causal", "not causal",
                      "true", "false", "wide and causal", f"{pick(rng, spec.names) or 'x'}",
                      "D == 64", "epilogue == gelu"])
    spec.lines[i] = re.sub(r"\s+if\s+[^#]*$", "", spec.lines[i]) + "  if " + cond
    return f"guard line {i + 1}: if {cond}"


GRID_VALUES = {
    "order": ["grouped", "linear", "random", "", "[grouped]"],
    "loop_order": ["forward", "alternate", "backward", "true"],
    "last_wave": ["whole", "partial", "1"],
    "whole_tiles": ["true", "false", "D != 128", "causal", "D", "1", "maybe"],
    "arch": ["sm_90a", "sm_90", "sm_80", "sm_100a", "sm90a", ""],
    "template": ["lcf", "lcsf", "LCF", ""],
    "space": ["smem", "reg", "gmem", "tmem"],
    "per": ["consumer_warpgroup", "warpgroup", "producer", "consumer_warpgroups"],
}


def m_keyword_values(spec, rng, pool):
    key = pick(rng, list(GRID_VALUES))
    value = pick(rng, GRID_VALUES[key])
    cands = [i for i, l in enumerate(spec.lines) if re.search(r"\b" + key + r":", l)]
    if cands:
        i = pick(rng, cands)
        new = set_flow_value(spec.lines[i], key, value)
        if new is None:
            spec.lines[i] = re.sub(r"(\b" + key + r":).*$", lambda m: m.group(1) + " " + value,
                                   spec.lines[i])
        else:
            spec.lines[i] = new
        return f"{key} line {i + 1}: {value}"
    if key in ("order", "loop_order", "last_wave", "whole_tiles"):
        g = spec.key_lines("grid")
        if g:
            spec.lines.insert(g[0] + 1, f"  {key}: {value}")
            return f"{key} added: {value}"
    return None


def m_grid_extent(spec, rng, pool):
    cands = [i for i, l in enumerate(spec.lines) if spec.section.get(i) == "grid"
             and re.search(r"\b(tasks|loop|tail|start):", l)]
    if not cands:
        return None
    i = pick(rng, cands)
    idx = pick(rng, ["i", "j", "k", "m", "n", "b", "h"])
    size = pick(rng, ["M", "N", "K", "B", "H", "D", "QR", "BKV"])
    tile = pick(rng, ["128", "64", "192", "QR", "BKV", "0", "7", "256", "D"])
    exprs = [f"{size} / {tile}", f"{size}", f"\"min({size}, {tile} * (i + 1)) / {tile}\"",
             f"\"min({size}, row(i) + 1) / {tile}\"", f"\"row(i) - {tile} + 1\"", f"{tile}",
             f"\"{size} / {tile} if causal else {size} / 64\"", f"{size} * {tile}", f"{size} / {size}",
             f"\"min({size}, row(j) + 1) / {tile}\"", f"\"col(j)\""]
    e = pick(rng, exprs)
    line = spec.lines[i]
    m = re.search(r"\{(.*)\}", line)
    if m and rng.random() < 0.7:
        items = m.group(1).split(",") if '"' not in m.group(1) else [m.group(1)]
        if rng.random() < 0.5 and items:
            items[rng.randrange(len(items))] = f" {idx}: {e}"
        else:
            items.append(f" {idx}: {e}")
        spec.lines[i] = line[:m.start(1)] + ",".join(items).strip() + line[m.end(1):]
    else:
        key = pick(rng, ["tail", "start", "loop", "tasks"])
        spec.lines.insert(i + 1, f"  {key}: {{{idx}: {e}}}")
    return f"grid extent line {i + 1}: {idx}: {e}"


def m_params(spec, rng, pool):
    cands = [i for i, (ind, k, v) in spec.keys.items() if spec.section.get(i) == "params" and ind > 0]
    if not cands:
        p = spec.key_lines("params")
        at = p[0] + 1 if p else 1
        if not p:
            spec.lines.insert(1, "params:")
        spec.lines.insert(at, f"  {new_name(rng, spec, pool)}: [{random_number(rng)}, "
                              f"{random_number(rng)}]")
        return "param added"
    i = pick(rng, cands)
    ind, key, value = spec.keys[i]
    vals = [v.strip() for v in value.strip("[]").split(",") if v.strip()]
    r = rng.randrange(4)
    if r == 0:
        vals.append(pick(rng, [random_number(rng), "true", "false", "none", vals[0] if vals else "1"]))
    elif r == 1 and vals:
        del vals[rng.randrange(len(vals))]
    elif r == 2:
        vals = [str(pick(rng, NUMBERS_16)) for _ in range(rng.randint(1, 6))]
    else:
        vals = [random_number(rng) for _ in range(rng.randint(1, 3))]
    spec.lines[i] = " " * ind + f"{key}: [{', '.join(vals)}]"
    return f"param {key}: [{', '.join(vals)}]"


def m_splice(spec, rng, pool):
    """Replaces an entry (key and children) by the same key's entry of another seed."""
    other = Spec(pick(rng, pool.seed_texts))
    cands = [i for i in spec.keys if any(other.keys[j][1] == spec.keys[i][1] for j in other.keys)]
    if not cands:
        return None
    i = pick(rng, cands)
    key = spec.keys[i][1]
    j = pick(rng, [j for j in other.keys if other.keys[j][1] == key])
    ind_i, ind_j = spec.keys[i][0], other.keys[j][0]
    block = [(" " * ind_i + l[ind_j:]) if l.startswith(" " * ind_j) else l
             for l in other.lines[j:other.extent(j)]]
    spec.lines[i:spec.extent(i)] = block
    return f"splice {key} line {i + 1}"


def m_bytes(spec, rng, pool):
    text = spec.text()
    if not text:
        return None
    p = rng.randrange(len(text) + 1)
    r = rng.randrange(4)
    if r == 0:
        ch = pick(rng, ["\t", "\r", "\x00", "\x7f", ":", "#", '"', "'", "{", "}", "[", "]", ",",
                        "é", "ᵀ", "\u2028", "\ufeff", "\\", "&", "*", "!", "%", "@", "`", "|", ">",
                        "- ", "---\n", "...\n", "? "])
        text = text[:p] + ch + text[p:]
    elif r == 1:
        text = text[:p]
    elif r == 2:
        q = min(len(text), p + rng.randint(1, 20))
        text = text[:p] + text[q:]
    else:
        q = min(len(text), p + rng.randint(1, 40))
        text = text[:p] + text[p:q] * rng.randint(2, 50) + text[q:]
    spec.lines = text.split("\n")
    return f"bytes form {r} at {p}"


MUTATIONS = [
    (m_number, 10), (m_shape, 8), (m_stages, 6), (m_warpgroups, 5), (m_dtype, 6),
    (m_rename, 8), (m_rename_one, 6), (m_dup_line, 5), (m_del_line, 6), (m_swap_stmts, 4),
    (m_swap_lines, 2), (m_insert_stmt, 8), (m_operator, 6), (m_parens, 3), (m_chain, 4),
    (m_nest_calls, 3), (m_yaml_nest, 2), (m_drop_key, 5), (m_dup_key, 3), (m_flow_key, 4),
    (m_scalar_shape, 4), (m_block_style, 2), (m_indent, 2), (m_condition, 4),
    (m_keyword_values, 4), (m_grid_extent, 4), (m_params, 3), (m_splice, 2), (m_bytes, 2),
]
MUTATION_FUNCS = [f for f, _ in MUTATIONS]
MUTATION_WEIGHTS = [w for _, w in MUTATIONS]


class Pool:
    def __init__(self, seed_paths):
        self.seed_paths = seed_paths
        self.seed_texts = [strip_comments((ROOT / p).read_text()) for p in seed_paths]
        self.generated_names = GENERATED_NAMES


def make_mutant(pool, seed, index):
    """Mutant `index` of `seed`: (seed path, text, list of mutations). Deterministic."""
    rng = random.Random(f"{seed}:{index}")
    # The shipped specs two times in three.
    shipped = [i for i, p in enumerate(pool.seed_paths) if p.startswith("kernels-spec/")]
    k = pick(rng, shipped) if shipped and rng.random() < 0.67 else rng.randrange(len(pool.seed_paths))
    spec = Spec(pool.seed_texts[k])
    log = []
    count = min(6, 1 + int(rng.expovariate(0.9)))
    tries = 0
    while len(log) < count and tries < 30:
        tries += 1
        f = rng.choices(MUTATION_FUNCS, MUTATION_WEIGHTS)[0]
        try:
            desc = f(spec, rng, pool)
        except Exception:  # a mutation that does not fit this text: try another
            if os.environ.get("SPEC_FUZZ_DEBUG"):
                raise
            desc = None
        if desc:
            log.append(desc)
            spec.analyse()
    return pool.seed_paths[k], spec.text(), log


# --------------------------------------------------------------------------------------------
# Running tkc and judging the outcome.

def limit_memory(mb):
    """Limits the address space of the processes started from now on (the soft limit, which
    restore_memory_limit lifts again for nvcc), and turns core dumps off. Set in this process
    rather than in a preexec_fn, which is not safe with threads."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = mb << 20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))


def restore_memory_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def run_tkc(tkc, args, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run([tkc] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
        return p.returncode, p.stderr.decode("utf-8", "replace"), time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode("utf-8", "replace") if e.stderr else ""
        return None, err, time.monotonic() - start


def normalise(line, path=None):
    if path:
        line = line.replace(path, "FILE")
    line = re.sub(r"'[^']*'", "'_'", line)
    line = re.sub(r"\b\d+\b", "N", line)
    line = re.sub(r"0x[0-9a-f]+", "0xN", line)
    return line.strip()[:160]


FRAME_RE = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (.*)$")
NOISE_FRAMES = ("llvm::sys::", "SignalHandler", "libc.so", "(/lib", "__restore_rt", "abort",
                "raise", "__assert_fail", "std::terminate", "__cxa", "__gnu_cxx", "libstdc++",
                "std::", "main", "_start")


def frame_function(frame):
    """`tkc::(anonymous namespace)::Parser::parseUnary() /path:1:2` -> `Parser::parseUnary`."""
    f = frame.replace("(anonymous namespace)::", "")
    while True:
        g = re.sub(r"<[^<>]*>", "", f)
        if g == f:
            break
        f = g
    f = f.split("(", 1)[0].strip().split(" ")[-1]
    return f.removeprefix("tkc::")


def crash_signature(lines, path):
    """What tells crashes apart: an assertion's text, else a recursion's most frequent
    function (a stack overflow), else the innermost two frames of tkc's own code."""
    for l in lines:
        if "Assertion" in l or "what():" in l or "internal error" in l:
            return normalise(l.split("Assertion", 1)[-1] if "Assertion" in l else l, path)
    frames = [frame_function(m.group(1)) for m in map(FRAME_RE.match, lines) if m]
    own = [f for f, raw in zip(frames, [m.group(1) for m in map(FRAME_RE.match, lines) if m])
           if "tkc::" in raw and not any(n in f for n in NOISE_FRAMES)]
    if len(frames) >= 64 and own:
        top = max(set(own), key=own.count)
        if own.count(top) >= 8:
            return f"stack overflow: recursion through {top}"
    if own:
        return " < ".join(own[:2])
    return normalise(lines[-1], path) if lines else "(no output)"


def classify(rc, stderr, path, text, wrote_output):
    """None when the outcome is fine, else (reason, detail): reason names the failure class;
    detail is the normalised message that tells failures of one class apart."""
    lines = stderr.splitlines()
    if rc is None:
        return "timeout", ""
    if rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.valid_signals() else str(-rc)
        return f"signal-{name}", crash_signature(lines, path)
    if rc == 0:
        return None if wrote_output else ("exit-0-no-output", "")
    if rc == 2:
        return None
    if rc == 1:
        nlines = text.count("\n") + 1
        located = False
        for m in LOCATED_RE.finditer(stderr):
            line, col = int(m.group(1)), int(m.group(2))
            if 1 <= line <= nlines + 1 and col >= 1:
                located = True
        if located or "tkc: error: " in stderr:
            return None
        first = next((l for l in lines if "error" in l), lines[0] if lines else "(no output)")
        return "unlocated-exit-1", normalise(first, path)
    first = next((l for l in lines if "internal error" in l or "error" in l),
                 lines[0] if lines else "(no output)")
    return f"exit-{rc}", normalise(first, path)


def slug(reason, detail):
    words = re.sub(r"[^A-Za-z0-9]+", "-", detail).strip("-")[:60]
    h = hashlib.sha1(detail.encode()).hexdigest()[:6]
    return f"{reason}-{words}-{h}" if detail else reason


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.runs = 0
        self.exits = {}
        self.signals = {}
        self.timeouts = 0
        self.unlocated = 0
        self.failures = {}       # slug -> [count, reason, detail, first saved path]
        self.slowest = (0.0, None)
        self.slow_once = 0       # runs that timed out once, then finished in time
        self.nvcc = {"compiled": 0, "failed": 0, "spilled": 0, "stack": 0, "perf_loss": 0,
                     "skipped": 0}

    def failure_count(self):
        return sum(v[0] for v in self.failures.values())


def save_failure(out_dir, results, reason, detail, text, info, keep):
    key = slug(reason, detail)
    with results.lock:
        entry = results.failures.setdefault(key, [0, reason, detail, None])
        entry[0] += 1
        n = entry[0]
    if n > keep:
        return
    d = Path(out_dir) / key
    d.mkdir(parents=True, exist_ok=True)
    base = d / f"{info['name']}"
    (base.with_suffix(".yaml")).write_text(text)
    (base.with_suffix(".txt")).write_text(
        f"reason: {reason}\ndetail: {detail}\n" +
        "".join(f"{k}: {v}\n" for k, v in info.items() if k != "stderr") +
        "stderr (first 40 lines):\n" + "\n".join(info.get("stderr", "").splitlines()[:40]) + "\n")
    with results.lock:
        if entry[3] is None:
            entry[3] = str(base.with_suffix(".yaml"))


def pick_command(rng, mutant, out_cu, text):
    r = rng.random()
    if r < 0.7:
        args = [mutant, "-o", out_cu]
        if rng.random() < 0.3:
            args.append("--no-format")
        mode = "cuda"
    elif r < 0.85:
        args, mode = [mutant, "--emit=ir"], "ir"
    elif r < 0.93:
        args, mode = [mutant, "--emit=manifest"], "manifest"
    else:
        args, mode = [mutant, "--emit=ast"], "ast"
    if rng.random() < 0.1:
        args.append("--error-limit=0")
    if rng.random() < 0.1:
        # one instantiation, or a parameter the mutations renamed or removed (exit 2)
        params, _ = spec_params(text)
        for name, vals in sorted(params.items()):
            if vals and rng.random() < 0.7:
                args += ["--param", f"{name}={pick(rng, vals)}"]
    return args, mode


def fuzz_one(opts, pool, results, index, work, nvcc_pool):
    seed_path, text, log = make_mutant(pool, opts.seed, index)
    rng = random.Random(f"{opts.seed}:{index}:cmd")
    mutant = str(work / f"m{index}.yaml")
    out_cu = str(work / f"m{index}.cu")
    Path(mutant).write_text(text, encoding="utf-8", errors="surrogatepass")
    args, mode = pick_command(rng, mutant, out_cu, text)
    rc, stderr, secs = run_tkc(opts.tkc, args, opts.timeout)
    if rc is None:
        # A loaded machine can make a run slow: a timeout counts when a second run is too.
        rc, stderr, secs = run_tkc(opts.tkc, args, opts.timeout)
        if rc is not None:
            with results.lock:
                results.slow_once += 1
    wrote = mode != "cuda" or os.path.exists(out_cu)
    verdict = classify(rc, stderr, mutant, text, wrote)
    with results.lock:
        results.runs += 1
        if rc is None:
            results.timeouts += 1
        elif rc < 0:
            results.signals[-rc] = results.signals.get(-rc, 0) + 1
        else:
            results.exits[rc] = results.exits.get(rc, 0) + 1
        if verdict and verdict[0] == "unlocated-exit-1":
            results.unlocated += 1
        if secs > results.slowest[0]:
            results.slowest = (secs, index)
    if verdict:
        cmd = " ".join(["tkc"] + [a.replace(mutant, "MUTANT.yaml").replace(out_cu, "OUT.cu")
                                  for a in args])
        save_failure(opts.out, results, verdict[0], verdict[1], text, {
            "name": f"seed{opts.seed}-{index}", "seed": opts.seed, "index": index,
            "from": seed_path, "mutations": "; ".join(log), "command": cmd,
            "exit": rc if rc is not None else f"timeout after {opts.timeout}s",
            "seconds": f"{secs:.2f}", "stderr": stderr}, opts.keep)
    elif rc == 0 and mode == "cuda" and nvcc_pool is not None:
        digest = hashlib.sha1(Path(out_cu).read_bytes()).hexdigest()
        nvcc_pool.offer(index, seed_path, text, log, digest)
    for f in (mutant, out_cu, out_cu[:-3] + ".h"):
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
    return verdict


# --------------------------------------------------------------------------------------------
# nvcc on a sample of accepted mutants.

class NvccPool:
    """Accepted mutants whose CUDA differs from every seed's and from each other's; keeps
    the `size` of them with the smallest hash of (seed, index), so that the sample depends
    on which mutants ran, not on the order in which they finished (--jobs)."""

    def __init__(self, size, seed, baseline_digests):
        self.size = size
        self.seed = seed
        self.seen = set(baseline_digests)
        self.items = []       # (key, item), sorted
        self.offered = 0
        self.lock = threading.Lock()

    def offer(self, index, seed_path, text, log, digest):
        key = hashlib.sha1(f"{self.seed}:{index}:nvcc".encode()).hexdigest()
        with self.lock:
            if digest in self.seen:
                return
            self.seen.add(digest)
            self.offered += 1
            if len(self.items) < self.size or key < self.items[-1][0]:
                self.items.append((key, (index, seed_path, text, log)))
                self.items.sort(key=lambda kv: kv[0])
                del self.items[self.size:]

    def sample(self):
        return sorted(item for _, item in self.items)


def spec_params(text):
    """{name: [values]} of the spec's params, and the names under select (read loosely)."""
    params, selected, section = {}, set(), None
    for line in text.split("\n"):
        m = KEY_RE.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        if indent == 0:
            section = m.group(3)
            continue
        if section == "params" and indent == 2:
            value = m.group(4).split("#")[0].strip()
            vals = [v.strip() for v in value.strip("[]").split(",") if v.strip()]
            params[m.group(3)] = vals
        elif section == "select" and indent == 2:
            selected.add(m.group(3))
    return params, selected


def nvcc_one(opts, results, item, work):
    index, seed_path, text, log = item
    rng = random.Random(f"{opts.seed}:{index}:nvcc")
    d = work / f"nvcc{index}"
    d.mkdir(exist_ok=True)
    mutant, out_cu = str(d / "mutant.yaml"), str(d / "k.cu")
    Path(mutant).write_text(text, encoding="utf-8", errors="surrogatepass")
    params, selected = spec_params(text)
    restrict = []
    for name, vals in sorted(params.items()):
        if name not in selected and vals:
            restrict += ["--param", f"{name}={pick(rng, vals)}"]
    rc = None
    for args in ([mutant, "-o", out_cu] + restrict, [mutant, "-o", out_cu]):
        rc, stderr, _ = run_tkc(opts.tkc, args, opts.timeout)
        if rc == 0:
            break
    if rc != 0:
        with results.lock:
            results.nvcc["skipped"] += 1
        return
    used = " ".join(a for a in args[3:])
    cmd = [opts.nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++20", "-O3",
           "--expt-relaxed-constexpr", f"-I{ROOT / 'kittens' / 'include'}",
           f"-I{ROOT / 'runtime' / 'include'}", f"-I{d}", "-Xptxas", "-v", "-c", out_cu,
           "-o", str(d / "k.o")]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=opts.nvcc_timeout)
        out, nrc = p.stdout.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, nrc = (e.stdout or b"").decode("utf-8", "replace"), None
    secs = time.monotonic() - start
    info = {"name": f"seed{opts.seed}-{index}", "seed": opts.seed, "index": index,
            "from": seed_path, "mutations": "; ".join(log),
            "command": f"tkc MUTANT.yaml -o OUT.cu {used}; nvcc ... -Xptxas -v -c OUT.cu",
            "nvcc seconds": f"{secs:.0f}", "stderr": out}
    frames = [tuple(map(int, f)) for f in SPILL_RE.findall(out)]
    with results.lock:
        if nrc != 0:
            results.nvcc["failed"] += 1
        else:
            results.nvcc["compiled"] += 1
            if any(s or l for _, s, l in frames):
                results.nvcc["spilled"] += 1
            if any(st for st, _, _ in frames):
                results.nvcc["stack"] += 1
            if "Potential Performance Loss" in out:
                results.nvcc["perf_loss"] += 1
    if nrc != 0:
        first = next((l for l in out.splitlines() if "error" in l),
                     "timeout" if nrc is None else "(no error line)")
        save_failure(opts.out, results, "nvcc-error", normalise(first, str(d)), text, info, opts.keep)
    elif any(s or l for _, s, l in frames):
        worst = max(frames, key=lambda f: f[1] + f[2])
        save_failure(opts.out, results, "ptxas-spill", "", text,
                     dict(info, spill=f"{worst[1]} bytes stores, {worst[2]} bytes loads"), opts.keep)
    if opts.verbose:
        print(f"nvcc: mutant {index} ({seed_path}, {used or 'all instantiations'}): "
              f"{'failed' if nrc != 0 else 'ok'} in {secs:.0f}s, frames {frames[:4]}",
              file=sys.stderr)
    shutil.rmtree(d, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Shrinking a failing mutant.

def reduce_file(opts, path):
    text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    extra = opts.reduce_args.split() if opts.reduce_args else []
    work = Path(tempfile.mkdtemp(prefix="tkc-reduce-"))
    mutant, out_cu = str(work / "r.yaml"), str(work / "r.cu")
    emit_cuda = not any(a.startswith("--emit") and a != "--emit=cuda" for a in extra)

    def outcome(t):
        Path(mutant).write_text(t, encoding="utf-8", errors="surrogateescape")
        if os.path.exists(out_cu):
            os.unlink(out_cu)
        args = [mutant] + (["-o", out_cu] if emit_cuda else []) + extra
        rc, stderr, _ = run_tkc(opts.tkc, args, opts.timeout)
        return classify(rc, stderr, mutant, t, not emit_cuda or os.path.exists(out_cu))

    target = outcome(text)
    if target is None:
        print("spec fuzzer: the input does not fail; nothing to reduce", file=sys.stderr)
        return 1
    print(f"reducing for {target[0]}: {target[1]}", file=sys.stderr)
    runs = 0

    def still(t):
        nonlocal runs
        if runs >= opts.reduce_runs:
            return False
        runs += 1
        return outcome(t) == target

    def ddmin(items, join):
        n = 2
        while len(items) >= 2:
            chunk = max(1, len(items) // n)
            removed = False
            i = 0
            while i < len(items):
                cand = items[:i] + items[i + chunk:]
                if cand and still(join(cand)):
                    items = cand
                    removed = True
                else:
                    i += chunk
            if not removed:
                if chunk == 1:
                    break
                n = min(len(items), n * 2)
        return items

    lines = ddmin(text.split("\n"), "\n".join)
    # tokens within each line
    for li in range(len(lines)):
        # a token keeps the blanks before it, so that what is left stays readable
        toks = re.findall(r"\s*(?:[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\S)|\s+$", lines[li])
        if "".join(toks) != lines[li]:
            continue
        if len(toks) < 2 or len(toks) > 400:
            continue  # long chains and nests: shrink those by hand
        def join_line(ts, li=li):
            return "\n".join(lines[:li] + ["".join(ts)] + lines[li + 1:])
        toks = ddmin(toks, join_line)
        lines[li] = "".join(toks)
    result = "\n".join(lines) + ("\n" if not lines[-1] == "" else "")
    if not still(result):
        result = "\n".join(lines)
    out = Path(str(path).rsplit(".", 1)[0] + ".min.yaml")
    out.write_text(result, encoding="utf-8", errors="surrogateescape")
    print(f"{out}: {len(result)} bytes, {result.count(chr(10)) + 1} lines ({runs} runs)",
          file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    return 0


# --------------------------------------------------------------------------------------------

def seed_digests(tkc, timeout):
    """Digests of the CUDA the unmutated seeds compile to (an accepted mutant with the same
    CUDA is not worth an nvcc run), and the seeds tkc fails on (a note, not a failure)."""
    digests, problems = [], []
    work = Path(tempfile.mkdtemp(prefix="tkc-seeds-"))
    for p in SHIPPED_SEEDS + TEST_SEEDS:
        out = work / "s.cu"
        rc, err, _ = run_tkc(tkc, [str(ROOT / p), "-o", str(out)], timeout * 4)
        if rc == 0:
            digests.append(hashlib.sha1(out.read_bytes()).hexdigest())
        elif rc != 1:
            problems.append(f"{p}: exit {rc}")
    shutil.rmtree(work, ignore_errors=True)
    return digests, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See docs/Testing.md.")
    ap.add_argument("--tkc", default=str(ROOT / "build" / "bin" / "tkc"), help="the tkc to run")
    ap.add_argument("--seconds", type=float, default=None,
                    help="time budget of the mutation phase (default 60 unless --count)")
    ap.add_argument("--count", type=int, default=None, help="stop after N mutants")
    ap.add_argument("--seed", type=int, default=1, help="which mutants (default 1)")
    ap.add_argument("--start", type=int, default=0, help="first mutant index")
    ap.add_argument("--out", default="spec-fuzz-failures", help="where failing mutants go")
    ap.add_argument("--keep", type=int, default=5, help="mutants kept per failure class")
    ap.add_argument("--jobs", type=int, default=1, help="tkc (and nvcc) runs at once")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds a tkc run may take")
    ap.add_argument("--mem-mb", type=int, default=4096, help="address-space limit of a tkc run")
    ap.add_argument("--nvcc-sample", type=int, default=0, metavar="K",
                    help="compile up to K accepted mutants with nvcc after the mutation phase")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc",
                    help="the nvcc for --nvcc-sample")
    ap.add_argument("--nvcc-timeout", type=float, default=300.0)
    ap.add_argument("--report", action="store_true", help="print the counts in detail")
    ap.add_argument("--verbose", action="store_true", help="progress every minute, each nvcc run")
    ap.add_argument("--print-mutant", type=int, metavar="N", help="print mutant N and exit")
    ap.add_argument("--reduce", metavar="FILE", help="shrink a failing mutant, write FILE.min.yaml")
    ap.add_argument("--reduce-args", default="", help="extra tkc options for --reduce, e.g. '--emit=ir'")
    ap.add_argument("--reduce-runs", type=int, default=3000, help="most tkc runs --reduce makes")
    opts = ap.parse_args()
    if opts.seconds is None and opts.count is None:
        opts.seconds = 60.0

    pool_paths = SHIPPED_SEEDS + [p for p in TEST_SEEDS if (ROOT / p).exists()]
    if opts.print_mutant is not None:
        pool = Pool(pool_paths)
        seed_path, text, log = make_mutant(pool, opts.seed, opts.print_mutant)
        print(f"# mutant {opts.print_mutant} of seed {opts.seed}, from {seed_path}: "
              f"{'; '.join(log)}", file=sys.stderr)
        sys.stdout.write(text)
        return 0
    if not os.access(opts.tkc, os.X_OK):
        print(f"spec fuzzer: no tkc at {opts.tkc}", file=sys.stderr)
        return 2
    limit_memory(opts.mem_mb)
    if opts.reduce:
        return reduce_file(opts, opts.reduce)

    if opts.nvcc_sample > 0 and not (os.access(opts.nvcc, os.X_OK) or shutil.which(opts.nvcc)):
        print(f"spec fuzzer: note: no nvcc at {opts.nvcc}; --nvcc-sample ignored", file=sys.stderr)
        opts.nvcc_sample = 0
    digests, problems = seed_digests(opts.tkc, opts.timeout)
    for p in problems:
        print(f"spec fuzzer: note: seed {p}", file=sys.stderr)
    pool = Pool(pool_paths)
    results = Results()
    nvcc_pool = NvccPool(opts.nvcc_sample, opts.seed, digests) if opts.nvcc_sample > 0 else None
    Path(opts.out).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tkc-spec-fuzz-"))
    deadline = time.monotonic() + opts.seconds if opts.seconds is not None else None
    end = opts.start + opts.count if opts.count is not None else None
    started = time.monotonic()
    next_index = opts.start
    last_note = started
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as ex:
            pending = set()
            while True:
                now = time.monotonic()
                if (deadline is not None and now >= deadline) or (end is not None and next_index >= end):
                    break
                while len(pending) < opts.jobs * 2 and (end is None or next_index < end):
                    pending.add(ex.submit(fuzz_one, opts, pool, results, next_index, work, nvcc_pool))
                    next_index += 1
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for f in done:
                    f.result()
                if opts.verbose and now - last_note > 60:
                    last_note = now
                    print(f"spec fuzzer: {results.runs} mutants, {results.failure_count()} "
                          f"failures, {now - started:.0f}s", file=sys.stderr, flush=True)
            for f in concurrent.futures.as_completed(pending):
                f.result()
        if nvcc_pool is not None:
            restore_memory_limit()
            items = nvcc_pool.sample()
            if opts.verbose:
                print(f"spec fuzzer: nvcc on {len(items)} of {nvcc_pool.offered} accepted mutants "
                      "with new CUDA", file=sys.stderr, flush=True)
            with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as ex:
                for f in [ex.submit(nvcc_one, opts, results, it, work) for it in items]:
                    f.result()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    elapsed = time.monotonic() - started
    ex_counts = ", ".join(f"exit {k}: {v}" for k, v in sorted(results.exits.items()))
    nfail = results.failure_count()
    if opts.report:
        print(f"seed: {opts.seed}, mutants {opts.start}..{next_index - 1}, {elapsed:.0f}s, "
              f"{opts.jobs} jobs")
        print(f"runs: {results.runs}")
        for k, v in sorted(results.exits.items()):
            print(f"  exit {k}: {v}")
        for k, v in sorted(results.signals.items()):
            print(f"  signal {signal.Signals(k).name if k in signal.valid_signals() else k}: {v}")
        print(f"  timeouts (> {opts.timeout:g}s, twice): {results.timeouts}")
        print(f"  timed out once, then in time: {results.slow_once}")
        print(f"  unlocated exit 1: {results.unlocated}")
        print(f"  slowest run: {results.slowest[0]:.2f}s (mutant {results.slowest[1]})")
        if nvcc_pool is not None:
            n = results.nvcc
            print(f"nvcc: {len(nvcc_pool.items)} sampled of {nvcc_pool.offered} accepted mutants "
                  f"with new CUDA; compiled {n['compiled']}, failed {n['failed']}, spilled "
                  f"{n['spilled']}, stack frame {n['stack']}, performance-loss warning "
                  f"{n['perf_loss']}, not restricted/compiled {n['skipped']}")
    for key, (count, reason, detail, first) in sorted(results.failures.items()):
        print(f"FAILURE {reason} x{count}: {detail or '-'}\n  e.g. {first}")
    print(f"spec fuzzer: {results.runs} mutants, {ex_counts or 'no exits'}"
          + (f", signals: {sum(results.signals.values())}" if results.signals else "")
          + (f", timeouts: {results.timeouts}" if results.timeouts else "")
          + (f", nvcc: {results.nvcc['compiled']} compiled, {results.nvcc['failed']} failed, "
             f"{results.nvcc['spilled']} spilled" if nvcc_pool is not None else "")
          + f", failures: {nfail}")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
