// GEMM ladder level 2: wgmma from shared memory.
//
// Two warpgroups each compute 64x128 of a 128x128 block tile with m64n128k16 wgmma.
// Operands are copied global -> shared synchronously (16-byte vector loads into the
// swizzled layout), fenced for the async proxy, then consumed; no overlap of copy and
// math within a block; two blocks per SM overlap each other's copies. Register epilogue.
#include "harness.cuh"

using namespace kittens;

using a_tile = st_bf<128, 64>;
using b_tile = st_bf<64, 128>;
using G = gl<bf16, 1, 1, -1, -1>;
constexpr int SMEM = sizeof(a_tile) + sizeof(b_tile) + 1024;

__global__ __launch_bounds__(256, 2) void l2(G A, G B, G C, int k_iters) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &a = al.allocate<a_tile>();
  auto &b = al.allocate<b_tile>();
  const int m = blockIdx.y, n = blockIdx.x, wg = warpgroupid();
  rt_fl<16, 128> acc;
  for (int k = 0; k < k_iters; ++k) {
    load<256>(a, A, {0, 0, m, k});
    load<256>(b, B, {0, 0, k, n});
    fence_async_shared();
    __syncthreads();
    warpgroup::mma_AB(acc, a.subtile<64, 64>(wg, 0), b, k > 0);
    warpgroup::mma_async_wait<0>();
    __syncthreads();
  }
  store(C, acc, coord{0, 0, 128 * m + 64 * wg + 16 * warpgroup::warpid(), 128 * n});
}

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L2", o, 128, 128, 64)) return 2;
  ladder::problem p(o);
  G A(p.A, 1, 1, o.M, o.K), B(p.B, 1, 1, o.K, o.N), C(p.C, 1, 1, o.M, o.N);
  CK(cudaFuncSetAttribute(l2, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  const dim3 grid(o.N / 128, o.M / 128);
  return ladder::measure(p, "L2_wgmma", "2 WGs, 128x128x64 tiles, m64n128k16 from shared memory, synchronous 16-byte loads, 2 blocks/SM, register epilogue",
                         [&] { l2<<<grid, 256, SMEM>>>(A, B, C, o.K / 64); });
}
