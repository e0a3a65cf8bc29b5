// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// TMA through kittens' descriptors: swizzled multi-chunk tile loads (bf16 64x256 with
// rows past the end zero-filled, float 32x32), an unswizzled (plain) tile load, tile
// store (only the tile's elements change; the rest stays poisoned), store-add (float,
// exact), vector load and store, all completing on mbarriers with expect-tx (counting
// payload bytes, not the alignment padding of a 2560-byte tile), and a misaligned base
// rejected on the host with an explanation; a second phase arms the semaphore with
// expect_bytes_no_arrive and a separate arrive.
#include "harness.cuh"

using namespace kittens;
using gbf = gl<bf16, 1, 1, -1, -1>;
using gfl = gl<float, 1, 1, -1, -1>;

using T1 = st_bf<64, 256>;      // 128 B swizzle, 4 chunks
using T2 = st_fl<32, 32>;       // float, 128 B swizzle, 1 chunk
using T3 = st<bf16, 32, 40, 0>; // unswizzled
using V1 = sv_fl<128>;

struct params {
  tile_map<T1> m1;
  tile_map<T2> m2;
  tile_map<T3> m3;
  tile_map<T2> m2_store, m2_add;
  vector_map<V1> mv_in, mv_out;
  gbf o1, o1b, o3;
  gfl o2;
};

__global__ void kernel(const __grid_constant__ params p) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &t1 = al.allocate<T1>();
  auto &t2 = al.allocate<T2>();
  auto &t3 = al.allocate<T3>();
  auto &v1 = al.allocate<V1>();
  __shared__ semaphore bar;
  if (threadIdx.x == 0) {
    init_semaphore(bar, 1);
    fence_semaphore_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tma::prefetch(p.m1);
    expect(bar, t1, t2, t3, v1); // payload bytes: T3 is 2560 bytes although sizeof(T3) is 3072
    tma::load_async(t1, p.m1, {0, 0, 1, 1}, bar); // rows 64..127, cols 256..511 of a 100-row tensor
    tma::load_async(t2, p.m2, {0, 0, 1, 2}, bar);
    tma::load_async(t3, p.m3, {0, 0, 2, 1}, bar);
    tma::load_async(v1, p.mv_in, {0, 0, 3, 2}, bar);
  }
  wait(bar, 0);
  store<128>(p.o1, t1, {});
  __syncthreads(); // t1 fully read before it is refilled
  if (threadIdx.x == 0) { // second phase: expect-tx without arriving, then a plain arrive
    expect_bytes_no_arrive(bar, transfer_bytes<T1>());
    tma::load_async(t1, p.m1, {0, 0, 0, 0}, bar);
    arrive(bar);
  }
  wait(bar, 1);
  store<128>(p.o1b, t1, {});
  store<128>(p.o2, t2, {});
  store<128>(p.o3, t3, {});
  __syncthreads(); // all threads done reading t2 before the TMA store reads it (same proxy order: generic reads)
  if (threadIdx.x == 0) {
    tma::store_async(p.m2_store, t2, {0, 0, 2, 1});
    tma::store_add_async(p.m2_add, t2, {0, 0, 1, 0});
    tma::store_async(p.mv_out, v1, {0, 0, 5, 1});
    tma::store_commit_group();
    tma::store_async_wait<0>();
  }
}

static_assert(transfer_bytes<T3>() == 2560 && sizeof(T3) == 3072, "expect() must count payload, not alignment padding");
static_assert(transfer_bytes<T1>() == 32768 && transfer_bytes<V1>() == 512, "payload bytes");

int main() {
  using harness::dbuf;
  // A bad descriptor is an exception with the reason, before any driver call.
  try {
    // Never dereferenced: validation rejects the address before the driver sees it.
    (void)make_tile_map<T1>(gbf(reinterpret_cast<bf16 *>(uintptr_t(0x10002)), 1, 1, 64, 256));
    std::printf("FAIL misaligned base accepted\n");
    ++harness::failures;
  } catch (const tma_error &e) {
    const bool ok = std::strstr(e.what(), "is not 16-byte aligned") != nullptr;
    std::printf("%s descriptor validation: %s\n", ok ? "ok  " : "FAIL", e.what());
    harness::failures += !ok;
  }
  const int R1 = 100, C1 = 512;       // bf16 source of T1
  const int R2 = 96, C2 = 96;         // float source of T2
  const int R3 = 80, C3 = 120;        // bf16 source of T3 (plain map)
  const int RV = 8, CV = 512;         // float vectors
  auto h1 = harness::randn<bf16>(R1 * C1), h2 = harness::randn<float>(R2 * C2), h3 = harness::randn<bf16>(R3 * C3);
  auto hv = harness::randn<float>(RV * CV), hadd = harness::randn<float>(R2 * C2);
  dbuf<bf16> d1(R1 * C1), d3(R3 * C3), o1(64 * 256), o1b(64 * 256), o3(32 * 40);
  dbuf<float> d2(R2 * C2), dv(RV * CV), o2(32 * 32), ostore(R2 * C2), oadd(R2 * C2), ovec(RV * CV);
  d1.upload(h1); d2.upload(h2); d3.upload(h3); dv.upload(hv); oadd.upload(hadd);
  o1.poison(); o1b.poison(); o2.poison(); o3.poison(); ostore.poison(); ovec.poison();

  params p;
  p.m1 = make_tile_map<T1>(gbf(d1.p, 1, 1, R1, C1));
  p.m2 = make_tile_map<T2>(gfl(d2.p, 1, 1, R2, C2));
  p.m3 = make_tile_map<T3>(gbf(d3.p, 1, 1, R3, C3));
  p.m2_store = make_tile_map<T2>(gfl(ostore.p, 1, 1, R2, C2));
  p.m2_add = make_tile_map<T2>(gfl(oadd.p, 1, 1, R2, C2));
  p.mv_in = make_vector_map<V1>(gfl(dv.p, 1, 1, RV, CV));
  p.mv_out = make_vector_map<V1>(gfl(ovec.p, 1, 1, RV, CV));
  p.o1 = gbf(o1.p, 1, 1, 64, 256);
  p.o1b = gbf(o1b.p, 1, 1, 64, 256);
  p.o2 = gfl(o2.p, 1, 1, 32, 32);
  p.o3 = gbf(o3.p, 1, 1, 32, 40);
  const int smem = shared_bytes_needed(sizeof(T1) + sizeof(T2) + sizeof(T3) + sizeof(V1) + 3072);
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, 128, smem>>>(p);
  CHECK_LAUNCH();

  std::vector<double> r1b(64 * 256);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 256; ++c) r1b[r * 256 + c] = h1[r * C1 + c];
  std::vector<double> r1(64 * 256), r2(32 * 32), r3(32 * 40), rstore(R2 * C2, NAN), radd(R2 * C2), rvec(RV * CV, NAN);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 256; ++c) r1[r * 256 + c] = (64 + r < R1) ? h1[(64 + r) * C1 + 256 + c] : 0.0;
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c) r2[r * 32 + c] = h2[(32 + r) * C2 + 64 + c];
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 40; ++c) r3[r * 40 + c] = (64 + r < R3) ? h3[(64 + r) * C3 + 40 + c] : 0.0; // OOB rows: zero fill
  for (int i = 0; i < R2 * C2; ++i) radd[i] = hadd[i];
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c) {
      rstore[(64 + r) * C2 + 32 + c] = r2[r * 32 + c];
      radd[(32 + r) * C2 + c] = double(hadd[(32 + r) * C2 + c]) + r2[r * 32 + c];
    }
  for (int i = 0; i < 128; ++i) rvec[5 * CV + 128 + i] = hv[3 * CV + 256 + i];

  harness::expect_close("TMA load bf16 64x256 (4 chunks, OOB rows zero)", o1.download(), r1, 0, 0);
  harness::expect_close("TMA reload, expect_bytes_no_arrive + arrive, parity 1", o1b.download(), r1b, 0, 0);
  harness::expect_close("TMA load float 32x32 swizzled", o2.download(), r2, 0, 0);
  harness::expect_close("TMA load plain (unswizzled) bf16 32x40, OOB rows zero", o3.download(), r3, 0, 0);
  // NaN in the reference means "must still be poisoned".
  auto check_poison = [](const char *what, const std::vector<float> &got, const std::vector<double> &want) {
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      bool ok = std::isnan(want[i]) ? std::isnan(got[i]) : (got[i] == float(want[i]));
      if (!ok && bad++ < 5) std::printf("  %s[%zu]: got %g want %g\n", what, i, got[i], want[i]);
    }
    if (bad) { std::printf("FAIL %s: %zu wrong\n", what, bad); ++harness::failures; }
    else std::printf("ok   %s\n", what);
  };
  check_poison("TMA store writes exactly its tile", ostore.download(), rstore);
  harness::expect_close("TMA store-add float", oadd.download(), radd, 0, 1e-6);
  check_poison("TMA vector load + store", ovec.download(), rvec);
  return harness::finish("tma");
}
