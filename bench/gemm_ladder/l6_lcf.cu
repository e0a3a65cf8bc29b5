// GEMM ladder level 6: the persistent LCF kernel.
//
// kittens::lcf template; 128x256 output tile per task, two consumer warpgroups each
// computing 64x256 with m64n256k16 wgmma (A from the stage's 128x64 tile via a 64-row
// subtile view, B the stage's 64x256 tile, MN-major), K tile 64, 4-stage TMA ring whose
// last stage the 64 KiB finish block aliases (3 safe stages), producer warpgroup at 40
// registers and consumers at 232, a persistent grid of one block per SM, tasks in
// grouped order (groups of `group` tile rows), stmatrix + TMA-store epilogue.
// LAG = true keeps one wgmma group in flight across stages: stage k's wgmmas are issued
// before waiting for stage k-1's, which is then released (LAG = false waits for each
// stage's own wgmmas to drain before releasing it, as the lower levels do).
#include "harness.cuh"

using namespace kittens;

template <bool LAG> struct lcf_gemm {
  using a_tile = st_bf<128, 64>;
  using b_tile = st_bf<64, 256>;
  using c_tile = st_bf<64, 256>;
  struct layout {
    struct globals {
      tile_map<a_tile> A;
      tile_map<b_tile> B;
      tile_map<c_tile> C;
      int m_tiles, n_tiles, k_iters, group;
    };
    struct input_block { a_tile a; b_tile b; };
    struct finish_block { c_tile c[2]; };
    struct common_state { int m, n; };
    struct consumer_state { rt_fl<16, 256> acc; };
  };
  static constexpr int INPUT_STAGES = 4;
  static constexpr int NUM_CONSUMER_WARPGROUPS = 2;
  static constexpr int PRODUCER_ARRIVALS = 1;
  static constexpr int PRODUCER_REGISTERS = 40;
  static constexpr int CONSUMER_REGISTERS = 232;

  __device__ static void common_setup(lcf::common_args<lcf_gemm> &a) {
    const int task = a.task_iter * gridDim.x + blockIdx.x;
    if (task >= a.globals.m_tiles * a.globals.n_tiles) { a.num_iters = -1; return; }
    const tile_mn t = grouped_order(task, a.globals.m_tiles, a.globals.n_tiles, a.globals.group);
    a.common.m = t.m;
    a.common.n = t.n;
    a.num_iters = a.globals.k_iters;
  }
  struct producer {
    __device__ static void setup(lcf::producer_setup_args<lcf_gemm> &) {}
    __device__ static void load(lcf::producer_load_args<lcf_gemm> &a) {
      if (warpgroup::laneid() == 0) {
        expect(a.inputs_arrived, a.input);
        tma::load_async(a.input.a, a.globals.A, {0, 0, a.common.m, a.iter}, a.inputs_arrived);
        tma::load_async(a.input.b, a.globals.B, {0, 0, a.iter, a.common.n}, a.inputs_arrived);
      }
    }
  };
  struct consumer {
    __device__ static void setup(lcf::consumer_setup_args<lcf_gemm> &) {}
    __device__ static void compute(lcf::consumer_compute_args<lcf_gemm> &a) {
      auto a_half = a.input.a.template subtile<64, 64>(warpgroupid(), 0);
      warpgroup::mma_AB(a.state.acc, a_half, a.input.b, a.iter > 0);
      if constexpr (LAG) {
        if (a.iter > 0) {
          warpgroup::mma_async_wait<1>();
          if (laneid() == 0) arrive(*a.prev_inputs_finished);
        }
        if (a.iter == a.num_iters - 1) {
          warpgroup::mma_async_wait<0>();
          if (laneid() == 0) arrive(a.inputs_finished);
        }
      } else {
        warpgroup::mma_async_wait<0>();
        if (laneid() == 0) arrive(a.inputs_finished);
      }
    }
    __device__ static void finish(lcf::consumer_finish_args<lcf_gemm> &a) {
      const int wg = warpgroupid();
      warpgroup::store(a.finish.c[wg], a.state.acc);
      fence_async_shared();
      warpgroup::sync(wg + 1);
      if (warpgroup::laneid() == 0) {
        tma::store_async(a.globals.C, a.finish.c[wg], {0, 0, 2 * a.common.m + wg, a.common.n});
        tma::store_commit_group();
        tma::store_async_read_wait<0>();
      }
      warpgroup::sync(wg + 1);
      if (laneid() == 0) arrive(a.finish_finished);
    }
  };
};

using TR = lcf::traits<lcf_gemm<true>>;
static_assert(sizeof(lcf_gemm<true>::layout::input_block) == 48 * 1024, "the stage must hold exactly the TMA bytes");
static_assert(TR::SAFE_STAGES == 3, "the 64 KiB finish block aliases the fourth stage");
static_assert(TR::NUM_THREADS == 384, "2 consumer + 1 producer warpgroups");

template <bool LAG> int run(ladder::problem &p, int group, const char *name) {
  using K = lcf_gemm<LAG>;
  using G = gl<bf16, 1, 1, -1, -1>;
  const auto &o = p.o;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  typename K::layout::globals g{make_tile_map<typename K::a_tile>(G(p.A, 1, 1, o.M, o.K)),
                                make_tile_map<typename K::b_tile>(G(p.B, 1, 1, o.K, o.N)),
                                make_tile_map<typename K::c_tile>(G(p.C, 1, 1, o.M, o.N)), o.M / 128, o.N / 256, o.K / 64, group};
  const int tasks = g.m_tiles * g.n_tiles;
  const int grid = tasks < sms ? tasks : sms;
  char cfg[320];
  std::snprintf(cfg, sizeof cfg,
                "LCF persistent, %d blocks x 384 threads, 128x256x64 tiles, 4 stages (3 safe), m64n256k16, %s, setmaxnreg 40/232, "
                "grouped order group=%d, TMA-store epilogue, dyn smem %d B",
                grid, LAG ? "one wgmma group in flight (lagged stage release)" : "wgmma drained every stage", group,
                lcf::traits<K>::DYNAMIC_SHARED_BYTES);
  return ladder::measure(p, name, cfg, [&] { CK(lcf::launch<K>(g, grid)); });
}

int main(int argc, char **argv) {
  auto o = ladder::parse(argc, argv);
  if (!ladder::require_multiple("L6", o, 128, 256, 64)) return 2;
  ladder::problem p(o);
  int rc = 0;
  rc |= run<true>(p, 8, "L6_lcf");
  rc |= run<true>(p, 1, "L6_lcf_rowmajor");
  rc |= run<true>(p, 16, "L6_lcf_g16");
  rc |= run<false>(p, 8, "L6_lcf_nolag");
  return rc;
}
