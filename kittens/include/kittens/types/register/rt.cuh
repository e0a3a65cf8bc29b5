/**
 * @file
 * @brief Register tiles: warp-owned R x C tiles made of 16x16 fragments.
 *
 * `rt<T, R, C, L>` holds `tiles[R/16][C/16]` fragments; each fragment is four packed pairs
 * per lane laid out as described in fragment_layout.cuh. In the row layout a 16-row slice
 * of a tile is exactly the mma.m16n8k16 A/C fragment and the wgmma accumulator of one
 * warp, so a warpgroup's m64nN accumulator is four warps' `rt<float, 16, N>`.
 */
#pragma once

#include "../../common/base_types.cuh"
#include "fragment_layout.cuh"
#include "rv.cuh"

namespace kittens {

namespace rt_layout {
/// Row layout: pairs run along a row (mma A/C, wgmma accumulators).
struct row { static constexpr bool is_row = true; };
/// Column layout: pairs run down a column (mma B operand).
struct col { static constexpr bool is_row = false; };
template <class L> using transpose = std::conditional_t<L::is_row, col, row>;
} // namespace rt_layout

/// One 16x16 fragment.
template <class T, class L> struct rt_base {
  static_assert(element_type<T>, "kittens::rt_base: dtype must be float, bf16 or half");
  using dtype = T;
  using layout = L;
  using packed = packed_t<T>;
  static constexpr int rows = 16, cols = 16;
  packed data[4];
};

/// Warp-owned register tile of R x C elements.
template <class T, int R, int C, class L = rt_layout::row> struct rt {
  static_assert(element_type<T>, "kittens::rt: dtype must be float, bf16 or half");
  static_assert(R > 0 && R % 16 == 0, "kittens::rt: rows must be a positive multiple of 16; pad the tile");
  static_assert(C > 0 && C % 16 == 0, "kittens::rt: cols must be a positive multiple of 16; pad the tile");
  using identifier = rt;
  using dtype = T;
  using layout = L;
  using packed = packed_t<T>;
  static constexpr int rows = R, cols = C, height = R / 16, width = C / 16;
  static constexpr int packed_per_thread = height * width * 4;
  /// One value per row (length R).
  using col_vec = rv<T, R, std::conditional_t<L::is_row, rv_layout::ortho, rv_layout::align>>;
  /// One value per column (length C).
  using row_vec = rv<T, C, std::conditional_t<L::is_row, rv_layout::align, rv_layout::ortho>>;

  rt_base<T, L> tiles[height][width];
};

template <int R, int C, class L = rt_layout::row> using rt_fl = rt<float, R, C, L>;
template <int R, int C, class L = rt_layout::row> using rt_bf = rt<bf16, R, C, L>;
template <int R, int C, class L = rt_layout::row> using rt_hf = rt<half, R, C, L>;

namespace ducks::rt {
template <class X> concept all = requires { typename X::identifier; } &&
    std::is_same_v<typename X::identifier, kittens::rt<typename X::dtype, X::rows, X::cols, typename X::layout>>;
template <class X> concept row_layout = all<X> && X::layout::is_row;
template <class X> concept col_layout = all<X> && !X::layout::is_row;
} // namespace ducks::rt

} // namespace kittens
