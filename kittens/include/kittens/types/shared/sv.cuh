/**
 * @file
 * @brief Shared vectors: N contiguous elements, storage padded to a multiple of 128 bytes.
 */
#pragma once

#include "../../common/base_types.cuh"

namespace kittens {

/// Shared vector of N elements of T (128-byte aligned so TMA can fill it).
template <class T, int N> struct alignas(128) sv {
  static_assert(element_type<T>, "kittens::sv: dtype must be float, bf16 or half");
  static_assert((N * sizeof(T)) % 16 == 0, "kittens::sv: a shared vector must be a multiple of 16 bytes long (TMA granule); pad N");
  using identifier = sv;
  using dtype = T;
  static constexpr int length = N;
  static constexpr int bytes = N * (int)sizeof(T);
  T data[N];
  KITTENS_HOST_DEVICE T &operator[](int i) { return data[i]; }
  KITTENS_HOST_DEVICE const T &operator[](int i) const { return data[i]; }
};

template <int N> using sv_fl = sv<float, N>;
template <int N> using sv_bf = sv<bf16, N>;
template <int N> using sv_hf = sv<half, N>;

namespace ducks::sv {
template <class X> concept all = requires { typename X::identifier; } &&
    std::is_same_v<typename X::identifier, kittens::sv<typename X::dtype, X::length>>;
}

} // namespace kittens
