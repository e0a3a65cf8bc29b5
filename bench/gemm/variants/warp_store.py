"""Probe edit (not shipped; bench/NOTES.md session 24): gemm_none's finish stores C warp by
warp instead of warpgroup by warpgroup. Shipped, each warpgroup writes its 64 x 256 result to
shared memory, meets at a warpgroup barrier and issues one TMA store; nothing leaves the
multiprocessor until all four warps have written all of it. Here each warp owns 16 rows of the
finish block and stores them itself (a fence, __syncwarp, one lane issues), with no barrier, and
releases the block with its own arrival (CONSUMER_ARRIVALS is one a warp).

    python3 warp_store.py gemm.cu          one 16 x 256 store a warp (8 KiB), after all its rows
    python3 warp_store.py gemm.cu --chunks four 16 x 64 stores a warp (2 KiB), each as soon as
                                           its 64 columns are written

The finish block keeps its size (32 KiB a warpgroup): as 4 x st_bf<16, 256> (one a warp) in
the first form, as the shipped st_bf<64, 256> in the second, whose 64-column chunks hold each
warp's 16 rows as 2 KiB at chunk * 8 KiB + warp * 2 KiB (a whole 1024-byte swizzle repeat).
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

chunks = "--chunks" in sys.argv[2:]
patch = KernelPatch(sys.argv[1])
edit = patch.edit

store_tile = "kittens::st_bf<16, 64>" if chunks else "kittens::st_bf<16, 256>"
edit("""  using result_tile = kittens::st_bf<64, 256>;
""", """  using result_tile = kittens::st_bf<64, 256>;
  using store_tile = %s; // what one warp's TMA store moves
""" % store_tile)
edit("kittens::tile_map<result_tile> C;", "kittens::tile_map<store_tile> C;")
if not chunks:
    edit("""    struct finish_block {
      result_tile result;
    };""", """    struct finish_block {
      store_tile result[4]; // one a warp
    };""")
    finish = """      const int wg = kittens::warpgroupid(), w = kittens::warpgroup::warpid();
      kittens::store(args.finish.result[w], args.state.acc);
      kittens::fence_async_shared(); // make the stores visible to TMA
      __syncwarp();
      if (kittens::laneid() == 0) {
        kittens::tma::store_async(args.globals.C, args.finish.result[w],
                                  {0, 0, args.common.m * 8 + wg * 4 + w, args.common.n});
        kittens::tma::store_commit_group(); // its read is waited for in release_finish
      }
"""
else:
    finish = """      const int wg = kittens::warpgroupid(), w = kittens::warpgroup::warpid();
      char *rows = reinterpret_cast<char *>(&args.finish.result) + w * 2048;
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        kittens::rt_fl<16, 64> part;
        #pragma unroll
        for (int f = 0; f < 4; ++f) part.tiles[0][f] = args.state.acc.tiles[0][4 * j + f];
        auto &chunk = *reinterpret_cast<store_tile *>(rows + j * 8192);
        kittens::store(chunk, part);
        kittens::fence_async_shared(); // make the stores visible to TMA
        __syncwarp();
        if (kittens::laneid() == 0)
          kittens::tma::store_async(args.globals.C, chunk,
                                    {0, 0, args.common.m * 8 + wg * 4 + w, args.common.n * 4 + j});
      }
      if (kittens::laneid() == 0)
        kittens::tma::store_commit_group(); // its read is waited for in release_finish
"""
patch.replace_between("      const int wg = kittens::warpgroupid();\n      kittens::warpgroup::store(",
                      "    __device__ static void\n    release_finish", finish + "    }\n")
edit("""      if (kittens::warpgroup::laneid() == 0) {
        kittens::tma::store_async_read_wait<0>();
        kittens::arrive(args.finish_finished,
                        kittens::WARPGROUP_WARPS); // the finish block may be reused
      }""", """      if (kittens::laneid() == 0) {
        kittens::tma::store_async_read_wait<0>();
        kittens::arrive(args.finish_finished); // this warp's rows may be reused
      }""")
patch.edit_file("globals.C = kittens::make_tile_map<gemm_none_kernel::result_tile>(",
                "globals.C = kittens::make_tile_map<gemm_none_kernel::store_tile>(")
patch.write()
print("gemm_none: warp stores%s" % (" in 64-column chunks" if chunks else ""))
