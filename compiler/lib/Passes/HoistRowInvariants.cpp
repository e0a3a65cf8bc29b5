//===- HoistRowInvariants.cpp - Compute per-row subexpressions once per row ===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// In `o = o * exp2(m - m_new) + ...` the factor exp2(m - m_new) depends on
// the row only, but an elementwise statement is evaluated per element: each
// thread would compute it once per element of its rows (and ptxas does not
// merge the repeated MUFU operations). This pass gives every maximal per-row
// subexpression of a tile statement its own row vector, assigned just before
// the statement, so it is computed once per row.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace tkc {

namespace {

class Hoister {
public:
  explicit Hoister(ir::Program &program) : program(program) {}

  void run(std::vector<ir::ProgramOp> &ops) {
    std::vector<ir::ProgramOp> out;
    for (ir::ProgramOp &op : ops) {
      bool tileShaped = op.kind == ir::ProgramOp::Kind::RowReduce ||
                        op.kind == ir::ProgramOp::Kind::StoreTile ||
                        (op.kind == ir::ProgramOp::Kind::Assign &&
                         program.values[op.dst].shape == ir::RegValue::Shape::Tile);
      if (tileShaped) {
        rows = op.kind == ir::ProgramOp::Kind::StoreTile ? 0 : program.values[op.dst].rows;
        if (op.kind == ir::ProgramOp::Kind::StoreTile)
          rows = rowsOf(op.expr);
        if (rows)
          hoist(op.expr, op.loc, out);
      }
      out.push_back(std::move(op));
    }
    ops = std::move(out);
  }

private:
  /// Rows of the first register value in `e` (0 if none).
  int64_t rowsOf(const ir::Elementwise &e) const {
    if (e.kind == ir::Elementwise::Kind::Value)
      return program.values[e.value].rows;
    for (const ir::Elementwise &o : e.operands)
      if (int64_t r = rowsOf(o))
        return r;
    return 0;
  }

  /// Depends on the row only (or on nothing), not on a tile or a column.
  bool perRow(const ir::Elementwise &e) const {
    using Kind = ir::Elementwise::Kind;
    switch (e.kind) {
    case Kind::Value:
      return program.values[e.value].shape == ir::RegValue::Shape::RowVector;
    case Kind::ColIndex:
      return false;
    case Kind::Number:
    case Kind::Scalar:
    case Kind::RowIndex:
      return true;
    default:
      return llvm::all_of(e.operands, [&](const ir::Elementwise &o) { return perRow(o); });
    }
  }

  static bool readsRowVector(const ir::Elementwise &e, const ir::Program &program) {
    if (e.kind == ir::Elementwise::Kind::Value)
      return program.values[e.value].shape == ir::RegValue::Shape::RowVector;
    return llvm::any_of(e.operands,
                        [&](const ir::Elementwise &o) { return readsRowVector(o, program); });
  }

  /// Worth a row vector: per row, reads one, and is an operation (a bare
  /// value or index costs nothing per element).
  bool worthHoisting(const ir::Elementwise &e) const {
    bool operation = e.kind == ir::Elementwise::Kind::Unary ||
                     e.kind == ir::Elementwise::Kind::Binary ||
                     e.kind == ir::Elementwise::Kind::Where;
    return operation && perRow(e) && readsRowVector(e, program);
  }

  void hoist(ir::Elementwise &e, SourceLoc loc, std::vector<ir::ProgramOp> &out) {
    if (worthHoisting(e)) {
      ir::RegValue v;
      v.name = fmt::format("r{}", program.values.size());
      v.shape = ir::RegValue::Shape::RowVector;
      v.rows = rows;
      v.cols = 1;
      v.loc = loc;
      program.values.push_back(std::move(v));
      unsigned index = static_cast<unsigned>(program.values.size() - 1);
      ir::ProgramOp assign;
      assign.kind = ir::ProgramOp::Kind::Assign;
      assign.dst = index;
      assign.expr = std::move(e);
      assign.loc = loc;
      out.push_back(std::move(assign));
      e = ir::Elementwise{};
      e.kind = ir::Elementwise::Kind::Value;
      e.value = index;
      return;
    }
    for (ir::Elementwise &o : e.operands)
      hoist(o, loc, out);
  }

  ir::Program &program;
  int64_t rows = 0;
};

} // namespace

bool hoistRowInvariants(ir::Kernel &kernel, DiagnosticEngine &) {
  Hoister hoister(kernel.program);
  hoister.run(kernel.program.setup);
  hoister.run(kernel.program.compute);
  hoister.run(kernel.program.finish);
  return true;
}

} // namespace tkc
