/**
 * @file
 * @brief Elementwise programs over row-layout register tiles and their per-row vectors.
 *
 * `apply(dst, f)` sets every element a lane holds to `f(e)`, where `e` says which element it
 * is: its fragment slot (i, j, k, h) and its (row, col) inside the warp's tile. Inside `f`,
 * `at(t, e)` reads the same element of another tile of the same shape and `at(v, e)` the
 * per-row value of a `col_vec` for the element's row, so one lambda computes any fused
 * expression of tiles, row broadcasts and coordinates (masks) without temporaries:
 *
 *   apply(p, [&](const element &e) { return exp2f(at(s, e) - at(m, e)); });
 *
 * The vector forms do the same over an ortho per-row vector (`vector_element`). Reductions
 * take the same kind of lambda: `row_reduce_elements<RT>(v, op, init, f[, col_limit])` folds
 * f(e) over the columns (c < col_limit) of each row (the rest are absent, not zero).
 * `row_reduce_elements_partial` stops before the lanes of a quad combine their columns: each
 * lane keeps its own share, which is what a running sum scaled by per-row factors needs, and
 * `complete_row_reduce(v, op)` combines the shares once, where the whole value is read.
 * Warp scope; everything is evaluated in float.
 */
#pragma once

#include "../../common/util.cuh"
#include "../../types/register/rt.cuh"
#include "masks.cuh"
#include "reductions.cuh"

namespace kittens {

/// The hardware's approximate transcendentals (MUFU: relative error about 2^-22 for
/// exp2/log2), which is what the tile language's exp2, exp, log2 and log compile to.
namespace fast {
KITTENS_DEVICE float exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
KITTENS_DEVICE float log2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
/// 1 / x by the approximate reciprocal: at most one unit in the last place off, one instruction
/// against the rounded division's several and its slow-path branch. Subnormal inputs and results
/// are flushed to zero (so 1 / x is +-0 for |x| > 2^126); +-0 gives +-inf, +-inf gives +-0.
KITTENS_DEVICE float rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
KITTENS_DEVICE float exp(float x) { return exp2(x * 1.4426950408889634f); }
KITTENS_DEVICE float log(float x) { return log2(x) * 0.6931471805599453f; }
/// tanh(x) as 1 - 2 / (2^(2 x log2 e) + 1) with the approximate ex2 and rcp: two
/// special-function instructions and two FMA-pipe ones, no branch. The error is absolute,
/// a few 1e-7 over all x (so relative near 0, where tanh(x) ~ x); +-1 where the power
/// overflows or flushes to zero; NaN for NaN.
KITTENS_DEVICE float tanh(float x) {
  const float e = exp2(x * 2.8853900817779268f);
  return fmaf(-2.0f, rcp(e + 1.0f), 1.0f);
}
/// 1 / (1 + e^-x) as rcp(1 + 2^(-x log2 e)) with the approximate ex2 and rcp: two
/// special-function instructions, no branch. 0 where the power overflows (x below about
/// -88), 1 where it flushes to zero; NaN for NaN.
KITTENS_DEVICE float sigmoid(float x) { return rcp(1.0f + exp2(x * -1.4426950408889634f)); }
/// x sigmoid(x) (SiLU, swish): -0 below about -88, where sigmoid is 0.
KITTENS_DEVICE float silu(float x) { return x * sigmoid(x); }
} // namespace fast

/// gelu(x) in the erf form, 0.5 x (1 + erf(x / sqrt 2)), with CUDA's erff (at most 2 units in
/// the last place).
KITTENS_DEVICE float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f)); }

/// One element of a row-layout tile as a lane holds it.
struct element {
  int i, j, k, h; ///< fragment row and column, pair (0..3), half of the pair (0: .x, 1: .y)
  int row, col;   ///< inside the warp's tile
  /// row and col in two parts: the lane's, as floats converted once per call, and the rest,
  /// constants of the unrolled loops. A sum of positions as a float is then one add per
  /// element, not a conversion (which would share the special-function pipe with exp2).
  float lane_row, lane_col;
  int const_row, const_col;
};

/// One element of an ortho (per-row) vector: data[i], half h (0: row g, 1: row g + 8).
struct vector_element {
  int i, h;
  int row; ///< inside the warp's rows
  float lane_row; ///< row in two parts, as for element
  int const_row;
};

namespace detail {
/// A lane's part of its elements' positions (row_layout(lane, k, h) is row_layout(lane, 0, 0)
/// plus row_layout(0, k, h)), converted to float once.
struct lane_position {
  float row, col;
  KITTENS_DEVICE explicit lane_position(int lane)
      : row(static_cast<float>(fragment::row_layout(lane, 0, 0).row)),
        col(static_cast<float>(fragment::row_layout(lane, 0, 0).col)) {}
  /// The element (i, j, k, h) whose layout position is p = row_layout(lane, k, h).
  KITTENS_DEVICE element at(int i, int j, int k, int h, fragment::rc p) const {
    const fragment::rc c = fragment::row_layout(0, k, h);
    return element{i, j, k, h, 16 * i + p.row, 16 * j + p.col, row, col, 16 * i + c.row,
                   16 * j + c.col};
  }
};
template <class P> KITTENS_DEVICE float pair_half(const P &p, int h) {
  float2 f = pair_to_float2(p);
  return h ? f.y : f.x;
}
} // namespace detail

/// The element `e` of `t` (a row-layout tile of the shape being applied over).
template <ducks::rt::row_layout RT> KITTENS_DEVICE float at(const RT &t, const element &e) {
  return detail::pair_half(t.tiles[e.i][e.j].data[e.k], e.h);
}
/// Write `x` into the element `e` of `t` (a row-layout tile; converted to its dtype).
template <ducks::rt::row_layout RT> KITTENS_DEVICE void set(RT &t, const element &e, float x) {
  auto &pair = t.tiles[e.i][e.j].data[e.k];
  (e.h ? pair.y : pair.x) = convert<typename RT::dtype>(x);
}
/// The value of per-row vector `v` (ortho layout) at the row of tile element `e`.
template <ducks::rv::ortho V> KITTENS_DEVICE float at(const V &v, const element &e) {
  return detail::pair_half(v.data[e.i], e.k & 1);
}
/// The value of per-row vector `v` at vector element `e`.
template <ducks::rv::ortho V> KITTENS_DEVICE float at(const V &v, const vector_element &e) {
  return detail::pair_half(v.data[e.i], e.h);
}

/// dst(e) = f(e) for every element the lane holds.
template <ducks::rt::row_layout RT, class F> KITTENS_DEVICE void apply(RT &dst, F f) {
  using P = typename RT::packed;
  const int l = laneid();
  const detail::lane_position lane(l);
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
        float v[2];
        KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
          const fragment::rc p = fragment::row_layout(l, k, h);
          v[h] = f(lane.at(i, j, k, h, p));
        }
        dst.tiles[i][j].data[k] = convert<P>(make_float2(v[0], v[1]));
      }
}

/// dst(e) = f(e) for every value of an ortho per-row vector (each lane holds its two rows).
template <ducks::rv::ortho V, class F> KITTENS_DEVICE void apply(V &dst, F f) {
  using P = packed_t<typename V::dtype>;
  const int g = laneid() / 4;
  const float gf = static_cast<float>(g);
  KITTENS_UNROLL for (int i = 0; i < V::tiles; ++i) {
    const float lo = f(vector_element{i, 0, 16 * i + g, gf, 16 * i});
    const float hi = f(vector_element{i, 1, 16 * i + g + 8, gf, 16 * i + 8});
    dst.data[i] = convert<P>(make_float2(lo, hi));
  }
}

namespace detail {
template <bool Bounded, bool Partial, class RT, class Op, class F>
KITTENS_DEVICE void row_reduce_elements(typename RT::col_vec &v, Op op, float init, F f, int col_limit) {
  const int l = laneid();
  const lane_position lane(l);
  KITTENS_UNROLL for (int i = 0; i < RT::height; ++i) {
    float lo = init, hi = init; // rows g (pairs 0, 2) and g + 8 (pairs 1, 3)
    KITTENS_UNROLL for (int j = 0; j < RT::width; ++j)
      KITTENS_UNROLL for (int k = 0; k < 4; ++k)
        KITTENS_UNROLL for (int h = 0; h < 2; ++h) {
          const fragment::rc p = fragment::row_layout(l, k, h);
          const int col = 16 * j + p.col;
          if (!Bounded || col < col_limit) {
            const float x = f(lane.at(i, j, k, h, p));
            if (k & 1) hi = op(hi, x);
            else lo = op(lo, x);
          }
        }
    if constexpr (Partial)
      v.data[i] = convert<packed_t<typename RT::col_vec::dtype>>(make_float2(lo, hi));
    else
      finish_along(v.data[i], lo, hi, op, false);
  }
}
} // namespace detail

/// v(r) = op-fold of f(e) over the elements of row r of an RT-shaped tile, starting from `init`.
template <ducks::rt::row_layout RT, class Op, class F>
KITTENS_DEVICE void row_reduce_elements(typename RT::col_vec &v, Op op, float init, F f) {
  detail::row_reduce_elements<false, false, RT>(v, op, init, f, RT::cols);
}
/// The same over the columns c < col_limit only (the rest are absent: skipped, not read as
/// zero). Costs a compare per element: call the form above when every column is present.
template <ducks::rt::row_layout RT, class Op, class F>
KITTENS_DEVICE void row_reduce_elements(typename RT::col_vec &v, Op op, float init, F f, int col_limit) {
  detail::row_reduce_elements<true, false, RT>(v, op, init, f, col_limit);
}

/// Each lane's share of the same fold: the columns it holds (c < col_limit, if given) of
/// its rows, not yet combined with the other lanes of its quad. Shares of a sum stay
/// shares under per-row scaling and addition of other shares (`l = l * r + share`);
/// `complete_row_reduce` turns them into the rows' values.
template <ducks::rt::row_layout RT, class Op, class F>
KITTENS_DEVICE void row_reduce_elements_partial(typename RT::col_vec &v, Op op, float init, F f) {
  detail::row_reduce_elements<false, true, RT>(v, op, init, f, RT::cols);
}
template <ducks::rt::row_layout RT, class Op, class F>
KITTENS_DEVICE void row_reduce_elements_partial(typename RT::col_vec &v, Op op, float init, F f,
                                                int col_limit) {
  detail::row_reduce_elements<true, true, RT>(v, op, init, f, col_limit);
}
/// Combine the quads' shares of an ortho per-row vector (from row_reduce_elements_partial):
/// afterwards every lane holds its rows' whole values.
template <ducks::rv::ortho V, class Op> KITTENS_DEVICE void complete_row_reduce(V &v, Op op) {
  KITTENS_UNROLL for (int i = 0; i < V::tiles; ++i) {
    const float2 x = pair_to_float2(v.data[i]);
    detail::finish_along(v.data[i], x.x, x.y, op, false);
  }
}

/// Zero the columns at or past `col_limit` (any dtype): absent elements of a product operand.
template <ducks::rt::row_layout RT> KITTENS_DEVICE void zero_columns_from(RT &t, int col_limit) {
  mask(t, t, 0, 0, 0.f, [=](int, int col) { return col < col_limit; });
}

/// The value of per-column vector `v` (align layout: the lane's columns of a row-layout tile)
/// at element `e`.
template <ducks::rv::align V> KITTENS_DEVICE float at(const V &v, const element &e) {
  return detail::pair_half(v.data[e.j][e.k >> 1], e.h);
}

/// `src[c]` at the column c of element `e`, read from shared memory where it is used rather
/// than held: one packed load for the pair of columns e.col belongs to (`src` must be aligned
/// to a pair; the tile's first column is src[0]). The four elements a lane holds at those two
/// columns (rows g and g + 8) load the same address, which the compiler reads once.
template <class T> KITTENS_DEVICE float column_at(const T *src, const element &e) {
  using P = packed_t<T>;
  const P pair = *reinterpret_cast<const P *>(src + (e.col - e.h));
  return detail::pair_half(pair, e.h);
}

/// Load a per-column (align) vector: for each column c the lane's elements have, `src[c]`
/// where c < `limit`, 0 past it. The four lanes of a quad read adjacent pairs, each pair below
/// `limit` in one packed load (`src` must be aligned to a pair); every warp of a block that
/// loads the same vector reads the same addresses (L1 holds them).
template <ducks::rv::align V, class T>
KITTENS_DEVICE void load_columns(V &v, const T *src, int limit) {
  const int q = 2 * (laneid() % 4);
  KITTENS_UNROLL for (int i = 0; i < V::tiles; ++i) {
    KITTENS_UNROLL for (int p = 0; p < 2; ++p) {
      const int c = 16 * i + 8 * p + q;
      float2 f;
      if (c + 1 < limit) {
        f = pair_to_float2(*reinterpret_cast<const packed_t<T> *>(src + c));
      } else {
        f.x = c < limit ? convert<float>(src[c]) : 0.f;
        f.y = 0.f;
      }
      v.data[i][p] = make_pair_from_float<typename V::dtype>(f.x, f.y);
    }
  }
}

/// Load an ortho per-row vector from `src[row0 + r]` for the warp's rows r with
/// 0 <= row0 + r < row_limit, as floats, and 0 for the other rows. Every lane of a quad
/// reads its rows (the same addresses, one transaction).
template <ducks::rv::ortho V, class T>
KITTENS_DEVICE void load_rows(V &v, const T *src, long long row0, long long row_limit) {
  const int g = laneid() / 4;
  KITTENS_UNROLL for (int i = 0; i < V::tiles; ++i) {
    const long long lo = row0 + 16 * i + g, hi = lo + 8;
    const float x = lo >= 0 && lo < row_limit ? convert<float>(src[lo]) : 0.f;
    const float y = hi >= 0 && hi < row_limit ? convert<float>(src[hi]) : 0.f;
    v.data[i] = make_pair_from_float<typename V::dtype>(x, y);
  }
}

/// Store an ortho per-row vector to `dst[row0 + r]` for the warp's rows r with
/// row0 + r < row_limit. One lane per row writes (the first of its quad).
template <ducks::rv::ortho V, class T>
KITTENS_DEVICE void store_rows(T *dst, const V &v, long long row0, long long row_limit) {
  const int l = laneid();
  if (l % 4 != 0) return;
  const int g = l / 4;
  KITTENS_UNROLL for (int i = 0; i < V::tiles; ++i) {
    const float2 p = pair_to_float2(v.data[i]);
    const long long lo = row0 + 16 * i + g, hi = lo + 8;
    if (lo < row_limit) dst[lo] = convert<T>(p.x);
    if (hi < row_limit) dst[hi] = convert<T>(p.y);
  }
}

} // namespace kittens
