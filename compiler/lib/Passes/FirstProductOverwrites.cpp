//===- FirstProductOverwrites.cpp - No zeroing before a first product -------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// `acc = 0` in setup and `acc += a @ b` in compute (the GEMM) zero the
// accumulator at every task's start, on the consumers' way to their first
// stage, only for the first product to add to zeros. wgmma can overwrite
// instead (scale-d off): the product of a task's first stage then sets the
// accumulator, and the zeroing goes. Zeroing a 128-register accumulator cost
// ~200 instructions a task there.
//
// Sound where every task runs compute's first stage before anything reads the
// accumulator: the loop runs over its whole size (no stop, start or tail, so
// each warpgroup computes every stage of its task, and a task has at least one
// stage because the launcher refuses sizes below 1), and compute's first op
// that touches the accumulator is that product.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace tkc {

namespace {
/// Whether `op` reads or writes value `v`.
bool touches(const ir::ProgramOp &op, unsigned v) {
  return ir::writesValue(op, v) || llvm::is_contained(ir::valuesRead(op), v);
}
} // namespace

bool firstProductOverwrites(ir::Kernel &kernel, DiagnosticEngine &) {
  // A loop tail's setup is its kernel's, which keeps the zeroing (it has a tail).
  if (!kernel.loopBound.stopVar.empty() || kernel.loopBound.start || kernel.loopTail ||
      kernel.isTail)
    return true;
  ir::Program &p = kernel.program;
  for (size_t z = 0; z < p.setup.size(); ++z) {
    const ir::ProgramOp &zero = p.setup[z];
    const unsigned acc = zero.dst;
    if (zero.kind != ir::ProgramOp::Kind::Assign || !p.values[acc].state ||
        p.values[acc].shape != ir::RegValue::Shape::Tile ||
        zero.expr.kind != ir::Elementwise::Kind::Number || zero.expr.number != 0)
      continue;
    // Nothing else in setup touches it, and compute's first op that does is a product
    // accumulated into it.
    bool alone = true;
    for (size_t i = 0; i < p.setup.size(); ++i)
      alone = alone && (i == z || !touches(p.setup[i], acc));
    auto first =
        llvm::find_if(p.compute, [&](const ir::ProgramOp &op) { return touches(op, acc); });
    auto readsAcc = [&](const ir::MmaOperand &o) {
      return o.where == ir::MmaOperand::Where::Register && o.index == acc;
    };
    if (!alone || first == p.compute.end() || first->kind != ir::ProgramOp::Kind::Mma ||
        first->dst != acc || !first->accumulate || readsAcc(first->a) || readsAcc(first->b))
      continue;
    first->firstStageOverwrites = true;
    p.setup.erase(p.setup.begin() + static_cast<long>(z));
    --z;
  }
  return true;
}

} // namespace tkc
