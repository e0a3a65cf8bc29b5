//===- SplitFinish.cpp - A wide result in column halves --------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// A kernel whose consumer accumulates one matrix product and stores it (the
// GEMM) ends each task with its finish: both consumer warpgroups off the
// tensor cores while they stage the result in shared memory and issue its
// store, and, in a block's last task, all blocks storing at once. With the
// result in two column halves, each task's last stages compute the left half
// first and the right half after; the left half is staged and stored while
// the right half's products run, and the finish has only the right half left.
// Measured on an H200 against the single-part kernel: 1.016-1.029x at 2048^3
// (a block's only task ends sooner), 1.005-1.007x at the K = 4096 anchor
// shapes, 1.000-1.002x at 8192^3; holding three stages or one read 0.2-0.5 %
// lower at K = 4096.
//
// It fires where the program has that shape: compute is one product of two
// stage tiles accumulated into a state tile 256 columns wide, read nowhere
// else before finish; finish only adds globals to it, assigns it elementwise
// functions of itself, and ends by storing it through the finish block; and
// the loop runs over its whole size (no tail, stop or start).
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace tkc {

namespace {
/// Result columns the split applies to: two halves of 128 (m64n128 products; narrower
/// halves are unmeasured, and a half must be whole 64-column chunks of B).
constexpr int64_t kSplitColumns = 256;
/// The stages at a task's end whose halves are computed apart. The left half's store leaves
/// under the right half's products of these stages; the ring keeps them until the task's
/// last compute, so the next task's first loads wait for more of them the more there are.
constexpr int kSplitStages = 2;

/// Whether `e` reads nothing but value `x`, numbers and scalars.
bool readsOnly(const ir::Elementwise &e, unsigned x) {
  return !ir::anyOf(e, [&](const ir::Elementwise &sub) {
    return (sub.kind == ir::Elementwise::Kind::Value && sub.value != x) ||
           sub.kind == ir::Elementwise::Kind::RowIndex ||
           sub.kind == ir::Elementwise::Kind::ColIndex ||
           sub.kind == ir::Elementwise::Kind::StageRead ||
           sub.kind == ir::Elementwise::Kind::ColumnRead;
  });
}

/// The state tile the program accumulates and stores in the split's shape.
std::optional<unsigned> splittableResult(const ir::Kernel &kernel) {
  const ir::Program &p = kernel.program;
  // Along sequences the threads store the result, not TMA part by part.
  if (kernel.loopTail || kernel.isTail || !kernel.loopBound.stopVar.empty() || kernel.sequences ||
      kernel.loopBound.start || p.compute.size() != 1)
    return std::nullopt;
  const ir::ProgramOp &mma = p.compute.front();
  if (mma.kind != ir::ProgramOp::Kind::Mma || !mma.accumulate ||
      mma.a.where != ir::MmaOperand::Where::Stage || mma.b.where != ir::MmaOperand::Where::Stage)
    return std::nullopt;
  const unsigned x = mma.dst;
  const ir::RegValue &result = p.values[x];
  if (!result.state || result.cols != kSplitColumns)
    return std::nullopt;
  // Nothing in setup touches it: the product of each task's first stage sets it
  // (first-product-overwrites), and setup's code knows no halves.
  for (const ir::ProgramOp &op : p.setup)
    if (ir::writesValue(op, x) || llvm::is_contained(ir::valuesRead(op), x))
      return std::nullopt;
  if (p.finish.empty())
    return std::nullopt;
  for (size_t i = 0; i < p.finish.size(); ++i) {
    const ir::ProgramOp &op = p.finish[i];
    const bool last = i + 1 == p.finish.size();
    switch (op.kind) {
    case ir::ProgramOp::Kind::Assign:
      if (last || op.dst != x || !readsOnly(op.expr, x))
        return std::nullopt;
      break;
    case ir::ProgramOp::Kind::AddGlobal:
      if (last || op.dst != x)
        return std::nullopt;
      break;
    case ir::ProgramOp::Kind::StoreTile:
      if (!last || !op.expr.isValue(x) || op.tile < kernel.warpgroupTiles.size())
        return std::nullopt;
      break;
    default:
      return std::nullopt;
    }
  }
  return x;
}
} // namespace

bool splitFinish(ir::Kernel &kernel, DiagnosticEngine &) {
  ir::Plan &plan = kernel.plan;
  std::optional<unsigned> result = splittableResult(kernel);
  plan.resultParts = result ? 2 : 0;
  plan.resultValue = result.value_or(0);
  plan.splitStages = result ? kSplitStages : 0;
  return true;
}

} // namespace tkc
