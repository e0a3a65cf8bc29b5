/**
 * @file
 * @brief Host-side TMA descriptor creation for shared tiles and vectors.
 *
 * `make_tile_map<ST>(g)` builds the map that moves one `ST` between shared memory and the
 * global tensor `g`; `make_vector_map<SV>(g)` the same for a shared vector. The maps are
 * plain structs meant to sit in a `__grid_constant__` kernel argument. Every request is
 * validated first (tma_check.cuh); a failure throws kittens::tma_error with the reason.
 *
 * cuTensorMapEncodeTiled is obtained through cudaGetDriverEntryPointByVersion, so programs
 * need no -lcuda.
 */
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../shared/st.cuh"
#include "../shared/sv.cuh"
#include "gl.cuh"
#include "tma_check.cuh"

namespace kittens {

/// TMA descriptor for shared tile type ST (swizzled 5-D map, or plain 4-D when ST is unswizzled).
template <class ST> struct tile_map {
  using tile = ST;
  CUtensorMap map;
  /// Swizzled tiles only: 0 when the map is the 5-D chunked view (rows are whole
  /// chunks: one copy per tile); otherwise the number of copies per tile, one per
  /// chunk, through a 4-D map over the real columns (ragged rows).
  int chunk_copies = 0;
};
/// TMA descriptor for shared vector type SV (4-D map along the columns).
template <class SV> struct vector_map {
  using vector = SV;
  CUtensorMap map;
};

/// Thrown when a TMA descriptor cannot be built; what() says which rule broke and how to fix it.
struct tma_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class T> constexpr CUtensorMapDataType tma_dtype() {
  if constexpr (std::is_same_v<T, bf16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  else if constexpr (fp8_type<T>) return CU_TENSOR_MAP_DATA_TYPE_UINT8; // moved as bytes
  else return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

inline CUtensorMapSwizzle tma_swizzle(int s) {
  return s == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : s == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
       : s == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
}

using encode_tiled_fn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                     const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

[[noreturn]] inline void tma_fail(const std::string &msg) {
  throw tma_error("kittens: cannot build TMA descriptor: " + msg);
}

/// The driver's cuTensorMapEncodeTiled, looked up once through the runtime.
inline encode_tiled_fn get_encode_tiled() {
  static encode_tiled_fn fn = [] {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr)
      tma_fail(std::string("the driver does not provide cuTensorMapEncodeTiled (") + cudaGetErrorString(e) +
               "); a CUDA 12+ driver is required");
    return reinterpret_cast<encode_tiled_fn>(p);
  }();
  return fn;
}

/// Validate and encode a request.
inline CUtensorMap encode(const tma_check::request &q, CUtensorMapDataType dt, const std::string &extra_error) {
  if (!extra_error.empty()) tma_fail(extra_error);
  if (std::string err = tma_check::validate(q); !err.empty()) tma_fail(err);
  CUtensorMap m;
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], es[5];
  for (int i = 0; i < 5; ++i) { dims[i] = q.dims[i]; box[i] = q.box[i]; es[i] = 1; }
  for (int i = 0; i < 4; ++i) strides[i] = q.strides[i];
  CUresult r = get_encode_tiled()(&m, dt, q.rank, reinterpret_cast<void *>(q.global_address), dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, tma_swizzle(q.swizzle_bytes),
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    tma_fail(std::string(q.what) + ": cuTensorMapEncodeTiled returned error " + std::to_string(int(r)) +
             " although the request passed validation");
  return m;
}

} // namespace detail

/// Build the TMA map that moves shared tiles of type ST to/from the global tensor g.
template <class ST, class GL> tile_map<ST> make_tile_map(const GL &g) {
  using T = typename ST::dtype;
  static_assert(std::is_same_v<T, typename GL::dtype>, "kittens::make_tile_map: tile and global dtypes differ");
  static_assert(ducks::st::whole<ST>, "kittens::make_tile_map: pass a whole shared tile type, not a subtile view");
  tile_map<ST> out;
  const uint64_t addr = reinterpret_cast<uint64_t>(g.raw);
  const tma_check::strides s{uint64_t(g.row_stride()), uint64_t(g.depth_stride()), uint64_t(g.batch_stride())};
  if constexpr (ST::swizzle_bytes == 0) {
    auto q = tma_check::plain_request(addr, sizeof(T), ST::rows, ST::cols, g.batch(), g.depth(), g.rows(), g.cols(), s);
    out.map = detail::encode(q, detail::tma_dtype<T>(), "");
  } else if (g.cols() % ST::chunk_cols == 0) {
    auto q = tma_check::tile_request(addr, sizeof(T), ST::swizzle_bytes, ST::rows, ST::cols, g.batch(), g.depth(),
                                     g.rows(), g.cols(), s);
    out.map = detail::encode(q, detail::tma_dtype<T>(), tma_check::validate_tile(q, g.cols(), ST::cols));
  } else {
    // Rows that end inside a chunk: the 5-D view would read the next row there, so move
    // the tile chunk by chunk through a map that knows where each row ends.
    auto q = tma_check::chunk_request(addr, sizeof(T), ST::swizzle_bytes, ST::rows, g.batch(), g.depth(),
                                      g.rows(), g.cols(), s);
    out.map = detail::encode(q, detail::tma_dtype<T>(), "");
    out.chunk_copies = ST::cols / ST::chunk_cols;
  }
  return out;
}

/// Build the TMA map that moves shared vectors of type SV along the columns of g.
template <class SV, class GL> vector_map<SV> make_vector_map(const GL &g) {
  using T = typename SV::dtype;
  static_assert(std::is_same_v<T, typename GL::dtype>, "kittens::make_vector_map: vector and global dtypes differ");
  vector_map<SV> out;
  auto q = tma_check::vector_request(reinterpret_cast<uint64_t>(g.raw), sizeof(T), SV::length, g.batch(), g.depth(),
                                     g.rows(), g.cols());
  out.map = detail::encode(q, detail::tma_dtype<T>(), "");
  return out;
}

} // namespace kittens
