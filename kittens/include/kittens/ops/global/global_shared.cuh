/**
 * @file
 * @brief Synchronous (non-TMA) global <-> shared tile copies, 16 bytes per access.
 *
 * `load<THREADS>(dst, g, t)` copies the tile at tile coordinate `t` of `g` into shared tile
 * `dst` using THREADS consecutive threads (thread index `threadIdx.x % THREADS`); elements
 * past the end of the tensor (rows or columns) are written as zero. `store<THREADS>` is the
 * mirror and skips elements past the end. Callers synchronise the threads afterwards.
 */
#pragma once

#include "../../types/global/gl.cuh"
#include "../../types/shared/st.cuh"

namespace kittens {

/// Copy one tile from global to shared with zero fill past the tensor's end.
template <int THREADS, ducks::st::all ST, class GL> KITTENS_DEVICE void load(ST &dst, const GL &g, coord t) {
  using T = typename ST::dtype;
  constexpr int E = 16 / sizeof(T); // elements per 16-byte access
  static_assert(ST::cols % E == 0, "kittens::load(st, gl): tile cols must be a multiple of 16 bytes");
  constexpr int units = ST::rows * ST::cols / E;
  const coord e = tile_to_element(t, ST::rows, ST::cols);
  const int tid = threadIdx.x % THREADS;
  const int R = g.rows(), C = g.cols();
  const bool vec_ok = (C % E) == 0;
  char *base = reinterpret_cast<char *>(dst.base());
  KITTENS_UNROLL
  for (int u = tid; u < units; u += THREADS) {
    const int r = u / (ST::cols / E), c = (u % (ST::cols / E)) * E;
    const int gr = e.r + r, gc = e.c + c;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (gr < R) {
      const T *src = g.ptr({e.b, e.d, gr, gc});
      if (vec_ok && gc + E <= C) {
        v = *reinterpret_cast<const uint4 *>(src);
      } else { // ragged or unaligned row: element by element, zero past the end (stays in registers)
        union { uint4 u; T e[E]; } tmp;
        KITTENS_UNROLL for (int i = 0; i < E; ++i) tmp.e[i] = (gc + i < C) ? src[i] : constants<T>::zero();
        v = tmp.u;
      }
    }
    *reinterpret_cast<uint4 *>(base + dst.offset(r, c)) = v;
  }
}

/// Copy one shared tile to global, skipping elements past the tensor's end.
template <int THREADS, class GL, ducks::st::all ST> KITTENS_DEVICE void store(const GL &g, const ST &src, coord t) {
  using T = typename ST::dtype;
  constexpr int E = 16 / sizeof(T);
  static_assert(ST::cols % E == 0, "kittens::store(gl, st): tile cols must be a multiple of 16 bytes");
  constexpr int units = ST::rows * ST::cols / E;
  const coord e = tile_to_element(t, ST::rows, ST::cols);
  const int tid = threadIdx.x % THREADS;
  const int R = g.rows(), C = g.cols();
  const bool vec_ok = (C % E) == 0;
  const char *base = reinterpret_cast<const char *>(src.base());
  KITTENS_UNROLL
  for (int u = tid; u < units; u += THREADS) {
    const int r = u / (ST::cols / E), c = (u % (ST::cols / E)) * E;
    const int gr = e.r + r, gc = e.c + c;
    if (gr >= R) continue;
    const uint4 v = *reinterpret_cast<const uint4 *>(base + src.offset(r, c));
    T *dstp = g.ptr({e.b, e.d, gr, gc});
    if (vec_ok && gc + E <= C) {
      *reinterpret_cast<uint4 *>(dstp) = v;
    } else {
      union { uint4 u; T e[E]; } tmp;
      tmp.u = v;
      KITTENS_UNROLL for (int i = 0; i < E; ++i)
        if (gc + i < C) dstp[i] = tmp.e[i];
    }
  }
}

} // namespace kittens
