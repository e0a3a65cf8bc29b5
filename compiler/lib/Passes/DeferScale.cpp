//===- DeferScale.cpp - Move a positive factor of a tile to its uses ------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// `s = q @ k.T * c` followed by `m_new = max(m, rowmax(s))` and
// `p = exp2(s - m_new)` multiplies every element by c, then subtracts: two
// instructions per element. When c is positive the maximum commutes with the
// factor (max(c x) = c max(x), exactly: rounding is monotonic), so the
// statement can leave s unscaled, the row maximum be scaled once per row, and
// every other reader of s read `s * c`, which ptxas contracts with the
// subtraction into one fused multiply-add.
//
// A factor is positive when it is built from positive numbers and scalars
// whose `check:` keeps them positive, with * and /. Masks that assign s an
// infinity or zero (`where(cond, -inf, s)`) keep the deferral: c times
// those is the same value. The tile must not be state, an operand of a
// matrix product, or accumulated into; then nothing changes.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include <cmath>
#include <optional>

namespace tkc {

namespace {

using Kind = ir::Elementwise::Kind;

class Deferrer {
public:
  Deferrer(ir::Program &program, const std::vector<ir::Scalar> &scalars)
      : program(program), scalars(scalars) {}

  void run(std::vector<ir::ProgramOp> &ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      ir::ProgramOp &op = ops[i];
      if (op.kind != ir::ProgramOp::Kind::Assign)
        continue;
      const ir::RegValue &dst = program.values[op.dst];
      if (dst.shape != ir::RegValue::Shape::Tile || dst.state)
        continue;
      std::optional<ir::Elementwise> factor, rest;
      if (!splitFactor(op.expr, factor, rest) || !deferrable(ops, i, op.dst))
        continue;
      op.expr = std::move(*rest);
      const unsigned s = op.dst;
      std::vector<ir::ProgramOp> out(std::make_move_iterator(ops.begin()),
                                     std::make_move_iterator(ops.begin() + i + 1));
      if (isValue(out.back().expr, out.back().dst))
        out.pop_back(); // `s = s * c` became `s = s`
      size_t resume = out.size();
      bool live = true;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        ir::ProgramOp next = std::move(ops[j]);
        if (live)
          live = rewriteUse(next, s, *factor, out);
        else
          out.push_back(std::move(next));
      }
      ops = std::move(out);
      i = resume - 1; // the next candidate may be a statement just rewritten
    }
  }

private:
  static bool isValue(const ir::Elementwise &e, unsigned value) {
    return e.kind == Kind::Value && e.value == value;
  }

  static bool reads(const ir::Elementwise &e, unsigned value) {
    return ir::anyOf(e, [&](const ir::Elementwise &x) { return isValue(x, value); });
  }

  /// Positive for every value the kernel can run with. Its own recursion, not
  /// a walk: the answer depends on the operators above each leaf (a product or
  /// quotient of positive factors), not on any one node.
  bool positive(const ir::Elementwise &e) const {
    switch (e.kind) {
    case Kind::Number:
      return e.number > 0 && std::isfinite(e.number);
    case Kind::Scalar:
      return scalars[e.value].positive();
    case Kind::Binary:
      return (e.binary == ir::BinaryOp::Mul || e.binary == ir::BinaryOp::Div) &&
             positive(e.operands[0]) && positive(e.operands[1]);
    default:
      return false;
    }
  }

  /// `rest * factor` or `factor * rest` with a positive factor.
  bool splitFactor(const ir::Elementwise &e, std::optional<ir::Elementwise> &factor,
                   std::optional<ir::Elementwise> &rest) const {
    if (!e.isBinary(ir::BinaryOp::Mul))
      return false;
    for (int side : {1, 0})
      if (positive(e.operands[side])) {
        factor = e.operands[side];
        rest = e.operands[1 - side];
        return true;
      }
    return false;
  }

  /// `where(cond, x, s)` or `where(cond, s, x)` with x an infinity or zero
  /// (c * x == x) and a condition that does not read s: s stays deferred.
  static bool isScaleFreeMask(const ir::Elementwise &e, unsigned s) {
    if (e.kind != Kind::Where || reads(e.operands[0], s))
      return false;
    auto scaleFree = [](const ir::Elementwise &x) {
      return x.kind == Kind::Number && (std::isinf(x.number) || x.number == 0);
    };
    return (isValue(e.operands[2], s) && scaleFree(e.operands[1])) ||
           (isValue(e.operands[1], s) && scaleFree(e.operands[2]));
  }

  /// No later statement needs the scaled tile itself: it is not a matrix
  /// operand or accumulated into before it is assigned again.
  bool deferrable(const std::vector<ir::ProgramOp> &ops, size_t at, unsigned s) const {
    for (size_t j = at + 1; j < ops.size(); ++j) {
      const ir::ProgramOp &op = ops[j];
      if (op.kind == ir::ProgramOp::Kind::Mma) {
        for (const ir::MmaOperand *operand : {&op.a, &op.b})
          if (operand->where == ir::MmaOperand::Where::Register && operand->index == s)
            return false;
        if (op.dst == s)
          return !op.accumulate;
      }
      if (op.kind == ir::ProgramOp::Kind::Assign && op.dst == s && !isScaleFreeMask(op.expr, s))
        return true; // assigned again (reading the old s is rewritten)
    }
    return true;
  }

  /// Every read of s in `e` becomes `s * factor`.
  static void substitute(ir::Elementwise &e, unsigned s, const ir::Elementwise &factor) {
    ir::rewrite(e, [&](ir::Elementwise &x) {
      if (isValue(x, s))
        x = ir::Elementwise::binaryOf(ir::BinaryOp::Mul, x, factor);
    });
  }

  /// Rewrites one later statement for the deferred factor and appends it (and
  /// the scaling of a row maximum) to `out`. Returns false once s is assigned
  /// a new value, after which nothing reads the deferred one.
  bool rewriteUse(ir::ProgramOp &op, unsigned s, const ir::Elementwise &factor,
                  std::vector<ir::ProgramOp> &out) {
    using OpKind = ir::ProgramOp::Kind;
    if (op.kind == OpKind::Mma) {
      bool redefines = op.dst == s;
      out.push_back(std::move(op));
      return !redefines;
    }
    if (op.kind == OpKind::Assign && op.dst == s && isScaleFreeMask(op.expr, s)) {
      out.push_back(std::move(op));
      return true;
    }
    if (op.kind == OpKind::RowReduce && isValue(op.expr, s) && op.reduce == ir::Reduce::Max) {
      // The reduction of the unscaled tile, then one multiplication per row.
      unsigned dst = op.dst;
      SourceLoc loc = op.loc;
      out.push_back(std::move(op));
      ir::ProgramOp scale;
      scale.kind = OpKind::Assign;
      scale.dst = dst;
      scale.loc = loc;
      scale.expr.kind = Kind::Value;
      scale.expr.value = dst;
      substitute(scale.expr, dst, factor);
      out.push_back(std::move(scale));
      return true;
    }
    bool redefines = op.kind == OpKind::Assign && op.dst == s;
    substitute(op.expr, s, factor);
    out.push_back(std::move(op));
    return !redefines;
  }

  ir::Program &program;
  const std::vector<ir::Scalar> &scalars;
};

} // namespace

bool deferScale(ir::Kernel &kernel, DiagnosticEngine &) {
  Deferrer deferrer(kernel.program, kernel.scalars);
  deferrer.run(kernel.program.setup);
  deferrer.run(kernel.program.compute);
  deferrer.run(kernel.program.finish);
  return true;
}

} // namespace tkc
