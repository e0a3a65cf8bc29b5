// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// Warp-level mma.sync.m16n8k16: D = A·B and D = A·Bᵀ for bf16 and half inputs with f32
// accumulation, operands loaded with ldmatrix (B of A·B via ldmatrix.trans into the
// column layout), against a double-precision host product.
#include "harness.cuh"

using namespace kittens;
constexpr int M = 32, N = 48, K = 64;

template <class T> __global__ void kernel(gl<T, 1, 1, M, K> a, gl<T, 1, 1, K, N> b, gl<T, 1, 1, N, K> bt,
                                          gl<float, 1, 1, M, N> d_ab, gl<float, 1, 1, M, N> d_abt) {
  __shared__ st<T, M, K> sa;
  __shared__ st<T, K, N> sb;
  __shared__ st<T, N, K> sbt;
  load<32>(sa, a, {});
  load<32>(sb, b, {});
  load<32>(sbt, bt, {});
  __syncwarp();
  rt<T, M, K> ra;
  rt<T, K, N, rt_layout::col> rb;
  rt<T, N, K> rbt;
  load(ra, sa);
  load(rb, sb);
  load(rbt, sbt);
  rt_fl<M, N> acc, z;
  zero(z);
  mma_AB(acc, ra, rb, z);
  store(d_ab, acc, coord{});
  mma_ABt(acc, ra, rbt, z);
  mma_ABt(acc, ra, rbt, acc); // accumulate: 2 * A·Bᵀ
  store(d_abt, acc, coord{});
}

template <class T> void run(const char *name) {
  using harness::dbuf;
  auto ha = harness::randn<T>(M * K), hb = harness::randn<T>(K * N);
  std::vector<float> hbt(N * K);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) hbt[n * K + k] = hb[k * N + n];
  dbuf<T> da(M * K), db(K * N), dbt(N * K);
  dbuf<float> dab(M * N), dabt(M * N);
  da.upload(ha); db.upload(hb); dbt.upload(hbt);
  dab.poison(); dabt.poison();
  kernel<T><<<1, 32>>>({da.p, 1, 1, M, K}, {db.p, 1, 1, K, N}, {dbt.p, 1, 1, N, K}, {dab.p, 1, 1, M, N}, {dabt.p, 1, 1, M, N});
  CHECK_LAUNCH();
  std::vector<double> ref(M * N), ref2(M * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(ha[m * K + k]) * hb[k * N + n];
      ref[m * N + n] = s;
      ref2[m * N + n] = 2 * s;
    }
  std::string s1 = std::string(name) + " mma_AB", s2 = std::string(name) + " mma_ABt (accumulated twice)";
  harness::expect_close(s1.c_str(), dab.download(), ref, 1e-3, 1e-4);
  harness::expect_close(s2.c_str(), dabt.download(), ref2, 2e-3, 1e-4);
}

int main() {
  run<bf16>("bf16");
  run<half>("half");
  return harness::finish("mma_sync");
}
