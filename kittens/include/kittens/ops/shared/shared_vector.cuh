/**
 * @file
 * @brief Register vector <-> shared vector moves (warp scope).
 *
 * Stores write each element once (from the lowest lane that holds it); loads fill every
 * replica. Callers synchronise the warp/block before reading what another warp stored.
 */
#pragma once

#include "../../common/util.cuh"
#include "../../types/register/rv.cuh"
#include "../../types/shared/sv.cuh"

namespace kittens {

/// Store a register vector into a shared vector of the same length.
template <ducks::rv::all RV, ducks::sv::all SV> KITTENS_DEVICE void store(SV &dst, const RV &src) {
  static_assert(RV::length == SV::length, "kittens::store(sv, rv): lengths differ");
  using T = typename SV::dtype;
  const int l = laneid(), g = l / 4, q = l % 4;
  if constexpr (ducks::rv::ortho<RV>) {
    if (q == 0)
      KITTENS_UNROLL for (int i = 0; i < RV::tiles; ++i) {
        float2 p = pair_to_float2(src.data[i]);
        dst[16 * i + g] = convert<T>(p.x);
        dst[16 * i + g + 8] = convert<T>(p.y);
      }
  } else if constexpr (ducks::rv::align<RV>) {
    if (g == 0)
      KITTENS_UNROLL for (int i = 0; i < RV::tiles; ++i) {
        float2 a = pair_to_float2(src.data[i][0]), b = pair_to_float2(src.data[i][1]);
        dst[16 * i + 2 * q] = convert<T>(a.x);
        dst[16 * i + 2 * q + 1] = convert<T>(a.y);
        dst[16 * i + 8 + 2 * q] = convert<T>(b.x);
        dst[16 * i + 9 + 2 * q] = convert<T>(b.y);
      }
  } else {
    KITTENS_UNROLL for (int o = 0; o < (RV::length + 31) / 32; ++o)
      if (32 * o + l < RV::length) dst[32 * o + l] = convert<T>(convert<float>(src.data[o]));
  }
}

/// Load a register vector from a shared vector of the same length.
template <ducks::rv::all RV, ducks::sv::all SV> KITTENS_DEVICE void load(RV &dst, const SV &src) {
  static_assert(RV::length == SV::length, "kittens::load(rv, sv): lengths differ");
  using T = typename RV::dtype;
  const int l = laneid(), g = l / 4, q = l % 4;
  if constexpr (ducks::rv::ortho<RV>) {
    KITTENS_UNROLL for (int i = 0; i < RV::tiles; ++i)
      dst.data[i] = convert<packed_t<T>>(make_float2(convert<float>(src[16 * i + g]), convert<float>(src[16 * i + g + 8])));
  } else if constexpr (ducks::rv::align<RV>) {
    KITTENS_UNROLL for (int i = 0; i < RV::tiles; ++i) {
      dst.data[i][0] = convert<packed_t<T>>(make_float2(convert<float>(src[16 * i + 2 * q]), convert<float>(src[16 * i + 2 * q + 1])));
      dst.data[i][1] = convert<packed_t<T>>(make_float2(convert<float>(src[16 * i + 8 + 2 * q]), convert<float>(src[16 * i + 9 + 2 * q])));
    }
  } else {
    KITTENS_UNROLL for (int o = 0; o < (RV::length + 31) / 32; ++o)
      dst.data[o] = (32 * o + l < RV::length) ? convert<T>(convert<float>(src[32 * o + l])) : constants<T>::zero();
  }
}

} // namespace kittens
