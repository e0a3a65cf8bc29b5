//===- ScheduleTasks.cpp - Task order and the start of blocks and tasks ---===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Decides how blocks walk their tasks and how a block and a task start, from
// the program's form and the target's tuning numbers (Target/Arch.h):
//
// - Task order. Two task indices as an output's tiles (`order: grouped`, the
//   default with two) are walked a group of tile rows at a time, so that
//   neighbouring blocks share operands in L2. Tasks whose loop stops at their
//   own rows (or start at them) differ in length: they are ordered by length, and which order
//   (pairs of a head's long and short task, a head's tasks together, or
//   longest first) is chosen at run time from the stopping index's count,
//   between the bounds chosen here. Otherwise the last index varies fastest
//   and each round is shifted by one block, so that no block draws a head's
//   partial last task every round.
// - Row blocks in turn: in a causal kernel of enough consumer warpgroups the
//   last row block needs the most stages, so the warpgroups take them in turn.
// - The ring: a kernel whose finish stages in a finish block gives each
//   warpgroup its own (the block aliases fixed slots, so tasks start at slot
//   0); otherwise a task starts where the previous one stopped (tasks of
//   different lengths) or skips the slot the previous one just ended on.
// - The block's start: where the consumers' setup loads nothing of its own,
//   the first stage's arrival decides when they start, so the block's TMA
//   descriptors are prefetched at its entry and thread 0 loads task 0's first
//   stage before the block-wide barrier (+0.2-0.7 % at 2048^3 on an H100).
//   Where setup loads per-warpgroup tiles, the consumers wait for those.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace tkc {

namespace {
/// Grouped task order: tiles of this many task rows are walked column by
/// column so that neighbouring blocks share their A and B tiles in L2.
constexpr int kGroupRows = 8;
} // namespace

bool scheduleTasks(ir::Kernel &kernel, DiagnosticEngine &) {
  ir::Plan &plan = kernel.plan;
  plan.scheduled = true;
  const Tuning &tuning = kernel.arch->tuning;
  const ir::LoopBound &bound = kernel.loopBound;
  plan.groupRows = 0;
  plan.pairedMinCount = plan.pairedMaxCount = plan.headMajorMaxCount = plan.rotatedMaxCount = 0;
  if (kernel.sequences) {
    // A task's length follows its sequence's, which only the device reads: each round's
    // tasks go to the blocks shifted by one, a sequence's tiles of a head side by side.
    plan.taskOrder = ir::TaskOrder::Rotated;
  } else if (!bound.stopScalar.empty()) {
    // A stop a scalar past each row (a window): the tasks are as long as one another but near
    // the end of the size, which the order by length does not model.
    plan.taskOrder = ir::TaskOrder::Rotated;
  } else if (!bound.stopVar.empty()) {
    plan.taskOrder = ir::TaskOrder::ByLength;
    const bool shallowRing = plan.stages <= tuning.headMajorMaxStages;
    if (!bound.start) {
      if (!shallowRing) {
        plan.pairedMinCount = 1;
        plan.pairedMaxCount = tuning.pairedMaxCount;
      } else if (kernel.consumerWarpgroups >= tuning.pairedShallowRingMinWarpgroups) {
        plan.pairedMinCount = tuning.pairedMinCountShallowRing;
        plan.pairedMaxCount = tuning.pairedMaxCount;
      }
    }
    if (shallowRing)
      plan.headMajorMaxCount = tuning.headMajorMaxCount;
  } else if (bound.start) {
    // A loop over its whole size that starts at the task's rows: the first tasks of that
    // index are the longest. Few a head, in pairs or the rotated order; more, longest first.
    plan.taskOrder = ir::TaskOrder::ByLength;
    plan.pairedMinCount = tuning.startPairedMinCount;
    plan.pairedMaxCount = tuning.startPairedMaxCount;
    plan.rotatedMaxCount = tuning.startRotatedMaxCount;
  } else if (kernel.groupedOrder && kernel.tasks.size() == 2) {
    plan.taskOrder = ir::TaskOrder::Grouped;
    plan.groupRows = kGroupRows;
  } else {
    plan.taskOrder = ir::TaskOrder::Rotated;
  }
  plan.rotateRowBlocks = bound.perRow && !bound.start &&
                         kernel.consumerWarpgroups >= tuning.rotateRowBlocksMinWarpgroups;

  plan.finishPerWarpgroup = llvm::any_of(kernel.program.finish, [&](const ir::ProgramOp &op) {
    return op.kind == ir::ProgramOp::Kind::StoreTile && op.tile >= kernel.warpgroupTiles.size();
  });
  plan.ringStart = plan.finishPerWarpgroup ? ir::RingStart::First
                   : bound.stopVar.empty() ? ir::RingStart::SkipLast
                                           : ir::RingStart::Continue;

  const bool setupLoads = llvm::any_of(kernel.program.setup, [](const ir::ProgramOp &op) {
    return op.kind == ir::ProgramOp::Kind::LoadTile;
  });
  // Thread 0 alone issues the early stages, and it would find its task's sequence alone: the
  // lookup takes a whole warp; and the columns read per column are copied by another warp.
  plan.earlyStages = setupLoads || kernel.sequences || !kernel.columnReads.empty() ? 0 : 1;
  plan.prefetchDescriptors = !setupLoads;
  return true;
}

} // namespace tkc
