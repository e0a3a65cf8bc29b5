// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// Shared/register tile primitives against host references: vectorised global->shared
// loads with zero fill (aligned and unaligned rows), shared->global stores with bounds,
// ldmatrix into row and column layouts (checked through the documented fragment map),
// stmatrix (row and transposed), maps, row/column broadcasts, row/column reductions in
// both layouts, dtype conversion, causal and bounds masks, rv <-> sv moves, and the
// lambda forms' per-lane shares of a row sum and writes into a bf16 tile.
#include "harness.cuh"

using namespace kittens;
using gbf = gl<bf16, 1, 1, -1, -1>;
using gfl = gl<float, 1, 1, -1, -1>;

struct outputs {
  gfl rt_row, rt_col, rowmax, colsum, bcast, causal, bounds, rowsum_c, colmax_c, exp2v, naive;
  gbf st_row, st_col, ragged_full, ragged_exact;
};

__global__ void kernel(gbf x, gbf x2, outputs o) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &s = al.allocate<st_bf<64, 64>>();
  auto &s2 = al.allocate<st_bf<64, 64>>();
  auto &s3 = al.allocate<st_bf<64, 64>>();
  auto &s4 = al.allocate<st_bf<64, 64>>();
  auto &v1 = al.allocate<sv_fl<64>>();
  auto &v2 = al.allocate<sv_fl<64>>();
  auto &v3 = al.allocate<sv_fl<64>>();
  auto &v4 = al.allocate<sv_fl<64>>();
  auto &v5 = al.allocate<sv_fl<64>>();
  load<128>(s, x, {0, 0, 0, 0});
  load<128>(s4, x2, {0, 0, 0, 0});
  __syncthreads();
  if (warpid() == 0) {
    rt_bf<64, 64> a;
    load(a, s);
    store(o.rt_row, a, coord{});
    rt_bf<64, 64, rt_layout::col> b;
    load(b, s);
    store(o.rt_col, b, coord{});
    store(s2, a);
    store(s3, b);

    rt_fl<64, 64> f, h, m;
    copy(f, a);
    rt_fl<64, 64>::col_vec rmax;
    rt_fl<64, 64>::row_vec csum;
    row_max(rmax, f);
    col_sum(csum, f);
    sub_row(h, f, rmax);
    mul(h, h, 2.f);
    add_col(h, h, csum);
    store(o.bcast, h, coord{});
    make_causal(m, f, 0, 0, -1000.f);
    store(o.causal, m, coord{});
    bounds_mask(m, f, 0, 0, 37, 50, 7.f);
    store(o.bounds, m, coord{});
    exp2(m, f);
    store(o.exp2v, m, coord{});

    rt_fl<64, 64, rt_layout::col> fc;
    copy(fc, b);
    rt_fl<64, 64, rt_layout::col>::col_vec rsum; // align layout
    rt_fl<64, 64, rt_layout::col>::row_vec cmax; // ortho layout
    row_sum(rsum, fc);
    col_max(cmax, fc);
    store(v1, rmax);
    store(v2, csum);
    store(v3, rsum);
    store(v4, cmax);
    // naive vector round trip: load v1 as naive, add 1, store.
    rv_fl<64> nv;
    __syncwarp();
    load(nv, v1);
    rv_fl<64> one_v;
    fill(one_v, 1.f);
    map(nv, nv, one_v, base_ops::add{});
    store(v5, nv);
    __syncwarp();
    for (int i = laneid(); i < 64; i += 32) {
      o.rowmax[{0, 0, 0, i}] = v1[i];
      o.colsum[{0, 0, 0, i}] = v2[i];
      o.rowsum_c[{0, 0, 0, i}] = v3[i];
      o.colmax_c[{0, 0, 0, i}] = v4[i];
      o.naive[{0, 0, 0, i}] = v5[i];
    }
  }
  __syncthreads();
  store<128>(o.st_row, s2, {0, 0, 0, 0});
  store<128>(o.st_col, s3, {0, 0, 0, 0});
  store<128>(o.ragged_full, s4, {0, 0, 0, 0});
  store<128>(o.ragged_exact, s4, {0, 0, 0, 0});
}

// Float and half paths: st_fl <-> rt_fl (8-byte shared accesses in the row layout, 4-byte in
// the column layout; into a 64-byte-swizzled tile, each half-warp's blocks in its own order),
// rt <-> gl with bounds, half ldmatrix/stmatrix, vector dtype conversion.
struct outputs2 {
  gfl f_row, f_col, g_load, f_row64;
  gl<half, 1, 1, -1, -1> h_rt;
  gbf v_conv;
};
__global__ void kernel2(gfl xf, gl<half, 1, 1, -1, -1> xh, outputs2 o) {
  __shared__ st_fl<32, 32> sf, sf2, sf3;
  __shared__ st_fl<32, 32, 64> sf4;
  __shared__ st_hf<32, 64> sh;
  __shared__ sv_bf<32> sv;
  load<32>(sf, xf, {});
  load<32>(sh, xh, {});
  __syncwarp();
  rt_fl<32, 32> a;
  rt_fl<32, 32, rt_layout::col> b;
  load(a, sf);
  load(b, sf);
  store(sf2, a);
  store(sf3, b);
  store(sf4, a);
  rt_fl<32, 32> g;
  load(g, xf, coord{0, 0, 0, 0}); // register <- global with bounds (xf is 30 x 27)
  store(o.g_load, g, coord{});
  rt_hf<32, 64> h;
  load(h, sh);
  mul(h, h, 2.f);
  store(sh, h);
  rt_fl<32, 32>::col_vec rs;
  row_sum(rs, a);
  rv<bf16, 32, rv_layout::ortho> rsb;
  copy(rsb, rs);
  store(sv, rsb);
  __syncwarp();
  store<32>(o.f_row, sf2, {});
  store<32>(o.f_col, sf3, {});
  store<32>(o.f_row64, sf4, {});
  store<32>(o.h_rt, sh, {});
  for (int i = laneid(); i < 32; i += 32) o.v_conv[{0, 0, 0, i}] = sv[i];
}

static void run2() {
  using harness::dbuf;
  const int R = 30, C = 27; // ragged: zero fill on load, bounds on register loads
  auto hf = harness::randn<float>(R * C), hh = harness::randn<half>(32 * 64);
  dbuf<float> df(R * C), f_row(32 * 32), f_col(32 * 32), g_load(32 * 32), f_row64(32 * 32);
  dbuf<half> dh(32 * 64), h_rt(32 * 64);
  dbuf<bf16> v_conv(32);
  df.upload(hf); dh.upload(hh);
  for (auto *b : {&f_row, &f_col, &g_load, &f_row64}) b->poison();
  h_rt.poison(); v_conv.poison();
  using gh = gl<half, 1, 1, -1, -1>;
  outputs2 o{gfl(f_row.p, 1, 1, 32, 32), gfl(f_col.p, 1, 1, 32, 32), gfl(g_load.p, 1, 1, 32, 32),
             gfl(f_row64.p, 1, 1, 32, 32), gh(h_rt.p, 1, 1, 32, 64), gbf(v_conv.p, 1, 1, 1, 32)};
  kernel2<<<1, 32>>>(gfl(df.p, 1, 1, R, C), gh(dh.p, 1, 1, 32, 64), o);
  CHECK_LAUNCH();
  std::vector<double> P(32 * 32, 0.0), H(32 * 64), rs(32, 0.0);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) P[r * 32 + c] = hf[r * C + c];
  for (int i = 0; i < 32 * 64; ++i) H[i] = 2.0 * hh[i];
  for (int r = 0; r < 32; ++r) {
    for (int c = 0; c < 32; ++c) rs[r] += P[r * 32 + c];
    rs[r] = kittens::convert<float>(kittens::convert<bf16>(float(rs[r])));
  }
  harness::expect_close("float st <-> rt, row layout (zero-filled 30x27 source)", f_row.download(), P, 0, 0);
  harness::expect_close("float st <-> rt, col layout", f_col.download(), P, 0, 0);
  harness::expect_close("float rt -> st, row layout, 64-byte swizzle", f_row64.download(), P, 0, 0);
  harness::expect_close("rt <- gl with bounds (zero past the end)", g_load.download(), P, 0, 0);
  harness::expect_close("half ldmatrix / mul / stmatrix", h_rt.download(), H, 0, 0);
  harness::expect_close("row_sum then float -> bf16 vector copy", v_conv.download(), rs, 0, 1e-2);
}

// warp_any_differs: the same answer in every lane, true when any lane holds an element other
// than the value (a NaN included). Case c: 0 all ones, 1 one lane's second row 2, 2 one NaN.
__global__ void kernel3(gfl out) {
  rt_fl<16, 16>::col_vec v;
  fill(v, 1.f);
  const int c = blockIdx.x;
  if (c == 1 && laneid() == 13) v.data[0].y = 2.f;
  if (c == 2 && laneid() == 30) v.data[0].x = __int_as_float(0x7fc00000);
  out[{0, 0, c, laneid()}] = warp_any_differs(v, 1.f) ? 1.f : 0.f;
}

static void run3() {
  harness::dbuf<float> out(3 * 32);
  out.poison();
  kernel3<<<3, 32>>>(gfl(out.p, 1, 1, 3, 32));
  CHECK_LAUNCH();
  std::vector<double> want(3 * 32);
  for (int i = 0; i < 3 * 32; ++i) want[i] = i < 32 ? 0.0 : 1.0;
  harness::expect_close("warp_any_differs: uniform over the warp, NaN differs", out.download(), want, 0, 0);
}

// An element's position in two parts: lane_row + const_row is row and lane_col + const_col is
// col, for apply over a tile (out rows 0-15: row, 16-31: col, as written by each element) and
// over a row vector (out row 32: the vector's rows). Compared with row and col themselves,
// which the other tests check.
__global__ void kernel5(gfl out) {
  rt_fl<32, 32> t;
  apply(t, [&](const element &e) {
    const float row = e.lane_row + static_cast<float>(e.const_row);
    const float col = e.lane_col + static_cast<float>(e.const_col);
    return (row == static_cast<float>(e.row) && col == static_cast<float>(e.col))
               ? row * 32.f + col
               : -1.f;
  });
  store(out, t, coord{});
  rt_fl<32, 16>::col_vec v;
  apply(v, [&](const vector_element &e) {
    const float row = e.lane_row + static_cast<float>(e.const_row);
    return row == static_cast<float>(e.row) ? row : -1.f;
  });
  store_rows(&out[{0, 0, 32, 0}], v, 0, 32);
}

static void run5() {
  harness::dbuf<float> out(33 * 32);
  out.poison();
  kernel5<<<1, 32>>>(gfl(out.p, 1, 1, 33, 32));
  CHECK_LAUNCH();
  std::vector<double> want(33 * 32);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c) want[r * 32 + c] = r * 32 + c;
  for (int r = 0; r < 32; ++r) want[32 * 32 + r] = r;
  harness::expect_close("element positions: lane part + constant part", out.download(), want, 0, 0);
}

// row_reduce_elements_partial leaves each lane the sum of its own columns (lane % 4 == q
// holds columns 2q, 2q+1, 8+2q, 9+2q of every 16); a share scaled by a per-row factor and
// added to another share is still a share; complete_row_reduce makes the rows' sums.
// set() into a bf16 tile converts. out rows: 0 lane 4g's share of row g (g = 0..7, full
// columns), 1 completed (full) * r + (columns < 37), 2..17 the bf16 tile 3x.
__global__ void kernel4(gfl x, gfl out, gbf tb) {
  rt_fl<16, 64> t;
  load(t, x, coord{0, 0, 0, 0});
  rt_fl<16, 64>::col_vec share, limited, r;
  row_reduce_elements_partial<rt_fl<16, 64>>(share, base_ops::add{}, 0.f,
                                            [&](const element &e) { return at(t, e); });
  if (laneid() % 4 == 0) out[{0, 0, 0, laneid() / 4}] = pair_to_float2(share.data[0]).x;
  row_reduce_elements_partial<rt_fl<16, 64>>(limited, base_ops::add{}, 0.f,
                                            [&](const element &e) { return at(t, e); }, 37);
  apply(r, [&](const vector_element &e) { return e.row % 2 ? 2.f : 0.5f; });
  apply(share, [&](const vector_element &e) { return at(share, e) * at(r, e) + at(limited, e); });
  complete_row_reduce(share, base_ops::add{});
  store_rows(&out[{0, 0, 1, 0}], share, 0, 16);
  rt_bf<16, 64> b;
  row_reduce_elements<rt_fl<16, 64>>(limited, base_ops::max{}, -INFINITY, [&](const element &e) {
    set(b, e, 3.f * at(t, e));
    return at(t, e);
  });
  store(tb, b, coord{});
}

static void run4() {
  auto hx = harness::randn<float>(16 * 64);
  harness::dbuf<float> dx(16 * 64), out(2 * 64);
  harness::dbuf<bf16> tb(16 * 64);
  dx.upload(hx);
  out.poison();
  tb.poison();
  kernel4<<<1, 32>>>(gfl(dx.p, 1, 1, 16, 64), gfl(out.p, 1, 1, 2, 64), gbf(tb.p, 1, 1, 16, 64));
  CHECK_LAUNCH();
  std::vector<float> got = out.download();
  std::vector<double> lane0(8, 0.0), want(16, 0.0), b(16 * 64);
  std::vector<float> got0(got.begin(), got.begin() + 8), got1(got.begin() + 64, got.begin() + 80);
  for (int g = 0; g < 8; ++g)
    for (int c = 0; c < 64; ++c)
      if (c % 8 < 2) lane0[g] += hx[g * 64 + c];
  for (int r = 0; r < 16; ++r) {
    double full = 0, lim = 0;
    for (int c = 0; c < 64; ++c) {
      full += hx[r * 64 + c];
      if (c < 37) lim += hx[r * 64 + c];
    }
    want[r] = full * (r % 2 ? 2.0 : 0.5) + lim;
  }
  for (int i = 0; i < 16 * 64; ++i) b[i] = kittens::convert<float>(kittens::convert<bf16>(3.f * hx[i]));
  harness::expect_close("row_reduce_elements_partial: lane 4g holds its columns' share", got0, lane0, 1e-5, 1e-5);
  harness::expect_close("shares scaled per row and added, then complete_row_reduce", got1, want, 1e-4, 1e-5);
  harness::expect_close("set() into a bf16 tile converts", tb.download(), b, 0, 0);
}

int main() {
  using harness::dbuf;
  run2();
  run3();
  run4();
  run5();
  const int R1 = 40, C1 = 56, R2 = 45, C2 = 50; // C2 * 2 bytes is not a multiple of 16
  auto hx = harness::randn<bf16>(R1 * C1), hx2 = harness::randn<bf16>(R2 * C2);
  dbuf<bf16> dx(R1 * C1), dx2(R2 * C2);
  dx.upload(hx);
  dx2.upload(hx2);
  std::vector<double> P(64 * 64, 0.0), P2(64 * 64, 0.0);
  for (int r = 0; r < R1; ++r)
    for (int c = 0; c < C1; ++c) P[r * 64 + c] = hx[r * C1 + c];
  for (int r = 0; r < R2; ++r)
    for (int c = 0; c < C2; ++c) P2[r * 64 + c] = hx2[r * C2 + c];

  dbuf<float> rt_row(4096), rt_col(4096), rowmax(64), colsum(64), bcast(4096), causal(4096), bounds(4096), rowsum_c(64),
      colmax_c(64), exp2v(4096), naive(64);
  dbuf<bf16> st_row(4096), st_col(4096), ragged_full(4096), ragged_exact(R2 * C2);
  for (auto *b : {&rt_row, &rt_col, &rowmax, &colsum, &bcast, &causal, &bounds, &rowsum_c, &colmax_c, &exp2v, &naive}) b->poison();
  for (auto *b : {&st_row, &st_col, &ragged_full, &ragged_exact}) b->poison();
  auto G = [](float *p, int r, int c) { return gfl(p, 1, 1, r, c); };
  auto B = [](bf16 *p, int r, int c) { return gbf(p, 1, 1, r, c); };
  outputs o{G(rt_row.p, 64, 64), G(rt_col.p, 64, 64), G(rowmax.p, 1, 64), G(colsum.p, 1, 64), G(bcast.p, 64, 64),
            G(causal.p, 64, 64), G(bounds.p, 64, 64), G(rowsum_c.p, 1, 64), G(colmax_c.p, 1, 64), G(exp2v.p, 64, 64),
            G(naive.p, 1, 64), B(st_row.p, 64, 64), B(st_col.p, 64, 64), B(ragged_full.p, 64, 64), B(ragged_exact.p, R2, C2)};
  const int smem = shared_bytes_needed(4 * 8192 + 5 * 256);
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, 128, smem>>>(B(dx.p, R1, C1), B(dx2.p, R2, C2), o);
  CHECK_LAUNCH();

  std::vector<double> rmax(64, -INFINITY), csum(64, 0), rsum(64, 0), cmax(64, -INFINITY), bc(4096), ca(4096), bo(4096), e2(4096),
      nv(64), ex(R2 * C2);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      double v = P[r * 64 + c];
      rmax[r] = std::max(rmax[r], v);
      cmax[c] = std::max(cmax[c], v);
      csum[c] += v;
      rsum[r] += v;
    }
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      double v = P[r * 64 + c];
      bc[r * 64 + c] = (v - rmax[r]) * 2 + csum[c];
      ca[r * 64 + c] = c <= r ? v : -1000.0;
      bo[r * 64 + c] = (r < 37 && c < 50) ? v : 7.0;
      e2[r * 64 + c] = std::exp2(v);
    }
  for (int i = 0; i < 64; ++i) nv[i] = rmax[i] + 1;
  for (int i = 0; i < R2 * C2; ++i) ex[i] = hx2[i];

  harness::expect_close("ldmatrix row layout (fragment map)", rt_row.download(), P, 0, 0);
  harness::expect_close("ldmatrix.trans col layout (fragment map)", rt_col.download(), P, 0, 0);
  harness::expect_close("stmatrix row layout", st_row.download(), P, 0, 0);
  harness::expect_close("stmatrix.trans col layout", st_col.download(), P, 0, 0);
  harness::expect_close("zero-filled load, unaligned rows", ragged_full.download(), P2, 0, 0);
  harness::expect_close("bounded store", ragged_exact.download(), ex, 0, 0);
  harness::expect_close("row_max (row layout -> ortho)", rowmax.download(), rmax, 0, 0);
  harness::expect_close("col_sum (row layout -> align)", colsum.download(), csum, 1e-4, 1e-5);
  harness::expect_close("row_sum (col layout -> align)", rowsum_c.download(), rsum, 1e-4, 1e-5);
  harness::expect_close("col_max (col layout -> ortho)", colmax_c.download(), cmax, 0, 0);
  harness::expect_close("sub_row / mul / add_col broadcasts", bcast.download(), bc, 1e-4, 1e-5);
  harness::expect_close("make_causal", causal.download(), ca, 0, 0);
  harness::expect_close("bounds_mask", bounds.download(), bo, 0, 0);
  harness::expect_close("exp2 map", exp2v.download(), e2, 0, 2e-6);
  harness::expect_close("naive rv load/map/store", naive.download(), nv, 0, 1e-7);
  return harness::finish("register_ops");
}
