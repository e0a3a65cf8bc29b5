/**
 * @file
 * @brief Direct register tile <-> global moves (warp scope), with bounds.
 *
 * Slower than going through shared memory (8-byte accesses) but handy for epilogues of
 * simple kernels and for tests. Elements outside the tensor are skipped on store and read
 * as zero on load.
 */
#pragma once

#include "../../common/util.cuh"
#include "../../types/global/gl.cuh"
#include "../../types/register/rt.cuh"

namespace kittens {

/// Store a register tile to the tile at element offset (b, d, row0, col0) of g, converting dtype.
template <ducks::rt::all RT, class GL> KITTENS_DEVICE void store(const GL &g, const RT &src, coord e) {
  using T = typename GL::dtype;
  const int l = laneid();
  const int R = g.rows(), C = g.cols();
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float2 a = pair_to_float2(src.tiles[i][j].data[k]);
        KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
          auto p = RT::layout::is_row ? fragment::row_layout(l, k, h) : fragment::col_layout(l, k, h);
          int r = e.r + 16 * i + p.row, c = e.c + 16 * j + p.col;
          if (r < R && c < C) g[{e.b, e.d, r, c}] = convert<T>(h ? a.y : a.x);
        }
      }
}

/// Load a register tile from element offset (b, d, row0, col0) of g (zero past the end).
template <ducks::rt::all RT, class GL> KITTENS_DEVICE void load(RT &dst, const GL &g, coord e) {
  using P = typename RT::packed;
  const int l = laneid();
  const int R = g.rows(), C = g.cols();
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float v[2];
        KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
          auto p = RT::layout::is_row ? fragment::row_layout(l, k, h) : fragment::col_layout(l, k, h);
          int r = e.r + 16 * i + p.row, c = e.c + 16 * j + p.col;
          v[h] = (r < R && c < C) ? convert<float>(g[{e.b, e.d, r, c}]) : 0.f;
        }
        dst.tiles[i][j].data[k] = convert<P>(make_float2(v[0], v[1]));
      }
}

} // namespace kittens
