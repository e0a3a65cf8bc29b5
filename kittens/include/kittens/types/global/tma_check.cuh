/**
 * @file
 * @brief TMA tensor-map requests and their validation (plain host C++, unit-tested with g++).
 *
 * A request lists exactly what cuTensorMapEncodeTiled will be given. `validate` applies the
 * hardware rules and returns an empty string or a message that says which rule broke, with
 * the numbers, and what to change. The descriptor builder refuses to encode a map that
 * fails, so a bad map is an error message on the host rather than a hang on the device.
 *
 * Three request shapes:
 *  - swizzled tile (5-D): dims {chunk_cols, rows, cols / chunk_cols, depth, batch},
 *    strides {row, swizzle bytes, depth, batch}, box {chunk_cols, tile_rows,
 *    tile_cols / chunk_cols, 1, 1}. One TMA lands a multi-chunk tile in column-chunk order.
 *  - plain tile (4-D): dims {cols, rows, depth, batch}, box {tile_cols, tile_rows, 1, 1}.
 *  - vector (4-D): like a plain tile with box {length, 1, 1, 1}.
 *
 * Each builder takes the tensor's element strides of rows, depth and batch (`strides`), or
 * computes them for a packed tensor; the columns are always contiguous.
 */
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace kittens::tma_check {

struct request {
  int rank = 0;
  uint64_t dims[5] = {1, 1, 1, 1, 1};         ///< elements per dim, innermost first
  uint64_t strides[4] = {0, 0, 0, 0};         ///< bytes, for dims 1..rank-1
  uint32_t box[5] = {1, 1, 1, 1, 1};          ///< elements per dim in one copy
  int elem_bytes = 2;
  int swizzle_bytes = 0;                      ///< 0, 32, 64 or 128
  uint64_t global_address = 0;
  const char *what = "tensor map";            ///< for messages
};

inline std::string num(uint64_t x) { return std::to_string(x); }

/// Element strides of a 4-D tensor's rows, depth and batch (its columns are contiguous).
struct strides {
  uint64_t row = 0, depth = 0, batch = 0;
};
/// The strides of a packed (B, D, R, C) tensor.
inline strides packed(uint64_t D, uint64_t R, uint64_t C) { return {C, R * C, D * R * C}; }

/// Empty if `q` is a legal TMA tile map; otherwise an explanation.
inline std::string validate(const request &q) {
  const std::string w = std::string(q.what) + ": ";
  if (q.rank < 1 || q.rank > 5) return w + "rank " + num(q.rank) + " is outside 1..5";
  if (!(q.elem_bytes == 1 || q.elem_bytes == 2 || q.elem_bytes == 4 || q.elem_bytes == 8))
    return w + "element size " + num(q.elem_bytes) + " bytes is not 1, 2, 4 or 8";
  if (q.global_address % 16 != 0)
    return w + "global address 0x" + [&] { char b[32]; std::snprintf(b, sizeof b, "%llx", (unsigned long long)q.global_address); return std::string(b); }() +
           " is not 16-byte aligned; allocate with cudaMalloc or offset by a multiple of 16 bytes";
  for (int i = 0; i < q.rank; ++i) {
    if (q.dims[i] == 0 || q.dims[i] > (uint64_t(1) << 32))
      return w + "dim " + num(i) + " is " + num(q.dims[i]) + "; it must be in 1..2^32";
    if (q.box[i] == 0 || q.box[i] > 256)
      return w + "box dim " + num(i) + " is " + num(q.box[i]) + "; TMA boxes are 1..256 elements per dim, use a smaller tile";
  }
  for (int i = 0; i + 1 < q.rank; ++i) {
    if (q.strides[i] % 16 != 0)
      return w + "stride of dim " + num(i + 1) + " is " + num(q.strides[i]) +
             " bytes, not a multiple of 16; pad the row length (e.g. cols * " + num(q.elem_bytes) + " bytes) to 16 bytes";
    if (q.strides[i] >= (uint64_t(1) << 40))
      return w + "stride of dim " + num(i + 1) + " is " + num(q.strides[i]) + " bytes, at least 2^40";
  }
  const uint64_t inner = uint64_t(q.box[0]) * q.elem_bytes;
  if (inner % 16 != 0)
    return w + "inner box is " + num(inner) + " bytes, not a multiple of 16; make the tile's inner extent a multiple of " +
           num(16 / q.elem_bytes) + " elements";
  if (q.swizzle_bytes != 0) {
    if (q.swizzle_bytes != 32 && q.swizzle_bytes != 64 && q.swizzle_bytes != 128)
      return w + "swizzle " + num(q.swizzle_bytes) + " bytes is not 32, 64 or 128";
    if (inner > uint64_t(q.swizzle_bytes))
      return w + "inner box is " + num(inner) + " bytes but swizzle " + num(q.swizzle_bytes) +
             " allows at most " + num(q.swizzle_bytes) + "; split the tile into column chunks";
  }
  return {};
}

/// Swizzled 5-D tile request: a tile_rows x tile_cols shared tile of a (B, D, R, C) tensor.
inline request tile_request(uint64_t addr, int elem_bytes, int swizzle_bytes, int tile_rows, int tile_cols,
                            uint64_t B, uint64_t D, uint64_t R, uint64_t C, strides s, const char *what = "tile map") {
  request q;
  q.what = what;
  q.rank = 5;
  q.elem_bytes = elem_bytes;
  q.swizzle_bytes = swizzle_bytes;
  q.global_address = addr;
  const uint64_t cc = uint64_t(swizzle_bytes / elem_bytes);
  q.dims[0] = cc;
  q.dims[1] = R;
  q.dims[2] = C / cc;
  q.dims[3] = D;
  q.dims[4] = B;
  q.strides[0] = s.row * elem_bytes;
  q.strides[1] = uint64_t(swizzle_bytes);
  q.strides[2] = s.depth * elem_bytes;
  q.strides[3] = s.batch * elem_bytes;
  q.box[0] = uint32_t(cc);
  q.box[1] = uint32_t(tile_rows);
  q.box[2] = uint32_t(tile_cols / int(cc));
  return q;
}
inline request tile_request(uint64_t addr, int elem_bytes, int swizzle_bytes, int tile_rows, int tile_cols,
                            uint64_t B, uint64_t D, uint64_t R, uint64_t C, const char *what = "tile map") {
  return tile_request(addr, elem_bytes, swizzle_bytes, tile_rows, tile_cols, B, D, R, C, packed(D, R, C), what);
}

/// Extra rule for swizzled tiles: the chunked view needs cols to be whole chunks.
inline std::string validate_tile(const request &q, uint64_t C, int tile_cols) {
  const uint64_t cc = q.dims[0];
  if (cc == 0 || C % cc != 0)
    return std::string(q.what) + ": tensor has " + num(C) + " columns, not a multiple of the " + num(cc) +
           "-element swizzle chunk; pad the columns or use a narrower swizzle";
  if (tile_cols % int(cc) != 0)
    return std::string(q.what) + ": tile has " + num(tile_cols) + " columns, not a multiple of the " + num(cc) +
           "-element swizzle chunk";
  return validate(q);
}

/// Plain (unswizzled) 4-D tile request with box {box_cols, box_rows, 1, 1}.
inline request plain_request(uint64_t addr, int elem_bytes, int box_rows, int box_cols, uint64_t B, uint64_t D,
                             uint64_t R, uint64_t C, strides s, const char *what = "plain map") {
  request q;
  q.what = what;
  q.rank = 4;
  q.elem_bytes = elem_bytes;
  q.swizzle_bytes = 0;
  q.global_address = addr;
  q.dims[0] = C;
  q.dims[1] = R;
  q.dims[2] = D;
  q.dims[3] = B;
  q.strides[0] = s.row * elem_bytes;
  q.strides[1] = s.depth * elem_bytes;
  q.strides[2] = s.batch * elem_bytes;
  q.box[0] = uint32_t(box_cols);
  q.box[1] = uint32_t(box_rows);
  return q;
}
inline request plain_request(uint64_t addr, int elem_bytes, int box_rows, int box_cols, uint64_t B, uint64_t D,
                             uint64_t R, uint64_t C, const char *what = "plain map") {
  return plain_request(addr, elem_bytes, box_rows, box_cols, B, D, R, C, packed(D, R, C), what);
}

/// Swizzled 4-D request for tensors whose rows are not whole swizzle chunks: the map
/// spans the real columns, and one copy moves one chunk (a tile_rows x chunk box), so a
/// tile takes tile_cols / chunk copies and the hardware zero-fills (or clips) the columns
/// past the end.
inline request chunk_request(uint64_t addr, int elem_bytes, int swizzle_bytes, int tile_rows, uint64_t B,
                             uint64_t D, uint64_t R, uint64_t C, strides s, const char *what = "tile map") {
  request q = plain_request(addr, elem_bytes, tile_rows, swizzle_bytes / elem_bytes, B, D, R, C, s, what);
  q.swizzle_bytes = swizzle_bytes;
  return q;
}
inline request chunk_request(uint64_t addr, int elem_bytes, int swizzle_bytes, int tile_rows, uint64_t B,
                             uint64_t D, uint64_t R, uint64_t C, const char *what = "tile map") {
  return chunk_request(addr, elem_bytes, swizzle_bytes, tile_rows, B, D, R, C, packed(D, R, C), what);
}

/// Vector request: `length` contiguous elements along the columns of one row.
inline request vector_request(uint64_t addr, int elem_bytes, int length, uint64_t B, uint64_t D, uint64_t R,
                              uint64_t C) {
  return plain_request(addr, elem_bytes, 1, length, B, D, R, C, "vector map");
}

} // namespace kittens::tma_check
