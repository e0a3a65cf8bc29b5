// GEMM ladder level 4: producer/consumer warp specialisation with register reallocation.
//
// One producer warpgroup issues TMA into a 4-stage full/empty mbarrier ring and drops to
// 40 registers; two consumer warpgroups (232 registers) each compute 64x128 with
// m64n128k16 wgmma on a 128x128 block tile, K tile 64. Epilogue straight from registers
// to global memory (no TMA store yet).
#include "harness.cuh"

using namespace kittens;

constexpr int STAGES = 4;
using a_tile = st_bf<128, 64>;
using b_tile = st_bf<64, 128>;
struct stage_t { a_tile a; b_tile b; };
struct globals {
  tile_map<a_tile> A;
  tile_map<b_tile> B;
  gl<bf16, 1, 1, -1, -1> C;
  int k_iters;
};
constexpr int SMEM = STAGES * sizeof(stage_t) + 1024;

__global__ __launch_bounds__(384, 1) void l4(const __grid_constant__ globals g) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &st = al.allocate<stage_t, STAGES>();
  __shared__ semaphore full[STAGES], empty[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      init_semaphore(full[s], 1);
      init_semaphore(empty[s], 8);
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
    rt_fl<16, 128> acc;
    for (int k = 0; k < g.k_iters; ++k) {
      const int s = k % STAGES;
      wait(full[s], (k / STAGES) & 1);
      warpgroup::mma_AB(acc, st[s].a.subtile<64, 64>(wg, 0), st[s].b, k > 0);
      warpgroup::mma_async_wait<0>();
      if (laneid() == 0) arrive(empty[s]);
    }
    store(g.C, acc, coord{0, 0, 128 * m + 64 * wg + 16 * warpgroup::warpid(), 128 * n});
  }
}

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L4", o, 128, 128, 64)) return 2;
  ladder::problem p(o);
  using G = gl<bf16, 1, 1, -1, -1>;
  globals g{make_tile_map<a_tile>(G(p.A, 1, 1, o.M, o.K)), make_tile_map<b_tile>(G(p.B, 1, 1, o.K, o.N)), G(p.C, 1, 1, o.M, o.N),
            o.K / 64};
  CK(cudaFuncSetAttribute(l4, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  const dim3 grid(o.N / 128, o.M / 128);
  return ladder::measure(p, "L4_warpspec", "1 producer + 2 consumer WGs, 128x128x64 tiles, m64n128k16, 4-stage ring, setmaxnreg 40/232, register epilogue",
                         [&] { l4<<<grid, 384, SMEM>>>(g); });
}
