// GEMM ladder level 8 (experiment): what the finish's shared memory costs, with and
// without 2-CTA clusters.
//
// L6 and L7 stage C through a 64 KiB tile of shared memory for a TMA store: L6 aliases it
// with the fourth stage (the consumers meet, and the producer may refill that stage only
// after the store has read it), L7 keeps a separate one and so has room for three stages
// only. Here the finish needs at most 32 KiB, so four 48 KiB stages fit whatever the
// cluster, and a warpgroup goes on to its next tile without meeting the other:
//   direct  each consumer warp writes its accumulator to C from registers (4-byte bf16
//           pairs): no shared memory at all;
//   staged  each warpgroup stores its 64 x 256 result in four 64 x 64 chunks through two
//           8 KiB buffers of its own, a chunk's buffer reused once the TMA store two chunks
//           back has read it.
// Variants, each in one binary against cuBLAS (cN: blocks per cluster sharing the B tile by
// multicast, sN: stages):
//   L8_c2_s4_direct, L8_c1_s4_direct, L8_c2_s3_direct, L8_c2_s4_staged, L8_c1_s4_staged.
// Persistent over (pairs of) tiles in grouped order, group 8.
#include "cluster.cuh"
#include "harness.cuh"

using namespace kittens;
using ladder::arrive_cluster;
using ladder::cluster_rank;
using ladder::cluster_sync_all;
using ladder::load_multicast;

namespace {

using a_tile = st_bf<128, 64>;
using b_tile = st_bf<64, 256>;
using b_half = st_bf<64, 128>;
using c_chunk = st_bf<64, 64>;
struct stage_t { a_tile a; b_tile b; };
struct globals {
  tile_map<a_tile> A;
  tile_map<b_half> B;
  tile_map<c_chunk> Cm;
  bf16 *C;
  int M, N;
  int m_units, n_tiles, k_iters, group;
};
constexpr uint32_t STAGE_TX = 128 * 64 * 2 + 64 * 256 * 2; // A + B (both halves)
enum class finish { direct, staged };

/// This warp's 16 rows of the warpgroup's 64 x 256 accumulator, straight to C (row-major).
__device__ inline void store_direct(bf16 *C, int ldc, int row0, int col0, const rt_fl<16, 256> &acc) {
  const int l = laneid();
  bf16 *base = C + (long long)(row0 + 16 * (warpid() % 4)) * ldc + col0;
  KITTENS_UNROLL for (int j = 0; j < 16; ++j)
    KITTENS_UNROLL for (int k = 0; k < 4; ++k) {
      const auto p = fragment::row_layout(l, k, 0);
      *reinterpret_cast<bf16_2 *>(base + (long long)p.row * ldc + 16 * j + p.col) =
          convert<bf16_2>(pair_to_float2(acc.tiles[0][j].data[k]));
    }
}

/// The warpgroup's 64 x 256 accumulator through its two chunk buffers, one TMA store per
/// 64 x 64 chunk; a buffer is written again once the store two chunks back has read it.
__device__ inline void store_staged(const tile_map<c_chunk> &C, c_chunk *buf, int wg, int row_tile, int col_chunk0,
                                    const rt_fl<16, 256> &acc) {
  KITTENS_UNROLL for (int c = 0; c < 4; ++c) {
    if (warpgroup::laneid() == 0) tma::store_async_read_wait<1>();
    warpgroup::sync(wg + 1);
    rt_fl<16, 64> part;
    KITTENS_UNROLL for (int j = 0; j < 4; ++j) part.tiles[0][j] = acc.tiles[0][4 * c + j];
    warpgroup::store(buf[c & 1], part);
    fence_async_shared();
    warpgroup::sync(wg + 1);
    if (warpgroup::laneid() == 0) {
      tma::store_async(C, buf[c & 1], {0, 0, row_tile, col_chunk0 + c});
      tma::store_commit_group();
    }
  }
}

template <int STAGES, int CLUSTER, finish F>
__global__ __launch_bounds__(384, 1) void l8(const __grid_constant__ globals g) {
  extern __shared__ char raw[];
  shared_allocator al(raw);
  auto &st = al.allocate<stage_t, STAGES>();
  __shared__ semaphore full[STAGES], empty[STAGES];
  const uint32_t rank = CLUSTER == 2 ? cluster_rank() : 0, peer = rank ^ 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      init_semaphore(full[s], 1);
      init_semaphore(empty[s], 8 * CLUSTER); // lane 0 of each consumer warp of the cluster's blocks
    }
    fence_semaphore_init();
  }
  if constexpr (CLUSTER == 2) cluster_sync_all();
  else __syncthreads();
  const int unit = blockIdx.x / CLUSTER, units = gridDim.x / CLUSTER;
  const int tasks = g.m_units * g.n_tiles;
  if (warpgroupid() == 2) {
    warpgroup::decrease_registers<40>();
    if (warpgroup::laneid() == 0) {
      int it = 0;
      for (int task = unit; task < tasks; task += units) {
        const tile_mn t = grouped_order(task, g.m_units, g.n_tiles, g.group);
        const int m = CLUSTER * t.m + int(rank), n = t.n;
        for (int k = 0; k < g.k_iters; ++k, ++it) {
          const int s = it % STAGES, use = it / STAGES;
          wait(empty[s], (use & 1) ^ 1);
          expect_bytes(full[s], STAGE_TX);
          tma::load_async(st[s].a, g.A, {0, 0, m, k}, full[s]);
          if constexpr (CLUSTER == 2) {
            char *half = reinterpret_cast<char *>(&st[s].b) + rank * sizeof(b_half);
            load_multicast(half, g.B, {0, 0, k, 2 * n + int(rank)}, full[s], 0x3);
          } else {
            char *b = reinterpret_cast<char *>(&st[s].b);
            tma::load_async(*reinterpret_cast<b_half *>(b), g.B, {0, 0, k, 2 * n}, full[s]);
            tma::load_async(*reinterpret_cast<b_half *>(b + sizeof(b_half)), g.B, {0, 0, k, 2 * n + 1}, full[s]);
          }
        }
      }
    }
  } else {
    warpgroup::increase_registers<232>();
    const int wg = warpgroupid();
    c_chunk *bufs = nullptr; // two per warpgroup
    if constexpr (F == finish::staged) bufs = al.allocate<c_chunk, 4>();
    rt_fl<16, 256> acc;
    int it = 0;
    for (int task = unit; task < tasks; task += units) {
      const tile_mn t = grouped_order(task, g.m_units, g.n_tiles, g.group);
      const int m = CLUSTER * t.m + int(rank), n = t.n;
      for (int k = 0; k < g.k_iters; ++k, ++it) {
        const int s = it % STAGES;
        wait(full[s], (it / STAGES) & 1);
        warpgroup::mma_AB(acc, st[s].a.template subtile<64, 64>(wg, 0), st[s].b, k > 0);
        warpgroup::mma_async_wait<0>();
        if (laneid() == 0) {
          arrive(empty[s]);
          if constexpr (CLUSTER == 2) arrive_cluster(empty[s], peer);
        }
      }
      if constexpr (F == finish::direct) store_direct(g.C, g.N, 128 * m + 64 * wg, 256 * n, acc);
      else store_staged(g.Cm, bufs + 2 * wg, wg, 2 * m + wg, 4 * n, acc);
    }
    if (warpgroup::laneid() == 0) tma::store_async_wait<0>();
  }
  if constexpr (CLUSTER == 2) cluster_sync_all(); // the peer may still arrive here or multicast into this block
}

template <int STAGES, int CLUSTER, finish F> int run(ladder::problem &p, const ladder::options &o, const char *name) {
  using G = gl<bf16, 1, 1, -1, -1>;
  globals g{make_tile_map<a_tile>(G(p.A, 1, 1, o.M, o.K)), make_tile_map<b_half>(G(p.B, 1, 1, o.K, o.N)),
            make_tile_map<c_chunk>(G(p.C, 1, 1, o.M, o.N)), p.C, o.M, o.N, o.M / (128 * CLUSTER), o.N / 256, o.K / 64, 8};
  auto kern = l8<STAGES, CLUSTER, F>;
  const int smem = STAGES * sizeof(stage_t) + (F == finish::staged ? 4 * sizeof(c_chunk) : 0) + 1024;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t cfg{};
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int sms = 0, resident = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cfg.gridDim = dim3(sms / CLUSTER * CLUSTER);
  CK(cudaOccupancyMaxActiveClusters(&resident, kern, &cfg));
  const int units = g.m_units * g.n_tiles;
  cfg.gridDim = dim3(CLUSTER * (units < resident ? units : resident));
  char config[320];
  std::snprintf(config, sizeof config,
                "persistent, %d blocks, cluster %d%s, 128x256x64 tiles, %d stages, %s, m64n256k16, "
                "setmaxnreg 40/232, grouped order group=8, dyn smem %d B",
                cfg.gridDim.x, CLUSTER, CLUSTER == 2 ? " (B multicast)" : "", STAGES,
                F == finish::direct ? "C stored from registers (no finish smem)"
                                    : "C staged per warpgroup in 64x64 chunks through two 8 KiB buffers, TMA store",
                smem);
  return ladder::measure(p, name, config, [&] { CK(cudaLaunchKernelEx(&cfg, kern, g)); });
}

} // namespace

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L8", o, 256, 256, 64)) return 2;
  ladder::problem p(o);
  const bool all = std::getenv("L8_ALL") != nullptr; // the direct variants too
  int rc = 0;
  rc |= run<4, 2, finish::staged>(p, o, "L8_c2_s4_staged");
  rc |= run<4, 1, finish::staged>(p, o, "L8_c1_s4_staged");
  if (all) {
    rc |= run<4, 2, finish::direct>(p, o, "L8_c2_s4_direct");
    rc |= run<4, 1, finish::direct>(p, o, "L8_c1_s4_direct");
    rc |= run<3, 2, finish::direct>(p, o, "L8_c2_s3_direct");
  }
  return rc;
}
