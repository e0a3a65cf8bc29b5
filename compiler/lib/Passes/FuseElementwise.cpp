//===- FuseElementwise.cpp - How elementwise statements are computed ------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Decides, for each elementwise assignment, the way the emitter computes it
// (recorded on the op; the emitter only prints what is decided here):
//
// - `p = e` followed by `t = rowsum(p)`, p the register operand of compute's
//   product: one pass that computes each element and adds it to its row's sum
//   (`fusedRowSum`), so that the adds interleave with the element's math (two
//   passes issue every MUFU.EX2 back to back, then the adds). Where the sum and
//   that product are p's only readers and p is written once, the pass writes
//   the product's bf16 operand itself and p exists in f32 only for a partial
//   last tile (`writesOperand`: 32 fewer live registers at 128 columns). On an
//   H100, the f32 form +1-5 % at D = 128 and 1-4 % slower at D = 64; the bf16
//   form with the sum kept as lane shares +3-5 % at D = 64.
// - `x = where(c, a, x)` (or `where(c, x, a)`) with c affine in the element's
//   row and column: most warps' slices lie wholly on one side of c, where the
//   statement changes nothing; the warp tests c at its slice's four corners
//   and skips it (`skipUntouched`).
// - `x = x * r` with r a row vector, on a tile of at least the target's
//   `skipUnitFactorRegisters` registers a thread: skipped in a warp where r is
//   1 in every row (`skipUnitFactor`; the rows' maximum did not move).
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace tkc {

namespace {
using Kind = ir::Elementwise::Kind;
using ir::BinaryOp;

bool dependsOnPosition(const ir::Elementwise &e) {
  return ir::anyOf(e, [](const ir::Elementwise &x) {
    return x.kind == Kind::RowIndex || x.kind == Kind::ColIndex;
  });
}

/// Affine in the element's row and column: indices, numbers, scalars, + and -,
/// and * or / by something that does not depend on the position. A match of the
/// tree's shape (which operator lies above which), so its own recursion, not a walk.
bool isAffine(const ir::Elementwise &e) {
  switch (e.kind) {
  case Kind::RowIndex:
  case Kind::ColIndex:
  case Kind::Number:
  case Kind::Scalar:
  case Kind::TaskRead:
  case Kind::Size:
  case Kind::TaskIndex:
    return true;
  case Kind::Unary:
    return e.unary == ir::UnaryOp::Neg && isAffine(e.operands[0]);
  case Kind::Binary:
    switch (e.binary) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return isAffine(e.operands[0]) && isAffine(e.operands[1]);
    case BinaryOp::Mul:
      return isAffine(e.operands[0]) && isAffine(e.operands[1]) &&
             !(dependsOnPosition(e.operands[0]) && dependsOnPosition(e.operands[1]));
    case BinaryOp::Div:
      return isAffine(e.operands[0]) && !dependsOnPosition(e.operands[1]);
    default:
      return false;
    }
  default:
    return false;
  }
}

/// Built with and/or/not from comparisons of affine sides (not == or !=, which
/// an affine function can meet inside a rectangle): its extremes lie at corners.
/// Like isAffine, a match of the tree's shape.
bool isAffineCondition(const ir::Elementwise &e) {
  if (e.kind == Kind::Binary && ir::isComparison(e.binary))
    return e.binary != BinaryOp::Eq && e.binary != BinaryOp::Ne && isAffine(e.operands[0]) &&
           isAffine(e.operands[1]);
  if (e.isBinary(BinaryOp::And) || e.isBinary(BinaryOp::Or))
    return isAffineCondition(e.operands[0]) && isAffineCondition(e.operands[1]);
  if (e.isUnary(ir::UnaryOp::Not))
    return isAffineCondition(e.operands[0]);
  return false;
}

/// `x = x * r` or `x = r * x` with r a row vector: r.
std::optional<unsigned> rowFactorOfSelf(const ir::Program &p, const ir::ProgramOp &op) {
  const ir::Elementwise &e = op.expr;
  if (!e.isBinary(BinaryOp::Mul))
    return std::nullopt;
  for (int side : {0, 1}) {
    const ir::Elementwise &self = e.operands[side], &factor = e.operands[1 - side];
    if (self.isValue(op.dst) && factor.kind == Kind::Value &&
        p.values[factor.value].shape == ir::RegValue::Shape::RowVector)
      return factor.value;
  }
  return std::nullopt;
}

/// Decides `op`'s fusion with `next` (the op after it, or null).
void fuseRowSum(const ir::Program &p, ir::ProgramOp &op, const ir::ProgramOp *next) {
  const ir::RegValue &v = p.values[op.dst];
  bool fusable = next && v.shape == ir::RegValue::Shape::Tile && !v.state &&
                 next->kind == ir::ProgramOp::Kind::RowReduce && next->reduce == ir::Reduce::Sum &&
                 next->expr.isValue(op.dst) && next->cols == v.cols &&
                 op.expr.kind != Kind::Where && !rowFactorOfSelf(p, op);
  auto isProduct = [&](const ir::ProgramOp &mma) {
    return mma.kind == ir::ProgramOp::Kind::Mma && mma.a.where == ir::MmaOperand::Where::Register &&
           mma.a.index == op.dst;
  };
  if (!fusable || !llvm::any_of(p.compute, isProduct))
    return;
  // Readers of p besides the sum and one product: then p is needed in f32.
  int others = 0;
  ir::forEachOp(p, [&](ir::Body body, const ir::ProgramOp &o) {
    if (body != ir::Body::Setup && &o != next && !isProduct(o) &&
        llvm::is_contained(ir::valuesRead(o), op.dst))
      ++others;
  });
  // And p written only here, so that the operand written now is the one the product reads.
  bool writtenOnce = llvm::count_if(p.compute, [&](const ir::ProgramOp &o) {
                       return ir::writesValue(o, op.dst);
                     }) == 1;
  op.fusedRowSum = true;
  op.writesOperand = others == 0 && writtenOnce && llvm::count_if(p.compute, isProduct) == 1;
}
} // namespace

bool fuseElementwise(ir::Kernel &kernel, DiagnosticEngine &) {
  ir::Program &p = kernel.program;
  for (ir::Body body : {ir::Body::Setup, ir::Body::Compute, ir::Body::Finish}) {
    std::vector<ir::ProgramOp> &ops = p.body(body);
    // Which product's shadow each op runs in (overlap-row-sums), 0 for none: a pass over
    // the elements never spans the edge of a shadow.
    std::vector<size_t> shadowOf(ops.size(), 0);
    for (size_t j = 0; j < ops.size(); ++j)
      for (size_t k = j + 1; k <= j + ops[j].shadow && k < ops.size(); ++k)
        shadowOf[k] = j + 1;
    for (size_t i = 0; i < ops.size(); ++i) {
      ir::ProgramOp &op = ops[i];
      op.fusedRowSum = op.writesOperand = op.skipUntouched = false;
      op.skipUnitFactor.reset();
      if (op.kind != ir::ProgramOp::Kind::Assign)
        continue;
      bool nextAlongside = i + 1 < ops.size() && shadowOf[i + 1] == shadowOf[i];
      fuseRowSum(p, op, nextAlongside ? &ops[i + 1] : nullptr);
      if (op.fusedRowSum) {
        ++i; // the sum is computed with it
        continue;
      }
      const ir::RegValue &v = p.values[op.dst];
      if (v.shape != ir::RegValue::Shape::Tile)
        continue;
      const ir::Elementwise &e = op.expr;
      if (e.kind == Kind::Where && isAffineCondition(e.operands[0]) &&
          (e.operands[1].isValue(op.dst) || e.operands[2].isValue(op.dst))) {
        op.skipUntouched = true;
        continue;
      }
      if (ir::valueRegisters(v, kernel.consumerWarpgroups) >=
          kernel.arch->tuning.skipUnitFactorRegisters)
        op.skipUnitFactor = rowFactorOfSelf(p, op);
    }
  }
  return true;
}

} // namespace tkc
