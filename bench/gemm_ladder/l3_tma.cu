// GEMM ladder level 3: TMA double buffering.
//
// Two warpgroups each compute 64x128 of a 128x128 block tile with m64n128k16 wgmma.
// Thread 0 issues the TMA loads of K tile k+1 into the other buffer (one mbarrier per
// buffer, armed with expect-tx) while everyone computes on tile k; a block barrier after
// each tile's wgmmas protects the buffer before it is refilled. Register epilogue.
#include "harness.cuh"

using namespace kittens;

using a_tile = st_bf<128, 64>;
using b_tile = st_bf<64, 128>;
struct stage_t { a_tile a; b_tile b; };
struct globals {
  tile_map<a_tile> A;
  tile_map<b_tile> B;
  gl<bf16, 1, 1, -1, -1> C;
  int k_iters;
};
constexpr int SMEM = 2 * sizeof(stage_t) + 1024;

__global__ __launch_bounds__(256, 1) void l3(const __grid_constant__ globals g) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &st = al.allocate<stage_t, 2>();
  __shared__ semaphore bar[2];
  const int m = blockIdx.y, n = blockIdx.x, wg = warpgroupid();
  if (threadIdx.x == 0) {
    init_semaphore(bar[0], 1);
    init_semaphore(bar[1], 1);
    fence_semaphore_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    expect(bar[0], st[0]);
    tma::load_async(st[0].a, g.A, {0, 0, m, 0}, bar[0]);
    tma::load_async(st[0].b, g.B, {0, 0, 0, n}, bar[0]);
  }
  rt_fl<16, 128> acc;
  for (int k = 0; k < g.k_iters; ++k) {
    const int s = k & 1;
    if (threadIdx.x == 0 && k + 1 < g.k_iters) {
      expect(bar[s ^ 1], st[s ^ 1]);
      tma::load_async(st[s ^ 1].a, g.A, {0, 0, m, k + 1}, bar[s ^ 1]);
      tma::load_async(st[s ^ 1].b, g.B, {0, 0, k + 1, n}, bar[s ^ 1]);
    }
    wait(bar[s], (k >> 1) & 1);
    warpgroup::mma_AB(acc, st[s].a.subtile<64, 64>(wg, 0), st[s].b, k > 0);
    warpgroup::mma_async_wait<0>();
    __syncthreads();
  }
  store(g.C, acc, coord{0, 0, 128 * m + 64 * wg + 16 * warpgroup::warpid(), 128 * n});
}

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L3", o, 128, 128, 64)) return 2;
  ladder::problem p(o);
  using G = gl<bf16, 1, 1, -1, -1>;
  globals g{make_tile_map<a_tile>(G(p.A, 1, 1, o.M, o.K)), make_tile_map<b_tile>(G(p.B, 1, 1, o.K, o.N)), G(p.C, 1, 1, o.M, o.N),
            o.K / 64};
  CK(cudaFuncSetAttribute(l3, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  const dim3 grid(o.N / 128, o.M / 128);
  return ladder::measure(p, "L3_tma", "2 WGs, 128x128x64 tiles, m64n128k16, TMA double buffer (1 mbarrier per buffer), register epilogue",
                         [&] { l3<<<grid, 256, SMEM>>>(g); });
}
