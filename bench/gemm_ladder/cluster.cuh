/**
 * @file
 * @brief Cluster helpers the ladder's 2-CTA experiments (L7, L8) share: the block's rank,
 * a cluster-wide barrier, an arrival on the peer's semaphore, and a multicast TMA load.
 */
#pragma once

#include <kittens/kittens.cuh>

namespace ladder {

__device__ inline uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
/// Every thread of both blocks; lanes of a warp may arrive apart (not .aligned).
__device__ inline void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
/// Arrive on the semaphore at the same shared-memory offset in block `cta` of the cluster.
__device__ inline void arrive_cluster(kittens::semaphore &s, uint32_t cta) {
  asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
               " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
               ::"r"(kittens::smem_addr(&s)), "r"(cta) : "memory");
}
/// Load tile `t` of `m` into `dst` of every block in `mask`, completing its bytes on the
/// semaphore at the same offset in each.
template <class ST>
__device__ inline void load_multicast(void *dst, const kittens::tile_map<ST> &m, kittens::coord t, kittens::semaphore &bar,
                                      uint16_t mask) {
  int c[5];
  kittens::tma::detail::tile_coords<ST>(t, c);
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;\n"
               ::"r"(kittens::smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(&m.map)), "r"(c[0]), "r"(c[1]), "r"(c[2]),
                 "r"(c[3]), "r"(c[4]), "r"(kittens::smem_addr(&bar)), "h"(mask) : "memory");
}

} // namespace ladder
