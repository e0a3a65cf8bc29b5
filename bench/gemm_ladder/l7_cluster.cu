// GEMM ladder level 7 (experiment): L5's block design made persistent, with 2-CTA clusters
// that share the B tile through TMA multicast.
//
// The two blocks of a cluster compute vertically adjacent 128x256 tiles (same columns of
// B). Each block's producer loads its own A tile and one half (64x128) of the shared B
// tile, multicast into both blocks, so a block fetches 32 KiB per stage from L2 instead of
// 48 KiB. A stage of either block may be refilled only when the consumers of both blocks
// are done with it: every consumer warp releases the stage in its own block and in its
// peer. 3 stages and a separate 64 KiB epilogue buffer (no aliasing, so no cluster-wide
// finish protocol). Persistent over pairs of tiles in grouped order.
#include "cluster.cuh"
#include "harness.cuh"

using namespace kittens;

namespace {

constexpr int STAGES = 3;
using a_tile = st_bf<128, 64>;
using b_tile = st_bf<64, 256>;
using b_half = st_bf<64, 128>;
using c_tile = st_bf<64, 256>;
struct stage_t { a_tile a; b_tile b; };
struct globals {
  tile_map<a_tile> A;
  tile_map<b_half> B;
  tile_map<c_tile> C;
  int m_pairs, n_tiles, k_iters, group;
};
constexpr int SMEM = STAGES * sizeof(stage_t) + 2 * sizeof(c_tile) + 1024;
constexpr uint32_t STAGE_TX = 128 * 64 * 2 + 64 * 256 * 2; // A + both halves of B

using ladder::arrive_cluster;
using ladder::cluster_rank;
using ladder::cluster_sync_all;
using ladder::load_multicast;

__global__ __launch_bounds__(384, 1) void l7(const __grid_constant__ globals g) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &st = al.allocate<stage_t, STAGES>();
  auto &c = al.allocate<c_tile, 2>();
  __shared__ semaphore full[STAGES], empty[STAGES];
  const uint32_t rank = cluster_rank(), peer = rank ^ 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      init_semaphore(full[s], 1);
      init_semaphore(empty[s], 16); // lane 0 of each consumer warp of both blocks
    }
    fence_semaphore_init();
  }
  cluster_sync_all(); // no multicast or remote arrival before the peer's semaphores exist
  const int cluster = blockIdx.x / 2, clusters = gridDim.x / 2;
  const int pairs = g.m_pairs * g.n_tiles;
  if (warpgroupid() == 2) {
    warpgroup::decrease_registers<40>();
    if (warpgroup::laneid() == 0) {
      int it = 0;
      for (int pair = cluster; pair < pairs; pair += clusters) {
        const tile_mn t = grouped_order(pair, g.m_pairs, g.n_tiles, g.group);
        const int m = 2 * t.m + int(rank), n = t.n;
        for (int k = 0; k < g.k_iters; ++k, ++it) {
          const int s = it % STAGES, use = it / STAGES;
          wait(empty[s], (use & 1) ^ 1);
          expect_bytes(full[s], STAGE_TX);
          tma::load_async(st[s].a, g.A, {0, 0, m, k}, full[s]);
          char *half = reinterpret_cast<char *>(&st[s].b) + rank * sizeof(b_half);
          load_multicast(half, g.B, {0, 0, k, 2 * n + int(rank)}, full[s], 0x3);
        }
      }
    }
  } else {
    warpgroup::increase_registers<232>();
    const int wg = warpgroupid();
    rt_fl<16, 256> acc;
    int it = 0;
    for (int pair = cluster; pair < pairs; pair += clusters) {
      const tile_mn t = grouped_order(pair, g.m_pairs, g.n_tiles, g.group);
      const int m = 2 * t.m + int(rank), n = t.n;
      for (int k = 0; k < g.k_iters; ++k, ++it) {
        const int s = it % STAGES;
        wait(full[s], (it / STAGES) & 1);
        warpgroup::mma_AB(acc, st[s].a.subtile<64, 64>(wg, 0), st[s].b, k > 0);
        warpgroup::mma_async_wait<0>();
        if (laneid() == 0) {
          arrive(empty[s]);
          arrive_cluster(empty[s], peer);
        }
      }
      warpgroup::store(c[wg], acc);
      fence_async_shared();
      warpgroup::sync(wg + 1);
      if (warpgroup::laneid() == 0) {
        tma::store_async(g.C, c[wg], {0, 0, 2 * m + wg, n});
        tma::store_commit_group();
        tma::store_async_read_wait<0>();
      }
      warpgroup::sync(wg + 1);
    }
    if (warpgroup::laneid() == 0) tma::store_async_wait<0>();
  }
  cluster_sync_all(); // the peer may still arrive here or multicast into this block
}

} // namespace

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L7", o, 256, 256, 64)) return 2;
  ladder::problem p(o);
  using G = gl<bf16, 1, 1, -1, -1>;
  globals g{make_tile_map<a_tile>(G(p.A, 1, 1, o.M, o.K)), make_tile_map<b_half>(G(p.B, 1, 1, o.K, o.N)),
            make_tile_map<c_tile>(G(p.C, 1, 1, o.M, o.N)), o.M / 256, o.N / 256, o.K / 64, 8};
  CK(cudaFuncSetAttribute(l7, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  const int pairs = g.m_pairs * g.n_tiles;
  cudaLaunchConfig_t cfg{};
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = SMEM;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  // A persistent grid must not have more clusters than can be resident at once: the
  // ones left over would only start when others finish all their work. Pairs of SMs
  // come from within one GPC, so that can be fewer than half the SMs.
  int sms = 0, resident = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cfg.gridDim = dim3(sms / 2 * 2);
  CK(cudaOccupancyMaxActiveClusters(&resident, l7, &cfg));
  std::printf("L7: %d SMs, %d 2-block clusters resident at once\n", sms, resident);
  const int grid = 2 * (pairs < resident ? pairs : resident);
  cfg.gridDim = dim3(grid);
  int rc = 0;
  for (int group : {8, 16}) {
    g.group = group;
    char name[32], config[256];
    std::snprintf(name, sizeof name, group == 8 ? "L7_cluster" : "L7_cluster_g%d", group);
    std::snprintf(config, sizeof config,
                  "persistent, %d blocks in 2-CTA clusters, B tile multicast (each block loads A + half of B), 128x256x64 tiles, "
                  "3 stages + separate epilogue buffer, m64n256k16, setmaxnreg 40/232, grouped pairs group=%d, TMA-store epilogue",
                  grid, group);
    rc |= ladder::measure(p, name, config, [&] { CK(cudaLaunchKernelEx(&cfg, l7, g)); });
  }
  return rc;
}
