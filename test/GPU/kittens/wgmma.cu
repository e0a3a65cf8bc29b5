// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// wgmma from shared memory and from registers against a double-precision host product:
// A·B, A·Bᵀ, Aᵀ·B, Aᵀ·Bᵀ for several N (16..256), K spanning one or more swizzle chunks,
// and 128/64/32-byte swizzles (K-major and MN-major descriptors), bf16 and half. Each
// case first overwrites a NaN-poisoned accumulator (mm_*) and then accumulates once more
// (mma_*), so the result must be exactly 2·A·B: that checks scale-d both ways.
#include "harness.cuh"

using namespace kittens;

enum variant { AB, ABt, AtB, AtBt, RS_AB, RS_ABt };
static const char *vname[] = {"AB", "ABt", "AtB", "AtBt", "regA AB", "regA ABt"};

template <class T, int N, int K, int SA, int SB, variant V> struct cfg {
  static constexpr bool a_t = (V == AtB || V == AtBt);
  static constexpr bool b_t = (V == ABt || V == AtBt || V == RS_ABt);
  using A = std::conditional_t<a_t, st<T, K, 64, SA>, st<T, 64, K, SA>>; // stored A (Aᵀ when a_t)
  using B = std::conditional_t<b_t, st<T, N, K, SB>, st<T, K, N, SB>>;   // stored B (Bᵀ when b_t)
  using GA = gl<T, 1, 1, A::rows, A::cols>;
  using GB = gl<T, 1, 1, B::rows, B::cols>;
};

template <class T, int N, int K, int SA, int SB, variant V>
__global__ void kernel(typename cfg<T, N, K, SA, SB, V>::GA ga, typename cfg<T, N, K, SA, SB, V>::GB gb, gl<float, 1, 1, 64, N> out) {
  using C = cfg<T, N, K, SA, SB, V>;
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &a = al.allocate<typename C::A>();
  auto &b = al.allocate<typename C::B>();
  load<128>(a, ga, {});
  load<128>(b, gb, {});
  fence_async_shared(); // ordinary stores -> wgmma (async proxy) reads
  __syncthreads();
  rt_fl<16, N> d;
  map(d, d, [](float) { return __int_as_float(0x7fffffff); }); // NaN: mm_* must not read it
  if constexpr (V == AB) { warpgroup::mm_AB(d, a, b); warpgroup::mma_AB(d, a, b); }
  if constexpr (V == ABt) { warpgroup::mm_ABt(d, a, b); warpgroup::mma_ABt(d, a, b); }
  if constexpr (V == AtB) { warpgroup::mm_AtB(d, a, b); warpgroup::mma_AtB(d, a, b); }
  if constexpr (V == AtBt) { warpgroup::mm_AtBt(d, a, b); warpgroup::mma_AtBt(d, a, b); }
  if constexpr (V == RS_AB || V == RS_ABt) {
    rt<T, 16, K> ra;
    warpgroup::load(ra, a);
    if constexpr (V == RS_AB) { warpgroup::mm_AB(d, ra, b); warpgroup::mma_AB(d, ra, b); }
    else { warpgroup::mm_ABt(d, ra, b); warpgroup::mma_ABt(d, ra, b); }
  }
  warpgroup::mma_async_wait<0>();
  store(out, d, coord{0, 0, 16 * warpgroup::warpid(), 0});
}

template <class T, int N, int K, int SA, int SB, variant V> void run() {
  using C = cfg<T, N, K, SA, SB, V>;
  using harness::dbuf;
  auto ha = harness::randn<T>(64 * K), hb = harness::randn<T>(K * N); // logical A (64xK), B (KxN)
  std::vector<float> sa(64 * K), sb(K * N);
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < K; ++k) (C::a_t ? sa[k * 64 + m] : sa[m * K + k]) = ha[m * K + k];
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) (C::b_t ? sb[n * K + k] : sb[k * N + n]) = hb[k * N + n];
  dbuf<T> da(64 * K), db(K * N);
  dbuf<float> dout(64 * N);
  da.upload(sa); db.upload(sb); dout.poison();
  const int smem = shared_bytes_needed(sizeof(typename C::A) + sizeof(typename C::B) + 1024);
  auto k = kernel<T, N, K, SA, SB, V>;
  CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k<<<1, 128, smem>>>({da.p, 1, 1, C::A::rows, C::A::cols}, {db.p, 1, 1, C::B::rows, C::B::cols}, {dout.p, 1, 1, 64, N});
  CHECK_LAUNCH();
  std::vector<double> ref(64 * N);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int kk = 0; kk < K; ++kk) s += double(ha[m * K + kk]) * hb[kk * N + n];
      ref[m * N + n] = 2 * s;
    }
  char name[128];
  std::snprintf(name, sizeof name, "%s %s m64n%dk%d swizzle A %d B %d", std::is_same_v<T, bf16> ? "bf16" : "half", vname[V], N, K,
                SA, SB);
  harness::expect_close(name, dout.download(), ref, 2e-3, 1e-4);
}

int main() {
  // The GEMM shape: N = 256, K = 64, 128-byte swizzle, all four transposes + register A.
  run<bf16, 256, 64, 128, 128, AB>();
  run<bf16, 256, 64, 128, 128, ABt>();
  run<bf16, 256, 64, 128, 128, AtB>();
  run<bf16, 256, 64, 128, 128, AtBt>();
  run<bf16, 256, 64, 128, 128, RS_AB>();
  run<bf16, 128, 64, 128, 128, RS_ABt>();
  // K over two chunks (K-major chunk advance), N = 64.
  run<bf16, 64, 128, 128, 128, AB>();
  run<bf16, 64, 128, 128, 128, ABt>();
  run<bf16, 64, 128, 128, 128, AtBt>();
  // Narrower swizzles: 64 B and 32 B in both majors.
  run<bf16, 128, 64, 64, 64, AB>();
  run<bf16, 128, 64, 64, 64, AtBt>();
  run<bf16, 64, 32, 32, 32, AB>();
  run<bf16, 64, 32, 32, 32, AtB>();
  // Odd and small N.
  run<bf16, 80, 64, 128, 128, ABt>();
  run<bf16, 80, 64, 128, 32, AB>();
  run<bf16, 16, 64, 128, 128, ABt>();
  // half inputs.
  run<half, 128, 64, 128, 128, AB>();
  run<half, 64, 64, 128, 128, RS_ABt>();
  return harness::finish("wgmma");
}
