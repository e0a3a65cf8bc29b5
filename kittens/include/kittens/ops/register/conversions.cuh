/**
 * @file
 * @brief Register tile/vector dtype conversions (same shape and layout).
 */
#pragma once

#include "../../types/register/rt.cuh"

namespace kittens {

/// dst = src converted elementwise (float <-> bf16 <-> half; round to nearest even).
template <class T, class U, int R, int C, class L>
KITTENS_DEVICE void copy(rt<T, R, C, L> &dst, const rt<U, R, C, L> &src) {
  KITTENS_UNROLL for (int i = 0; i < R / 16; ++i)
    KITTENS_UNROLL for (int j = 0; j < C / 16; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) dst.tiles[i][j].data[k] = convert<packed_t<T>>(src.tiles[i][j].data[k]);
}

/// dst = src converted elementwise, for vectors of the same length and layout.
template <class T, class U, int N, class L> KITTENS_DEVICE void copy(rv<T, N, L> &dst, const rv<U, N, L> &src) {
  if constexpr (std::is_same_v<L, rv_layout::naive>) {
    KITTENS_UNROLL for (int i = 0; i < (N + 31) / 32; ++i) dst.data[i] = convert<T>(src.data[i]);
  } else {
    constexpr int n = sizeof(src.data) / sizeof(packed_t<U>);
    auto *d = reinterpret_cast<packed_t<T> *>(&dst.data);
    auto *s = reinterpret_cast<const packed_t<U> *>(&src.data);
    KITTENS_UNROLL for (int i = 0; i < n; ++i) d[i] = convert<packed_t<T>>(s[i]);
  }
}

} // namespace kittens
