"""Probe build (bench/NOTES.md sessions 30-31): the stream-K copies of a generated gemm.cu with
progress words, to see where a hung launch's warpgroups are.

Each warpgroup's lane 0 writes one 64-bit word to host-mapped memory at task boundaries only
(the compute loop and the waits are untouched): 8 words a block,

    word 0, 1   consumer warpgroup 0, 1: where it is
    word 2      the producer: the task it is loading
    word 3, 4   warpgroup 0, 1: its last publish
    word 5, 6   warpgroup 0, 1: its last completed acquire

each word (token & 0xffff) << 48 | (task & 0xff) << 40 | code << 32 | field, with

    code 1  compute of a task's first stage        field: the task's stages
    code 2  finish entered                         field: part (0 whole, 1 finishing, 2 partial)
    code 3  acquiring the partial of block `field`
    code 4  acquired the partial of block `field`
    code 5  finish done                            field: part
    code 6  producer loading a task's first stage  field: the task's stages
    code 7  published slot `field`

The library gains `tkc_progress_arm(seconds)`: a host thread prints every block's words to
stderr that many seconds later (and again 4 s after), unless the process has exited.
`bench/gemm/hang_check.py` arms it when the library has it, and prints what a hung run dumped.

    python3 progress_words.py GEMM_CU DEST_GEMM_CU     (a gemm.cu from a last_wave: stream_k spec)
    python3 progress_words.py --decode DUMP_FILE      (the dump, one line per block, decoded)
"""
import re
import sys

HOST = r'''
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
// Progress words (bench/gemm/variants/progress_words.py).
__device__ unsigned long long *tkc_progress = nullptr; // 8 words a block
__device__ __forceinline__ void tkc_mark(int word, unsigned long long token, int task, int code, int field) {
  if (threadIdx.x % 128 != 0 || tkc_progress == nullptr) return;
  const unsigned long long v = (token & 0xffffull) << 48 | (unsigned long long)(task & 0xff) << 40 |
                               (unsigned long long)(code & 0xff) << 32 | (unsigned)field;
  *(volatile unsigned long long *)(tkc_progress + blockIdx.x * 8 + word) = v;
}
static unsigned long long *tkc_progress_host = nullptr;
static int tkc_progress_blocks = 0;
static void tkc_progress_dump() {
  std::fprintf(stderr, "PROGRESS %d blocks\n", tkc_progress_blocks);
  for (int b = 0; b < tkc_progress_blocks; ++b) {
    std::fprintf(stderr, "block %d", b);
    for (int w = 0; w < 8; ++w)
      std::fprintf(stderr, " %016llx", ((volatile unsigned long long *)tkc_progress_host)[b * 8 + w]);
    std::fprintf(stderr, "\n");
  }
  std::fflush(stderr);
}
extern "C" int tkc_progress_arm(int seconds) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&tkc_progress_blocks, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 1;
  const size_t bytes = (size_t)tkc_progress_blocks * 8 * sizeof(unsigned long long);
  unsigned long long *d = nullptr;
  if (cudaHostAlloc(&tkc_progress_host, bytes, cudaHostAllocMapped) != cudaSuccess) return 2;
  std::memset(tkc_progress_host, 0, bytes);
  if (cudaHostGetDevicePointer(&d, tkc_progress_host, 0) != cudaSuccess ||
      cudaMemcpyToSymbol(tkc_progress, &d, sizeof d) != cudaSuccess)
    return 3;
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    tkc_progress_dump();
    std::this_thread::sleep_for(std::chrono::seconds(4));
    tkc_progress_dump();
  }).detach();
  return 0;
}
'''

# (text in each stream-K kernel, what replaces it)
T = "args.globals.share.token"
EDITS = [
    ("const int split = args.num_iters - SPLIT_STAGES; // the first split stage",
     "const int split = args.num_iters - SPLIT_STAGES; // the first split stage\n"
     f"      if (args.iter == 0) tkc_mark(kittens::warpgroupid(), {T}, args.task_iter, 1, args.num_iters);"),
    ("kittens::expect_bytes(args.inputs_arrived, 49152);",
     "kittens::expect_bytes(args.inputs_arrived, 49152);\n"
     f"        if (args.iter == 0) tkc_mark(2, {T}, args.task_iter, 6, args.num_iters);"),
    ("const kittens::stream_k_share &share = args.globals.share;\n      const int wg = kittens::warpgroupid();",
     "const kittens::stream_k_share &share = args.globals.share;\n      const int wg = kittens::warpgroupid();\n"
     "      tkc_mark(wg, share.token, args.task_iter, 2, args.common.part);"),
    ("kittens::stream_k::publish(share, slot);",
     "{ kittens::stream_k::publish(share, slot); tkc_mark(3 + wg, share.token, args.task_iter, 7, slot); }"),
    ("kittens::stream_k::acquire(share, slot);",
     "{ tkc_mark(wg, share.token, args.task_iter, 3, other); kittens::stream_k::acquire(share, slot);\n"
     "              tkc_mark(5 + wg, share.token, args.task_iter, 4, other); }"),
    ("store_part<1>(args, args.state.acc[1], args.finish.result);\n    }",
     "store_part<1>(args, args.state.acc[1], args.finish.result);\n"
     "      tkc_mark(wg, share.token, args.task_iter, 5, args.common.part);\n    }"),
]


def patch(src):
    if "#include <string>\n" not in src:
        sys.exit("progress_words: no '#include <string>' to put the helpers after")
    src = src.replace("#include <string>\n", "#include <string>\n" + HOST, 1)
    out, pos, kernels = [], 0, 0
    for m in re.finditer(r"^struct \w+_sk_kernel \{", src, re.M):
        end = src.index("\n};\n", m.start())
        body = src[m.start():end]
        for old, new in EDITS:
            if body.count(old) != 1:
                sys.exit(f"progress_words: {m.group(0)} has {body.count(old)} of {old!r}")
            body = body.replace(old, new)
        out += [src[pos:m.start()], body]
        pos, kernels = end, kernels + 1
    if not kernels:
        sys.exit("progress_words: no stream-K kernel (generate from a spec with last_wave: stream_k)")
    out.append(src[pos:])
    return "".join(out), kernels


CODES = {1: "compute", 2: "finish", 3: "acquiring", 4: "acquired", 5: "finished", 6: "loading",
         7: "published"}


def decode(word):
    w = int(word, 16)
    if w == 0:
        return "-"
    code = (w >> 32) & 0xFF
    return "t%04x task %d %s %d" % (w >> 48, (w >> 40) & 0xFF, CODES.get(code, "?%d" % code),
                                    w & 0xFFFFFFFF)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--decode":
        names = ["wg0", "wg1", "producer", "pub0", "pub1", "acq0", "acq1", "-"]
        for line in open(sys.argv[2]):
            f = line.split()
            if len(f) == 10 and f[0] == "block":
                print("block %3s  " % f[1] + " | ".join("%s: %s" % (n, decode(x))
                                                          for n, x in zip(names, f[2:9])))
            else:
                print(line.rstrip())
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    text, kernels = patch(open(sys.argv[1]).read())
    open(sys.argv[2], "w").write(text)
    print(f"{kernels} stream-K kernels given progress words -> {sys.argv[2]}")


if __name__ == "__main__":
    main()
