/**
 * @file
 * @brief Masks on register tiles: causal (lower triangle) and bounds (ragged edges).
 *
 * Each takes the tile's position in the whole matrix in elements (row0, col0), so the same
 * call masks any tile of a larger problem.
 */
#pragma once

#include "../../common/util.cuh"
#include "../../types/register/rt.cuh"

namespace kittens {

/// Apply `keep(r, c)` (absolute element coordinates); elements where it is false become `fill`.
template <ducks::rt::all RT, class Keep>
KITTENS_DEVICE void mask(RT &dst, const RT &src, int row0, int col0, float fill, Keep keep) {
  using P = typename RT::packed;
  const int l = laneid();
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float2 a = pair_to_float2(src.tiles[i][j].data[k]);
        float v[2] = {a.x, a.y};
        KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
          auto p = RT::layout::is_row ? fragment::row_layout(l, k, h) : fragment::col_layout(l, k, h);
          if (!keep(row0 + 16 * i + p.row, col0 + 16 * j + p.col)) v[h] = fill;
        }
        dst.tiles[i][j].data[k] = convert<P>(make_float2(v[0], v[1]));
      }
}

/// Causal mask: keep (r, c) with c <= r (plus `diagonal_offset`), fill the rest.
template <ducks::rt::all RT>
KITTENS_DEVICE void make_causal(RT &dst, const RT &src, int row0, int col0, float fill = -INFINITY, int diagonal_offset = 0) {
  mask(dst, src, row0, col0, fill, [=](int r, int c) { return c <= r + diagonal_offset; });
}

/// Bounds mask: keep (r, c) with r < rows and c < cols, fill the rest.
template <ducks::rt::all RT>
KITTENS_DEVICE void bounds_mask(RT &dst, const RT &src, int row0, int col0, int rows, int cols, float fill = 0.f) {
  mask(dst, src, row0, col0, fill, [=](int r, int c) { return r < rows && c < cols; });
}

} // namespace kittens
