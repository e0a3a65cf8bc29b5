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

// A 16x16 fragment holds, per lane, four packed pairs. Reducing along the direction in
// which a pair's two values lie (a row of a row-layout tile, a column of a column-layout
// one) leaves two values per lane, `lo` (pairs 0, 2) and `hi` (pairs 1, 3), which the four
// lanes of a quad complete; reducing across it leaves four, one per pair slot, which the
// eight quads complete. Each direction ends in the vector layout that matches it.

/// Fold one fragment into (lo, hi), reducing along its pairs.
template <class F, class Op> KITTENS_DEVICE void reduce_along(float &lo, float &hi, const F &f, Op op) {
  float2 a = pair_to_float2(f.data[0]), b = pair_to_float2(f.data[1]);
  float2 c = pair_to_float2(f.data[2]), d = pair_to_float2(f.data[3]);
  lo = op(op(lo, a.x), op(a.y, op(c.x, c.y)));
  hi = op(op(hi, b.x), op(b.y, op(d.x, d.y)));
}
/// Finish (lo, hi) over the quad and store into an ortho-layout vector slot.
template <class P, class Op> KITTENS_DEVICE void finish_along(P &slot, float lo, float hi, Op op, bool fold) {
  lo = shfl_reduce(lo, op, 1, 2);
  hi = shfl_reduce(hi, op, 1, 2);
  if (fold) {
    float2 o = pair_to_float2(slot);
    lo = op(o.x, lo);
    hi = op(o.y, hi);
  }
  slot = convert<P>(make_float2(lo, hi));
}
/// Fold one fragment into r[4], reducing across its pairs.
template <class F, class Op> KITTENS_DEVICE void reduce_across(float (&r)[4], const F &f, Op op) {
  float2 a = pair_to_float2(f.data[0]), b = pair_to_float2(f.data[1]);
  float2 c = pair_to_float2(f.data[2]), d = pair_to_float2(f.data[3]);
  r[0] = op(r[0], op(a.x, b.x));
  r[1] = op(r[1], op(a.y, b.y));
  r[2] = op(r[2], op(c.x, d.x));
  r[3] = op(r[3], op(c.y, d.y));
}
/// Finish r[4] over the quads and store into an align-layout vector slot (two pairs).
template <class P, class Op> KITTENS_DEVICE void finish_across(P (&slot)[2], float (&r)[4], Op op, bool fold) {
  KITTENS_UNROLL for (int k = 0; k < 4; ++k) r[k] = shfl_reduce(r[k], op, 4, 16);
  if (fold) {
    float2 o0 = pair_to_float2(slot[0]), o1 = pair_to_float2(slot[1]);
    r[0] = op(o0.x, r[0]); r[1] = op(o0.y, r[1]); r[2] = op(o1.x, r[2]); r[3] = op(o1.y, r[3]);
  }
  slot[0] = convert<P>(make_float2(r[0], r[1]));
  slot[1] = convert<P>(make_float2(r[2], r[3]));
}
} // namespace detail

/// v(r) = op-reduction over row r of t (starting from `init`), optionally folded with v.
template <ducks::rt::all RT, class Op>
KITTENS_DEVICE void row_reduce(typename RT::col_vec &v, const RT &t, Op op, float init, bool fold = false) {
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
    if constexpr (RT::layout::is_row) {
      // lane holds rows g (pairs 0, 2) and g+8 (pairs 1, 3); quad lanes hold the other columns.
      float lo = init, hi = init;
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) detail::reduce_along(lo, hi, t.tiles[i][j], op);
      detail::finish_along(v.data[i], lo, hi, op, fold);
    } else {
      // lane holds rows 2q,2q+1 (pairs 0,1) and 8+2q,9+2q (pairs 2,3) at columns g, g+8.
      float r[4] = {init, init, init, init};
      KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) detail::reduce_across(r, t.tiles[i][j], op);
      detail::finish_across(v.data[i], r, op, fold);
    }
  }
}

/// v(c) = op-reduction over column c of t (starting from `init`), optionally folded with v.
template <ducks::rt::all RT, class Op>
KITTENS_DEVICE void col_reduce(typename RT::row_vec &v, const RT &t, Op op, float init, bool fold = false) {
  KITTENS_UNROLL for (int j = 0; j < RT::width; ++j) {
    if constexpr (RT::layout::is_row) {
      // lane holds columns 2q,2q+1 (pairs 0,1) and 8+2q,9+2q (pairs 2,3) at rows g, g+8.
      float r[4] = {init, init, init, init};
      KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) detail::reduce_across(r, t.tiles[i][j], op);
      detail::finish_across(v.data[j], r, op, fold);
    } else {
      // lane holds columns g (pairs 0, 2) and g+8 (pairs 1, 3).
      float lo = init, hi = init;
      KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) detail::reduce_along(lo, hi, t.tiles[i][j], op);
      detail::finish_along(v.data[j], lo, hi, op, fold);
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
