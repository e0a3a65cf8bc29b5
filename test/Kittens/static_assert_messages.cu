// REQUIRES: nvcc
// Broken configurations fail to compile with a message that names the constraint.
// RUN: not %nvcc %sm90_flags -c %s -o %t.o -DCASE=1 2>&1 | grep -q "exceeds the registers the block holds"
// RUN: not %nvcc %sm90_flags -c %s -o %t.o -DCASE=2 2>&1 | grep -q "exceed MAX_SHARED_MEMORY; reduce INPUT_STAGES"
// RUN: not %nvcc %sm90_flags -c %s -o %t.o -DCASE=3 2>&1 | grep -q "rows must be a positive multiple of 16"
// RUN: not %nvcc %sm90_flags -c %s -o %t.o -DCASE=4 2>&1 | grep -q "cols must be a multiple of the swizzle chunk"
// RUN: not %nvcc %sm90_flags -c %s -o %t.o -DCASE=5 2>&1 | grep -q "R must be a multiple of 8 in 24..256"
// RUN: not %nvcc %sm90_flags -c %s -o %t.o -DCASE=6 2>&1 | grep -q "wgmma operands must be swizzled shared tiles"
// RUN: not %nvcc %sm90_flags -c %s -o %t.o -DCASE=7 2>&1 | grep -q "EARLY_STAGES must be 0..SAFE_STAGES"
// RUN: %nvcc %sm90_flags -c %s -o %t.o -DCASE=0
// RUN: %nvcc %sm90_flags -c %s -o %t.o -DCASE=8
#include <kittens/kittens.cuh>

using namespace kittens;

struct base_cfg {
  using t = st_bf<64, 64>;
  struct layout {
    struct globals { tile_map<t> A; };
    struct input_block { t a, b, c, d, e, f; }; // 48 KiB
  };
  __device__ static void common_setup(lcf::common_args<base_cfg> &a) { a.num_iters = -1; }
  struct producer {
    __device__ static void setup(lcf::producer_setup_args<base_cfg> &) {}
    __device__ static void load(lcf::producer_load_args<base_cfg> &) {}
  };
  struct consumer {
    __device__ static void setup(lcf::consumer_setup_args<base_cfg> &) {}
    __device__ static void compute(lcf::consumer_compute_args<base_cfg> &) {}
    __device__ static void finish(lcf::consumer_finish_args<base_cfg> &) {}
  };
#if CASE == 1
  static constexpr int INPUT_STAGES = 4;
  // 32*128 + 240*256 = 65536 fits the register file, but a 384-thread block
  // holds 168*384 = 64512: the consumers' setmaxnreg.inc would never return.
  static constexpr int PRODUCER_REGISTERS = 32;
  static constexpr int CONSUMER_REGISTERS = 240;
#elif CASE == 2
  static constexpr int INPUT_STAGES = 5; // 5 * 48 KiB > 225 KiB
#elif CASE == 7
  static constexpr int INPUT_STAGES = 4;
  static constexpr int EARLY_STAGES = 5; // more than the ring holds
#elif CASE == 8
  static constexpr int INPUT_STAGES = 4;
  static constexpr int EARLY_STAGES = 4; // every slot, without a finish block: allowed
#else
  static constexpr int INPUT_STAGES = 4;
#endif
};

template __global__ void lcf::kernel<base_cfg>(const __grid_constant__ lcf::traits<base_cfg>::globals);

#if CASE == 3
rt_fl<24, 16> bad_rows;
#elif CASE == 4
using bad_cols = st<bf16, 64, 48, 128>;
bad_cols::dtype *p = nullptr;
static_assert(sizeof(bad_cols) > 0);
#elif CASE == 5
__global__ void k() { warpgroup::increase_registers<100>(); }
#elif CASE == 6
__global__ void k() {
  __shared__ st<bf16, 64, 64, 0> a;
  rt_fl<16, 64> d;
  warpgroup::mma_ABt(d, a, a);
}
#endif
