/**
 * @file
 * @brief Epilogue reads: global values added straight into a register tile (warp scope).
 *
 * Generated GEMM epilogues add a bias row or a residual tile to the accumulator. Reading
 * the global values into each fragment in place needs no second register tile (a 16x256
 * f32 tile is already 128 registers a thread), and the address arithmetic is kept to one
 * row pointer per fragment row so that the epilogue fits beside the accumulator.
 * Elements past the tensor's end read as zero.
 *
 * In the row fragment layout a lane holds, for each 16x16 sub-tile, rows lane/4 and
 * lane/4 + 8 at columns 2*(lane%4) + {0, 1} and 2*(lane%4) + 8 + {0, 1}: register k of the
 * fragment is row (k & 1) * 8, column block (k >> 1) * 8.
 */
#pragma once

#include "../../common/util.cuh"
#include "../../types/global/gl.cuh"
#include "../../types/register/rt.cuh"

namespace kittens {

namespace detail {
/// g_row[c] as float, or 0 when c is past the row's end.
template <class T> KITTENS_DEVICE float read_or_zero(const T *g_row, int c, int cols) {
  return c < cols ? convert<float>(g_row[c]) : 0.f;
}
} // namespace detail

/// d[r][c] += v[e.c + c] for every row r: a bias broadcast down the rows. The vector is
/// row e.r of (e.b, e.d) in `v`; for a 1-D bias make `v` a gl with one row and e.r = 0.
template <ducks::rt::row_layout RT, class GL> KITTENS_DEVICE void add_col_from_global(RT &d, const GL &v, coord e) {
  using P = typename RT::packed;
  const int C = v.cols();
  const auto *row = v.ptr({e.b, e.d, e.r, 0});
  const int lane_col = e.c + 2 * (laneid() % 4);
  KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
    // One column tile's loads at a time: hoisting them all would need a second tile's
    // worth of registers beside the accumulator.
    asm volatile("" ::: "memory");
    float add[2][2];
    KITTENS_UNROLL for (int b = 0; b < 2; ++b)
      KITTENS_UNROLL for (int h = 0; h < 2; ++h)
        add[b][h] = detail::read_or_zero(row, lane_col + 16 * j + 8 * b + h, C);
    KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float2 a = pair_to_float2(d.tiles[i][j].data[k]);
        d.tiles[i][j].data[k] = convert<P>(make_float2(a.x + add[k >> 1][0], a.y + add[k >> 1][1]));
      }
  }
}

/// d[r][c] += g[e.r + r][e.c + c] within (e.b, e.d): a residual tile added in place.
template <ducks::rt::row_layout RT, class GL> KITTENS_DEVICE void add_from_global(RT &d, const GL &g, coord e) {
  using P = typename RT::packed;
  using T = typename GL::dtype;
  const int R = g.rows(), C = g.cols();
  const T *base = g.ptr({e.b, e.d, 0, 0});
  const int lane_row = e.r + laneid() / 4;
  const int lane_col = e.c + 2 * (laneid() % 4);
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
      asm volatile("" ::: "memory"); // one column tile's loads at a time (see above)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        const int r = lane_row + 16 * i + 8 * (k & 1);
        const int c = lane_col + 16 * j + 8 * (k >> 1);
        float2 a = pair_to_float2(d.tiles[i][j].data[k]);
        float x = 0.f, y = 0.f;
        if (r < R) {
          const T *p = base + int64_t(r) * C + c;
          if (c < C) x = convert<float>(p[0]);
          if (c + 1 < C) y = convert<float>(p[1]);
        }
        d.tiles[i][j].data[k] = convert<P>(make_float2(a.x + x, a.y + y));
      }
    }
}

} // namespace kittens
