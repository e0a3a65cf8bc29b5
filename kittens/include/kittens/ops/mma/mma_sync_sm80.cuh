/**
 * @file
 * @brief Warp-level tensor-core MMA: mma.sync.m16n8k16, f32 accumulate, bf16/f16 inputs.
 *
 * Warp scope. `mma_AB(d, a, b, c)`: d = a · b + c with a: rt<T, M, K> row layout,
 * b: rt<T, K, N> column layout, c/d: rt<float, M, N> row layout.
 * `mma_ABt(d, a, b, c)`: d = a · bᵀ + c with b: rt<T, N, K> row layout (the same
 * registers as a column-layout Bᵀ). The instruction exists from sm_80 on.
 */
#pragma once

#include "../../types/register/rt.cuh"

namespace kittens {

namespace detail {
template <class T>
KITTENS_DEVICE void mma16816(float2 &d0, float2 &d1, const packed_t<T> (&a)[4], const packed_t<T> &b0, const packed_t<T> &b1,
                             const float2 &c0, const float2 &c1) {
  if constexpr (std::is_same_v<T, bf16>) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%10, %11, %12, %13};\n"
                 : "=f"(d0.x), "=f"(d0.y), "=f"(d1.x), "=f"(d1.y)
                 : "r"(as_u32(a[0])), "r"(as_u32(a[1])), "r"(as_u32(a[2])), "r"(as_u32(a[3])), "r"(as_u32(b0)),
                   "r"(as_u32(b1)), "f"(c0.x), "f"(c0.y), "f"(c1.x), "f"(c1.y));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%10, %11, %12, %13};\n"
                 : "=f"(d0.x), "=f"(d0.y), "=f"(d1.x), "=f"(d1.y)
                 : "r"(as_u32(a[0])), "r"(as_u32(a[1])), "r"(as_u32(a[2])), "r"(as_u32(a[3])), "r"(as_u32(b0)),
                   "r"(as_u32(b1)), "f"(c0.x), "f"(c0.y), "f"(c1.x), "f"(c1.y));
  }
}
/// One 16x16x16 step: B given as fragment registers {n 0..7: (b[0], b[2]); n 8..15: (b[1], b[3])}.
template <class T>
KITTENS_DEVICE void mma_base(rt_base<float, rt_layout::row> &d, const rt_base<T, rt_layout::row> &a, const packed_t<T> (&b)[4],
                             const rt_base<float, rt_layout::row> &c) {
  mma16816<T>(d.data[0], d.data[1], a.data, b[0], b[2], c.data[0], c.data[1]);
  mma16816<T>(d.data[2], d.data[3], a.data, b[1], b[3], c.data[2], c.data[3]);
}
} // namespace detail

/// d = a · b + c (warp scope).
template <class T, int M, int N, int K>
KITTENS_DEVICE void mma_AB(rt<float, M, N> &d, const rt<T, M, K> &a, const rt<T, K, N, rt_layout::col> &b, const rt<float, M, N> &c) {
  static_assert(half_width_type<T>, "kittens::mma_AB: inputs must be bf16 or half");
  KITTENS_UNROLL for (int i = 0; i < M / 16; ++i)
    KITTENS_UNROLL for (int j = 0; j < N / 16; ++j) {
      detail::mma_base<T>(d.tiles[i][j], a.tiles[i][0], b.tiles[0][j].data, c.tiles[i][j]);
      KITTENS_UNROLL for (int k = 1; k < K / 16; ++k) detail::mma_base<T>(d.tiles[i][j], a.tiles[i][k], b.tiles[k][j].data, d.tiles[i][j]);
    }
}
/// d = a · bᵀ + c (warp scope), b: rt<T, N, K> row layout.
template <class T, int M, int N, int K>
KITTENS_DEVICE void mma_ABt(rt<float, M, N> &d, const rt<T, M, K> &a, const rt<T, N, K> &b, const rt<float, M, N> &c) {
  static_assert(half_width_type<T>, "kittens::mma_ABt: inputs must be bf16 or half");
  KITTENS_UNROLL for (int i = 0; i < M / 16; ++i)
    KITTENS_UNROLL for (int j = 0; j < N / 16; ++j) {
      detail::mma_base<T>(d.tiles[i][j], a.tiles[i][0], b.tiles[j][0].data, c.tiles[i][j]);
      KITTENS_UNROLL for (int k = 1; k < K / 16; ++k) detail::mma_base<T>(d.tiles[i][j], a.tiles[i][k], b.tiles[j][k].data, d.tiles[i][j]);
    }
}

} // namespace kittens
