// GEMM ladder level 9: L6 (persistent LCF, 128x256x64 tiles, 4 stages, two consumer
// warpgroups) with the partial last wave split along K ("stream-K" for the remainder).
//
// With T tiles on G blocks and T % G = R != 0, L6 runs floor(T / G) full waves and a last
// wave of R tiles on R blocks while G - R idle. Here the first T - R tiles stay whole
// (G per round), and the R remaining tiles' k-steps, R * k_iters in all, are cut into G
// contiguous ranges, one per block. A range covers the end of one tile, perhaps whole
// tiles, and the start of another; each piece is a task with its own k range:
//  - a piece that ends a tile (the "finisher") waits for the pieces before it, adds their
//    fp32 partial sums to its accumulator and stores C as L6 does;
//  - any other piece writes its accumulator to a global fp32 workspace (one slot per piece,
//    each warpgroup its 64 rows, coalesced: float4 i of thread t at i * 128 + t) and counts
//    itself in the tile's counter (release), which the finisher polls (acquire).
// A block takes its pieces last tile first, so that the piece it contributes is written
// before the piece it finishes waits for the others: a finisher waits only for blocks of
// lower index, which contribute their piece first (no cycle; all blocks are resident, one
// per SM). The finisher resets the counters it waited on, ready for the next launch on
// this stream. Only where T > G and T % G != 0; otherwise L9 is L6.
#include "harness.cuh"

using namespace kittens;

struct sk_gemm {
  using a_tile = st_bf<128, 64>;
  using b_tile = st_bf<64, 256>;
  using c_tile = st_bf<64, 256>;
  struct layout {
    struct globals {
      tile_map<a_tile> A;
      tile_map<b_tile> B;
      tile_map<c_tile> C;
      int m_tiles, n_tiles, k_iters, group;
      int whole_rounds;      // rounds of whole tiles (G tiles each)
      int split_first;       // index of the first split tile (whole_rounds * G)
      long long split_iters; // k-steps of the split tiles, R * k_iters
      int max_pieces;        // workspace slots per split tile
      float4 *partials;      // [R][max_pieces][2 warpgroups][32][128] float4
      int *arrived;          // [R][2]: pieces written so far, per warpgroup
    };
    struct input_block { a_tile a; b_tile b; };
    struct finish_block { c_tile c[2]; };
    struct common_state {
      int m, n, k0;
      int split;  // split tile's index among the R (-1: a whole tile)
      int slot;   // this piece's slot (its order in the tile); the finisher: how many came before
      bool last;  // this piece ends its tile
    };
    struct consumer_state { rt_fl<16, 256> acc; };
  };
  static constexpr int INPUT_STAGES = 4;
  static constexpr int NUM_CONSUMER_WARPGROUPS = 2;
  static constexpr int PRODUCER_ARRIVALS = 1;
  static constexpr int PRODUCER_REGISTERS = 40;
  static constexpr int CONSUMER_REGISTERS = 232;

  /// The block whose range holds split k-step x (ranges: [b * S / G, (b + 1) * S / G)).
  __device__ static int owner(long long x, long long S, int G) {
    int b = static_cast<int>(x * G / S);
    while (b > 0 && b * S / G > x) --b;
    while ((b + 1) * S / G <= x) ++b;
    return b;
  }

  __device__ static void common_setup(lcf::common_args<sk_gemm> &a) {
    const auto &g = a.globals;
    const int G = gridDim.x, b = blockIdx.x, KI = g.k_iters;
    auto place = [&](int tile) {
      const tile_mn t = grouped_order(tile, g.m_tiles, g.n_tiles, g.group);
      a.common.m = t.m;
      a.common.n = t.n;
    };
    if (a.task_iter < g.whole_rounds) {
      if (a.task_iter * G + b >= g.m_tiles * g.n_tiles) { a.num_iters = -1; return; }
      place(a.task_iter * G + b);
      a.common.k0 = 0;
      a.common.split = -1;
      a.num_iters = KI;
      return;
    }
    const long long S = g.split_iters;
    const long long lo = b * S / G, hi = (b + 1) * S / G;
    if (lo >= hi) { a.num_iters = -1; return; }
    const int piece = a.task_iter - g.whole_rounds;
    const int t = static_cast<int>((hi - 1) / KI) - piece; // last tile of the range first
    if (t < lo / KI) { a.num_iters = -1; return; }
    const long long t0 = static_cast<long long>(t) * KI;
    const long long begin = lo > t0 ? lo : t0, end = hi < t0 + KI ? hi : t0 + KI;
    place(g.split_first + t);
    a.common.k0 = static_cast<int>(begin - t0);
    a.common.split = t;
    a.common.last = end == t0 + KI;
    a.common.slot = b - owner(t0, S, G);
    a.num_iters = static_cast<int>(end - begin);
  }
  struct producer {
    __device__ static void setup(lcf::producer_setup_args<sk_gemm> &) {}
    __device__ static void load(lcf::producer_load_args<sk_gemm> &a) {
      if (warpgroup::laneid() == 0) {
        const int k = a.common.k0 + a.iter;
        expect(a.inputs_arrived, a.input);
        tma::load_async(a.input.a, a.globals.A, {0, 0, a.common.m, k}, a.inputs_arrived);
        tma::load_async(a.input.b, a.globals.B, {0, 0, k, a.common.n}, a.inputs_arrived);
      }
    }
  };
  struct consumer {
    __device__ static void setup(lcf::consumer_setup_args<sk_gemm> &) {}
    __device__ static void compute(lcf::consumer_compute_args<sk_gemm> &a) {
      auto a_half = a.input.a.template subtile<64, 64>(warpgroupid(), 0);
      warpgroup::mma_AB(a.state.acc, a_half, a.input.b, a.iter > 0);
      warpgroup::mma_async_wait<0>();
      if (laneid() == 0) arrive(a.inputs_finished);
    }
    /// This warpgroup's 32 float4 of slot `slot` of split tile `t`.
    __device__ static float4 *slot_of(const typename layout::globals &g, int t, int slot, int wg) {
      return g.partials + ((static_cast<size_t>(t) * g.max_pieces + slot) * 2 + wg) * 32 * 128;
    }
    __device__ static void finish(lcf::consumer_finish_args<sk_gemm> &a) {
      const int wg = warpgroupid(), tid = warpgroup::laneid();
      const auto &g = a.globals;
      auto &acc = a.state.acc;
      int *counter = a.common.split >= 0 ? g.arrived + 2 * a.common.split + wg : nullptr;
      if (a.common.split >= 0 && !a.common.last) {
        float4 *dst = slot_of(g, a.common.split, a.common.slot, wg);
        KITTENS_UNROLL for (int j = 0; j < 16; ++j)
          KITTENS_UNROLL for (int k = 0; k < 4; k += 2) {
            const float2 x = acc.tiles[0][j].data[k], y = acc.tiles[0][j].data[k + 1];
            dst[(j * 2 + k / 2) * 128 + tid] = make_float4(x.x, x.y, y.x, y.y);
          }
        __threadfence();
        warpgroup::sync(wg + 1);
        if (tid == 0) atomicAdd(counter, 1);
        if (laneid() == 0) arrive(a.finish_finished);
        return;
      }
      if (a.common.split >= 0) { // the finisher: add the pieces before it
        const int before = a.common.slot;
        if (tid == 0) {
          long long spins = 0;
          while (*reinterpret_cast<volatile int *>(counter) < before)
            if (++spins > (1ll << 32)) __trap(); // a lost piece: fail rather than hang
          *counter = 0; // every piece of this launch has arrived: ready for the next one
        }
        __threadfence();
        warpgroup::sync(wg + 1);
        for (int s = 0; s < before; ++s) {
          const float4 *src = slot_of(g, a.common.split, s, wg);
          KITTENS_UNROLL for (int j = 0; j < 16; ++j)
            KITTENS_UNROLL for (int k = 0; k < 4; k += 2) {
              const float4 v = __ldcg(src + (j * 2 + k / 2) * 128 + tid);
              acc.tiles[0][j].data[k].x += v.x;
              acc.tiles[0][j].data[k].y += v.y;
              acc.tiles[0][j].data[k + 1].x += v.z;
              acc.tiles[0][j].data[k + 1].y += v.w;
            }
        }
      }
      warpgroup::store(a.finish.c[wg], acc);
      fence_async_shared();
      warpgroup::sync(wg + 1);
      if (tid == 0) {
        tma::store_async(g.C, a.finish.c[wg], {0, 0, 2 * a.common.m + wg, a.common.n});
        tma::store_commit_group();
        tma::store_async_read_wait<0>();
      }
      warpgroup::sync(wg + 1);
      if (laneid() == 0) arrive(a.finish_finished);
    }
  };
};

using TR = lcf::traits<sk_gemm>;
static_assert(TR::SAFE_STAGES == 3, "the 64 KiB finish block aliases the fourth stage");

/// The kernel's arguments with the remainder split (`split`) or run as a last partial wave
/// (L6's design, the same kernel: every task then takes a whole tile).
static sk_gemm::layout::globals configure(ladder::problem &p, int sms, bool split, char *cfg, size_t cfg_size) {
  const auto &o = p.o;
  using G2 = gl<bf16, 1, 1, -1, -1>;
  typename sk_gemm::layout::globals g{};
  g.A = make_tile_map<sk_gemm::a_tile>(G2(p.A, 1, 1, o.M, o.K));
  g.B = make_tile_map<sk_gemm::b_tile>(G2(p.B, 1, 1, o.K, o.N));
  g.C = make_tile_map<sk_gemm::c_tile>(G2(p.C, 1, 1, o.M, o.N));
  g.m_tiles = o.M / 128;
  g.n_tiles = o.N / 256;
  g.k_iters = o.K / 64;
  g.group = 8;
  const int tiles = g.m_tiles * g.n_tiles;
  const int grid = tiles < sms ? tiles : sms;
  const int rest = split && tiles > grid ? tiles % grid : 0;
  g.whole_rounds = (tiles - rest + grid - 1) / grid;
  g.split_first = (tiles - rest);
  g.split_iters = static_cast<long long>(rest) * g.k_iters;
  // A tile's k-steps meet at most ceil(k_iters / shortest range) + 1 ranges.
  const long long shortest = rest ? g.split_iters / grid : 1;
  if (rest && shortest < 1) {
    std::fprintf(stderr, "L9: fewer split k-steps than blocks; not supported\n");
    std::exit(2);
  }
  g.max_pieces = rest ? static_cast<int>((g.k_iters + shortest - 1) / shortest) + 1 : 1;
  const size_t slots = static_cast<size_t>(rest ? rest : 1) * g.max_pieces * 2 * 32 * 128;
  CK(cudaMalloc(&g.partials, slots * sizeof(float4)));
  CK(cudaMalloc(&g.arrived, sizeof(int) * 2 * (rest ? rest : 1)));
  CK(cudaMemset(g.arrived, 0, sizeof(int) * 2 * (rest ? rest : 1)));
  if (rest)
    std::snprintf(cfg, cfg_size,
                  "L6 + stream-K remainder: %d blocks, %d whole tiles then %d tiles split along K (%lld k-steps, ~%lld per "
                  "block, <= %d pieces a tile, fp32 partials %.1f MiB), 128x256x64, 4 stages (3 safe), wgmma drained every stage",
                  grid, g.split_first, rest, g.split_iters, shortest, g.max_pieces, slots * 16.0 / (1 << 20));
  else
    std::snprintf(cfg, cfg_size,
                  "the same kernel, no split: %d blocks, %d whole tiles in %d rounds (the last partial), 128x256x64, 4 stages "
                  "(3 safe), wgmma drained every stage (L6 nolag's design)",
                  grid, tiles, g.whole_rounds);
  return g;
}

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L9", o, 128, 256, 64)) return 2;
  ladder::problem p(o);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int tiles = (o.M / 128) * (o.N / 256);
  const int grid = tiles < sms ? tiles : sms;
  char cfg_split[400], cfg_whole[400];
  auto split = configure(p, sms, true, cfg_split, sizeof cfg_split);
  auto whole = configure(p, sms, false, cfg_whole, sizeof cfg_whole);
  int rc = 0;
  // Twice each, alternating, so that a drift of the clocks over the process shows.
  for (int round = 0; round < 2; ++round) {
    rc |= ladder::measure(p, "L9_streamk", cfg_split, [&] { CK(lcf::launch<sk_gemm>(split, grid)); });
    rc |= ladder::measure(p, "L9_whole", cfg_whole, [&] { CK(lcf::launch<sk_gemm>(whole, grid)); });
  }
  for (auto *g : {&split, &whole}) {
    cudaFree(g->partials);
    cudaFree(g->arrived);
  }
  return rc;
}
