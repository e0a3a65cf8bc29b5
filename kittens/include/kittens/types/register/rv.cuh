/**
 * @file
 * @brief Register vectors: per-row or per-column values spread over a warp's lanes.
 *
 * Three layouts (g = lane / 4, q = lane % 4):
 *  - `ortho`: one pair per 16 elements; data[i].x is element 16i+g, data[i].y is 16i+g+8.
 *             Each value is held by the 4 lanes of its quad. This is the per-row vector of a
 *             row-layout tile (row max, row sum).
 *  - `align`: two pairs per 16 elements; data[i][0] = (16i+2q, 16i+2q+1),
 *             data[i][1] = (16i+8+2q, 16i+9+2q), replicated over the 8 groups. This is the
 *             per-column vector of a row-layout tile.
 *  - `naive`: element 32o + lane lives in data[o] of that lane (for loads/stores).
 */
#pragma once

#include "../../common/base_types.cuh"

namespace kittens {

namespace rv_layout {
struct ortho { static constexpr int id = 0; };
struct align { static constexpr int id = 1; };
struct naive { static constexpr int id = 2; };
} // namespace rv_layout

namespace detail {
template <class T, int N, class L> struct rv_storage;
template <class T, int N> struct rv_storage<T, N, rv_layout::ortho> { packed_t<T> data[N / 16]; };
template <class T, int N> struct rv_storage<T, N, rv_layout::align> { packed_t<T> data[N / 16][2]; };
template <class T, int N> struct rv_storage<T, N, rv_layout::naive> { T data[(N + 31) / 32]; };
} // namespace detail

/// Warp-owned register vector of N elements of dtype T in layout L.
template <class T, int N, class L = rv_layout::naive> struct rv : detail::rv_storage<T, N, L> {
  static_assert(element_type<T>, "kittens::rv: dtype must be float, bf16 or half");
  static_assert(std::is_same_v<L, rv_layout::naive> || N % 16 == 0,
                "kittens::rv: ortho/align vectors need a length that is a multiple of 16; pad the vector");
  using identifier = rv;
  using dtype = T;
  using layout = L;
  static constexpr int length = N;
  static constexpr int tiles = N / 16;
};

template <int N, class L = rv_layout::naive> using rv_fl = rv<float, N, L>;
template <int N, class L = rv_layout::naive> using rv_bf = rv<bf16, N, L>;
template <int N, class L = rv_layout::naive> using rv_hf = rv<half, N, L>;

namespace ducks::rv {
template <class V> concept all = requires { typename V::identifier; } && std::is_same_v<typename V::identifier,
    kittens::rv<typename V::dtype, V::length, typename V::layout>>;
template <class V> concept ortho = all<V> && std::is_same_v<typename V::layout, rv_layout::ortho>;
template <class V> concept align = all<V> && std::is_same_v<typename V::layout, rv_layout::align>;
template <class V> concept naive = all<V> && std::is_same_v<typename V::layout, rv_layout::naive>;
} // namespace ducks::rv

} // namespace kittens
