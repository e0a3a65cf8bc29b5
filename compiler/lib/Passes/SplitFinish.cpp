//===- SplitFinish.cpp - A wide result in column halves --------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// A matrix-product kernel ends each task with its finish: both consumer
// warpgroups off the tensor cores while they stage the result in shared
// memory and issue its store, and, in a block's last task, all blocks storing
// at once. With the result in two column halves, each task's last stages
// compute the left half first and the right half after; the left half is
// staged and stored while the right half's products run, and the finish has
// only the right half left. Measured against the single-part kernel on an
// H200 (bench/NOTES.md, session 26): 1.016-1.029x at 2048^3 (a block's only
// task ends sooner), 1.005-1.007x at the K = 4096 anchor shapes, 1.000-1.002x
// at 8192^3; holding three stages or one read 0.2-0.5 % lower at K = 4096.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

namespace tkc {

namespace {
/// Result columns the split applies to: two halves of 128 (m64n128 products; narrower
/// halves are unmeasured, and a half must be whole 64-column chunks of B).
constexpr int64_t kSplitColumns = 256;
/// The stages at a task's end whose halves are computed apart. The left half's store leaves
/// under the right half's products of these stages; the ring keeps them until the task's
/// last compute, so the next task's first loads wait for more of them the more there are.
constexpr int kSplitStages = 2;
} // namespace

bool splitFinish(ir::Kernel &kernel, DiagnosticEngine &) {
  if (!kernel.store)
    return true;
  const ir::State &result = kernel.state[kernel.store->state];
  ir::Plan &plan = kernel.plan;
  bool split = result.cols == kSplitColumns;
  plan.resultParts = split ? 2 : 1;
  plan.splitStages = split ? kSplitStages : 0;
  return true;
}

} // namespace tkc
