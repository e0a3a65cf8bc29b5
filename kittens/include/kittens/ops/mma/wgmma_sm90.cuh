/**
 * @file
 * @brief Warpgroup MMA (wgmma, sm_90a): descriptors, fence/commit/wait, A·B in four transposes.
 *
 * Warpgroup scope: all 128 threads call together. The accumulator is each warp's
 * `rt<float, 16, N>`; warp w holds rows 16w..16w+15 of the 64 x N result.
 *
 *   call          A (shared)         B (shared)        computes
 *   mma_AB        st<64, K>          st<K, N>          D += A  · B
 *   mma_ABt       st<64, K>          st<N, K>          D += A  · Bᵀ
 *   mma_AtB       st<K, 64>          st<K, N>          D += Aᵀ · B
 *   mma_AtBt      st<K, 64>          st<N, K>          D += Aᵀ · Bᵀ
 *   mma_AB/ABt    rt<16, K> per warp (registers, row layout) with B as above
 *
 * `mm_*` forms overwrite D instead of accumulating. Each call fences the accumulators,
 * issues K/16 wgmmas and commits one group; call `mma_async_wait<n>()` before reading D
 * or letting the shared operands be overwritten. Operands must be swizzled tiles (or
 * views whose row offset is a multiple of 8 and column offset a multiple of the chunk).
 */
#pragma once

#include "../../types/shared/st.cuh"
#include "../../types/shared/wgmma_descriptor.cuh"
#include "wgmma_table_sm90.cuh"

namespace kittens::warpgroup {

/// Descriptor of the first k16 step of shared operand `s` stored `m`-major.
template <ducks::st::all ST> KITTENS_DEVICE uint64_t descriptor(const ST &s, wgmma_desc::major m) {
  static_assert(ST::swizzle_bytes != 0, "kittens::warpgroup: wgmma operands must be swizzled shared tiles (32/64/128 B)");
  static_assert(half_width_type<typename ST::dtype> || fp8_type<typename ST::dtype>,
                "kittens::warpgroup: wgmma shared operands must be bf16, half or an fp8 type");
  const uint32_t base = smem_addr(s.base()) +
                        layout::linear_offset(s.row0(), s.col0(), ST::parent_rows, ST::parent_cols,
                                              (int)sizeof(typename ST::dtype), ST::swizzle_bytes);
  const auto f = wgmma_desc::step_fields(m, 0, ST::swizzle_bytes, ST::chunk_stride_bytes);
  return wgmma_desc::encode(base + f.offset, f.lbo, f.sbo, ST::swizzle_bytes);
}
/// Descriptor of k16 step `k`, from the first step's: only the start address moves, by a
/// constant, so a product builds one descriptor per operand and adds to it.
template <ducks::st::all ST> KITTENS_DEVICE uint64_t step(uint64_t first, wgmma_desc::major m, int k) {
  return wgmma_desc::advance(first, wgmma_desc::step_fields(m, k, ST::swizzle_bytes, ST::chunk_stride_bytes).offset);
}

/// Make the accumulator registers and prior shared writes visible to the next wgmma.
template <ducks::rt::all D> KITTENS_DEVICE void mma_fence(D &d) {
  KITTENS_UNROLL for (int i = 0; i < D::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < D::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k)
        asm volatile("" : "+f"(d.tiles[i][j].data[k].x), "+f"(d.tiles[i][j].data[k].y)::"memory");
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
/// Close the group of wgmmas issued so far.
KITTENS_DEVICE void mma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Wait until at most N committed wgmma groups are still pending.
template <int N = 0> KITTENS_DEVICE void mma_async_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

namespace detail {
template <class D> constexpr void check_acc() {
  static_assert(std::is_same_v<typename D::dtype, float> && D::layout::is_row && D::rows == 16,
                "kittens::warpgroup::mma: the accumulator must be each warp's rt<float, 16, N> in row layout");
  static_assert(D::cols % 16 == 0 && D::cols >= 16 && D::cols <= 256, "kittens::warpgroup::mma: N must be 16..256 in steps of 16");
}
/// Shared A, shared B. TA/TB: 1 if the operand is MN-major.
template <int TA, int TB, class D, class A, class B>
KITTENS_DEVICE void mma_ss(D &d, const A &a, const B &b, int K, bool accumulate) {
  check_acc<D>();
  using T = typename A::dtype;
  static_assert(std::is_same_v<T, typename B::dtype>, "kittens::warpgroup::mma: A and B dtypes differ");
  static_assert(!fp8_type<T> || (TA == 0 && TB == 0),
                "kittens::warpgroup::mma: fp8 operands must both be K-major (mma_ABt)");
  constexpr auto ma = TA ? wgmma_desc::major::mn : wgmma_desc::major::k;
  constexpr auto mb = TB ? wgmma_desc::major::mn : wgmma_desc::major::k;
  const uint64_t da = descriptor(a, ma), db = descriptor(b, mb);
  mma_fence(d);
  // One wgmma takes 32 bytes of K: 16 elements of 16 bits, 32 of 8.
  constexpr int KSTEP = 32 / (int)sizeof(T);
  KITTENS_UNROLL for (int k = 0; k < K / KSTEP; ++k) {
    kittens::detail::wgmma::op<T, D::cols>::template ss<TA, TB>(d.tiles[0], step<A>(da, ma, k), step<B>(db, mb, k),
                                                                 (accumulate || k > 0) ? 1 : 0);
  }
  mma_commit_group();
}
/// Register A, shared B.
template <int TB, class D, class A, class B> KITTENS_DEVICE void mma_rs(D &d, const A &a, const B &b, bool accumulate) {
  check_acc<D>();
  using T = typename A::dtype;
  static_assert(std::is_same_v<T, typename B::dtype>, "kittens::warpgroup::mma: A and B dtypes differ");
  static_assert(A::rows == 16 && A::layout::is_row, "kittens::warpgroup::mma: register A must be each warp's rt<T, 16, K> in row layout");
  constexpr auto mb = TB ? wgmma_desc::major::mn : wgmma_desc::major::k;
  const uint64_t db = descriptor(b, mb);
  mma_fence(d);
  KITTENS_UNROLL for (int k = 0; k < A::cols / 16; ++k) {
    kittens::detail::wgmma::op<T, D::cols>::template rs<TB>(d.tiles[0], a.tiles[0][k], step<B>(db, mb, k),
                                                            (accumulate || k > 0) ? 1 : 0);
  }
  mma_commit_group();
}
} // namespace detail

/// D (+)= A · B with A: st<64, K>, B: st<K, N>.
template <ducks::rt::all D, ducks::st::all A, ducks::st::all B>
KITTENS_DEVICE void mma_AB(D &d, const A &a, const B &b, bool accumulate = true) {
  static_assert(A::rows == 64 && A::cols == B::rows && B::cols == D::cols,
                "kittens::warpgroup::mma_AB: shapes must be A 64xK, B KxN, D 16xN per warp");
  detail::mma_ss<0, 1>(d, a, b, A::cols, accumulate);
}
/// D (+)= A · Bᵀ with A: st<64, K>, B: st<N, K>.
template <ducks::rt::all D, ducks::st::all A, ducks::st::all B>
KITTENS_DEVICE void mma_ABt(D &d, const A &a, const B &b, bool accumulate = true) {
  static_assert(A::rows == 64 && A::cols == B::cols && B::rows == D::cols,
                "kittens::warpgroup::mma_ABt: shapes must be A 64xK, B NxK, D 16xN per warp");
  detail::mma_ss<0, 0>(d, a, b, A::cols, accumulate);
}
/// D (+)= Aᵀ · B with A: st<K, 64>, B: st<K, N>.
template <ducks::rt::all D, ducks::st::all A, ducks::st::all B>
KITTENS_DEVICE void mma_AtB(D &d, const A &a, const B &b, bool accumulate = true) {
  static_assert(A::cols == 64 && A::rows == B::rows && B::cols == D::cols,
                "kittens::warpgroup::mma_AtB: shapes must be A Kx64, B KxN, D 16xN per warp");
  detail::mma_ss<1, 1>(d, a, b, A::rows, accumulate);
}
/// D (+)= Aᵀ · Bᵀ with A: st<K, 64>, B: st<N, K>.
template <ducks::rt::all D, ducks::st::all A, ducks::st::all B>
KITTENS_DEVICE void mma_AtBt(D &d, const A &a, const B &b, bool accumulate = true) {
  static_assert(A::cols == 64 && A::rows == B::cols && B::rows == D::cols,
                "kittens::warpgroup::mma_AtBt: shapes must be A Kx64, B NxK, D 16xN per warp");
  detail::mma_ss<1, 0>(d, a, b, A::rows, accumulate);
}
/// D (+)= A · B with A in registers (each warp's rt<T, 16, K>), B: st<K, N>.
template <ducks::rt::all D, ducks::rt::all A, ducks::st::all B>
KITTENS_DEVICE void mma_AB(D &d, const A &a, const B &b, bool accumulate = true) {
  static_assert(A::cols == B::rows && B::cols == D::cols, "kittens::warpgroup::mma_AB: shapes must be A 16xK per warp, B KxN");
  detail::mma_rs<1>(d, a, b, accumulate);
}
/// D (+)= A · Bᵀ with A in registers, B: st<N, K>.
template <ducks::rt::all D, ducks::rt::all A, ducks::st::all B>
KITTENS_DEVICE void mma_ABt(D &d, const A &a, const B &b, bool accumulate = true) {
  static_assert(A::cols == B::cols && B::rows == D::cols, "kittens::warpgroup::mma_ABt: shapes must be A 16xK per warp, B NxK");
  detail::mma_rs<0>(d, a, b, accumulate);
}

template <class D, class A, class B> KITTENS_DEVICE void mm_AB(D &d, const A &a, const B &b) { mma_AB(d, a, b, false); }
template <class D, class A, class B> KITTENS_DEVICE void mm_ABt(D &d, const A &a, const B &b) { mma_ABt(d, a, b, false); }
template <class D, class A, class B> KITTENS_DEVICE void mm_AtB(D &d, const A &a, const B &b) { mma_AtB(d, a, b, false); }
template <class D, class A, class B> KITTENS_DEVICE void mm_AtBt(D &d, const A &a, const B &b) { mma_AtBt(d, a, b, false); }

} // namespace kittens::warpgroup
