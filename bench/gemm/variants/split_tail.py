"""Probe edit (bench/NOTES.md session 26; what it measured is shipped as tkc's split-finish pass,
every task split over its last 2 stages): the block's last task (every task with `all`)
computes its last TAIL stages column half by column half, so that the left half of the result
is stored while the right half's products run.

Shipped, a block's last task ends with both warpgroups' whole 64 x 256 results written to
shared memory and stored together after the last products: at 2048^3 (one task a block) all
128 blocks store 8 MiB at once, and the block's last ~4,000 cycles are its finish and that
store (bench/NOTES.md, sessions 23 and 25). Here, in the last task, each warpgroup issues the
left-half (n128) products of each of the last TAIL stages as it arrives, then the right-half
products of all of them (the stages stay resident: nothing is loaded after them), waits for the
left half only, writes it to shared memory and issues its store, and only then waits for the
right half, which finish stores as before. The left half's 4 MiB then leave under the right
half's products. ptxas must keep the products asynchronous (no C7510/C7511 serialisation
warning).

Staging: the left halves go to warpgroup 0's finish block (past the stages; 16 KiB each); at
finish, warpgroup 1's right half goes to its own block (which aliases the fourth stage, free
after the consumers' meeting) and warpgroup 0's to its block's first half once its left
store has read it.

    python3 split_tail.py GEMM_CU [TAIL [all]]  (TAIL default 4; 1..4; 0: the control, every
                                                 product in column halves and no split; all:
                                                 every task of the block split, not only its last)
"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from kernel_patch import KernelPatch  # noqa: E402

tail = int(sys.argv[2]) if len(sys.argv) > 2 else 4
every = len(sys.argv) > 3 and sys.argv[3] == "all"
assert 0 <= tail <= 4
k = KernelPatch(sys.argv[1])
k.edit("""  using accumulator = kittens::rt_fl<16, 256>;
""", """  using accumulator = kittens::rt_fl<16, 256>;
  using half_tile = kittens::st_bf<64, 128>;
  using half_acc = kittens::rt_fl<16, 128>;
  static constexpr int TAIL = %d;
  static constexpr bool SPLIT_EVERY_TASK = %s;
""" % (tail, "true" if every else "false"))
k.edit("""      kittens::tile_map<result_tile> C;
""", """      kittens::tile_map<result_tile> C;
      kittens::tile_map<half_tile> Ch; // C in 64 x 128 tiles
""")
k.edit("""  struct consumer {
""", """  // The block's last task (every task with SPLIT_EVERY_TASK) ends split by column halves
  // (TAIL stages from the end).
  __device__ static bool split_task(int task_iter, int num_iters, const layout::globals &g) {
    return TAIL > 0 && num_iters > kittens::lcf::traits<gemm_none_kernel>::INPUT_STAGES &&
           (SPLIT_EVERY_TASK || (task_iter + 1) * int(gridDim.x) + int(blockIdx.x) >= g.m_count * g.n_count);
  }
  // acc's column half H (+)= a . b (b: 64 x 128), fencing only that half's registers.
  template <int H, class A, class B>
  __device__ static void mma_half(accumulator &acc, const A &a, const B &b, bool accumulate = true) {
    using namespace kittens;
    auto &d = *reinterpret_cast<rt_base<float, rt_layout::row>(*)[8]>(&acc.tiles[0][8 * H]);
    KITTENS_UNROLL for (int j = 0; j < 8; ++j)
      KITTENS_UNROLL for (int q = 0; q < 4; ++q)
        asm volatile("" : "+f"(d[j].data[q].x), "+f"(d[j].data[q].y)::"memory");
    asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
    const uint64_t da = warpgroup::descriptor(a, wgmma_desc::major::k);
    const uint64_t db = warpgroup::descriptor(b, wgmma_desc::major::mn);
    KITTENS_UNROLL for (int s = 0; s < 4; ++s)
      kittens::detail::wgmma::op<bf16, 128>::template ss<0, 1>(
          d, warpgroup::step<A>(da, wgmma_desc::major::k, s), warpgroup::step<B>(db, wgmma_desc::major::mn, s),
          (accumulate || s > 0) ? 1 : 0);
    warpgroup::mma_commit_group();
  }
  // acc's column half H, in place (no copy: the registers are scarce).
  template <int H> __device__ static const half_acc &half_of(const accumulator &acc) {
    return *reinterpret_cast<const half_acc *>(&acc.tiles[0][8 * H]);
  }
  // (A template: naming lcf::traits<gemm_none_kernel> in a declaration here would instantiate the
  // traits while the kernel is incomplete, before `consumer` exists, and the template would then
  // never call release_finish: the producer's wait for the finish block would hang.)
  template <class Scratch> __device__ static char *smem_base(Scratch &scratch) {
    return reinterpret_cast<char *>(&scratch);
  }

  struct consumer {
""")
k.edit("""      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      kittens::warpgroup::mma_AB(args.state.acc, a_rows, args.input.b, args.iter > 0);""",
       """      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      const int first_split = args.num_iters - TAIL;
      if (args.iter >= first_split && split_task(args.task_iter, args.num_iters, args.globals)) {
        using TR = kittens::lcf::traits<gemm_none_kernel>;
        const int wg = kittens::warpgroupid();
        mma_half<0>(args.state.acc, a_rows, args.input.b.subtile<64, 128>(0, 0));
        if (args.iter < args.num_iters - 1) {
          kittens::warpgroup::mma_async_wait<0>(); // nothing asynchronous across stages (ptxas would serialise)
          return; // the stage stays resident for the right half
        }
        char *here = reinterpret_cast<char *>(&args.input);
        KITTENS_UNROLL for (int jj = 0; jj < TAIL; ++jj) { // unrolled: a product in flight across a loop's back edge is serialised
          const int j = first_split + jj;
          auto &in = *reinterpret_cast<layout::input_block *>(
              here + (j % TR::INPUT_STAGES - args.iter % TR::INPUT_STAGES) * TR::STAGE_BYTES);
          mma_half<1>(args.state.acc, in.a.subtile<64, 64>(wg, 0), in.b.subtile<64, 128>(0, 1));
        }
        kittens::warpgroup::mma_async_wait<TAIL>(); // the left half's products are done
        auto &left = *reinterpret_cast<half_tile *>(smem_base(args.scratch) + TR::finish_offset(0) +
                                                    wg * sizeof(half_tile));
        kittens::warpgroup::store(left, half_of<0>(args.state.acc));
        kittens::fence_async_shared();
        kittens::warpgroup::sync(1 + wg);
        if (kittens::warpgroup::laneid() == 0) {
          kittens::tma::store_async(args.globals.Ch, left, {0, 0, args.common.m * 2 + wg, args.common.n * 2});
          kittens::tma::store_commit_group();
        }
        kittens::warpgroup::mma_async_wait<0>();
        if (kittens::laneid() == 0) // this warp is done with the TAIL stages it held
          KITTENS_UNROLL for (int jj = 0; jj < TAIL; ++jj)
            kittens::arrive((&args.inputs_finished)[(first_split + jj) % TR::INPUT_STAGES - args.iter % TR::INPUT_STAGES]);
        return;
      }
      // Every product in column halves (n128): ptxas serialises every wgmma of a kernel that
      // mixes n256 products on the accumulator with n128 ones on its halves (C7511).
      mma_half<0>(args.state.acc, a_rows, args.input.b.subtile<64, 128>(0, 0), args.iter > 0);
      mma_half<1>(args.state.acc, a_rows, args.input.b.subtile<64, 128>(0, 1), args.iter > 0);""")
k.edit("""      const int wg = kittens::warpgroupid();
      kittens::warpgroup::store(args.finish.result, args.state.acc);""",
       """      const int wg = kittens::warpgroupid();
      if (split_task(args.task_iter, args.num_iters, args.globals)) {
        using TR = kittens::lcf::traits<gemm_none_kernel>;
        // Warpgroup 0's right half reuses its left half's staging once its store has read it.
        if (wg == 0) {
          if (kittens::warpgroup::laneid() == 0)
            kittens::tma::store_async_read_wait<0>();
          kittens::warpgroup::sync(1 + wg);
        }
        auto &right = wg == 0 ? *reinterpret_cast<half_tile *>(smem_base(args.scratch) + TR::finish_offset(0))
                              : *reinterpret_cast<half_tile *>(&args.finish);
        kittens::warpgroup::store(right, half_of<1>(args.state.acc));
        kittens::fence_async_shared();
        kittens::warpgroup::sync(1 + wg);
        if (kittens::warpgroup::laneid() == 0) {
          kittens::tma::store_async(args.globals.Ch, right, {0, 0, args.common.m * 2 + wg, args.common.n * 2 + 1});
          kittens::tma::store_commit_group();
        }
        return;
      }
      kittens::warpgroup::store(args.finish.result, args.state.acc);""")
k.edit_file("""    globals.C = kittens::make_tile_map<gemm_none_kernel::result_tile>(
        kittens::gl<kittens::bf16, 1, 1, -1, -1>(C, 1, 1, M, N));
  } catch (const kittens::tma_error &error) {
    return tkc::runtime::Status::error(std::string(kName) + ": " + error.what());
  }
  globals.m_count = static_cast<int>((M + 128 - 1) / 128);
  globals.n_count = static_cast<int>((N + 256 - 1) / 256);
  globals.order = kittens::grouped_tiles<8>(globals.m_count, globals.n_count);""",
            """    globals.C = kittens::make_tile_map<gemm_none_kernel::result_tile>(
        kittens::gl<kittens::bf16, 1, 1, -1, -1>(C, 1, 1, M, N));
    globals.Ch = kittens::make_tile_map<gemm_none_kernel::half_tile>(
        kittens::gl<kittens::bf16, 1, 1, -1, -1>(C, 1, 1, M, N));
  } catch (const kittens::tma_error &error) {
    return tkc::runtime::Status::error(std::string(kName) + ": " + error.what());
  }
  globals.m_count = static_cast<int>((M + 128 - 1) / 128);
  globals.n_count = static_cast<int>((N + 256 - 1) / 256);
  globals.order = kittens::grouped_tiles<8>(globals.m_count, globals.n_count);""")
k.write()
print("gemm_none: products in column halves; " +
      (("%s split over its last %d stages" % ("every task" if every else "the block's last task", tail))
       if tail else "no split (control)"))
