// GEMM ladder level 1: warp-level tensor cores (mma.sync.m16n8k16).
//
// 128x128 block tile, K tile 32, 4 warps each owning 64x64 of C. Global -> shared with
// 16-byte vector loads into swizzled tiles, shared -> registers with ldmatrix (A in the
// row layout, B via ldmatrix.trans into the column layout), mma.sync with fp32
// accumulators, register epilogue. No pipelining.
#include "harness.cuh"

using namespace kittens;

using a_tile = st_bf<128, 32>;
using b_tile = st_bf<32, 128>;
using G = gl<bf16, 1, 1, -1, -1>;

__global__ __launch_bounds__(128) void l1(G A, G B, G C, int k_iters) {
  __shared__ a_tile a;
  __shared__ b_tile b;
  const int m = blockIdx.y, n = blockIdx.x, w = warpid();
  const int wm = w / 2, wn = w % 2;
  rt_fl<64, 64> acc;
  zero(acc);
  for (int k = 0; k < k_iters; ++k) {
    load<128>(a, A, {0, 0, m, k});
    load<128>(b, B, {0, 0, k, n});
    __syncthreads();
    rt_bf<64, 32> ra;
    rt_bf<32, 64, rt_layout::col> rb;
    load(ra, a.subtile<64, 32>(wm, 0));
    load(rb, b.subtile<32, 64>(0, wn));
    mma_AB(acc, ra, rb, acc);
    __syncthreads();
  }
  store(C, acc, coord{0, 0, 128 * m + 64 * wm, 128 * n + 64 * wn});
}

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L1", o, 128, 128, 32)) return 2;
  ladder::problem p(o);
  G A(p.A, 1, 1, o.M, o.K), B(p.B, 1, 1, o.K, o.N), C(p.C, 1, 1, o.M, o.N);
  const dim3 grid(o.N / 128, o.M / 128);
  return ladder::measure(p, "L1_mma_sync", "4 warps, 128x128x32 tiles, 64x64 per warp, ldmatrix + mma.sync.m16n8k16, no pipelining",
                         [&] { l1<<<grid, 128>>>(A, B, C, o.K / 32); });
}
