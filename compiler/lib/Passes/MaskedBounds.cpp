//===- MaskedBounds.cpp - Drop a column bound that a mask already keeps ---===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// A column bound (ir::ColumnBound) says the columns of a tile at or past a
// size N are absent: reductions skip them and a matrix product contracts over
// zeros there. Its code (a limit in each reduction, the operand zeroed) runs
// on a task's last tile only, yet its presence slows every stage.
//
// Causal attention masks with `where(col(j) > row(i), -inf, s)`. A column at
// or past N lies past every row below N, so for every row that is stored the
// mask has already set it to -inf; what the program then does with it, a row
// maximum (whose identity -inf is), exp2 (which makes it 0), a row sum and a
// product (whose identity 0 is), is what it would do with an absent column.
// This pass proves that, per bound, by evaluating the program at a column
// past the bound in a stored row; where every reader of a bounded value sees
// its reduction's identity there, the bound is dropped.
//
// The evaluation knows constants (and folds them), `col(j)` of the bound's
// loop (at or past N), `row(i)` of the task index whose rows every store
// addresses over a dimension of extent N (below N in a stored row; rows past
// N are computed but never stored, and rows never mix: reductions run along
// a row and a product's left operand contributes its own rows only), factors
// kept positive, and one relation: `x - r` where r is at least the row
// maximum of x (r = max(..., rowmax(x))) is -inf where x is -inf. When r
// itself is -inf, every column of x in the row is -inf, and x - r is NaN at
// each present column in both kernels; such a row (every key masked) holds
// NaN with or without the bound, so a value derived this way is marked
// `rowNaN` and may not be selected by a later `where` (which could give the
// present columns a value back while a past column keeps the NaN).
//
// Values that live across stages, stores and loads of a bounded value, and
// anything not understood keep the bound; so does every bound of a kernel with a staged
// product (`x.T @ k`), which mixes the block's rows.
//
//===----------------------------------------------------------------------===//
#include "tkc/Passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <limits>
#include <optional>

namespace tkc {

namespace {

using Kind = ir::Elementwise::Kind;

/// What an expression is at a column past the bound, in a stored row.
struct Fact {
  enum class What {
    Unknown,
    Number,   ///< `number` (+-inf included)
    True,     ///< a condition that holds
    False,    ///< a condition that does not
    Column,   ///< col(j) of the bound's loop: at or past N
    Row,      ///< row(i) of the stored rows: below N
    Extent,   ///< N itself, the bound's extent
    Positive, ///< a per-row or scalar quantity > 0 (possibly +inf)
    RowValue, ///< row vector `value`, opaque
  };
  What what = What::Unknown;
  double number = 0;
  unsigned value = 0;
  /// The row may be NaN here and at every present column alike (see above).
  bool rowNaN = false;

  static Fact num(double n, bool rowNaN = false) {
    Fact f;
    f.what = What::Number;
    f.number = n;
    f.rowNaN = rowNaN;
    return f;
  }
  static Fact of(What w) {
    Fact f;
    f.what = w;
    return f;
  }
  bool is(double n) const { return what == What::Number && number == n; }
  bool positive() const { return what == What::Positive || (what == What::Number && number > 0); }
};

class Prover {
public:
  Prover(const ir::Kernel &kernel, const ir::ColumnBound &bound, const std::string &rowVar)
      : k(kernel), p(kernel.program), bound(bound), rowVar(rowVar) {}

  /// Whether every reader of a value with the bound in compute sees its
  /// identity at the columns past it.
  bool run() {
    for (const ir::RegValue &v : p.values)
      if (v.bound == bound && v.state)
        return false;
    // Setup and finish do not touch the bound at all.
    bool outside = false;
    ir::forEachOp(p, [&](ir::Body body, const ir::ProgramOp &op) {
      outside = outside || (body != ir::Body::Compute && touchesBound(op));
    });
    if (outside)
      return false;
    for (const ir::ProgramOp &op : p.compute)
      if (!step(op))
        return false;
    return true;
  }

private:
  bool bounded(unsigned value) const { return p.values[value].bound == bound; }

  bool readsBounded(const ir::Elementwise &e) const {
    return ir::anyOf(
        e, [&](const ir::Elementwise &x) { return x.kind == Kind::Value && bounded(x.value); });
  }

  /// Whether `op` carries the bound, reads or writes a bounded value.
  bool touchesBound(const ir::ProgramOp &op) const {
    bool writes = op.kind == ir::ProgramOp::Kind::Assign ||
                  op.kind == ir::ProgramOp::Kind::RowReduce || op.kind == ir::ProgramOp::Kind::Mma;
    bool registerOperand =
        op.kind == ir::ProgramOp::Kind::Mma && op.a.where == ir::MmaOperand::Where::Register;
    return op.reduceBound || readsBounded(op.expr) || (writes && bounded(op.dst)) ||
           (registerOperand && bounded(op.a.index));
  }

  /// `value` is assigned anew: what was known of it no longer holds.
  void overwritten(unsigned value) {
    ++version[value];
    dominates.erase(value);
    notNegInf.erase(value);
  }

  bool step(const ir::ProgramOp &op) {
    using OpKind = ir::ProgramOp::Kind;
    switch (op.kind) {
    case OpKind::Assign: {
      // A tile that reads a bounded value without carrying the bound (it
      // carries another): not understood.
      if (!bounded(op.dst) && p.values[op.dst].shape == ir::RegValue::Shape::Tile &&
          readsBounded(op.expr))
        return false;
      Fact f = eval(op.expr);
      overwritten(op.dst);
      if (bounded(op.dst)) {
        facts[op.dst] = f;
      } else if (replacesNegInf(op.expr)) {
        notNegInf.insert(op.dst);
      } else if (const ir::Elementwise &e = op.expr; e.isBinary(ir::BinaryOp::Max)) {
        // r = max(a, b): at least whatever a or b is at least.
        for (const ir::Elementwise &o : e.operands)
          if (o.kind == Kind::Value && dominates.count(o.value)) {
            auto d = dominates.lookup(o.value);
            dominates[op.dst] = d;
          }
      } else if (e.kind == Kind::Value && dominates.count(e.value)) {
        auto d = dominates.lookup(e.value);
        dominates[op.dst] = d;
      }
      return true;
    }
    case OpKind::RowReduce: {
      overwritten(op.dst);
      if (op.reduceBound != bound)
        return !readsBounded(op.expr);
      Fact f = eval(op.expr);
      if (!f.is(op.reduce == ir::Reduce::Max ? -INFINITY : 0.0))
        return false;
      if (op.reduce == ir::Reduce::Max && op.expr.kind == Kind::Value)
        dominates[op.dst] = {op.expr.value, version[op.expr.value]};
      return true;
    }
    case OpKind::Mma: {
      // A staged operand's (transposed) columns are the result's rows, not contracted: its
      // rows past the end are not stored.
      if (op.a.where == ir::MmaOperand::Where::Register && !op.a.transposed &&
          bounded(op.a.index)) {
        // The stage tile past N is zero-filled by its load, so a zero here
        // contracts to nothing.
        auto it = facts.find(op.a.index);
        if (it == facts.end() || !it->second.is(0.0))
          return false;
      }
      overwritten(op.dst);
      if (bounded(op.dst))
        facts[op.dst] = Fact{}; // the product past N: not relied on
      return true;
    }
    default:
      return !readsBounded(op.expr);
    }
  }

  /// `where(r == -inf, c, r)` (or `where(r != -inf, r, c)`) with a finite
  /// number c: never -inf (NaN where r is).
  static bool replacesNegInf(const ir::Elementwise &e) {
    if (e.kind != Kind::Where)
      return false;
    const ir::Elementwise &c = e.operands[0];
    if (!c.isBinary(ir::BinaryOp::Eq) && !c.isBinary(ir::BinaryOp::Ne))
      return false;
    const ir::Elementwise &r = c.operands[0], &inf = c.operands[1];
    if (r.kind != Kind::Value || inf.kind != Kind::Number || inf.number != -INFINITY)
      return false;
    const ir::Elementwise &same = e.operands[c.binary == ir::BinaryOp::Eq ? 2 : 1];
    const ir::Elementwise &other = e.operands[c.binary == ir::BinaryOp::Eq ? 1 : 2];
    return same.kind == Kind::Value && same.value == r.value && other.kind == Kind::Number &&
           std::isfinite(other.number);
  }

  /// What `e` is at a column past the bound. An abstract interpretation, not a
  /// walk: each node's fact is computed from its operands' facts, and a
  /// `where` evaluates only the operand its condition selects.
  Fact eval(const ir::Elementwise &e) const {
    using W = Fact::What;
    switch (e.kind) {
    case Kind::Number:
      return Fact::num(e.number);
    case Kind::Value: {
      if (p.values[e.value].shape == ir::RegValue::Shape::RowVector) {
        Fact f = Fact::of(W::RowValue);
        f.value = e.value;
        return f;
      }
      auto it = facts.find(e.value);
      return bounded(e.value) && it != facts.end() ? it->second : Fact{};
    }
    case Kind::Scalar:
      return k.scalars[e.value].positive() ? Fact::of(W::Positive) : Fact{};
    case Kind::Size:
      return !bound.extent.constant && e.var == bound.extent.symbol ? Fact::of(W::Extent) : Fact{};
    case Kind::TaskRead:
    case Kind::TaskIndex:
    case Kind::StageRead:  // TMA's zeros past the end, but not proven here
    case Kind::ColumnRead: // 0 past the end, not proven to be the identity either
      return Fact{};
    case Kind::RowIndex:
      return e.var == rowVar ? Fact::of(W::Row) : Fact{};
    case Kind::ColIndex:
      return e.var == bound.var && e.step == bound.step ? Fact::of(W::Column) : Fact{};
    case Kind::Unary:
      return unary(e.unary, eval(e.operands[0]));
    case Kind::Binary:
      return binary(e, eval(e.operands[0]), eval(e.operands[1]));
    case Kind::Where: {
      Fact c = eval(e.operands[0]);
      if (c.what != W::True && c.what != W::False)
        return Fact{};
      Fact chosen = eval(e.operands[c.what == W::True ? 1 : 2]);
      return chosen.rowNaN ? Fact{} : chosen;
    }
    }
    return Fact{};
  }

  static Fact unary(ir::UnaryOp op, const Fact &x) {
    using W = Fact::What;
    if (op == ir::UnaryOp::Not)
      return x.what == W::True    ? Fact::of(W::False)
             : x.what == W::False ? Fact::of(W::True)
                                  : Fact{};
    if (x.what != W::Number)
      return Fact{};
    return Fact::num(ir::evaluate(op, x.number), x.rowNaN);
  }

  Fact binary(const ir::Elementwise &e, const Fact &a, const Fact &b) const {
    using W = Fact::What;
    using B = ir::BinaryOp;
    const B op = e.binary;
    if (op == B::And || op == B::Or) {
      bool isAnd = op == B::And;
      W absorbing = isAnd ? W::False : W::True, neutral = isAnd ? W::True : W::False;
      if (a.what == absorbing || b.what == absorbing)
        return Fact::of(absorbing);
      if (a.what == neutral && b.what == neutral)
        return Fact::of(neutral);
      return Fact{};
    }
    // A column past N against a stored row: col >= N > row. Written `row OP col`, the
    // comparison reads mirrored.
    if ((a.what == W::Column && b.what == W::Row) || (a.what == W::Row && b.what == W::Column)) {
      B cmp = a.what == W::Row ? ir::swapped(op) : op;
      if (cmp == B::Gt || cmp == B::Ge || cmp == B::Ne)
        return Fact::of(W::True);
      if (cmp == B::Lt || cmp == B::Le || cmp == B::Eq)
        return Fact::of(W::False);
      return Fact{};
    }
    // A column past N against N itself: col >= N; a stored row: row < N.
    if (a.what == W::Extent || b.what == W::Extent) {
      const Fact &x = a.what == W::Extent ? b : a;
      B cmp = a.what == W::Extent ? ir::swapped(op) : op; // as `x OP N`
      if (x.what == W::Column) {
        if (cmp == B::Ge)
          return Fact::of(W::True);
        if (cmp == B::Lt)
          return Fact::of(W::False);
      }
      if (x.what == W::Row) {
        if (cmp == B::Lt || cmp == B::Le || cmp == B::Ne)
          return Fact::of(W::True);
        if (cmp == B::Ge || cmp == B::Gt || cmp == B::Eq)
          return Fact::of(W::False);
      }
      return Fact{};
    }
    bool rowNaN = a.rowNaN || b.rowNaN;
    if (a.what == W::Number && b.what == W::Number) {
      double x = a.number, y = b.number;
      switch (op) {
      case B::Add:
      case B::Sub:
      case B::Mul:
      case B::Div:
      case B::Max:
      case B::Min:
      case B::Pow:
        return Fact::num(ir::evaluate(op, x, y), rowNaN);
      default:
        break;
      }
      return Fact{};
    }
    // -inf times (or over) a positive factor.
    if (op == B::Mul && ((a.is(-INFINITY) && b.positive()) || (b.is(-INFINITY) && a.positive())))
      return Fact::num(-INFINITY, rowNaN);
    if (op == B::Mul && a.positive() && b.positive())
      return Fact::of(W::Positive);
    // x - r, r never -inf: -inf where x is -inf (NaN where r is NaN, as at
    // every present column).
    if (op == B::Sub && a.is(-INFINITY) && b.what == W::RowValue && notNegInf.count(b.value))
      return Fact::num(-INFINITY, true);
    // x - r, r at least the row maximum of x: -inf where x is -inf.
    if (op == B::Sub && a.is(-INFINITY) && b.what == W::RowValue &&
        e.operands[0].kind == Kind::Value) {
      auto it = dominates.find(b.value);
      unsigned x = e.operands[0].value;
      auto v = version.find(x);
      if (it != dominates.end() && it->second.first == x &&
          it->second.second == (v == version.end() ? 0 : v->second))
        return Fact::num(-INFINITY, true);
    }
    return Fact{};
  }

  const ir::Kernel &k;
  const ir::Program &p;
  const ir::ColumnBound &bound;
  const std::string &rowVar;
  llvm::DenseMap<unsigned, Fact> facts;
  llvm::DenseMap<unsigned, unsigned> version;
  /// Row vector -> (tile value, its version) whose row maximum it is at least.
  llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> dominates;
  /// Row vectors that are never -inf (replacesNegInf).
  llvm::DenseSet<unsigned> notNegInf;
};

/// The task index every store addresses its rows with, over a dimension of
/// extent `extent`; empty when a store does otherwise or there is none.
std::string storedRows(const ir::Kernel &k, const ir::Size &extent) {
  std::string var;
  bool any = false, other = false;
  ir::forEachOp(k.program, [&](ir::Body, const ir::ProgramOp &op) {
    bool tile = op.kind == ir::ProgramOp::Kind::StoreTile;
    if (other || (!tile && op.kind != ir::ProgramOp::Kind::StoreRows))
      return;
    const ir::Global &g = k.globals[op.global];
    size_t d = g.dims.size() - (tile ? 2 : 1);
    const ir::Coord &c = op.coords[d];
    other = c.expr || c.var.empty() || !(g.dims[d] == extent) || (any && c.var != var);
    if (!other) {
      var = c.var;
      any = true;
    }
  });
  if (other)
    return {};
  const ir::IterVar *task = nullptr;
  for (const ir::IterVar &t : k.tasks)
    if (t.name == var)
      task = &t;
  return task && task->size == extent ? var : std::string();
}

} // namespace

bool dropMaskedBounds(ir::Kernel &kernel, DiagnosticEngine &) {
  // A staged product contracts over the block's rows, so rows past the end are not only
  // computed but read: the proof's premise does not hold.
  if (!kernel.operandStagings.empty())
    return true;
  // Before the loop tail is attached: the program's own bounds.
  for (const ir::ColumnBound &b : ir::columnBounds(kernel)) {
    std::string rows = storedRows(kernel, b.extent);
    if (rows.empty() || !Prover(kernel, b, rows).run())
      continue;
    ir::dropColumnBound(kernel.program, b);
    kernel.program.maskedBounds.push_back(b);
  }
  return true;
}

} // namespace tkc
