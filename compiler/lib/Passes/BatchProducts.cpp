//===- BatchProducts.cpp - Products in flight together ----------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Each product is waited for right after its issue, unless the next op is a
// product whose result is none of those left in flight before it (so it neither
// reads nor writes them): then the first is left in flight and a later wait
// covers both (wgmma waits for every committed group). A SwiGLU's `gate += a @ b1` and `up += a @
// b2` then run back to back instead of one after the other's drain. Only products of shared-memory
// operands, and none with a shadow or a result kept in parts: a register
// operand would have to live until the later wait.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include <set>

namespace tkc {

namespace {
bool stagedOnly(const ir::ProgramOp &op) {
  return op.kind == ir::ProgramOp::Kind::Mma && op.a.where != ir::MmaOperand::Where::Register &&
         op.b.where != ir::MmaOperand::Where::Register && op.shadow == 0;
}
} // namespace

bool batchProducts(ir::Kernel &kernel, DiagnosticEngine &) {
  std::vector<ir::ProgramOp> &ops = kernel.program.compute;
  // The results of the products left in flight so far: the next joins them only if its
  // result is none of theirs.
  std::set<unsigned> inFlight;
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    ir::ProgramOp &first = ops[i];
    const ir::ProgramOp &next = ops[i + 1];
    bool parts = kernel.plan.resultParts &&
                 (first.dst == kernel.plan.resultValue || next.dst == kernel.plan.resultValue);
    if (!stagedOnly(first) || !stagedOnly(next) || parts) {
      inFlight.clear();
      continue;
    }
    inFlight.insert(first.dst);
    if (inFlight.count(next.dst)) {
      inFlight.clear();
      continue;
    }
    first.waitWithNext = true;
  }
  return true;
}

} // namespace tkc
