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
    int64_t r = 0;
    ir::anyOf(e, [&](const ir::Elementwise &x) {
      if (x.kind == ir::Elementwise::Kind::Value)
        r = program.values[x.value].rows;
      return r != 0;
    });
    return r;
  }

  bool isRowVector(unsigned value) const {
    return program.values[value].shape == ir::RegValue::Shape::RowVector;
  }

  /// Depends on the row only (or on nothing), not on a tile or a column: no
  /// tile value or column index under it.
  bool perRow(const ir::Elementwise &e) const {
    return !ir::anyOf(e, [&](const ir::Elementwise &x) {
      return x.kind == ir::Elementwise::Kind::ColIndex ||
             x.kind == ir::Elementwise::Kind::StageRead ||
             x.kind == ir::Elementwise::Kind::ColumnRead ||
             (x.kind == ir::Elementwise::Kind::Value && !isRowVector(x.value));
    });
  }

  bool readsRowVector(const ir::Elementwise &e) const {
    return ir::anyOf(e, [&](const ir::Elementwise &x) {
      return x.kind == ir::Elementwise::Kind::Value && isRowVector(x.value);
    });
  }

  /// Worth a row vector: per row, reads one, and is an operation (a bare
  /// value or index costs nothing per element).
  bool worthHoisting(const ir::Elementwise &e) const {
    bool operation = e.kind == ir::Elementwise::Kind::Unary ||
                     e.kind == ir::Elementwise::Kind::Binary ||
                     e.kind == ir::Elementwise::Kind::Where;
    return operation && perRow(e) && readsRowVector(e);
  }

  /// Gives every maximal subexpression of `e` worth hoisting a row vector,
  /// assigned in `out` before the statement. Parents first: a hoisted
  /// subexpression becomes a leaf before the walk would enter it.
  void hoist(ir::Elementwise &e, SourceLoc loc, std::vector<ir::ProgramOp> &out) {
    ir::walk(e, [&](ir::Elementwise &x) {
      if (!worthHoisting(x))
        return;
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
      assign.expr = std::move(x);
      assign.loc = loc;
      out.push_back(std::move(assign));
      x = ir::Elementwise::valueOf(index);
    });
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
