"""Probe edit (not shipped; bench/NOTES.md session 25): a block's last store through the
warpgroup's own 16-byte global stores instead of TMA. In the 2048^3 timelines a warpgroup's
32 KiB TMA store takes 1,250-1,600 cycles to read its block even when only half the blocks'
bytes are leaving (wg_tail.py), 3,400 when all are: either the aggregate write bandwidth into
L2 (~4.2 TB/s at those numbers) or each multiprocessor's TMA store rate (~20-25 bytes a cycle)
holds it. Here the block's last finish writes the accumulator to the finish block as shipped,
then each of the warpgroup's 128 threads copies 16 of its 2,048 16-byte pieces (swizzled
shared reads, coalesced global writes; rows past M and columns past N skipped) instead of
issuing the TMA store. If the TMA rate is the limit, the block's end moves ~1,000 cycles
earlier; if L2's write bandwidth is, it does not.

    python3 lsu_last_store.py gemm.cu
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

patch = KernelPatch(sys.argv[1])
patch.edit("""      kittens::tile_map<result_tile> C;""", """      kittens::tile_map<result_tile> C;
      kittens::bf16 *C_ptr; // the same C, for the last task's own stores
      long long M, N;""")
patch.edit("""    __device__ static void finish(kittens::lcf::consumer_finish_args<gemm_none_kernel> &args) {
      const int wg = kittens::warpgroupid();
      kittens::warpgroup::store(args.finish.result, args.state.acc);""",
           """    __device__ static void finish(kittens::lcf::consumer_finish_args<gemm_none_kernel> &args) {
      const int wg = kittens::warpgroupid();
      if (args.next_num_iters < 0) {
        kittens::warpgroup::store(args.finish.result, args.state.acc);
        kittens::warpgroup::sync(1 + wg);
        // 64 rows x 4 column chunks of 64 (128-byte rows, 16-byte pieces swizzled by row % 8).
        const char *src = reinterpret_cast<const char *>(&args.finish.result);
        const long long row0 = (long long)(args.common.m * 2 + wg) * 64;
        const long long col0 = (long long)args.common.n * 256;
        const int t = kittens::warpgroup::laneid();
#pragma unroll 4
        for (int i = 0; i < 16; ++i) {
          const int q = i * 128 + t, u = q & 7, r = (q >> 3) & 63, c = q >> 9;
          const long long row = row0 + r, col = col0 + c * 64 + u * 8;
          const uint4 v = *reinterpret_cast<const uint4 *>(src + c * 8192 + r * 128 + ((u ^ (r & 7)) << 4));
          if (row < args.globals.M && col < args.globals.N)
            *reinterpret_cast<uint4 *>(args.globals.C_ptr + row * args.globals.N + col) = v;
        }
        return;
      }
      kittens::warpgroup::store(args.finish.result, args.state.acc);""")
patch.edit_file("""    globals.C = kittens::make_tile_map<gemm_none_kernel::result_tile>(
        kittens::gl<kittens::bf16, 1, 1, -1, -1>(C, 1, 1, M, N));""",
                """    globals.C = kittens::make_tile_map<gemm_none_kernel::result_tile>(
        kittens::gl<kittens::bf16, 1, 1, -1, -1>(C, 1, 1, M, N));
    globals.C_ptr = reinterpret_cast<kittens::bf16 *>(C);
    globals.M = M;
    globals.N = N;""")
patch.write()
print("gemm_none: the block's last store through 16-byte global stores")
