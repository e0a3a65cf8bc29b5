//===- PipelineSync.cpp - Arrivals, armed bytes, barriers, task order -----===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include <algorithm>

#include "tkc/dsl/InternalError.h"

namespace tkc {

namespace {
/// Named barrier ids the lcf template leaves to kernels: 1..12.
constexpr int kFirstUserBarrier = 1;
constexpr int kLastUserBarrier = 12;
/// Rows of one consumer warpgroup's share of a task.
constexpr int kWarpgroupRows = 64;

bool mentions(const ir::Coord &c, const std::string &var) {
  return c.var == var || (c.expr && c.expr->usesVar(var));
}

/// Whether `e` uses `var` other than as `row(var)`.
bool usesOtherThanRow(const ir::Elementwise &e, const std::string &var) {
  return ir::anyOf(e, [&](const ir::Elementwise &x) {
    return x.kind == ir::Elementwise::Kind::ColIndex && x.var == var;
  });
}

/// The per-op part of the check below: `op` places rows by task index `var`
/// only through warpgroup rows.
bool placesOnlyWarpgroupRows(const ir::ProgramOp &op, const std::string &var) {
  if (usesOtherThanRow(op.expr, var))
    return false;
  size_t rowDim = op.coords.size();
  if (op.kind == ir::ProgramOp::Kind::LoadTile || op.kind == ir::ProgramOp::Kind::StoreTile)
    rowDim = op.coords.size() - 2;
  else if (op.kind == ir::ProgramOp::Kind::StoreRows || op.kind == ir::ProgramOp::Kind::LoadRows)
    rowDim = op.coords.size() - 1;
  for (size_t d = 0; d < op.coords.size(); ++d)
    if (mentions(op.coords[d], var) && (d != rowDim || op.coords[d].expr))
      return false;
  // A warpgroup before row 0 stores nothing only if every store is placed by `var`.
  bool store =
      op.kind == ir::ProgramOp::Kind::StoreTile || op.kind == ir::ProgramOp::Kind::StoreRows;
  return !store || (op.coords[rowDim].var == var && !op.coords[rowDim].expr);
}

/// Whether task index `var` places rows only through warpgroup rows: the row
/// coordinate of per-warpgroup tile accesses and row stores, and `row(var)`.
/// Only then may its tasks start anywhere but at a multiple of their step.
bool placesOnlyWarpgroupRows(const ir::Kernel &kernel, const std::string &var) {
  for (const ir::Load &load : kernel.loads)
    if (llvm::any_of(load.coords, [&](const ir::Coord &c) { return mentions(c, var); }))
      return false;
  const ir::Program &prog = kernel.program;
  for (const ir::RegValue &v : prog.values)
    if (v.bound && v.bound->var == var)
      return false;
  bool placed = true;
  ir::forEachOp(prog, [&](ir::Body, const ir::ProgramOp &op) {
    placed = placed && placesOnlyWarpgroupRows(op, var);
  });
  return placed;
}

/// A loop that stops at the task's rows makes the task with the last rows
/// the longest; when those rows are a partial task (a size that is not a
/// multiple of the task's rows), its idle warpgroups leave the longest task
/// to the others. Aligning the tasks to the end moves the partial one to the
/// start, where it is the shortest.
bool alignRowsToEnd(const ir::Kernel &kernel) {
  const std::string &var = kernel.loopBound.stopVar;
  // Along sequences each sequence ends where it does: no alignment holds for all of them.
  // A stop a scalar past each row leaves the last task no longer than the others.
  if (var.empty() || kernel.consumerWarpgroups < 2 || kernel.sequences ||
      !kernel.loopBound.stopScalar.empty())
    return false;
  return ir::stopTask(kernel).step == int64_t{kWarpgroupRows} * kernel.consumerWarpgroups &&
         placesOnlyWarpgroupRows(kernel, var);
}
} // namespace

bool planSynchronization(ir::Kernel &kernel, DiagnosticEngine &) {
  ir::Plan &plan = kernel.plan;
  // One elected producer thread arms the stage and issues every copy; each lane of the second
  // producer warp arrives once it has copied the columns read per column.
  plan.producerArrivals = 1 + (kernel.columnReads.empty() ? 0 : ir::kColumnCopyArrivals);
  // Lane 0 of every consumer warp releases the stage after its last read.
  plan.consumerArrivals = kernel.consumerWarpgroups * 4;
  plan.expectBytes = 0;
  for (const ir::Load &load : kernel.loads)
    plan.expectBytes += static_cast<int>(kernel.stageTiles[load.tile].bytes());
  plan.setupBytes = 0;
  for (const ir::ProgramOp &op : kernel.program.setup)
    if (op.kind == ir::ProgramOp::Kind::LoadTile)
      plan.setupBytes += static_cast<int>(kernel.warpgroupTiles[op.tile].bytes());
  plan.finishBarrierIds.clear();
  for (int wg = 0; wg < kernel.consumerWarpgroups; ++wg)
    plan.finishBarrierIds.push_back(kFirstUserBarrier + wg);
  plan.consumersBarrierId = 0;
  if (!kernel.operandStagings.empty())
    plan.consumersBarrierId = kFirstUserBarrier + kernel.consumerWarpgroups;
  TKC_INTERNAL_ASSERT(std::max(plan.finishBarrierIds.back(), plan.consumersBarrierId) <=
                          kLastUserBarrier,
                      "more finish barriers than named barrier ids");
  // A product staging a register operand meets every consumer warpgroup each stage: they all
  // compute every stage of the task, none idle.
  plan.rowsFromEnd = kernel.operandStagings.empty() && alignRowsToEnd(kernel);
  return true;
}

} // namespace tkc
