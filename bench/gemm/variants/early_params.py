"""Probe edit (not shipped): a block's start without misses on the kernel's parameters.
The GEMM timeline (bench/gemm/timeline, NOTES session 23) shows the producer issuing its
first copy ~1800 cycles after the block's entry, most of it spent on constant-cache misses
for the parameters, one after another (the task counts in common_setup, then each map's
chunk_copies before its copy). This copies kittens to DEST and patches the LCF template so
that, while thread 0 initialises the semaphores, warp 1 reads one word of every 32 bytes of
the parameters (the reads are independent, so their misses overlap) and only consumes them
after the block-wide barrier; with --prefetch it also calls K::prefetch(g) at the entry from
the producer's first thread, when the kernel has one, and adds one to each kernel of GEMM.CU
that prefetches every TMA descriptor of its globals.

    python3 early_params.py KITTENS_INCLUDE DEST [--prefetch GEMM.CU]
"""
import os, re, sys
from pathlib import Path
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

prefetch = "--prefetch" in sys.argv
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1])
edit = patch.edit
hook = """
  if constexpr (requires { K::prefetch(g); }) {
    if (threadIdx.x == TR::NUM_CONSUMER_THREADS) K::prefetch(g);
  }""" if prefetch else ""
edit("""  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {""", """  uint32_t params_touched = 0;
  if (threadIdx.x / 32 == 1) {
    const uint32_t *words = reinterpret_cast<const uint32_t *>(&g);
#pragma unroll
    for (int i = 0; i < int(sizeof(g) / 4); i += 8) params_touched += words[i];
  }%s
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {""" % hook)
# The sum is stored to shared memory after the barrier: an empty asm statement would let ptxas
# drop the reads (it did), and consuming it before the barrier would hold everyone there.
edit("""  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""", """  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
  if (threadIdx.x == 32) {
    __shared__ uint32_t params_sink;
    asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(smem_addr(&params_sink)), "r"(params_touched) : "memory");
  }
""")
patch.write()
if prefetch:
    cu = Path(sys.argv[sys.argv.index("--prefetch") + 1])
    t = cu.read_text()
    out, pos, n = [], 0, 0
    for m in re.finditer(r"struct (\w+_kernel) \{", t):
        g = t.index("struct globals {", m.end())
        maps = re.findall(r"kittens::tile_map<\w+> (\w+);", t[g:t.index("};", g)])
        anchor = t.index("  struct producer {", m.end())
        body = "".join("    kittens::tma::prefetch(g.%s);\n" % x for x in maps)
        out.append(t[pos:anchor])
        out.append("  __device__ static void prefetch(const layout::globals &g) {\n%s  }\n\n" % body)
        pos, n = anchor, n + 1
    out.append(t[pos:])
    cu.write_text("".join(out))
    print("prefetch hook added to", n, "kernels")
