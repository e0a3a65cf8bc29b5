// GEMM ladder level 5: several consumer warpgroups, wide wgmma, TMA-store epilogue.
//
// One producer warpgroup (TMA, setmaxnreg 40) and two consumer warpgroups (232), each
// computing 64x256 with m64n256k16; 128x256 block tile, K tile 64, a 3-stage full/empty
// mbarrier ring (4 stages plus a separate 64 KiB epilogue buffer would not fit), one block
// per output tile (non-persistent, row-major block order), stmatrix + TMA-store epilogue.
#include "harness.cuh"

using namespace kittens;

constexpr int STAGES = 3;
using a_tile = st_bf<128, 64>;
using b_tile = st_bf<64, 256>;
using c_tile = st_bf<64, 256>;
struct stage_t { a_tile a; b_tile b; };
struct globals {
  tile_map<a_tile> A;
  tile_map<b_tile> B;
  tile_map<c_tile> C;
  int k_iters;
};
constexpr int SMEM = STAGES * sizeof(stage_t) + 2 * sizeof(c_tile) + 1024;

__global__ __launch_bounds__(384, 1) void l5(const __grid_constant__ globals g) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &st = al.allocate<stage_t, STAGES>();
  auto &c = al.allocate<c_tile, 2>();
  __shared__ semaphore full[STAGES], empty[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      init_semaphore(full[s], 1);
      init_semaphore(empty[s], 8); // lane 0 of each consumer warp
    }
    fence_semaphore_init();
  }
  __syncthreads();
  const int m = blockIdx.y, n = blockIdx.x;
  if (warpgroupid() == 2) {
    warpgroup::decrease_registers<40>();
    if (warpgroup::laneid() == 0) {
      for (int k = 0; k < g.k_iters; ++k) {
        const int s = k % STAGES, use = k / STAGES;
        wait(empty[s], (use & 1) ^ 1);
        expect(full[s], st[s]);
        tma::load_async(st[s].a, g.A, {0, 0, m, k}, full[s]);
        tma::load_async(st[s].b, g.B, {0, 0, k, n}, full[s]);
      }
    }
  } else {
    warpgroup::increase_registers<232>();
    const int wg = warpgroupid();
    rt_fl<16, 256> acc;
    for (int k = 0; k < g.k_iters; ++k) {
      const int s = k % STAGES;
      wait(full[s], (k / STAGES) & 1);
      warpgroup::mma_AB(acc, st[s].a.subtile<64, 64>(wg, 0), st[s].b, k > 0);
      warpgroup::mma_async_wait<0>();
      if (laneid() == 0) arrive(empty[s]);
    }
    warpgroup::store(c[wg], acc);
    fence_async_shared();
    warpgroup::sync(wg + 1);
    if (warpgroup::laneid() == 0) {
      tma::store_async(g.C, c[wg], {0, 0, 2 * m + wg, n});
      tma::store_commit_group();
      tma::store_async_wait<0>();
    }
  }
}

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L5", o, 128, 256, 64)) return 2;
  ladder::problem p(o);
  using G = gl<bf16, 1, 1, -1, -1>;
  globals g{make_tile_map<a_tile>(G(p.A, 1, 1, o.M, o.K)), make_tile_map<b_tile>(G(p.B, 1, 1, o.K, o.N)),
            make_tile_map<c_tile>(G(p.C, 1, 1, o.M, o.N)), o.K / 64};
  CK(cudaFuncSetAttribute(l5, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  const dim3 grid(o.N / 256, o.M / 128);
  return ladder::measure(p, "L5_wide", "1 producer + 2 consumer WGs, 128x256x64 tiles, m64n256k16, 3-stage ring, setmaxnreg 40/232, TMA-store epilogue, one block per tile",
                         [&] { l5<<<grid, 384, SMEM>>>(g); });
}
