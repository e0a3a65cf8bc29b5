/**
 * @file
 * @brief Warpgroup register reallocation (setmaxnreg, sm_90a).
 *
 * Takes effect only when the kernel has a register cap at entry (`__launch_bounds__(T, 1)`)
 * and every warp of the warpgroup executes the same call.
 */
#pragma once

#include "../../common/util.cuh"

namespace kittens::warpgroup {

/// Raise this warpgroup's per-thread register limit to R.
template <int R> KITTENS_DEVICE void increase_registers() {
  static_assert(R % 8 == 0 && R >= 24 && R <= 256, "kittens::increase_registers: R must be a multiple of 8 in 24..256");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
/// Lower this warpgroup's per-thread register limit to R, releasing the rest to the SM.
template <int R> KITTENS_DEVICE void decrease_registers() {
  static_assert(R % 8 == 0 && R >= 24 && R <= 256, "kittens::decrease_registers: R must be a multiple of 8 in 24..256");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}

} // namespace kittens::warpgroup
