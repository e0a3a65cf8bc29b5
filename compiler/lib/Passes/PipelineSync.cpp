//===- PipelineSync.cpp - Arrivals, armed bytes, barriers, task order -----===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "tkc/dsl/InternalError.h"

namespace tkc {

namespace {
/// Named barrier ids the lcf template leaves to kernels: 1..12.
constexpr int kFirstUserBarrier = 1;
constexpr int kLastUserBarrier = 12;
/// Grouped task order: tiles of this many task rows are walked column by
/// column so that neighbouring blocks share their A and B tiles in L2.
constexpr int kGroupRows = 8;
} // namespace

bool planSynchronization(ir::Kernel &kernel, DiagnosticEngine &) {
  ir::Plan &plan = kernel.plan;
  // One elected producer thread arms the stage and issues every copy.
  plan.producerArrivals = 1;
  // Lane 0 of every consumer warp releases the stage after its last read.
  plan.consumerArrivals = kernel.consumerWarpgroups * 4;
  plan.expectBytes = 0;
  for (const ir::Load &load : kernel.loads)
    plan.expectBytes += static_cast<int>(kernel.stageTiles[load.tile].bytes());
  plan.setupBytes = 0;
  if (kernel.program)
    for (const ir::ProgramOp &op : kernel.program->setup)
      if (op.kind == ir::ProgramOp::Kind::LoadTile)
        plan.setupBytes += static_cast<int>(kernel.warpgroupTiles[op.tile].bytes());
  plan.finishBarrierIds.clear();
  for (int wg = 0; wg < kernel.consumerWarpgroups; ++wg)
    plan.finishBarrierIds.push_back(kFirstUserBarrier + wg);
  TKC_INTERNAL_ASSERT(plan.finishBarrierIds.back() <= kLastUserBarrier,
                      "more finish barriers than named barrier ids");
  plan.groupRows = kernel.groupedOrder ? kGroupRows : 0;
  return true;
}

} // namespace tkc
