/**
 * @file
 * @brief The load-compute-finish (LCF) producer/consumer kernel template for sm_90a.
 *
 * A kernel is a struct K with a `layout` and static hooks; `lcf::kernel<K>` runs them:
 *
 *   struct K {
 *     struct layout {
 *       using globals = ...;           // the single __grid_constant__ kernel argument
 *       struct input_block { ... };    // one pipeline stage: exactly the TMA-loaded bytes
 *       struct finish_block { ... };   // optional: epilogue staging, aliases the tail stages
 *                                      // (one for the block, or one per consumer warpgroup)
 *       struct scratch_block { ... };  // optional: per-block smem that lives all kernel long
 *       struct common_state { ... };   // optional per-thread state set by common_setup
 *       struct producer_state { ... }; struct consumer_state { ... }; // optional, per thread,
 *                                      // default-initialised (see the contract)
 *     };
 *     static constexpr int INPUT_STAGES = 4;          // required, 1..16
 *     static constexpr int NUM_CONSUMER_WARPGROUPS = 2; // optional (default 2)
 *     static constexpr int PRODUCER_ARRIVALS = 1;    // optional (default 1)
 *     static constexpr int CONSUMER_ARRIVALS = 8;    // optional (default: consumer warps)
 *     static constexpr int PRODUCER_REGISTERS = 40;  // optional (default 40)
 *     static constexpr int CONSUMER_REGISTERS = 232; // optional (default: what fits)
 *     static constexpr bool FINISH_PER_WARPGROUP = true; // optional (default false)
 *     static constexpr int RING_START = lcf::RING_CONTINUE; // optional (default RING_RESTART)
 *     static constexpr int EARLY_STAGES = 1;         // optional (default 0)
 *     __device__ static void common_setup(lcf::common_args<K>&);
 *     __device__ static void block_entry(const layout::globals&); // optional
 *     struct producer { __device__ static void setup(lcf::producer_setup_args<K>&);
 *                       __device__ static void load(lcf::producer_load_args<K>&); };
 *     struct consumer { __device__ static void setup(lcf::consumer_setup_args<K>&);
 *                       __device__ static void compute(lcf::consumer_compute_args<K>&);
 *                       __device__ static void finish(lcf::consumer_finish_args<K>&); };
 *   };
 *
 * Contract (a broken one hangs or races, so the compiler that emits this must get it right):
 *  - common_setup runs in every thread at the top of every task; it sets `num_iters`
 *    (< 0 ends the block's loop; 0 runs setup and finish with no stages) deterministically.
 *  - EARLY_STAGES (0 by default) of task 0's first stages are loaded by thread 0 right after it
 *    initialises the semaphores, before the block-wide barrier: it runs common_setup for task 0
 *    and producer::load for those stages (with a fresh producer_state; producer::setup does
 *    not run for them), and the producer warpgroup later skips them. Only for a load that
 *    issues from the warpgroup's lane 0 alone (thread 0 is lane 0 of its warpgroup) and needs
 *    nothing setup or earlier loads leave in producer_state. Every other warp waits at the
 *    barrier while thread 0 issues them: it pays where the copy, not the consumers' own way to
 *    their first stage, decides when the first stage is there (tkc's matrix-product kernels).
 *  - producer_state and consumer_state are default-initialised, once a thread for the whole
 *    block: a member without an initialiser holds no value until a hook writes it. A kernel
 *    that needs a member zeroed zeroes it in setup (every task) or gives it an initialiser
 *    (once). Value-initialising a 128-register accumulator the first product overwrites anyway
 *    cost the consumers ~64 instructions run for the first time on the way to their first stage.
 *  - block_entry, where K defines it, runs once a block in one thread (the producer
 *    warpgroup's first) at the block's entry, while thread 0 initialises the semaphores and
 *    before any hook: for work that needs nothing of the block but the globals, such as
 *    prefetching TMA descriptors (tma::prefetch), so that the first copies find them cached.
 *  - producer::load runs in all 128 producer threads once per stage; it must arm
 *    `inputs_arrived` for exactly the bytes it loads and make PRODUCER_ARRIVALS arrivals.
 *  - consumer::compute must make, for every stage, CONSUMER_ARRIVALS arrivals on that
 *    stage's `inputs_finished` once it no longer reads it (after mma_async_wait): either at
 *    once, or one iteration later through `prev_inputs_finished` (keeping one wgmma group
 *    in flight), in which case the last iteration releases its own stage too. It may also
 *    hold stages of its task past their own call: a later call of the same task reads held
 *    stage `it` through `input_at(it)` and releases it through `inputs_finished_at(it)`.
 *    Every stage of a task is released by the end of the task's last compute call (the next
 *    task's loads need the slots), and no call waits for a stage whose slot a held stage
 *    occupies (hold only the task's last stages). A call may also compute a later stage `it`
 *    of its task ahead (iter < it < iter + INPUT_STAGES, its slot's previous stage released):
 *    it waits for it with `wait_arrived_at(it)` and reads it through `input_at(it)`; the
 *    template still waits for that stage (at once) and calls compute for it, and that call
 *    releases it (`inputs_finished`), not an earlier one: released before the template's wait
 *    for it, the slot could be loaded again and its semaphore pass a second phase, and the wait
 *    would then be for a phase that never comes. From the second stage it computes in a
 *    task on, compute may stage results in its finish block (`finish`) where that block
 *    aliases no stage; the task's finish releases the block as usual.
 *  - consumer::setup may load into the scratch block through its warpgroup's `setup_arrived`
 *    (one arrival with the byte count, then a wait on `setup_phase`), at most once per task.
 *    It may instead load the block's next task's tiles ahead (`next_common`, when
 *    `next_num_iters >= 0`) on `next_setup_arrived`, into scratch the current task does not
 *    use; the next task then waits on its own `setup_arrived` without loading. Either way each
 *    task's `setup_arrived` receives exactly one armed load (or none, in every task).
 *  - consumer::setup may lower its warpgroup's `compute_iters` (num_iters by default) when the
 *    warpgroup needs only the task's first stages, and raise its `compute_begin` (0 by default)
 *    when it needs only the later ones: compute then runs on stages compute_begin ..
 *    compute_iters - 1 (`iter` keeps each stage's index in the task), and the template releases
 *    the others (waiting for each, one arrival per warp). Only with CONSUMER_ARRIVALS equal to
 *    the consumer warps, and with a compute that releases each stage itself (not through
 *    prev_inputs_finished, which is null at the first stage computed).
 *  - consumer::finish must make CONSUMER_ARRIVALS arrivals on `finish_finished` once the
 *    finish block may be overwritten (after store_async_read_wait for TMA stores), unless
 *    the consumer defines release_finish: then finish only issues its stores, and the
 *    template calls consumer::release_finish in each warpgroup once per finish, late: after
 *    the first stage that warpgroup computes in the block's next task (before it, if that
 *    task computes none; before the block exits after its last). release_finish makes that
 *    warpgroup's share of the arrivals (after its store_async_read_wait), so the store's read
 *    of the finish block overlaps the next task's first products instead of stalling them.
 *  - With a finish block, all consumers meet (barrier 14) before finish, since it may alias
 *    stages another warpgroup still reads. With FINISH_PER_WARPGROUP each consumer warpgroup
 *    has a finish block of its own (`finish` is that one), warpgroup 0's placed last: only a
 *    warpgroup whose block aliases a stage waits at the meeting; the others arrive and go on
 *    (after the previous task's finish_finished, so that no warpgroup arrives twice while
 *    another waits for the first); when none aliases, nobody meets. Without a finish block
 *    they do not meet either: each warpgroup goes on to its finish and its next task on its
 *    own, bounded only by the stage ring, so hooks that share scratch between warpgroups must
 *    synchronise it themselves. Unmet, a warpgroup waits before its finish for the previous
 *    task's finish_finished, so that one a whole task ahead (tasks of few stages) cannot
 *    arrive on a phase the others have not completed.
 *  - Named barriers LCF_BARRIER_{PRODUCERS, CONSUMERS, ALL} (13, 14, 15) belong to the
 *    template; 0 is __syncthreads; hooks may use 1..12.
 *
 * Shared memory (dynamic, 1024-aligned): [scratch][stage 0]...[stage S-1], and the
 * finish block at the end of the budget, so it may alias the last stages. SAFE_STAGES
 * stages lie wholly before it; the producer loads at most SAFE_STAGES stages of a task
 * before it waits for the previous task's finish to release the aliased memory.
 *
 * Stage ring: a task's stage `it` lies in slot `(base + it) % S`. RING_START picks each
 * task's base: RING_RESTART (the default) 0; RING_CONTINUE the slot after the previous task's
 * last, released longest ago; RING_SKIP_LAST 0 unless the previous task's last stage used slot
 * 0 (a task of n stages from slot 0 does when n % S == 1), then 1. Restarting, that case makes
 * the next task's first load wait for the release of the stage just read. The last two only
 * without a finish block, which aliases fixed slots.
 */
#pragma once

#include <type_traits>

#include "../common/util.cuh"
#include "../ops/sync/mbarrier_sm90.cuh"
#include "../ops/sync/named_barrier.cuh"
#include "../ops/sync/setmaxnreg_sm90.cuh"
#include "../types/shared/allocator.cuh"

namespace kittens::lcf {

inline constexpr int LCF_BARRIER_PRODUCERS = 13;
inline constexpr int LCF_BARRIER_CONSUMERS = 14;
inline constexpr int LCF_BARRIER_ALL = 15;
/// Highest named-barrier id hooks may use.
inline constexpr int LCF_MAX_USER_BARRIER = 12;

struct empty {};

/// Where each task's first stage goes in the stage ring (K::RING_START; see the file comment).
inline constexpr int RING_RESTART = 0;
inline constexpr int RING_CONTINUE = 1;
inline constexpr int RING_SKIP_LAST = 2;

namespace detail {
#define KITTENS_LCF_TYPE_OR_EMPTY(name)                                                                              \
  template <class L, class = void> struct name##_of { using type = empty; };                                          \
  template <class L> struct name##_of<L, std::void_t<typename L::name>> { using type = typename L::name; };
KITTENS_LCF_TYPE_OR_EMPTY(finish_block)
KITTENS_LCF_TYPE_OR_EMPTY(scratch_block)
KITTENS_LCF_TYPE_OR_EMPTY(common_state)
KITTENS_LCF_TYPE_OR_EMPTY(producer_state)
KITTENS_LCF_TYPE_OR_EMPTY(consumer_state)
#undef KITTENS_LCF_TYPE_OR_EMPTY

#define KITTENS_LCF_INT_OR(name, dflt)                                                                                \
  template <class K, class = void> struct name##_of { static constexpr int value = (dflt); };                         \
  template <class K> struct name##_of<K, std::void_t<decltype(K::name)>> { static constexpr int value = K::name; };
KITTENS_LCF_INT_OR(NUM_CONSUMER_WARPGROUPS, 2)
KITTENS_LCF_INT_OR(PRODUCER_ARRIVALS, 1)
KITTENS_LCF_INT_OR(CONSUMER_ARRIVALS, -1)
KITTENS_LCF_INT_OR(PRODUCER_REGISTERS, 40)
KITTENS_LCF_INT_OR(CONSUMER_REGISTERS, -1)
KITTENS_LCF_INT_OR(MAX_SHARED_MEMORY, MAX_SHARED_MEMORY_SM90 - 2048)
KITTENS_LCF_INT_OR(FINISH_PER_WARPGROUP, 0)
KITTENS_LCF_INT_OR(RING_START, 0)
KITTENS_LCF_INT_OR(EARLY_STAGES, 0)
#undef KITTENS_LCF_INT_OR

// A requires-expression, so that a block_entry whose constraints fail counts as absent.
template <class K>
inline constexpr bool has_block_entry = requires(const typename K::layout::globals &g) { K::block_entry(g); };

// By the member's address, not by a call as above: a call would name consumer_release_args<K>,
// whose members need traits<K>, which this trait helps define.
template <class K, class = void> struct has_release_finish : std::false_type {};
template <class K>
struct has_release_finish<K, std::void_t<decltype(&K::consumer::release_finish)>> : std::true_type {};

constexpr int padded(int bytes) { return (bytes + 1023) / 1024 * 1024; }
} // namespace detail

/// Types and numbers the template derives from K (all compile-time).
template <class K> struct traits {
  // A hard error when K is incomplete: traits<K> named in a declaration inside K's own
  // definition would be instantiated before K::consumer exists, and then never see
  // consumer::release_finish (a finish block never released: the producer's wait hangs).
  static_assert(sizeof(K) > 0, "lcf::traits<K> needs K complete: name traits<K> only inside hook bodies");
  using layout = typename K::layout;
  using globals = typename layout::globals;
  using input_block = typename layout::input_block;
  using finish_block = typename detail::finish_block_of<layout>::type;
  using scratch_block = typename detail::scratch_block_of<layout>::type;
  using common_state = typename detail::common_state_of<layout>::type;
  using producer_state = typename detail::producer_state_of<layout>::type;
  using consumer_state = typename detail::consumer_state_of<layout>::type;

  static constexpr int INPUT_STAGES = K::INPUT_STAGES;
  static constexpr int NUM_CONSUMER_WARPGROUPS = detail::NUM_CONSUMER_WARPGROUPS_of<K>::value;
  static constexpr int NUM_CONSUMER_WARPS = NUM_CONSUMER_WARPGROUPS * WARPGROUP_WARPS;
  static constexpr int NUM_CONSUMER_THREADS = NUM_CONSUMER_WARPGROUPS * WARPGROUP_THREADS;
  static constexpr int NUM_THREADS = NUM_CONSUMER_THREADS + WARPGROUP_THREADS; // one producer warpgroup
  static constexpr int PRODUCER_ARRIVALS = detail::PRODUCER_ARRIVALS_of<K>::value;
  static constexpr int CONSUMER_ARRIVALS =
      detail::CONSUMER_ARRIVALS_of<K>::value > 0 ? detail::CONSUMER_ARRIVALS_of<K>::value : NUM_CONSUMER_WARPS;
  static constexpr int PRODUCER_REGISTERS = detail::PRODUCER_REGISTERS_of<K>::value;
  /// Registers the block holds: what the producer and consumers share (see block_register_pool).
  static constexpr int REGISTER_POOL = block_register_pool(NUM_THREADS);
  /// Default: the most a consumer may take, a multiple of 8, capped at 256.
  static constexpr int CONSUMER_REGISTERS_DEFAULT =
      ((REGISTER_POOL - PRODUCER_REGISTERS * WARPGROUP_THREADS) / NUM_CONSUMER_THREADS) / 8 * 8 > 256
          ? 256 : ((REGISTER_POOL - PRODUCER_REGISTERS * WARPGROUP_THREADS) / NUM_CONSUMER_THREADS) / 8 * 8;
  static constexpr int CONSUMER_REGISTERS =
      detail::CONSUMER_REGISTERS_of<K>::value > 0 ? detail::CONSUMER_REGISTERS_of<K>::value : CONSUMER_REGISTERS_DEFAULT;

  static constexpr int BUDGET = detail::MAX_SHARED_MEMORY_of<K>::value;
  static constexpr bool HAS_SCRATCH = !std::is_empty_v<scratch_block>;
  static constexpr bool HAS_FINISH = !std::is_empty_v<finish_block>;
  /// The consumer releases each finish block late, through consumer::release_finish.
  static constexpr bool DEFERS_FINISH_RELEASE = detail::has_release_finish<K>::value;
  static constexpr int SCRATCH_BYTES = HAS_SCRATCH ? detail::padded(sizeof(scratch_block)) : 0;
  static constexpr int STAGE_BYTES = detail::padded(sizeof(input_block));
  static constexpr int STAGES_END = SCRATCH_BYTES + INPUT_STAGES * STAGE_BYTES;
  /// One finish block per consumer warpgroup instead of one for the block.
  static constexpr bool FINISH_PER_WARPGROUP = detail::FINISH_PER_WARPGROUP_of<K>::value != 0;
  /// Where each task's first stage goes in the ring (see the file comment).
  static constexpr int RING_START = detail::RING_START_of<K>::value;
  /// Task 0's first stages whose loads thread 0 issues at the block's entry (see the contract).
  static constexpr int EARLY_STAGES = detail::EARLY_STAGES_of<K>::value;
  /// The ring slot of a task's stage `it` when the task's first stage went to `ring_base`.
  KITTENS_HOST_DEVICE static constexpr int slot(int ring_base, int it) {
    return RING_START == RING_RESTART ? it % INPUT_STAGES : (ring_base + it) % INPUT_STAGES;
  }
  /// Bytes of one finish block, and of all of them.
  static constexpr int FINISH_BLOCK_BYTES = HAS_FINISH ? detail::padded(sizeof(finish_block)) : 0;
  static constexpr int FINISH_BYTES = FINISH_BLOCK_BYTES * (FINISH_PER_WARPGROUP ? NUM_CONSUMER_WARPGROUPS : 1);
  /// Finish block offset: as late as the budget allows, 1024-aligned (it may alias stages).
  static constexpr int FINISH_OFFSET = HAS_FINISH ? (BUDGET - FINISH_BYTES) / 1024 * 1024 : BUDGET;
  /// Warpgroup w's own finish block (FINISH_PER_WARPGROUP): warpgroup 0's last, so that the
  /// first warpgroups' blocks are those that may lie past the stages.
  static constexpr int finish_offset(int w) {
    return FINISH_OFFSET + (FINISH_PER_WARPGROUP ? (NUM_CONSUMER_WARPGROUPS - 1 - w) * FINISH_BLOCK_BYTES : 0);
  }
  /// Whether warpgroup w's finish block shares bytes with a stage (then it waits, before its
  /// finish, for every consumer to be done with the stages).
  static constexpr bool finish_aliases(int w) { return HAS_FINISH && finish_offset(w) < STAGES_END; }
  /// Whether the consumers meet before finish: always with one finish block for the block,
  /// with one per warpgroup when one of them shares bytes with a stage.
  static constexpr bool MEET_BEFORE_FINISH = [] {
    bool meet = !FINISH_PER_WARPGROUP;
    for (int w = 0; w < NUM_CONSUMER_WARPGROUPS; ++w) meet = meet || finish_aliases(w);
    return HAS_FINISH && meet;
  }();
  /// Stages that lie wholly before the finish block.
  static constexpr int SAFE_STAGES = [] {
    int s = 0;
    while (s < INPUT_STAGES && SCRATCH_BYTES + (s + 1) * STAGE_BYTES <= FINISH_OFFSET) ++s;
    return s;
  }();
  /// Bytes of dynamic shared memory to launch with (includes 1024 bytes of alignment slack).
  static constexpr int DYNAMIC_SHARED_BYTES = (STAGES_END > FINISH_OFFSET + FINISH_BYTES ? STAGES_END : FINISH_OFFSET + FINISH_BYTES) + 1024;

  static_assert(sizeof(input_block) % 1024 == 0,
                "lcf: sizeof(input_block) must be a multiple of 1024 bytes: expect(bar, input) counts sizeof, so a padded block would make the producer wait for bytes TMA never sends; use tiles whose sizes are multiples of 1024 or call expect_bytes with the exact count");
  static_assert(INPUT_STAGES >= 1 && INPUT_STAGES <= 16, "lcf: INPUT_STAGES must be 1..16 (the phase bitfield holds 16 stages)");
  static_assert(NUM_CONSUMER_WARPGROUPS >= 1 && NUM_CONSUMER_WARPGROUPS <= 3,
                "lcf: NUM_CONSUMER_WARPGROUPS must be 1..3 (one producer warpgroup, at most 512 threads)");
  static_assert(PRODUCER_ARRIVALS >= 1 && PRODUCER_ARRIVALS <= WARPGROUP_THREADS,
                "lcf: PRODUCER_ARRIVALS must be 1..128: the number of arrivals producer::load makes on inputs_arrived per stage");
  static_assert(CONSUMER_ARRIVALS >= 1 && CONSUMER_ARRIVALS <= NUM_CONSUMER_THREADS,
                "lcf: CONSUMER_ARRIVALS must be between 1 and the consumer thread count: the arrivals compute/finish make per stage");
  static_assert(PRODUCER_REGISTERS % 8 == 0 && PRODUCER_REGISTERS >= 24 && PRODUCER_REGISTERS <= 256,
                "lcf: PRODUCER_REGISTERS must be a multiple of 8 in 24..256 (setmaxnreg)");
  static_assert(CONSUMER_REGISTERS % 8 == 0 && CONSUMER_REGISTERS >= 24 && CONSUMER_REGISTERS <= 256,
                "lcf: CONSUMER_REGISTERS must be a multiple of 8 in 24..256 (setmaxnreg)");
  static_assert(PRODUCER_REGISTERS * WARPGROUP_THREADS + CONSUMER_REGISTERS * NUM_CONSUMER_THREADS <= REGISTER_POOL,
                "lcf: PRODUCER_REGISTERS*128 + CONSUMER_REGISTERS*128*NUM_CONSUMER_WARPGROUPS exceeds the registers the block holds (block_register_pool: 64512 at 384 threads, 65536 at 512), so the consumers' setmaxnreg.inc would wait forever; lower CONSUMER_REGISTERS (e.g. 232 with 40 for the producer and 2 consumer warpgroups, 160 with 24 and 3)");
  static_assert(BUDGET + 1024 + 256 <= MAX_SHARED_MEMORY_SM90,
                "lcf: MAX_SHARED_MEMORY leaves no room for the 1024-byte alignment slack and the semaphores; lower it");
  static_assert(STAGES_END <= BUDGET,
                "lcf: scratch + INPUT_STAGES * input_block (each padded to 1024 bytes) exceed MAX_SHARED_MEMORY; reduce INPUT_STAGES or the tile sizes");
  static_assert(FINISH_OFFSET >= SCRATCH_BYTES,
                "lcf: finish_block does not fit after scratch_block within MAX_SHARED_MEMORY; shrink one of them");
  static_assert(HAS_FINISH || !FINISH_PER_WARPGROUP,
                "lcf: FINISH_PER_WARPGROUP is set, but the layout has no finish_block; remove it");
  static_assert(HAS_FINISH || !DEFERS_FINISH_RELEASE,
                "lcf: consumer::release_finish releases the finish block, but the layout has none; remove the hook");
  static_assert(RING_START >= RING_RESTART && RING_START <= RING_SKIP_LAST,
                "lcf: RING_START must be RING_RESTART, RING_CONTINUE or RING_SKIP_LAST");
  static_assert(RING_START == RING_RESTART || !HAS_FINISH,
                "lcf: RING_START other than RING_RESTART needs a layout without finish_block: the finish block aliases fixed slots, which the producer may load only after the previous finish");
  static_assert(EARLY_STAGES >= 0 && EARLY_STAGES <= (HAS_FINISH ? SAFE_STAGES : INPUT_STAGES),
                "lcf: EARLY_STAGES must be 0..SAFE_STAGES (0..INPUT_STAGES without a finish block): thread 0 loads them into the first slots at the entry");
  static_assert(SAFE_STAGES >= 1 || !HAS_FINISH,
                "lcf: finish_block aliases every input stage, so the next task could never start loading early; shrink finish_block or input_block");
};

/// Arguments of common_setup.
template <class K> struct common_args {
  typename traits<K>::common_state &common;
  int task_iter;
  int &num_iters;
  const typename traits<K>::globals &globals;
  typename traits<K>::scratch_block &scratch;
};
template <class K> struct producer_setup_args : common_args<K> { typename traits<K>::producer_state &state; };
template <class K> struct producer_load_args : common_args<K> {
  typename traits<K>::producer_state &state;
  typename traits<K>::input_block &input;
  semaphore &inputs_arrived;
  int iter;
};
template <class K> struct consumer_setup_args : common_args<K> {
  typename traits<K>::consumer_state &state;
  /// This warpgroup's own semaphore for this task's setup loads (e.g. its Q tile into the
  /// scratch block): arm it with expect_bytes from one thread, then wait(setup_arrived,
  /// setup_phase). Two semaphores alternate by task; each must receive exactly one armed load
  /// per task (here or through the previous task's next_setup_arrived), or none in any task.
  semaphore &setup_arrived;
  int setup_phase;
  /// Stages of this task this warpgroup computes on: compute_begin .. compute_iters - 1, all
  /// (0 .. num_iters - 1) unless setup raises the first or lowers the second.
  int &compute_iters;
  int &compute_begin;
  /// The block's next task (next_num_iters < 0: none), and the semaphore its setup will wait
  /// on: a setup may load the next task's tiles now, into scratch this task does not use.
  const typename traits<K>::common_state &next_common;
  int next_num_iters;
  semaphore &next_setup_arrived;
};
template <class K> struct consumer_compute_args : common_args<K> {
  typename traits<K>::consumer_state &state;
  typename traits<K>::input_block &input;
  semaphore &inputs_finished;
  int iter;
  /// inputs_finished of the previous iteration's stage (nullptr at iter 0): lets compute keep
  /// one wgmma group in flight and release the previous stage instead (see docs/kittens.md).
  semaphore *prev_inputs_finished;
  /// The stage ring (slot 0's block and semaphore) and the slot of this task's first stage.
  typename traits<K>::input_block *ring;
  semaphore *ring_finished;
  int ring_base;
  /// Stage `it` of this task, which this warpgroup holds (has not released since it arrived;
  /// it <= iter): compute may read the stages it holds in a later call of the same task.
  KITTENS_DEVICE typename traits<K>::input_block &input_at(int it) const {
    return *reinterpret_cast<typename traits<K>::input_block *>(reinterpret_cast<char *>(ring) +
                                                                 traits<K>::slot(ring_base, it) * traits<K>::STAGE_BYTES);
  }
  /// The semaphore that releases held stage `it` (CONSUMER_ARRIVALS arrivals, as for `input`).
  KITTENS_DEVICE semaphore &inputs_finished_at(int it) const { return ring_finished[traits<K>::slot(ring_base, it)]; }
  /// This warpgroup's finish block (the block's one without FINISH_PER_WARPGROUP). Where it
  /// aliases no stage (!traits<K>::finish_aliases), compute may stage results in it from the
  /// second stage it computes in a task on (the previous finish's release has run by then);
  /// the task's finish then releases it as usual, after the stores issued from it here too.
  typename traits<K>::finish_block &finish;
  /// The ring's arrival semaphores and the phase bits the template waits at next.
  semaphore *ring_arrived;
  uint32_t ring_full_bits;
  /// Waits until a later stage `it` of this task has arrived (see the contract: iter < it <
  /// iter + INPUT_STAGES), at the parity the template waits at for it, so that compute may
  /// read it now through input_at(it); the template's own wait for it then returns at once.
  /// Release it in its own call, after that wait, never before.
  KITTENS_DEVICE void wait_arrived_at(int it) const {
    const int s = traits<K>::slot(ring_base, it);
    wait(ring_arrived[s], (ring_full_bits >> s) & 1);
  }
};
template <class K> struct consumer_finish_args : common_args<K> {
  typename traits<K>::consumer_state &state;
  typename traits<K>::finish_block &finish;
  semaphore &finish_finished;
  /// As in setup (< 0: this is the block's last task). A finish whose TMA store reads scratch
  /// that only the next task's setup reuses may leave the read wait to that setup, except here.
  int next_num_iters;
};
/// Arguments of consumer::release_finish (called late for this warpgroup's last finish).
template <class K> struct consumer_release_args {
  typename traits<K>::finish_block &finish;
  semaphore &finish_finished;
};

/// The LCF kernel. Launch with traits<K>::NUM_THREADS threads and DYNAMIC_SHARED_BYTES (see launch()).
template <class K>
__global__ __launch_bounds__(traits<K>::NUM_THREADS, 1) void kernel(const __grid_constant__ typename traits<K>::globals g) {
  using TR = traits<K>;
  constexpr int S = TR::INPUT_STAGES;
  extern __shared__ char lcf_smem_raw[];
  __shared__ semaphore inputs_arrived[S], inputs_finished[S], finish_finished;
  __shared__ semaphore setup_arrived[2][TR::NUM_CONSUMER_WARPGROUPS]; // alternating by task

  shared_allocator alloc(lcf_smem_raw);
  char *base = alloc.ptr;
  auto &scratch = *reinterpret_cast<typename TR::scratch_block *>(base);
  auto *inputs = reinterpret_cast<typename TR::input_block *>(base + TR::SCRATCH_BYTES);
  auto finish_of = [&](int w) -> typename TR::finish_block & {
    return *reinterpret_cast<typename TR::finish_block *>(base + TR::finish_offset(w));
  };
  // The slot where the next task starts (a task without stages leaves it where it was); a
  // task's stage `it` lies in TR::slot(ring_base, it).
  auto next_ring_base = [](int ring_base, int num_iters) {
    if constexpr (TR::RING_START == RING_CONTINUE) return (ring_base + num_iters) % S;
    else if constexpr (TR::RING_START == RING_SKIP_LAST)
      return num_iters == 0 ? ring_base : (ring_base + num_iters - 1) % S == 0 ? 1 % S : 0;
    else return 0;
  };
  auto stage = [&](int s) -> typename TR::input_block & {
    return *reinterpret_cast<typename TR::input_block *>(reinterpret_cast<char *>(inputs) + s * TR::STAGE_BYTES);
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      init_semaphore(inputs_arrived[s], TR::PRODUCER_ARRIVALS);
      init_semaphore(inputs_finished[s], TR::CONSUMER_ARRIVALS);
    }
    init_semaphore(finish_finished, TR::CONSUMER_ARRIVALS);
    for (int w = 0; w < TR::NUM_CONSUMER_WARPGROUPS; ++w) {
      init_semaphore(setup_arrived[0][w], 1);
      init_semaphore(setup_arrived[1][w], 1);
    }
    fence_semaphore_init();
    if constexpr (TR::EARLY_STAGES > 0) {
      // Task 0's first stages, issued before anyone else is past the barrier (see the
      // contract). The copies complete on the semaphores through the async proxy, which must
      // see their initialisation too.
      fence_async_shared();
      typename TR::common_state first{};
      int first_iters = -1;
      common_args<K> ca{first, 0, first_iters, g, scratch};
      K::common_setup(ca);
      typename TR::producer_state first_state;
      for (int it = 0; it < first_iters && it < TR::EARLY_STAGES; ++it) {
        const int s = TR::slot(0, it);
        producer_load_args<K> la{{first, 0, first_iters, g, scratch}, first_state, stage(s), inputs_arrived[s], it};
        K::producer::load(la);
      }
    }
  }
  if constexpr (detail::has_block_entry<K>) {
    if (threadIdx.x == TR::NUM_CONSUMER_WARPGROUPS * WARPGROUP_THREADS) K::block_entry(g);
  }
  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);

  typename TR::common_state common{};
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) { // the producer warpgroup (last)
    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
    typename TR::producer_state state; // default-initialised: setup writes what it reads
    ring_phases ph;
    int ring_base = 0; // the slot of the task's first stage (see RING_START)
    for (int task_iter = 0;; ++task_iter) {
      int num_iters = -1;
      common_args<K> ca{common, task_iter, num_iters, g, scratch};
      K::common_setup(ca);
      if (num_iters < 0) break;
      producer_setup_args<K> sa{{common, task_iter, num_iters, g, scratch}, state};
      K::producer::setup(sa);
      auto load_stage = [&](int it) {
        const int s = TR::slot(ring_base, it);
        wait(inputs_finished[s], ph.empty(s));
        ph.flip_empty(s);
        if (TR::EARLY_STAGES > 0 && task_iter == 0 && it < TR::EARLY_STAGES) return; // thread 0 issued it
        producer_load_args<K> la{{common, task_iter, num_iters, g, scratch}, state, stage(s), inputs_arrived[s], it};
        K::producer::load(la);
      };
      int it = 0;
      for (; it < num_iters && it < TR::SAFE_STAGES; ++it) load_stage(it);
      // The previous task's finish must release the memory the tail stages share with it.
      // Only when there are such stages: with none left, the consumers may finish this task
      // before this thread gets here, and a wait on the previous phase's parity would then
      // see this one's and wait for the next (which needs this thread's loads): a hang.
      if (it < num_iters) {
        wait(finish_finished, (task_iter & 1) ^ 1);
        for (; it < num_iters; ++it) load_stage(it);
      }
      ring_base = next_ring_base(ring_base, num_iters);
    }
  } else {
    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
    typename TR::consumer_state state; // default-initialised: setup writes what it reads
    ring_phases ph;
    int ring_base = 0; // as the producer's
    // Consumers know the block's next task one task ahead, so that setup may load its tiles early.
    typename TR::common_state next{};
    int num_iters = -1;
    // This warpgroup's last finish still awaits consumer::release_finish (see the contract).
    bool release_pending = false;
    auto release_finish = [&] {
      if constexpr (TR::DEFERS_FINISH_RELEASE) {
        if (release_pending) {
          consumer_release_args<K> ra{finish_of(TR::FINISH_PER_WARPGROUP ? warpgroupid() : 0), finish_finished};
          K::consumer::release_finish(ra);
          release_pending = false;
        }
      }
    };
    {
      common_args<K> ca{common, 0, num_iters, g, scratch};
      K::common_setup(ca);
    }
    for (int task_iter = 0; num_iters >= 0; ++task_iter) {
      int next_iters = -1;
      common_args<K> na{next, task_iter + 1, next_iters, g, scratch};
      K::common_setup(na);
      int compute_iters = num_iters, compute_begin = 0;
      const int wg = warpgroupid();
      consumer_setup_args<K> sa{{common, task_iter, num_iters, g, scratch}, state,
                                setup_arrived[task_iter & 1][wg], (task_iter >> 1) & 1, compute_iters,
                                compute_begin, next, next_iters, setup_arrived[(task_iter + 1) & 1][wg]};
      K::consumer::setup(sa);
      if (compute_iters > num_iters) compute_iters = num_iters;
      // Stages this warpgroup does not compute on (before compute_begin, from compute_iters):
      // each is released once it has arrived, so that the arrival counts toward that stage's
      // current phase.
      auto release_unread = [&](int &it, int end) {
        if constexpr (TR::CONSUMER_ARRIVALS == TR::NUM_CONSUMER_WARPS) {
          for (; it < end; ++it) {
            const int s = TR::slot(ring_base, it);
            wait(inputs_arrived[s], ph.full(s));
            ph.flip_full(s);
            if (laneid() == 0) arrive(inputs_finished[s]);
          }
        } else if (it < end) {
          __trap(); // compute_begin and compute_iters need one arrival per consumer warp (see the contract)
        }
      };
      int it = 0;
      // The producer loads the stages from SAFE_STAGES on only after the release: waiting
      // for one of them unreleased would wait forever.
      if (compute_begin >= TR::SAFE_STAGES || compute_begin >= compute_iters) release_finish();
      release_unread(it, compute_begin < compute_iters ? compute_begin : compute_iters);
      const int first = it;
      for (; it < compute_iters; ++it) {
        const int s = TR::slot(ring_base, it);
        wait(inputs_arrived[s], ph.full(s));
        ph.flip_full(s);
        semaphore *prev = it > first ? &inputs_finished[TR::slot(ring_base, it - 1)] : nullptr;
        consumer_compute_args<K> xa{{common, task_iter, num_iters, g, scratch}, state, stage(s), inputs_finished[s], it, prev,
                                    inputs, inputs_finished, ring_base, finish_of(TR::FINISH_PER_WARPGROUP ? wg : 0),
                                    inputs_arrived, ph.bits};
        K::consumer::compute(xa);
        release_finish(); // after the first stage: the store has long read the block
      }
      release_unread(it, num_iters);
      // Every consumer must be done reading the stages before finish overwrites aliased ones.
      // Without a finish block nothing is shared: each warpgroup goes on at its own pace,
      // at most a task ahead of the slowest.
      if constexpr (TR::MEET_BEFORE_FINISH) {
        if (!TR::FINISH_PER_WARPGROUP || TR::finish_aliases(wg)) {
          named_sync(LCF_BARRIER_CONSUMERS, TR::NUM_CONSUMER_THREADS);
        } else {
          // Its own block lies past the stages: it only tells the others it is done with
          // them. Not before they are past the previous meeting (their release of the previous
          // finish comes after it), or this arrival would count toward that one.
          wait(finish_finished, (task_iter & 1) ^ 1);
          named_arrive(LCF_BARRIER_CONSUMERS, TR::NUM_CONSUMER_THREADS);
        }
      } else {
        // Not met, a warpgroup a whole task ahead of another would arrive on finish_finished
        // for this task before the other's arrival for the previous one: wait for that phase.
        wait(finish_finished, (task_iter & 1) ^ 1);
      }
      consumer_finish_args<K> fa{{common, task_iter, num_iters, g, scratch}, state,
                                 finish_of(TR::FINISH_PER_WARPGROUP ? wg : 0), finish_finished, next_iters};
      K::consumer::finish(fa);
      release_pending = TR::DEFERS_FINISH_RELEASE;
      ring_base = next_ring_base(ring_base, num_iters);
      common = next;
      num_iters = next_iters;
    }
    release_finish(); // the block's last store must have read the finish block before it exits
  }
}

/// Host: set the kernel's shared-memory limit and launch it on `grid` blocks.
template <class K>
cudaError_t launch(const typename traits<K>::globals &g, int grid, cudaStream_t stream = 0) {
  using TR = traits<K>;
  cudaError_t e = cudaFuncSetAttribute(kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, TR::DYNAMIC_SHARED_BYTES);
  if (e != cudaSuccess) return e;
  kernel<K><<<grid, TR::NUM_THREADS, TR::DYNAMIC_SHARED_BYTES, stream>>>(g);
  return cudaGetLastError();
}

} // namespace kittens::lcf
