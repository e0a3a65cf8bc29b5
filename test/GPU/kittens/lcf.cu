// REQUIRES: gpu
// RUN: %nvcc %sm90_flags %s -o %t && %t
//
// The LCF template end to end: a persistent GEMM (C = A·B, bf16 in, f32 accumulate,
// bf16 out) with one consumer warpgroup, a 3-stage ring, a shared-memory budget small
// enough that the finish block aliases the last stage (SAFE_STAGES = 2), and fewer
// blocks than tasks, so every block runs several tasks and the ring phases, the
// finish_finished handshake and the grouped task order are all exercised. Checked
// against a double-precision host GEMM; static_asserts pin the derived numbers.
// A second run lowers compute_iters and raises compute_begin per task (tile (m, n) sums
// blocks (3m + n) % e .. e - 1 of K, e = 1 + (m + n) % k_iters): the template releases the
// other stages, before and after, unread, and the ring's phases must stay right across
// tasks of different lengths.
// A third kernel has no finish block, so its two consumer warpgroups never meet between
// tasks: each holds its own A tile in scratch, loaded one task ahead through
// next_setup_arrived into alternating copies, stops after its own number of stages and
// stores through its own scratch tile, so the warpgroups drift apart within the ring.
// A fourth gives each of its two warpgroups a finish block of its own (FINISH_PER_WARPGROUP),
// warpgroup 0's past the stages, so that only warpgroup 1 waits for the other before finish,
// with tasks from one stage to seven, eagerly released and through release_finish.
// The third runs again with a compute that holds each warpgroup's last two stages of a task
// past their calls and computes on them at its last one, through input_at and
// inputs_finished_at, under each ring start.
// The first two kernels run again with consumer::release_finish: the finish leaves its
// store's read wait and the release of the aliased block to the template, which calls the
// hook after the next task's first stage (or before it, when that task's first computed
// stage lies past SAFE_STAGES, or before the block exits).
#include "harness.cuh"

using namespace kittens;

/// WGS consumer warpgroups compute a (64 WGS)x128 tile of C each task. Truncated: each
/// task's compute_begin .. compute_iters chosen per tile (below). Deferred: the finish block
/// released by consumer::release_finish. ShortTasks (two warpgroups, each with a finish
/// block of its own): task (m, n) takes the first 1 + (m + n) % k_iters blocks of K only,
/// so that tasks of one stage (fewer than SAFE_STAGES) follow longer ones. Entry: a
/// block_entry that prefetches the descriptors and records, per block, how often it ran and
/// in which thread (lcf_entry_calls, lcf_entry_thread). Early: EARLY_STAGES, task 0's first
/// stages loaded by thread 0 at the entry; the load records, per block, which thread issued
/// each of task 0's first three stages (lcf_first_issuer).
__device__ int lcf_entry_calls[64];
__device__ int lcf_entry_thread[64];
__device__ int lcf_first_issuer[64][3];
template <int WGS, bool Truncated, bool Deferred, bool ShortTasks = false, bool Entry = false, int Early = 0>
struct gemm_t {
  using gemm = gemm_t;
  using a_tile = st_bf<64 * WGS, 64>;
  using b_tile = st_bf<64, 128>;
  using c_tile = st_bf<64, 128>;
  struct layout {
    struct globals {
      tile_map<a_tile> A;
      tile_map<b_tile> B;
      tile_map<c_tile> C;
      int m_tiles, n_tiles, k_iters;
    };
    struct input_block { a_tile a; b_tile b; };
    struct finish_block { c_tile c; }; // one per consumer warpgroup when WGS > 1
    struct common_state { int m, n; };
    struct consumer_state { rt_fl<16, 128> acc; };
  };
  static constexpr int INPUT_STAGES = 3;
  static constexpr int NUM_CONSUMER_WARPGROUPS = WGS;
  static constexpr int PRODUCER_ARRIVALS = 1;
  static constexpr int CONSUMER_ARRIVALS = 4 * WGS; // lane 0 of each consumer warp
  // Three stages of (8 WGS + 16) KiB, and 8 WGS KiB more: the (last) finish block shares
  // bytes with stage 2, and with two warpgroups warpgroup 0's lies past the stages.
  static constexpr int MAX_SHARED_MEMORY = 3 * (8 * WGS + 16) * 1024 + 8 * WGS * 1024;
  static constexpr bool FINISH_PER_WARPGROUP = WGS > 1;
  static constexpr int EARLY_STAGES = Early;

  __device__ static void block_entry(const typename layout::globals &g) requires Entry {
    tma::prefetch(g.A);
    tma::prefetch(g.B);
    tma::prefetch(g.C);
    atomicAdd(&lcf_entry_calls[blockIdx.x], 1);
    lcf_entry_thread[blockIdx.x] = threadIdx.x;
  }

  __device__ static void common_setup(lcf::common_args<gemm> &a) {
    const int task = a.task_iter * gridDim.x + blockIdx.x;
    if (task >= a.globals.m_tiles * a.globals.n_tiles) { a.num_iters = -1; return; }
    tile_mn t = grouped_order(task, a.globals.m_tiles, a.globals.n_tiles, 3);
    a.common.m = t.m;
    a.common.n = t.n;
    a.num_iters = ShortTasks ? 1 + (t.m + t.n) % a.globals.k_iters : a.globals.k_iters;
  }
  struct producer {
    __device__ static void setup(lcf::producer_setup_args<gemm> &) {}
    __device__ static void load(lcf::producer_load_args<gemm> &a) {
      if (warpgroup::laneid() == 0) {
        if constexpr (Early > 0)
          if (a.task_iter == 0 && a.iter < 3) lcf_first_issuer[blockIdx.x][a.iter] = threadIdx.x;
        expect(a.inputs_arrived, a.input.a, a.input.b);
        tma::load_async(a.input.a, a.globals.A, {0, 0, a.common.m, a.iter}, a.inputs_arrived);
        tma::load_async(a.input.b, a.globals.B, {0, 0, a.iter, a.common.n}, a.inputs_arrived);
      }
    }
  };
  struct eager_consumer {
    __device__ static void setup(lcf::consumer_setup_args<gemm> &a) {
      zero(a.state.acc);
      if constexpr (Truncated) {
        a.compute_iters = 1 + (a.common.m + a.common.n) % a.globals.k_iters;
        a.compute_begin = (3 * a.common.m + a.common.n) % a.compute_iters;
      }
    }
    __device__ static void compute(lcf::consumer_compute_args<gemm> &a) {
      warpgroup::mma_AB(a.state.acc, a.input.a.template subtile<64, 64>(warpgroupid(), 0), a.input.b);
      warpgroup::mma_async_wait<0>();
      if (laneid() == 0) arrive(a.inputs_finished);
    }
    __device__ static void finish(lcf::consumer_finish_args<gemm> &a) {
      const int w = warpgroupid();
      warpgroup::store(a.finish.c, a.state.acc); // this warpgroup's own block when WGS > 1
      fence_async_shared();
      warpgroup::sync(1 + w);
      if (warpgroup::laneid() == 0) {
        tma::store_async(a.globals.C, a.finish.c, {0, 0, WGS * a.common.m + w, a.common.n});
        tma::store_commit_group();
        if constexpr (!Deferred) tma::store_async_read_wait<0>();
      }
      if constexpr (!Deferred) {
        warpgroup::sync(1 + w);
        if (laneid() == 0) arrive(a.finish_finished);
      }
    }
  };
  struct deferring_consumer : eager_consumer {
    __device__ static void release_finish(lcf::consumer_release_args<gemm> &a) {
      if (warpgroup::laneid() == 0) {
        tma::store_async_read_wait<0>();
        arrive(a.finish_finished, WARPGROUP_WARPS);
      }
    }
  };
  using consumer = std::conditional_t<Deferred, deferring_consumer, eager_consumer>;
};

using small_gemm = gemm_t<1, false, false>;
using truncated_gemm = gemm_t<1, true, false>;
using deferred_gemm = gemm_t<1, false, true>;
using deferred_truncated_gemm = gemm_t<1, true, true>;
using entry_gemm = gemm_t<1, false, false, false, true>;
static_assert(lcf::detail::has_block_entry<entry_gemm> && !lcf::detail::has_block_entry<small_gemm>,
              "block_entry is detected exactly when the kernel defines it");
static_assert(!lcf::traits<small_gemm>::DEFERS_FINISH_RELEASE && lcf::traits<deferred_gemm>::DEFERS_FINISH_RELEASE,
              "release_finish is detected exactly when the consumer defines it");
using TR = lcf::traits<small_gemm>;
static_assert(TR::STAGE_BYTES == 24 * 1024, "input block is one 8 KiB A tile and one 16 KiB B tile");
static_assert(TR::FINISH_OFFSET == 64 * 1024, "finish block sits at the end of the 80 KiB budget");
static_assert(TR::SAFE_STAGES == 2, "stage 2 (48..72 KiB) overlaps the finish block (64..80 KiB)");
static_assert(TR::NUM_THREADS == 256, "one consumer + one producer warpgroup");

/// Two consumer warpgroups, each with a finish block of its own (FINISH_PER_WARPGROUP):
/// warpgroup 1's aliases the last stage, warpgroup 0's lies past the stages, so only
/// warpgroup 1 waits for the other before its finish; warpgroup 0 arrives and goes on.
using split_finish_gemm = gemm_t<2, false, false, true>;
using split_finish_deferred_gemm = gemm_t<2, false, true, true>;
/// Task 0's first two stages loaded by thread 0 at the entry: with full tasks, and with short
/// ones (a block's first task may have one stage, fewer than EARLY_STAGES).
using early_gemm = gemm_t<1, false, false, false, false, 2>;
using early_short_gemm = gemm_t<2, false, true, true, false, 2>;
static_assert(lcf::traits<early_gemm>::EARLY_STAGES == 2 && lcf::traits<small_gemm>::EARLY_STAGES == 0,
              "EARLY_STAGES is read from the kernel, 0 by default");
using TS = lcf::traits<split_finish_gemm>;
static_assert(TS::STAGE_BYTES == 32 * 1024 && TS::FINISH_BYTES == 32 * 1024 && TS::FINISH_OFFSET == 80 * 1024,
              "three 32 KiB stages (0..96 KiB), two 16 KiB finish blocks at 80..112 KiB");
static_assert(TS::finish_offset(0) == 96 * 1024 && TS::finish_offset(1) == 80 * 1024,
              "warpgroup 0's finish block is placed last");
static_assert(!TS::finish_aliases(0) && TS::finish_aliases(1) && TS::MEET_BEFORE_FINISH && TS::SAFE_STAGES == 2,
              "only warpgroup 1's block shares bytes with a stage (stage 2, 64..96 KiB)");

/// Poison C, run kernel KT on `blocks` blocks, compare C with `expect` element by element.
template <class KT>
void run_and_check(harness::dbuf<bf16> &c, const typename KT::layout::globals &g, int blocks, const char *what,
                   const std::vector<double> &expect) {
  c.poison();
  CHECK_CUDA(lcf::launch<KT>(g, blocks));
  CHECK_CUDA(cudaDeviceSynchronize());
  harness::expect_close(what, c.download(), expect, 1e-2, 8e-3);
}

/// C[128 m + 64 w + r, n] = A[128 m + 64 w + r, :] · (sum of the first 1 + (m + n + w) % k_iters
/// blocks of 64 rows of B[:, n]): warpgroup w of task (m, n) computes its own 64 rows. Ring:
/// where each task's first stage goes in the stage ring (lcf::RING_START). Hold: compute
/// holds the warpgroup's last two stages of a task and computes on both at the last.
struct ahead_globals { // one type for every ring start, so that one set of arguments runs each
  tile_map<st_bf<64, 64>> A;
  tile_map<st_bf<64, 128>> B;
  tile_map<st_bf<64, 128>> C;
  int m_tiles, n_tiles, k_iters;
};
template <int Ring, bool Hold = false> struct ahead_gemm_t {
  using a_tile = st_bf<64, 64>;
  using b_tile = st_bf<64, 128>;
  using c_tile = st_bf<64, 128>;
  struct layout {
    using globals = ahead_globals;
    struct input_block { b_tile b; };
    struct scratch_block {
      a_tile a[2][2]; // [task_iter & 1][warpgroup]
      c_tile c[2];    // [warpgroup]
    };
    struct common_state { int m, n; };
    struct consumer_state { rt_fl<16, 128> acc; };
  };
  static constexpr int INPUT_STAGES = 3;
  static constexpr int NUM_CONSUMER_WARPGROUPS = 2;
  static constexpr int PRODUCER_ARRIVALS = 1;
  static constexpr int CONSUMER_ARRIVALS = 8; // lane 0 of each consumer warp
  static constexpr int MAX_SHARED_MEMORY = 160 * 1024;
  static constexpr int RING_START = Ring;

  __device__ static int stages_of(const layout::globals &g, int m, int n, int w) {
    return 1 + (m + n + w) % g.k_iters;
  }
  __device__ static void common_setup(lcf::common_args<ahead_gemm_t> &a) {
    const int task = a.task_iter * gridDim.x + blockIdx.x;
    if (task >= a.globals.m_tiles * a.globals.n_tiles) { a.num_iters = -1; return; }
    a.common.m = task / a.globals.n_tiles;
    a.common.n = task % a.globals.n_tiles;
    // The producer loads what the longer of the two warpgroups needs.
    a.num_iters = max(stages_of(a.globals, a.common.m, a.common.n, 0), stages_of(a.globals, a.common.m, a.common.n, 1));
  }
  struct producer {
    __device__ static void setup(lcf::producer_setup_args<ahead_gemm_t> &) {}
    __device__ static void load(lcf::producer_load_args<ahead_gemm_t> &a) {
      if (warpgroup::laneid() == 0) {
        expect(a.inputs_arrived, a.input.b);
        tma::load_async(a.input.b, a.globals.B, {0, 0, a.iter, a.common.n}, a.inputs_arrived);
      }
    }
  };
  struct consumer {
    __device__ static void setup(lcf::consumer_setup_args<ahead_gemm_t> &a) {
      const int w = warpgroupid();
      zero(a.state.acc);
      a.compute_iters = stages_of(a.globals, a.common.m, a.common.n, w);
      if (warpgroup::laneid() == 0) {
        if (a.task_iter == 0) { // the first task loads its own tile
          expect_bytes(a.setup_arrived, sizeof(a_tile));
          tma::load_async(a.scratch.a[0][w], a.globals.A, {0, 0, 2 * a.common.m + w, 0}, a.setup_arrived);
        }
        if (a.next_num_iters >= 0) { // every task loads the next one's
          expect_bytes(a.next_setup_arrived, sizeof(a_tile));
          tma::load_async(a.scratch.a[(a.task_iter + 1) & 1][w], a.globals.A, {0, 0, 2 * a.next_common.m + w, 0},
                          a.next_setup_arrived);
        }
      }
      wait(a.setup_arrived, a.setup_phase);
    }
    __device__ static void compute(lcf::consumer_compute_args<ahead_gemm_t> &a) {
      if constexpr (Hold) {
        const int end = stages_of(a.globals, a.common.m, a.common.n, warpgroupid());
        const int held = end > 2 ? end - 2 : 0; // the first held stage
        if (a.iter >= held) {
          if (a.iter < end - 1) return; // held: computed on at the warpgroup's last stage
          for (int it = held; it < end; ++it) {
            warpgroup::mma_AB(a.state.acc, a.scratch.a[a.task_iter & 1][warpgroupid()], a.input_at(it).b);
            warpgroup::mma_async_wait<0>();
          }
          if (laneid() == 0)
            for (int it = held; it < end; ++it) arrive(a.inputs_finished_at(it));
          return;
        }
      }
      warpgroup::mma_AB(a.state.acc, a.scratch.a[a.task_iter & 1][warpgroupid()], a.input.b);
      warpgroup::mma_async_wait<0>();
      if (laneid() == 0) arrive(a.inputs_finished);
    }
    __device__ static void finish(lcf::consumer_finish_args<ahead_gemm_t> &a) {
      const int w = warpgroupid();
      warpgroup::store(a.scratch.c[w], a.state.acc);
      fence_async_shared();
      warpgroup::sync(1 + w);
      if (warpgroup::laneid() == 0) {
        tma::store_async(a.globals.C, a.scratch.c[w], {0, 0, 2 * a.common.m + w, a.common.n});
        tma::store_commit_group();
        tma::store_async_read_wait<0>();
      }
      warpgroup::sync(1 + w);
      if (laneid() == 0) arrive(a.finish_finished);
    }
  };
};
using ahead_gemm = ahead_gemm_t<lcf::RING_RESTART>;
static_assert(!lcf::traits<ahead_gemm>::HAS_FINISH, "no finish block: the consumers do not meet between tasks");
static_assert(lcf::traits<ahead_gemm>::RING_START == lcf::RING_RESTART);
static_assert(lcf::traits<ahead_gemm_t<lcf::RING_CONTINUE>>::RING_START == lcf::RING_CONTINUE &&
              lcf::traits<ahead_gemm_t<lcf::RING_SKIP_LAST>>::RING_START == lcf::RING_SKIP_LAST);

int main() {
  using harness::dbuf;
  const int M = 640, N = 384, K = 448;
  auto ha = harness::randn<bf16>(M * K), hb = harness::randn<bf16>(K * N);
  dbuf<bf16> da(M * K), db(K * N), dc(M * N);
  da.upload(ha); db.upload(hb); dc.poison();
  using G = gl<bf16, 1, 1, -1, -1>;
  small_gemm::layout::globals g{make_tile_map<small_gemm::a_tile>(G(da.p, 1, 1, M, K)),
                                make_tile_map<small_gemm::b_tile>(G(db.p, 1, 1, K, N)),
                                make_tile_map<small_gemm::c_tile>(G(dc.p, 1, 1, M, N)), M / 64, N / 128, K / 64};
  CHECK_CUDA(lcf::launch<small_gemm>(g, 7));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<double> ref(size_t(M) * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      const double a = ha[m * K + k];
      for (int n = 0; n < N; ++n) ref[m * N + n] += a * hb[k * N + n];
    }
  harness::expect_rel_err("LCF persistent GEMM 640x384x448 (7 blocks, aliased finish)", dc.download(), ref, 1e-2);
  // bf16 output: every element within bf16 rounding of the exact value.
  harness::expect_close("LCF GEMM elementwise", dc.download(), ref, 1e-2, 8e-3);

  // block_entry: once in each block, by the producer warpgroup's first thread (128 here).
  {
    std::vector<int> calls(64, 0), thread(64, -1);
    CHECK_CUDA(cudaMemcpyToSymbol(lcf_entry_calls, calls.data(), 64 * sizeof(int)));
    CHECK_CUDA(cudaMemcpyToSymbol(lcf_entry_thread, thread.data(), 64 * sizeof(int)));
    run_and_check<entry_gemm>(dc, {g.A, g.B, g.C, M / 64, N / 128, K / 64}, 7, "LCF GEMM with block_entry", ref);
    CHECK_CUDA(cudaMemcpyFromSymbol(calls.data(), lcf_entry_calls, 64 * sizeof(int)));
    CHECK_CUDA(cudaMemcpyFromSymbol(thread.data(), lcf_entry_thread, 64 * sizeof(int)));
    int wrong = 0;
    for (int b = 0; b < 64; ++b)
      wrong += calls[b] != (b < 7 ? 1 : 0) || thread[b] != (b < 7 ? 128 : -1);
    if (wrong) {
      std::printf("FAIL LCF block_entry: %d of 64 blocks wrong (block 0: %d call(s), thread %d)\n", wrong, calls[0],
                  thread[0]);
      ++harness::failures;
    } else {
      std::printf("ok   LCF block_entry: once in each of 7 blocks, by thread 128\n");
    }
  }

  {
    std::vector<int> issuer(64 * 3, -1);
    CHECK_CUDA(cudaMemcpyToSymbol(lcf_first_issuer, issuer.data(), issuer.size() * sizeof(int)));
    run_and_check<early_gemm>(dc, {g.A, g.B, g.C, M / 64, N / 128, K / 64}, 7,
                              "LCF GEMM, task 0's first two stages issued by thread 0 at the entry", ref);
    CHECK_CUDA(cudaMemcpyFromSymbol(issuer.data(), lcf_first_issuer, issuer.size() * sizeof(int)));
    // Stages 0 and 1 from thread 0, stage 2 from the producer warpgroup's first thread (128).
    int wrong = 0;
    for (int b = 0; b < 64; ++b)
      for (int it = 0; it < 3; ++it)
        wrong += issuer[b * 3 + it] != (b < 7 ? (it < 2 ? 0 : 128) : -1);
    if (wrong) {
      std::printf("FAIL LCF EARLY_STAGES: %d of 192 issuers wrong (block 0: %d %d %d)\n", wrong, issuer[0], issuer[1],
                  issuer[2]);
      ++harness::failures;
    } else {
      std::printf("ok   LCF EARLY_STAGES: task 0's stages 0-1 issued by thread 0, stage 2 by thread 128, in 7 blocks\n");
    }
  }

  // compute_iters lowered and compute_begin raised per task: each tile sums a run of K's blocks.
  dc.poison();
  truncated_gemm::layout::globals gt{g.A, g.B, g.C, M / 64, N / 128, K / 64};
  CHECK_CUDA(lcf::launch<truncated_gemm>(gt, 7));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<double> ref_t(size_t(M) * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      const int end = 1 + (m / 64 + n / 128) % (K / 64), begin = (3 * (m / 64) + n / 128) % end;
      double acc = 0.0;
      for (int k = 64 * begin; k < 64 * end; ++k) acc += double(ha[m * K + k]) * double(hb[k * N + n]);
      ref_t[m * N + n] = acc;
    }
  harness::expect_close("LCF GEMM with compute_begin .. compute_iters chosen per task", dc.download(), ref_t, 1e-2, 8e-3);

  // The same two with the finish block released late, by consumer::release_finish.
  run_and_check<deferred_gemm>(dc, {g.A, g.B, g.C, M / 64, N / 128, K / 64}, 7,
                               "LCF GEMM, finish released by release_finish", ref);
  run_and_check<deferred_truncated_gemm>(dc, {g.A, g.B, g.C, M / 64, N / 128, K / 64}, 7,
                                         "LCF GEMM, compute_begin past SAFE_STAGES, finish released by release_finish",
                                         ref_t);

  // Finish blocks of their own, warpgroup 0's past the stages; tasks of 1 .. 7 stages.
  {
    std::vector<double> ref_s(size_t(M) * N, 0.0);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        const int end = 1 + (m / 128 + n / 128) % (K / 64);
        double acc = 0.0;
        for (int k = 0; k < 64 * end; ++k) acc += double(ha[m * K + k]) * double(hb[k * N + n]);
        ref_s[size_t(m) * N + n] = acc;
      }
    using SG = split_finish_gemm;
    SG::layout::globals gs{make_tile_map<SG::a_tile>(G(da.p, 1, 1, M, K)), make_tile_map<SG::b_tile>(G(db.p, 1, 1, K, N)),
                           make_tile_map<SG::c_tile>(G(dc.p, 1, 1, M, N)), M / 128, N / 128, K / 64};
    run_and_check<SG>(dc, gs, 4, "LCF GEMM, a finish block per warpgroup, one past the stages", ref_s);
    run_and_check<split_finish_deferred_gemm>(dc, {gs.A, gs.B, gs.C, M / 128, N / 128, K / 64}, 4,
                                              "LCF GEMM, a finish block per warpgroup, released by release_finish",
                                              ref_s);
    run_and_check<early_short_gemm>(dc, {gs.A, gs.B, gs.C, M / 128, N / 128, K / 64}, 4,
                                    "LCF GEMM, short tasks, task 0's first two stages issued by thread 0", ref_s);
  }

  // Tiles loaded one task ahead, warpgroups apart: 30 tasks on 7 blocks (4 or 5 each).
  {
    const int M2 = 1280, N2 = 384, K2 = 256, k_iters = K2 / 64;
    auto ha2 = harness::randn<bf16>(M2 * 64), hb2 = harness::randn<bf16>(K2 * N2);
    dbuf<bf16> da2(M2 * 64), db2(K2 * N2), dc2(M2 * N2);
    da2.upload(ha2); db2.upload(hb2); dc2.poison();
    ahead_gemm::layout::globals g2{make_tile_map<ahead_gemm::a_tile>(G(da2.p, 1, 1, M2, 64)),
                                   make_tile_map<ahead_gemm::b_tile>(G(db2.p, 1, 1, K2, N2)),
                                   make_tile_map<ahead_gemm::c_tile>(G(dc2.p, 1, 1, M2, N2)), M2 / 128, N2 / 128, k_iters};
    std::vector<double> ref2(size_t(M2) * N2, 0.0);
    for (int r = 0; r < M2; ++r)
      for (int c = 0; c < N2; ++c) {
        const int k_end = 64 * (1 + (r / 128 + c / 128 + (r / 64) % 2) % k_iters);
        double acc = 0.0;
        for (int k = 0; k < k_end; ++k) acc += double(ha2[r * 64 + k % 64]) * double(hb2[k * N2 + c]);
        ref2[size_t(r) * N2 + c] = acc;
      }
    run_and_check<ahead_gemm>(dc2, g2, 7, "LCF setup loads one task ahead, warpgroups apart", ref2);
    // Tasks of 1 .. 4 stages on a ring of 3: each starting where the previous one stopped, or
    // at slot 0 unless the previous one ended there.
    run_and_check<ahead_gemm_t<lcf::RING_CONTINUE>>(dc2, g2, 7, "LCF ring continued across tasks of 1 .. 4 stages",
                                                     ref2);
    run_and_check<ahead_gemm_t<lcf::RING_SKIP_LAST>>(
        dc2, g2, 7, "LCF ring skipping the slot just read, tasks of 1 .. 4 stages", ref2);
    // The same, each warpgroup holding its last two stages of a task and computing on them at
    // its last one (input_at, inputs_finished_at).
    run_and_check<ahead_gemm_t<lcf::RING_RESTART, true>>(dc2, g2, 7, "LCF compute holding its last two stages",
                                                          ref2);
    run_and_check<ahead_gemm_t<lcf::RING_CONTINUE, true>>(
        dc2, g2, 7, "LCF compute holding its last two stages, ring continued", ref2);
    run_and_check<ahead_gemm_t<lcf::RING_SKIP_LAST, true>>(
        dc2, g2, 7, "LCF compute holding its last two stages, ring skipping the slot just read", ref2);
  }
  return harness::finish("lcf");
}
