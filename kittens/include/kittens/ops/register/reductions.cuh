/**
 * @file
 * @brief Row and column reductions of register tiles into register vectors.
 *
 * `row_reduce(v, t, op, init)` reduces every row of t to one value (v is `RT::col_vec`);
 * `col_reduce(v, t, op, init)` every column (v is `RT::row_vec`). Results are replicated
 * over the lanes that share them, as the vector layout says. Reductions run in float.
 * Named forms: row_max, row_min, row_sum, col_max, col_min, col_sum; the `_acc` forms fold
 * an existing vector in (v = op(v, reduce(t))), which is what online softmax needs.
 */
#pragma once

#include "maps.cuh"

namespace kittens {

namespace detail {
template <class Op> KITTENS_DEVICE float shfl_reduce(float x, Op op, int lane_mask_lo, int lane_mask_hi) {
  for (int m = lane_mask_lo; m <= lane_mask_hi; m <<= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, m));
  return x;
}
} // namespace detail

/// v(r) = op-reduction over row r of t (starting from `init`), optionally folded with v.
template <ducks::rt::all RT, class Op>
KITTENS_DEVICE void row_reduce(typename RT::col_vec &v, const RT &t, Op op, float init, bool fold = false) {
  using T = typename RT::dtype;
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
    if constexpr (RT::layout::is_row) {
      // lane holds rows g (pairs 0, 2) and g+8 (pairs 1, 3); quad lanes hold the other columns.
      float lo = init, hi = init;
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
        float2 a = pair_to_float2(t.tiles[i][j].data[0]), b = pair_to_float2(t.tiles[i][j].data[1]);
        float2 c = pair_to_float2(t.tiles[i][j].data[2]), d = pair_to_float2(t.tiles[i][j].data[3]);
        lo = op(op(lo, a.x), op(a.y, op(c.x, c.y)));
        hi = op(op(hi, b.x), op(b.y, op(d.x, d.y)));
      }
      lo = detail::shfl_reduce(lo, op, 1, 2);
      hi = detail::shfl_reduce(hi, op, 1, 2);
      if (fold) {
        float2 o = pair_to_float2(v.data[i]);
        lo = op(o.x, lo);
        hi = op(o.y, hi);
      }
      v.data[i] = convert<packed_t<T>>(make_float2(lo, hi));
    } else {
      // lane holds rows 2q,2q+1 (pairs 0,1) and 8+2q,9+2q (pairs 2,3) at columns g, g+8.
      float r[4] = {init, init, init, init};
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
        float2 a = pair_to_float2(t.tiles[i][j].data[0]), b = pair_to_float2(t.tiles[i][j].data[1]);
        float2 c = pair_to_float2(t.tiles[i][j].data[2]), d = pair_to_float2(t.tiles[i][j].data[3]);
        r[0] = op(r[0], op(a.x, b.x));
        r[1] = op(r[1], op(a.y, b.y));
        r[2] = op(r[2], op(c.x, d.x));
        r[3] = op(r[3], op(c.y, d.y));
      }
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) r[k] = detail::shfl_reduce(r[k], op, 4, 16);
      if (fold) {
        float2 o0 = pair_to_float2(v.data[i][0]), o1 = pair_to_float2(v.data[i][1]);
        r[0] = op(o0.x, r[0]); r[1] = op(o0.y, r[1]); r[2] = op(o1.x, r[2]); r[3] = op(o1.y, r[3]);
      }
      v.data[i][0] = convert<packed_t<T>>(make_float2(r[0], r[1]));
      v.data[i][1] = convert<packed_t<T>>(make_float2(r[2], r[3]));
    }
  }
}

/// v(c) = op-reduction over column c of t (starting from `init`), optionally folded with v.
template <ducks::rt::all RT, class Op>
KITTENS_DEVICE void col_reduce(typename RT::row_vec &v, const RT &t, Op op, float init, bool fold = false) {
  using T = typename RT::dtype;
  KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
    if constexpr (RT::layout::is_row) {
      // lane holds columns 2q,2q+1 (pairs 0,1) and 8+2q,9+2q (pairs 2,3) at rows g, g+8.
      float r[4] = {init, init, init, init};
      KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
        float2 a = pair_to_float2(t.tiles[i][j].data[0]), b = pair_to_float2(t.tiles[i][j].data[1]);
        float2 c = pair_to_float2(t.tiles[i][j].data[2]), d = pair_to_float2(t.tiles[i][j].data[3]);
        r[0] = op(r[0], op(a.x, b.x));
        r[1] = op(r[1], op(a.y, b.y));
        r[2] = op(r[2], op(c.x, d.x));
        r[3] = op(r[3], op(c.y, d.y));
      }
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) r[k] = detail::shfl_reduce(r[k], op, 4, 16);
      if (fold) {
        float2 o0 = pair_to_float2(v.data[j][0]), o1 = pair_to_float2(v.data[j][1]);
        r[0] = op(o0.x, r[0]); r[1] = op(o0.y, r[1]); r[2] = op(o1.x, r[2]); r[3] = op(o1.y, r[3]);
      }
      v.data[j][0] = convert<packed_t<T>>(make_float2(r[0], r[1]));
      v.data[j][1] = convert<packed_t<T>>(make_float2(r[2], r[3]));
    } else {
      // lane holds columns g (pairs 0, 2) and g+8 (pairs 1, 3).
      float lo = init, hi = init;
      KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
        float2 a = pair_to_float2(t.tiles[i][j].data[0]), b = pair_to_float2(t.tiles[i][j].data[1]);
        float2 c = pair_to_float2(t.tiles[i][j].data[2]), d = pair_to_float2(t.tiles[i][j].data[3]);
        lo = op(op(lo, a.x), op(a.y, op(c.x, c.y)));
        hi = op(op(hi, b.x), op(b.y, op(d.x, d.y)));
      }
      lo = detail::shfl_reduce(lo, op, 1, 2);
      hi = detail::shfl_reduce(hi, op, 1, 2);
      if (fold) {
        float2 o = pair_to_float2(v.data[j]);
        lo = op(o.x, lo);
        hi = op(o.y, hi);
      }
      v.data[j] = convert<packed_t<T>>(make_float2(lo, hi));
    }
  }
}

template <ducks::rt::all RT> KITTENS_DEVICE void row_max(typename RT::col_vec &v, const RT &t) { row_reduce(v, t, base_ops::max{}, -INFINITY); }
template <ducks::rt::all RT> KITTENS_DEVICE void row_min(typename RT::col_vec &v, const RT &t) { row_reduce(v, t, base_ops::min{}, INFINITY); }
template <ducks::rt::all RT> KITTENS_DEVICE void row_sum(typename RT::col_vec &v, const RT &t) { row_reduce(v, t, base_ops::add{}, 0.f); }
template <ducks::rt::all RT> KITTENS_DEVICE void row_max_acc(typename RT::col_vec &v, const RT &t) { row_reduce(v, t, base_ops::max{}, -INFINITY, true); }
template <ducks::rt::all RT> KITTENS_DEVICE void row_sum_acc(typename RT::col_vec &v, const RT &t) { row_reduce(v, t, base_ops::add{}, 0.f, true); }
template <ducks::rt::all RT> KITTENS_DEVICE void col_max(typename RT::row_vec &v, const RT &t) { col_reduce(v, t, base_ops::max{}, -INFINITY); }
template <ducks::rt::all RT> KITTENS_DEVICE void col_min(typename RT::row_vec &v, const RT &t) { col_reduce(v, t, base_ops::min{}, INFINITY); }
template <ducks::rt::all RT> KITTENS_DEVICE void col_sum(typename RT::row_vec &v, const RT &t) { col_reduce(v, t, base_ops::add{}, 0.f); }

} // namespace kittens
