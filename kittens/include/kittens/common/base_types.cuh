/**
 * @file
 * @brief Scalar and packed-pair element types, their traits, constants and conversions.
 *
 * Register tiles store elements as packed pairs (two adjacent columns of one row in the
 * row layout), because that is how mma/wgmma fragments and `cvt.rn.bf16x2.f32` work.
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "config.cuh"

namespace kittens {

using bf16 = __nv_bfloat16;    ///< bfloat16 scalar
using half = __half;           ///< IEEE fp16 scalar
using bf16_2 = __nv_bfloat162; ///< packed pair of bf16
using half_2 = __half2;        ///< packed pair of fp16
using fp8e4m3 = __nv_fp8_e4m3; ///< 8-bit float, 4 exponent bits: a wgmma operand in shared memory
using fp8e5m2 = __nv_fp8_e5m2; ///< 8-bit float, 5 exponent bits: likewise

/// Element dtypes kittens tiles accept.
template <class T>
concept element_type = std::is_same_v<T, float> || std::is_same_v<T, bf16> || std::is_same_v<T, half>;

/// 8-bit float dtypes: tensor-core operands in shared memory (and in global memory), never
/// register tiles.
template <class T>
concept fp8_type = std::is_same_v<T, fp8e4m3> || std::is_same_v<T, fp8e5m2>;

/// Dtypes of shared tiles and global tensors.
template <class T>
concept memory_type = element_type<T> || fp8_type<T>;

/// 16-bit element dtypes (the ones tensor cores read from shared memory).
template <class T>
concept half_width_type = std::is_same_v<T, bf16> || std::is_same_v<T, half>;

/// Pair type and scalar type for every element dtype.
template <class T> struct packing;
template <> struct packing<float> { using scalar = float; using packed = float2; };
template <> struct packing<bf16> { using scalar = bf16; using packed = bf16_2; };
template <> struct packing<half> { using scalar = half; using packed = half_2; };
template <> struct packing<float2> { using scalar = float; using packed = float2; };
template <> struct packing<bf16_2> { using scalar = bf16; using packed = bf16_2; };
template <> struct packing<half_2> { using scalar = half; using packed = half_2; };

template <class T> using packed_t = typename packing<T>::packed;
template <class T> using scalar_t = typename packing<T>::scalar;

/// PTX type suffix used in instruction names for a dtype (".bf16", ".f16", ".f32").
template <class T> struct ptx_name;
template <> struct ptx_name<bf16> { static constexpr const char *value = "bf16"; };
template <> struct ptx_name<half> { static constexpr const char *value = "f16"; };
template <> struct ptx_name<float> { static constexpr const char *value = "f32"; };

// ---------------------------------------------------------------------------------------
// Conversions. `convert<To>(x)` works on scalars and on packed pairs (pair -> pair).
// Float to 16-bit conversions round to nearest even.
// ---------------------------------------------------------------------------------------
namespace detail {
template <class To, class From> struct convertor;
template <class T> struct convertor<T, T> { static KITTENS_HOST_DEVICE T op(const T &x) { return x; } };
template <> struct convertor<float, bf16> { static KITTENS_HOST_DEVICE float op(const bf16 &x) { return __bfloat162float(x); } };
template <> struct convertor<bf16, float> { static KITTENS_HOST_DEVICE bf16 op(const float &x) { return __float2bfloat16_rn(x); } };
template <> struct convertor<float, half> { static KITTENS_HOST_DEVICE float op(const half &x) { return __half2float(x); } };
template <> struct convertor<half, float> { static KITTENS_HOST_DEVICE half op(const float &x) { return __float2half_rn(x); } };
template <> struct convertor<bf16, half> { static KITTENS_HOST_DEVICE bf16 op(const half &x) { return __float2bfloat16_rn(__half2float(x)); } };
template <> struct convertor<half, bf16> { static KITTENS_HOST_DEVICE half op(const bf16 &x) { return __float2half_rn(__bfloat162float(x)); } };
template <> struct convertor<float2, bf16_2> { static KITTENS_HOST_DEVICE float2 op(const bf16_2 &x) { return __bfloat1622float2(x); } };
template <> struct convertor<bf16_2, float2> { static KITTENS_HOST_DEVICE bf16_2 op(const float2 &x) { return __float22bfloat162_rn(x); } };
template <> struct convertor<float2, half_2> { static KITTENS_HOST_DEVICE float2 op(const half_2 &x) { return __half22float2(x); } };
template <> struct convertor<half_2, float2> { static KITTENS_HOST_DEVICE half_2 op(const float2 &x) { return __float22half2_rn(x); } };
template <> struct convertor<bf16_2, half_2> { static KITTENS_HOST_DEVICE bf16_2 op(const half_2 &x) { return __float22bfloat162_rn(__half22float2(x)); } };
template <> struct convertor<half_2, bf16_2> { static KITTENS_HOST_DEVICE half_2 op(const bf16_2 &x) { return __float22half2_rn(__bfloat1622float2(x)); } };
} // namespace detail

/// Convert a scalar or a packed pair to another dtype (pairs stay pairs).
template <class To, class From> KITTENS_HOST_DEVICE To convert(const From &x) {
  return detail::convertor<To, From>::op(x);
}

/// Build a packed pair of dtype T from two floats.
template <class T> KITTENS_HOST_DEVICE packed_t<T> make_pair_from_float(float a, float b) {
  return convert<packed_t<T>>(make_float2(a, b));
}
/// Unpack a pair of any dtype into two floats.
template <class P> KITTENS_HOST_DEVICE float2 pair_to_float2(const P &p) { return convert<float2>(p); }

/// Reinterpret a packed 16-bit pair as a 32-bit register (what mma/wgmma/stmatrix take).
template <class P> KITTENS_DEVICE uint32_t as_u32(const P &p) {
  static_assert(sizeof(P) == 4, "kittens::as_u32: only 4-byte packed pairs (bf16_2, half_2) fit one 32-bit register");
  return *reinterpret_cast<const uint32_t *>(&p);
}
/// Reinterpret a 32-bit register as a packed 16-bit pair.
template <class P> KITTENS_DEVICE P from_u32(uint32_t u) {
  static_assert(sizeof(P) == 4, "kittens::from_u32: only 4-byte packed pairs (bf16_2, half_2) fit one 32-bit register");
  return *reinterpret_cast<const P *>(&u);
}

/// Constants per dtype (as that dtype).
template <class T> struct constants {
  static KITTENS_HOST_DEVICE T zero() { return convert<T>(0.0f); }
  static KITTENS_HOST_DEVICE T one() { return convert<T>(1.0f); }
  static KITTENS_HOST_DEVICE T pos_infty() { return convert<T>(INFINITY); }
  static KITTENS_HOST_DEVICE T neg_infty() { return convert<T>(-INFINITY); }
};
template <> struct constants<float> {
  static KITTENS_HOST_DEVICE float zero() { return 0.0f; }
  static KITTENS_HOST_DEVICE float one() { return 1.0f; }
  static KITTENS_HOST_DEVICE float pos_infty() { return INFINITY; }
  static KITTENS_HOST_DEVICE float neg_infty() { return -INFINITY; }
};

} // namespace kittens
