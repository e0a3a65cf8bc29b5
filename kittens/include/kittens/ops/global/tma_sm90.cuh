/**
 * @file
 * @brief TMA (bulk tensor copy) device ops: tile/vector load, store, store-add, wait groups.
 *
 * These are thread-scope: the calling thread issues one copy. Guard them with a lane/thread
 * test. Loads complete on a semaphore (arm it with `expect`/`expect_bytes` first); stores
 * and store-adds join the calling thread's bulk group, finished by `store_commit_group`
 * and waited for with `store_async_wait` (global writes done) or `store_async_read_wait`
 * (shared source may be overwritten). Shared memory written by ordinary stores must be
 * fenced (`fence_async_shared`) by each writer and synchronised before a TMA store reads it.
 */
#pragma once

#include "../../types/global/tma_map.cuh"
#include "../sync/mbarrier_sm90.cuh"

namespace kittens::tma {

namespace detail {
template <class ST> KITTENS_DEVICE void tile_coords(coord t, int (&c)[5]) {
  if constexpr (ST::swizzle_bytes == 0) {
    c[0] = t.c * ST::cols; c[1] = t.r * ST::rows; c[2] = t.d; c[3] = t.b; c[4] = 0;
  } else {
    c[0] = 0; c[1] = t.r * ST::rows; c[2] = t.c * (ST::cols / ST::chunk_cols); c[3] = t.d; c[4] = t.b;
  }
}
KITTENS_DEVICE uint64_t map_ptr(const void *m) { return reinterpret_cast<uint64_t>(m); }
} // namespace detail

/// Prefetch a descriptor into the descriptor cache.
template <class M> KITTENS_DEVICE void prefetch(const M &m) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(detail::map_ptr(&m.map)) : "memory");
}

/// Load the tile whose first element is at element coordinate `e` into `dst` (a tile may
/// start at any row, and at any column that is a multiple of its swizzle chunk,
/// ST::chunk_cols, when swizzled); completes `sizeof(ST)` bytes on `bar`, the part past the
/// global's edges zero-filled.
template <class ST> KITTENS_DEVICE void load_async_at(ST &dst, const tile_map<ST> &m, coord e, semaphore &bar) {
  if constexpr (ST::swizzle_bytes == 0) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(smem_addr(&dst)), "l"(detail::map_ptr(&m.map)),
                 "r"(e.c), "r"(e.r), "r"(e.d), "r"(e.b), "r"(smem_addr(&bar)) : "memory");
  } else if (m.chunk_copies == 0) {
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(smem_addr(&dst)), "l"(detail::map_ptr(&m.map)),
                 "r"(0), "r"(e.r), "r"(e.c / ST::chunk_cols), "r"(e.d), "r"(e.b), "r"(smem_addr(&bar)) : "memory");
  } else {
    // One copy per column chunk; each fills rows x swizzle_bytes of the tile, in order.
    for (int j = 0; j < m.chunk_copies; ++j)
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                   " [%0], [%1, {%2, %3, %4, %5}], [%6];\n"
                   ::"r"(smem_addr(&dst) + uint32_t(j * ST::rows * ST::swizzle_bytes)), "l"(detail::map_ptr(&m.map)),
                   "r"(e.c + j * ST::chunk_cols), "r"(e.r), "r"(e.d), "r"(e.b),
                   "r"(smem_addr(&bar)) : "memory");
  }
}

/// Load the tile at tile coordinate `t` into `dst`; completes `sizeof(ST)` bytes on `bar`.
template <class ST> KITTENS_DEVICE void load_async(ST &dst, const tile_map<ST> &m, coord t, semaphore &bar) {
  load_async_at(dst, m, tile_to_element(t, ST::rows, ST::cols), bar);
}

/// Store `src` to the tile at tile coordinate `t` (joins the bulk group).
template <class ST> KITTENS_DEVICE void store_async(const tile_map<ST> &m, const ST &src, coord t) {
  int c[5];
  detail::tile_coords<ST>(t, c);
  if constexpr (ST::swizzle_bytes == 0) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else if (m.chunk_copies == 0) {
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
                 ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]),
                 "r"(c[4]) : "memory");
  } else {
    for (int j = 0; j < m.chunk_copies; ++j)
      asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                   ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src) + uint32_t(j * ST::rows * ST::swizzle_bytes)),
                   "r"(t.c * ST::cols + j * ST::chunk_cols), "r"(t.r * ST::rows), "r"(t.d), "r"(t.b) : "memory");
  }
}

/// Atomically add `src` into the tile at tile coordinate `t` (joins the bulk group).
template <class ST> KITTENS_DEVICE void store_add_async(const tile_map<ST> &m, const ST &src, coord t) {
  int c[5];
  detail::tile_coords<ST>(t, c);
  if constexpr (ST::swizzle_bytes == 0) {
    asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else if (m.chunk_copies == 0) {
    asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
                 ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]),
                 "r"(c[4]) : "memory");
  } else {
    for (int j = 0; j < m.chunk_copies; ++j)
      asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                   ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src) + uint32_t(j * ST::rows * ST::swizzle_bytes)),
                   "r"(t.c * ST::cols + j * ST::chunk_cols), "r"(t.r * ST::rows), "r"(t.d), "r"(t.b) : "memory");
  }
}

/// Load the vector at (b, d, r, vector index c) into `dst`; completes SV::bytes bytes on `bar`.
template <class SV> KITTENS_DEVICE void load_async(SV &dst, const vector_map<SV> &m, coord t, semaphore &bar) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(smem_addr(&dst)), "l"(detail::map_ptr(&m.map)),
               "r"(t.c * SV::length), "r"(t.r), "r"(t.d), "r"(t.b), "r"(smem_addr(&bar)) : "memory");
}
/// Store a shared vector to (b, d, r, vector index c).
template <class SV> KITTENS_DEVICE void store_async(const vector_map<SV> &m, const SV &src, coord t) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
               ::"l"(detail::map_ptr(&m.map)), "r"(smem_addr(&src)), "r"(t.c * SV::length), "r"(t.r), "r"(t.d), "r"(t.b)
               : "memory");
}

/// Close the calling thread's current bulk group.
KITTENS_DEVICE void store_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// Wait until at most N of the calling thread's bulk groups are still writing global memory.
template <int N = 0> KITTENS_DEVICE void store_async_wait() { asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory"); }
/// Wait until at most N bulk groups are still reading their shared sources.
template <int N = 0> KITTENS_DEVICE void store_async_read_wait() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

} // namespace kittens::tma
