/**
 * @file
 * @brief Shared tiles in the swizzled column-chunk layout TMA and wgmma use, plus subtile views.
 *
 * Picture for `st<bf16, 16, 128>` with the default 128-byte swizzle (64-column chunks):
 *
 *   bytes 0..2047      chunk 0: rows 0..15 x cols  0..63, each row one 128 B line
 *   bytes 2048..4095   chunk 1: rows 0..15 x cols 64..127
 *
 * and inside every 1024-byte repeat the 16-byte unit index of a line is XORed with the line
 * index mod 8 (see common/swizzle.cuh). k tiles `st<bf16, R, 64>` in a row are therefore the
 * same bytes as one `st<bf16, R, 64k>`, which is how wide wgmma operands are formed.
 */
#pragma once

#include "../../common/base_types.cuh"
#include "../../common/swizzle.cuh"
#include "../../common/util.cuh"

namespace kittens {

/// Alignment every swizzled shared tile needs (the XOR uses absolute address bits).
inline constexpr int SHARED_TILE_ALIGN = 1024;

template <class T, int R, int C, int S, int PR, int PC> struct st_view;

/// Shared tile of R x C elements of T with swizzle width S bytes (0 = plain row-major).
template <class T, int R, int C, int S = layout::default_swizzle_bytes(sizeof(T), C)>
struct alignas(SHARED_TILE_ALIGN) st {
  static_assert(memory_type<T>, "kittens::st: dtype must be float, bf16, half or an fp8 type");
  static_assert(layout::valid_swizzle_bytes(S), "kittens::st: swizzle must be 0, 32, 64 or 128 bytes");
  static_assert(S != 0 || (C * sizeof(T)) % 16 == 0,
                "kittens::st: an unswizzled tile needs rows that are a multiple of 16 bytes; widen the tile");
  static_assert((S == 0 ? 0 : C % (S / (int)sizeof(T))) == 0,
                "kittens::st: cols must be a multiple of the swizzle chunk (S / sizeof(T)); pick a smaller swizzle or pad cols");
  static_assert(R % 8 == 0, "kittens::st: rows must be a multiple of 8 (one swizzle atom); pad the tile");
  using identifier = st;
  using dtype = T;
  static constexpr int rows = R, cols = C, swizzle_bytes = S;
  static constexpr int parent_rows = R, parent_cols = C;
  static constexpr int chunk_cols = layout::chunk_cols(sizeof(T), S, C);
  /// Bytes between consecutive column chunks.
  static constexpr int chunk_stride_bytes = S == 0 ? R * C * (int)sizeof(T) : R * S;
  static constexpr int num_elements = R * C;
  static constexpr int bytes = R * C * (int)sizeof(T);

  T data[R * C];

  /// Pointer to the (1024-byte-aligned) base of the storage.
  KITTENS_HOST_DEVICE T *base() { return data; }
  KITTENS_HOST_DEVICE const T *base() const { return data; }
  /// First row / column of this tile inside `base()` (always 0 for a whole tile).
  KITTENS_HOST_DEVICE constexpr int row0() const { return 0; }
  KITTENS_HOST_DEVICE constexpr int col0() const { return 0; }
  /// Swizzled byte offset of element (r, c) from base().
  static KITTENS_HOST_DEVICE constexpr uint32_t offset(int r, int c) {
    return layout::tile_offset(r, c, R, C, sizeof(T), S);
  }
  KITTENS_HOST_DEVICE T &at(int r, int c) { return *reinterpret_cast<T *>(reinterpret_cast<char *>(data) + offset(r, c)); }
  KITTENS_HOST_DEVICE const T &at(int r, int c) const {
    return *reinterpret_cast<const T *>(reinterpret_cast<const char *>(data) + offset(r, c));
  }

  /// View of the SR x SC block at block coordinates (i, j).
  template <int SR, int SC> KITTENS_HOST_DEVICE st_view<T, SR, SC, S, R, C> subtile(int i, int j) {
    static_assert(R % SR == 0 && C % SC == 0, "kittens::st::subtile: the subtile must divide the tile evenly");
    return st_view<T, SR, SC, S, R, C>{data, i * SR, j * SC};
  }
};

/// A rectangular window into a parent shared tile (keeps the parent's layout).
template <class T, int R, int C, int S, int PR, int PC> struct st_view {
  using identifier = st_view;
  using dtype = T;
  static constexpr int rows = R, cols = C, swizzle_bytes = S;
  static constexpr int parent_rows = PR, parent_cols = PC;
  static constexpr int chunk_cols = layout::chunk_cols(sizeof(T), S, PC);
  static constexpr int chunk_stride_bytes = S == 0 ? PR * PC * (int)sizeof(T) : PR * S;
  T *parent;
  int r0, c0;

  KITTENS_HOST_DEVICE T *base() const { return parent; }
  KITTENS_HOST_DEVICE int row0() const { return r0; }
  KITTENS_HOST_DEVICE int col0() const { return c0; }
  KITTENS_HOST_DEVICE uint32_t offset(int r, int c) const {
    return layout::tile_offset(r + r0, c + c0, PR, PC, sizeof(T), S);
  }
  KITTENS_HOST_DEVICE T &at(int r, int c) const { return *reinterpret_cast<T *>(reinterpret_cast<char *>(parent) + offset(r, c)); }
};

template <int R, int C, int S = layout::default_swizzle_bytes(2, C)> using st_bf = st<bf16, R, C, S>;
template <int R, int C, int S = layout::default_swizzle_bytes(2, C)> using st_hf = st<half, R, C, S>;
template <int R, int C, int S = layout::default_swizzle_bytes(4, C)> using st_fl = st<float, R, C, S>;
template <int R, int C, int S = layout::default_swizzle_bytes(1, C)> using st_fp8e4m3 = st<fp8e4m3, R, C, S>;
template <int R, int C, int S = layout::default_swizzle_bytes(1, C)> using st_fp8e5m2 = st<fp8e5m2, R, C, S>;

namespace ducks::st {
/// Anything with the shared-tile interface (a whole tile or a view).
template <class X> concept all = requires(X &x) {
  typename X::dtype;
  X::rows; X::cols; X::swizzle_bytes; X::chunk_stride_bytes;
  x.base(); x.offset(0, 0);
};
/// A whole tile (not a view): what TMA boxes and `sizeof` byte counts need.
template <class X> concept whole = all<X> && std::is_same_v<typename X::identifier,
    kittens::st<typename X::dtype, X::rows, X::cols, X::swizzle_bytes>>;
} // namespace ducks::st

} // namespace kittens
