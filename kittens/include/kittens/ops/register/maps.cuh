/**
 * @file
 * @brief Elementwise maps on register tiles and vectors, and row/column broadcasts.
 *
 * Warp scope. Ops are evaluated in float and rounded once to the tile's dtype.
 * "row" broadcasts apply one value per row (a `col_vec`, e.g. subtract the row max);
 * "col" broadcasts apply one value per column (a `row_vec`, e.g. add a bias).
 */
#pragma once

#include "../../types/register/rt.cuh"

namespace kittens {

/// Float functors used with map(); each takes and returns float.
namespace base_ops {
struct zero { KITTENS_DEVICE float operator()(float) const { return 0.f; } };
struct one { KITTENS_DEVICE float operator()(float) const { return 1.f; } };
struct neg_infty { KITTENS_DEVICE float operator()(float) const { return -INFINITY; } };
struct copy { KITTENS_DEVICE float operator()(float a) const { return a; } };
struct exp { KITTENS_DEVICE float operator()(float a) const { return __expf(a); } };
struct exp2 { KITTENS_DEVICE float operator()(float a) const { return exp2f(a); } };
struct log { KITTENS_DEVICE float operator()(float a) const { return __logf(a); } };
struct abs { KITTENS_DEVICE float operator()(float a) const { return fabsf(a); } };
struct relu { KITTENS_DEVICE float operator()(float a) const { return fmaxf(a, 0.f); } };
struct add { KITTENS_DEVICE float operator()(float a, float b) const { return a + b; } };
struct sub { KITTENS_DEVICE float operator()(float a, float b) const { return a - b; } };
struct mul { KITTENS_DEVICE float operator()(float a, float b) const { return a * b; } };
struct div { KITTENS_DEVICE float operator()(float a, float b) const { return a / b; } };
struct max { KITTENS_DEVICE float operator()(float a, float b) const { return fmaxf(a, b); } };
struct min { KITTENS_DEVICE float operator()(float a, float b) const { return fminf(a, b); } };
} // namespace base_ops

/// dst = op(src) elementwise.
template <ducks::rt::all RT, class Op> KITTENS_DEVICE void map(RT &dst, const RT &src, Op op) {
  using P = typename RT::packed;
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float2 a = pair_to_float2(src.tiles[i][j].data[k]);
        dst.tiles[i][j].data[k] = convert<P>(make_float2(op(a.x), op(a.y)));
      }
}
/// dst = op(a, b) elementwise.
template <ducks::rt::all RT, class Op> KITTENS_DEVICE void map(RT &dst, const RT &a, const RT &b, Op op) {
  using P = typename RT::packed;
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float2 x = pair_to_float2(a.tiles[i][j].data[k]), y = pair_to_float2(b.tiles[i][j].data[k]);
        dst.tiles[i][j].data[k] = convert<P>(make_float2(op(x.x, y.x), op(x.y, y.y)));
      }
}
/// dst = op(a, s) elementwise with a scalar.
template <ducks::rt::all RT, class Op> KITTENS_DEVICE void map(RT &dst, const RT &a, float s, Op op) {
  map(dst, a, [&](float x) { return op(x, s); });
}

template <ducks::rt::all RT> KITTENS_DEVICE void zero(RT &d) { map(d, d, base_ops::zero{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void one(RT &d) { map(d, d, base_ops::one{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void neg_infty(RT &d) { map(d, d, base_ops::neg_infty{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void exp(RT &d, const RT &s) { map(d, s, base_ops::exp{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void exp2(RT &d, const RT &s) { map(d, s, base_ops::exp2{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void log(RT &d, const RT &s) { map(d, s, base_ops::log{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void abs(RT &d, const RT &s) { map(d, s, base_ops::abs{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void relu(RT &d, const RT &s) { map(d, s, base_ops::relu{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void add(RT &d, const RT &a, const RT &b) { map(d, a, b, base_ops::add{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void sub(RT &d, const RT &a, const RT &b) { map(d, a, b, base_ops::sub{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void mul(RT &d, const RT &a, const RT &b) { map(d, a, b, base_ops::mul{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void div(RT &d, const RT &a, const RT &b) { map(d, a, b, base_ops::div{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void max(RT &d, const RT &a, const RT &b) { map(d, a, b, base_ops::max{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void min(RT &d, const RT &a, const RT &b) { map(d, a, b, base_ops::min{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void add(RT &d, const RT &a, float s) { map(d, a, s, base_ops::add{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void mul(RT &d, const RT &a, float s) { map(d, a, s, base_ops::mul{}); }

namespace detail {
/// Value of per-row vector `v` (layout `ortho` or `align`) for fragment row tile i, pair k, half h.
template <class RT, class V> KITTENS_DEVICE float row_value(const V &v, int i, int k, int h) {
  if constexpr (RT::layout::is_row) { // ortho: .x row g, .y row g+8
    float2 p = pair_to_float2(v.data[i]);
    return (k & 1) ? p.y : p.x;
  } else { // align: rows 2q,2q+1 (k<2) or 8+2q,9+2q (k>=2); h picks the pair element
    float2 p = pair_to_float2(v.data[i][k >> 1]);
    return h ? p.y : p.x;
  }
}
/// Value of per-column vector `v` for fragment column tile j, pair k, half h.
template <class RT, class V> KITTENS_DEVICE float col_value(const V &v, int j, int k, int h) {
  if constexpr (RT::layout::is_row) { // align: cols 2q,2q+1 (k<2) or 8+2q,9+2q (k>=2)
    float2 p = pair_to_float2(v.data[j][k >> 1]);
    return h ? p.y : p.x;
  } else { // ortho: .x col g, .y col g+8
    float2 p = pair_to_float2(v.data[j]);
    return (k & 1) ? p.y : p.x;
  }
}
} // namespace detail

/// dst(r, c) = op(src(r, c), v(r)) for a per-row vector v (`RT::col_vec`).
template <ducks::rt::all RT, class Op> KITTENS_DEVICE void row_map(RT &dst, const RT &src, const typename RT::col_vec &v, Op op) {
  using P = typename RT::packed;
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float2 a = pair_to_float2(src.tiles[i][j].data[k]);
        a.x = op(a.x, detail::row_value<RT>(v, i, k, 0));
        a.y = op(a.y, detail::row_value<RT>(v, i, k, 1));
        dst.tiles[i][j].data[k] = convert<P>(a);
      }
}
/// dst(r, c) = op(src(r, c), v(c)) for a per-column vector v (`RT::row_vec`).
template <ducks::rt::all RT, class Op> KITTENS_DEVICE void col_map(RT &dst, const RT &src, const typename RT::row_vec &v, Op op) {
  using P = typename RT::packed;
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float2 a = pair_to_float2(src.tiles[i][j].data[k]);
        a.x = op(a.x, detail::col_value<RT>(v, j, k, 0));
        a.y = op(a.y, detail::col_value<RT>(v, j, k, 1));
        dst.tiles[i][j].data[k] = convert<P>(a);
      }
}
template <ducks::rt::all RT> KITTENS_DEVICE void add_row(RT &d, const RT &s, const typename RT::col_vec &v) { row_map(d, s, v, base_ops::add{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void sub_row(RT &d, const RT &s, const typename RT::col_vec &v) { row_map(d, s, v, base_ops::sub{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void mul_row(RT &d, const RT &s, const typename RT::col_vec &v) { row_map(d, s, v, base_ops::mul{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void div_row(RT &d, const RT &s, const typename RT::col_vec &v) { row_map(d, s, v, base_ops::div{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void add_col(RT &d, const RT &s, const typename RT::row_vec &v) { col_map(d, s, v, base_ops::add{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void sub_col(RT &d, const RT &s, const typename RT::row_vec &v) { col_map(d, s, v, base_ops::sub{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void mul_col(RT &d, const RT &s, const typename RT::row_vec &v) { col_map(d, s, v, base_ops::mul{}); }
template <ducks::rt::all RT> KITTENS_DEVICE void div_col(RT &d, const RT &s, const typename RT::row_vec &v) { col_map(d, s, v, base_ops::div{}); }

/// Elementwise map on ortho/align vectors: dst = op(a, b).
template <ducks::rv::all V, class Op> KITTENS_DEVICE void map(V &dst, const V &a, const V &b, Op op) {
  using T = typename V::dtype;
  if constexpr (ducks::rv::naive<V>) {
    KITTENS_UNROLL for (int i = 0; i < (V::length + 31) / 32; ++i)
      dst.data[i] = convert<T>(op(convert<float>(a.data[i]), convert<float>(b.data[i])));
  } else {
    constexpr int n = sizeof(a.data) / sizeof(packed_t<T>);
    auto *d = reinterpret_cast<packed_t<T> *>(&dst.data);
    auto *x = reinterpret_cast<const packed_t<T> *>(&a.data);
    auto *y = reinterpret_cast<const packed_t<T> *>(&b.data);
    KITTENS_UNROLL for (int i = 0; i < n; ++i) {
      float2 p = pair_to_float2(x[i]), q = pair_to_float2(y[i]);
      d[i] = convert<packed_t<T>>(make_float2(op(p.x, q.x), op(p.y, q.y)));
    }
  }
}
/// Whether some lane of the warp holds an element of `v` other than `x` (NaN counts as other).
/// The same answer in every lane, so a branch on it does not diverge; call from all 32 lanes.
template <ducks::rv::ortho V> KITTENS_DEVICE bool warp_any_differs(const V &v, float x) {
  bool differs = false;
  KITTENS_UNROLL for (int i = 0; i < V::length / 16; ++i) {
    const float2 p = pair_to_float2(v.data[i]);
    differs |= !(p.x == x) || !(p.y == x);
  }
  return __any_sync(0xffffffffu, differs);
}

/// Set every element of a vector to s.
template <ducks::rv::all V> KITTENS_DEVICE void fill(V &dst, float s) { map(dst, dst, dst, [&](float, float) { return s; }); }

} // namespace kittens
