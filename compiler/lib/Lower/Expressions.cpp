//===- Expressions.cpp - Consumer values and their shapes -----------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The consumer's expressions as register values with block-level shapes:
// elementwise operators under broadcasting, functions, `where`, `row`/`col`,
// row reductions and matrix products, each shape checked at its location;
// and index expressions in the dimensions a tile does not span.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "llvm/ADT/StringExtras.h"

namespace tkc::lower {

namespace {

bool isShared(const Expr &expr, const llvm::StringMap<unsigned> &tiles) {
  const Expr *base = &expr;
  if (expr.kind == Expr::Kind::Member && expr.text == "T")
    base = expr.operands[0].get();
  return base->kind == Expr::Kind::Name && tiles.count(base->text);
}

std::string shapeText(int64_t rows, int64_t cols) { return fmt::format("[{}, {}]", rows, cols); }

} // namespace

std::optional<ir::IndexExpr> Lowering::lowerIndexExpr(const Expr &expr, size_t position,
                                                      const std::string &global) {
  auto bad = [&](const std::string &found) {
    diags.report(DiagID::err_sema_index_expr, expr.loc, found, position, global);
    return std::nullopt;
  };
  switch (expr.kind) {
  case Expr::Kind::Number: {
    auto value = positiveInteger(expr);
    if (!value)
      return bad("'" + expr.text + "'");
    ir::IndexExpr out;
    out.kind = ir::IndexExpr::Kind::Number;
    out.number = *value;
    return out;
  }
  case Expr::Kind::Name: {
    ir::IndexExpr out;
    out.name = expr.text;
    if (findIterVar(expr.text)) {
      out.kind = ir::IndexExpr::Kind::Var;
      return out;
    }
    if (auto value = intParam(expr.text)) {
      out.kind = ir::IndexExpr::Kind::Number;
      out.number = *value;
      return out;
    }
    if (declared.count(expr.text))
      return bad("'" + expr.text + "'");
    // Any other name is a size bound at launch; it must be one the
    // launcher takes (a dimension of some global or the grid).
    bool isSize = false;
    for (const ir::Global &g : kernel.globals)
      for (const ir::Size &dim : g.dims)
        isSize = isSize || (!dim.constant && dim.symbol == expr.text);
    if (!isSize) {
      reportUnknownName(expr, "an index of '" + global + "'", declaredNames());
      return std::nullopt;
    }
    out.kind = ir::IndexExpr::Kind::Size;
    return out;
  }
  case Expr::Kind::Binary: {
    ir::IndexExpr out;
    if (expr.text == "+")
      out.kind = ir::IndexExpr::Kind::Add;
    else if (expr.text == "*")
      out.kind = ir::IndexExpr::Kind::Mul;
    else if (expr.text == "/")
      out.kind = ir::IndexExpr::Kind::Div;
    else
      return bad("'" + expr.text + "'");
    for (const auto &operand : expr.operands) {
      auto lowered = lowerIndexExpr(*operand, position, global);
      if (!lowered)
        return std::nullopt;
      out.operands.push_back(std::move(*lowered));
    }
    if (out.kind == ir::IndexExpr::Kind::Div && out.operands[1].usesVar())
      return bad("a grid index in a divisor");
    return out;
  }
  default:
    return bad("this expression");
  }
}

std::string Lowering::describe(const Typed &t) {
  if (t.hasRows && t.hasCols)
    return fmt::format("a tile [{}, {}]", t.rows, t.cols);
  if (t.hasRows)
    return fmt::format("a row vector [{}]", t.rows);
  if (t.hasCols)
    return fmt::format("a column index over {} columns", t.cols);
  return t.boolean ? "a condition" : "a scalar";
}

std::string Lowering::describe(const ir::RegValue &v) {
  if (v.shape == ir::RegValue::Shape::Tile)
    return fmt::format("a tile [{}, {}]", v.rows, v.cols);
  return fmt::format("a row vector [{}]", v.rows);
}

std::optional<Typed> Lowering::combine(const Typed &a, const Typed &b, SourceLoc loc,
                                       const std::string &what) {
  Typed out;
  if (a.hasRows && b.hasRows && a.rows != b.rows) {
    diags.report(DiagID::err_sema_shape, loc, what, describe(a), describe(b));
    return std::nullopt;
  }
  if (a.hasCols && b.hasCols && a.cols != b.cols) {
    diags.report(DiagID::err_sema_shape, loc, what, describe(a), describe(b));
    return std::nullopt;
  }
  out.hasRows = a.hasRows || b.hasRows;
  out.rows = a.hasRows ? a.rows : b.rows;
  out.hasCols = a.hasCols || b.hasCols;
  out.cols = a.hasCols ? a.cols : b.cols;
  out.bound = a.bound ? a.bound : b.bound;
  return out;
}

ir::Elementwise Lowering::valueRef(unsigned index) const {
  ir::Elementwise e;
  e.kind = ir::Elementwise::Kind::Value;
  e.value = index;
  return e;
}

Typed Lowering::typedValue(unsigned index) const {
  const ir::RegValue &v = program.values[index];
  Typed t;
  t.hasRows = true;
  t.rows = v.rows;
  t.hasCols = v.shape == ir::RegValue::Shape::Tile;
  t.cols = t.hasCols ? v.cols : 0;
  t.e = valueRef(index);
  t.bound = v.bound;
  return t;
}

unsigned Lowering::newValue(const std::string &name, const Typed &shape, bool isState,
                            SourceLoc loc) {
  ir::RegValue v;
  v.name = name;
  v.shape = shape.hasCols ? ir::RegValue::Shape::Tile : ir::RegValue::Shape::RowVector;
  v.rows = shape.rows;
  v.cols = shape.hasCols ? shape.cols : 1;
  v.state = isState;
  v.bound = shape.bound;
  v.loc = loc;
  program.values.push_back(std::move(v));
  return static_cast<unsigned>(program.values.size() - 1);
}

unsigned Lowering::newTemporary(const Typed &shape, SourceLoc loc) {
  return newValue(fmt::format("t{}", temporaries++), shape, false, loc);
}

bool Lowering::isSharedTile(const Expr &expr) const {
  return isShared(expr, tileIndex) || isShared(expr, warpgroupTileIndex);
}

std::optional<Typed> Lowering::lowerValue(const Expr &expr, std::vector<ir::ProgramOp> &ops) {
  const std::string what = "'" + currentBody + "'";
  switch (expr.kind) {
  case Expr::Kind::Number: {
    auto value = foldConstant(expr);
    if (!value) {
      diags.report(DiagID::err_expected_number, expr.loc, what, expr.text);
      return std::nullopt;
    }
    Typed t;
    t.e.kind = ir::Elementwise::Kind::Number;
    t.e.number = *value;
    return t;
  }
  case Expr::Kind::Name: {
    // A name whose statement failed was reported there.
    if (poisoned.count(expr.text))
      return std::nullopt;
    if (auto it = valueIndex.find(expr.text); it != valueIndex.end()) {
      const ir::RegValue &v = program.values[it->second];
      if (v.state && currentBody != "setup" && !setInSetup.count(v.name)) {
        if (reportedUnset.insert(v.name).second)
          diags.report(DiagID::err_sema_unset_state, expr.loc, v.name, what);
        return std::nullopt;
      }
      return typedValue(it->second);
    }
    if (auto it = scalarIndex.find(expr.text); it != scalarIndex.end()) {
      Typed t;
      t.e.kind = ir::Elementwise::Kind::Scalar;
      t.e.value = it->second;
      return t;
    }
    if (tileIndex.count(expr.text))
      return lowerStageRead(expr);
    if (warpgroupTileIndex.count(expr.text)) {
      diags.report(DiagID::err_sema_shared_as_value, expr.loc, expr.text);
      return std::nullopt;
    }
    // A task index is its task's number, a launch size its value: numbers the same for
    // every element of a task.
    if (const ir::IterVar *var = findIterVar(expr.text); var && expr.text != kernel.loop.name) {
      Typed t;
      t.e.kind = ir::Elementwise::Kind::TaskIndex;
      t.e.var = var->name;
      return t;
    }
    if (llvm::is_contained(ir::launchSizeSymbols(kernel), expr.text)) {
      Typed t;
      t.e.kind = ir::Elementwise::Kind::Size;
      t.e.var = expr.text;
      return t;
    }
    if (auto value = foldConstant(expr)) {
      Typed t;
      t.e.kind = ir::Elementwise::Kind::Number;
      t.e.number = *value;
      return t;
    }
    if (expr.text == kernel.loop.name) {
      diags.report(DiagID::err_sema_value_kind, expr.loc, "'" + expr.text + "' here",
                   "a register value, a scalar, a task index, a size or a number",
                   "the loop's index (its elements' positions are col(" + expr.text + ") or row(" +
                       expr.text + "))");
      return std::nullopt;
    }
    if (declared.count(expr.text)) {
      diags.report(DiagID::err_sema_value_kind, expr.loc, "'" + expr.text + "' here",
                   "a register value, a scalar, a task index, a size or a number",
                   "a name of another kind (a global or a parameter)");
      return std::nullopt;
    }
    std::vector<llvm::StringRef> names = declaredNames();
    for (const auto &entry : valueIndex)
      names.push_back(entry.getKey());
    reportUnknownName(expr, what, names);
    return std::nullopt;
  }
  case Expr::Kind::Unary: {
    auto operand = lowerValue(*expr.operands[0], ops);
    if (!operand)
      return std::nullopt;
    if (expr.text == "not" && !operand->boolean) {
      diags.report(DiagID::err_sema_value_kind, expr.operands[0]->loc, "the operand of 'not'",
                   "a condition", describe(*operand));
      return std::nullopt;
    }
    if (expr.text == "-" && operand->boolean) {
      diags.report(DiagID::err_sema_value_kind, expr.operands[0]->loc, "the operand of '-'",
                   "a number", "a condition");
      return std::nullopt;
    }
    if (expr.text == "-" && operand->e.kind == ir::Elementwise::Kind::Number) {
      operand->e.number = -operand->e.number;
      return operand;
    }
    Typed t = *operand;
    t.e = ir::Elementwise::unaryOf(expr.text == "not" ? ir::UnaryOp::Not : ir::UnaryOp::Neg,
                                   std::move(operand->e));
    return t;
  }
  case Expr::Kind::Binary: {
    if (expr.text == "@") {
      if (productAlias.first == &expr)
        return typedValue(productAlias.second);
      return lowerProduct(expr, ops, std::nullopt, false);
    }
    auto lhs = lowerValue(*expr.operands[0], ops);
    auto rhs = lhs ? lowerValue(*expr.operands[1], ops) : std::nullopt;
    if (!lhs || !rhs)
      return std::nullopt;
    return binary(expr.text, std::move(*lhs), std::move(*rhs), expr.loc);
  }
  case Expr::Kind::Call:
    return lowerCall(expr, ops);
  case Expr::Kind::Member:
    if (expr.text == "T")
      diags.report(DiagID::err_sema_unsupported, expr.loc, "a transpose outside '@'",
                   "transpose the shared operand of a product");
    else
      diags.report(DiagID::err_sema_unsupported, expr.loc, "'." + expr.text + "'",
                   "the only member is '.T'");
    return std::nullopt;
  case Expr::Kind::Index:
    return lowerTaskRead(expr);
  default:
    diags.report(DiagID::err_sema_unsupported, expr.loc, "this expression in " + what,
                 "see docs/SpecReference.md for the tile language");
    return std::nullopt;
  }
}

std::optional<Typed> Lowering::lowerStageRead(const Expr &name) {
  if (currentBody != "compute") {
    diags.report(DiagID::err_sema_stage_tile_body, name.loc, name.text, currentBody);
    return std::nullopt;
  }
  const unsigned tile = tileIndex.lookup(name.text);
  const ir::StageTile &t = kernel.stageTiles[tile];
  const int64_t blockRows = rowsOfBlock();
  auto load = llvm::find_if(kernel.loads, [&](const ir::Load &l) { return l.tile == tile; });
  if (load == kernel.loads.end()) {
    diags.report(DiagID::err_sema_stage_tile_unloaded, name.loc, name.text);
    return std::nullopt;
  }
  // Its rows are the block's: the row coordinate is the task index of the block's rows.
  const ir::Coord &row = load->coords[load->coords.size() - 2];
  const ir::IterVar *var = row.expr || row.var.empty() ? nullptr : findTask(row.var);
  std::string problem;
  if (t.rows != blockRows)
    problem = fmt::format("it has {} rows", t.rows);
  else if (!var || var->step != blockRows)
    problem = fmt::format("its rows are loaded by '{}'", row.str());
  if (!problem.empty()) {
    diags.report(DiagID::err_sema_stage_read_rows, name.loc, name.text, blockRows, problem);
    return std::nullopt;
  }
  Typed out;
  out.hasRows = out.hasCols = true;
  out.rows = t.rows;
  out.cols = t.cols;
  out.bound = stageTileBound(tile, 1);
  out.e.kind = ir::Elementwise::Kind::StageRead;
  out.e.value = tile;
  out.e.var = name.text;
  return out;
}

std::optional<Typed> Lowering::lowerRowsRead(const Expr &access) {
  const std::string what = "'" + currentBody + "'";
  const int64_t blockRows = rowsOfBlock();
  auto lowered = lowerAccess(access, {blockRows}, what, "the row vector read");
  if (!lowered)
    return std::nullopt;
  const std::string text = accessText(lowered->first, lowered->second);
  // One state row vector per distinct read, loaded at the top of setup.
  auto &index = rowsReads[text];
  if (!index) {
    Typed shape;
    shape.hasRows = true;
    shape.rows = blockRows;
    index = newValue(fmt::format("tkc_rows{}", rowsReads.size() - 1), shape, /*isState=*/true,
                     access.loc);
    ir::ProgramOp load;
    load.kind = ir::ProgramOp::Kind::LoadRows;
    load.dst = *index;
    load.global = lowered->first;
    load.coords = std::move(lowered->second);
    load.loc = access.loc;
    rowsLoads.push_back(std::move(load));
  }
  return typedValue(*index);
}

std::string Lowering::accessText(unsigned global, const std::vector<ir::Coord> &coords) const {
  std::vector<std::string> parts;
  for (const ir::Coord &c : coords)
    parts.push_back(c.str());
  return fmt::format("{}[{}]", kernel.globals[global].name, llvm::join(parts, ", "));
}

bool Lowering::taskLevelIndices(const Expr &access, size_t end) {
  for (size_t d = 1; d < end; ++d) {
    const Expr &index = *access.operands[d];
    if (index.kind != Expr::Kind::Name)
      continue;
    const ir::IterVar *var = findIterVar(index.text);
    if (var && (index.text == kernel.loop.name || var->step != 1)) {
      diags.report(DiagID::err_sema_read_index, index.loc, access.operands[0]->text, d, index.text,
                   index.text == kernel.loop.name ? "the loop's index changes every stage"
                                                  : fmt::format("it steps by {}", var->step));
      return false;
    }
  }
  return true;
}

std::optional<Typed> Lowering::lowerColumnsRead(const Expr &access) {
  const std::string what = "'" + currentBody + "'";
  // Its leading indices address single elements, fixed for the task.
  if (!taskLevelIndices(access, access.operands.size() - 1))
    return std::nullopt;
  auto lowered = lowerAccess(access, {kernel.loop.step}, what, "the column vector read");
  if (!lowered)
    return std::nullopt;
  const ir::Global &g = kernel.globals[lowered->first];
  ir::ColumnRead read;
  read.global = lowered->first;
  read.text = accessText(lowered->first, lowered->second);
  read.coords = std::move(lowered->second);
  read.loc = access.loc;
  auto same = llvm::find_if(kernel.columnReads,
                            [&](const ir::ColumnRead &r) { return r.text == read.text; });
  Typed t;
  t.hasCols = true;
  t.cols = kernel.loop.step;
  t.bound = ir::ColumnBound{g.dims.back(), kernel.loop.name, kernel.loop.step};
  t.e.kind = ir::Elementwise::Kind::ColumnRead;
  t.e.value = static_cast<unsigned>(same - kernel.columnReads.begin());
  t.e.var = read.text;
  if (same == kernel.columnReads.end())
    kernel.columnReads.push_back(std::move(read));
  return t;
}

std::optional<Typed> Lowering::lowerTaskRead(const Expr &access) {
  const std::string what = "'" + currentBody + "'";
  // `L[b, h, i]` with i the task index of the block's rows: one value per row.
  if (access.operands.size() >= 2) {
    const Expr &last = *access.operands.back();
    const ir::IterVar *var = last.kind == Expr::Kind::Name ? findTask(last.text) : nullptr;
    if (var && var->step == rowsOfBlock())
      return lowerRowsRead(access);
  }
  // `kbias[b, j]` with j the loop's index: one value per column of each stage.
  if (access.operands.size() >= 2) {
    const Expr &last = *access.operands.back();
    if (last.kind == Expr::Kind::Name && last.text == kernel.loop.name && currentBody == "compute")
      return lowerColumnsRead(access);
  }
  // One number per task: each index a task index stepping by 1 (its task number), an
  // expression of those and of sizes, or 0.
  if (!taskLevelIndices(access, access.operands.size()))
    return std::nullopt;
  auto lowered = lowerAccess(access, {}, what, "one element");
  if (!lowered)
    return std::nullopt;
  ir::TaskRead read;
  read.global = lowered->first;
  read.text = accessText(lowered->first, lowered->second);
  read.coords = std::move(lowered->second);
  read.loc = access.loc;
  auto same =
      llvm::find_if(kernel.taskReads, [&](const ir::TaskRead &r) { return r.text == read.text; });
  Typed t;
  t.e.kind = ir::Elementwise::Kind::TaskRead;
  t.e.value = static_cast<unsigned>(same - kernel.taskReads.begin());
  t.e.var = read.text;
  if (same == kernel.taskReads.end())
    kernel.taskReads.push_back(std::move(read));
  return t;
}

std::optional<Typed> Lowering::binary(const std::string &op, Typed lhs, Typed rhs, SourceLoc loc) {
  std::optional<ir::BinaryOp> code = ir::binaryOperator(op);
  bool isArith = code && (*code == ir::BinaryOp::Add || *code == ir::BinaryOp::Sub ||
                          *code == ir::BinaryOp::Mul || *code == ir::BinaryOp::Div);
  bool isCompare = code && ir::isComparison(*code);
  bool isLogic = code && (*code == ir::BinaryOp::And || *code == ir::BinaryOp::Or);
  if (!isArith && !isCompare && !isLogic) {
    diags.report(DiagID::err_sema_unsupported, loc, "'" + op + "'", "not a tile operator");
    return std::nullopt;
  }
  if (isLogic ? !(lhs.boolean && rhs.boolean) : (lhs.boolean || rhs.boolean)) {
    diags.report(DiagID::err_sema_value_kind, loc, "the operands of '" + op + "'",
                 isLogic ? "conditions" : "numbers", describe(lhs) + " and " + describe(rhs));
    return std::nullopt;
  }
  auto out = combine(lhs, rhs, loc, "'" + op + "'");
  if (!out)
    return std::nullopt;
  if (isArith && lhs.e.kind == ir::Elementwise::Kind::Number &&
      rhs.e.kind == ir::Elementwise::Kind::Number) {
    double a = lhs.e.number, b = rhs.e.number;
    out->e.kind = ir::Elementwise::Kind::Number;
    out->e.number = op == "+" ? a + b : op == "-" ? a - b : op == "*" ? a * b : a / b;
    return out;
  }
  out->boolean = isCompare || isLogic;
  out->e = ir::Elementwise::binaryOf(*code, std::move(lhs.e), std::move(rhs.e));
  return out;
}

std::optional<Typed> Lowering::lowerCall(const Expr &call, std::vector<ir::ProgramOp> &ops) {
  llvm::StringRef f = call.text;
  std::optional<ir::UnaryOp> function = ir::unaryFunction(f);
  size_t arity = call.operands.size();
  auto wantArity = [&](size_t n, const char *text) {
    if (arity == n)
      return true;
    diags.report(DiagID::err_sema_call_arity, call.loc, f.str(), text,
                 fmt::format("{} argument{}", arity, arity == 1 ? "" : "s"));
    return false;
  };
  if (function) {
    if (!wantArity(1, "one argument"))
      return std::nullopt;
    auto x = lowerValue(*call.operands[0], ops);
    if (!x)
      return std::nullopt;
    if (x->boolean) {
      diags.report(DiagID::err_sema_value_kind, call.operands[0]->loc,
                   "the argument of '" + f.str() + "'", "a number", "a condition");
      return std::nullopt;
    }
    if (auto folded = foldConstant(call)) {
      Typed t;
      t.e.kind = ir::Elementwise::Kind::Number;
      t.e.number = *folded;
      return t;
    }
    Typed t = *x;
    t.e = ir::Elementwise::unaryOf(*function, std::move(x->e));
    return t;
  }
  if (f == "clamp") {
    // clamp(x, lo, hi) is min(max(x, lo), hi).
    if (!wantArity(3, "three arguments (a value, its least, its greatest)"))
      return std::nullopt;
    auto x = lowerValue(*call.operands[0], ops);
    auto lo = x ? lowerValue(*call.operands[1], ops) : std::nullopt;
    auto hi = lo ? lowerValue(*call.operands[2], ops) : std::nullopt;
    if (!x || !lo || !hi)
      return std::nullopt;
    if (x->boolean || lo->boolean || hi->boolean) {
      diags.report(DiagID::err_sema_value_kind, call.loc, "the arguments of 'clamp'", "numbers",
                   describe(*x) + ", " + describe(*lo) + " and " + describe(*hi));
      return std::nullopt;
    }
    auto low = combine(*x, *lo, call.loc, "'clamp'");
    auto out = low ? combine(*low, *hi, call.loc, "'clamp'") : std::nullopt;
    if (!out)
      return std::nullopt;
    out->e = ir::Elementwise::binaryOf(
        ir::BinaryOp::Min,
        ir::Elementwise::binaryOf(ir::BinaryOp::Max, std::move(x->e), std::move(lo->e)),
        std::move(hi->e));
    return out;
  }
  if (f == "max" || f == "min" || f == "pow") {
    if (!wantArity(2, "two arguments"))
      return std::nullopt;
    auto a = lowerValue(*call.operands[0], ops);
    auto b = a ? lowerValue(*call.operands[1], ops) : std::nullopt;
    if (!a || !b)
      return std::nullopt;
    if (a->boolean || b->boolean) {
      diags.report(DiagID::err_sema_value_kind, call.loc, "the arguments of '" + f.str() + "'",
                   "numbers", describe(*a) + " and " + describe(*b));
      return std::nullopt;
    }
    auto out = combine(*a, *b, call.loc, "'" + f.str() + "'");
    if (!out)
      return std::nullopt;
    if (auto folded = foldConstant(call)) {
      Typed t;
      t.e.kind = ir::Elementwise::Kind::Number;
      t.e.number = *folded;
      return t;
    }
    out->e = ir::Elementwise::binaryOf(*ir::binaryOperator(f), std::move(a->e), std::move(b->e));
    return out;
  }
  if (f == "where") {
    if (!wantArity(3, "three arguments (condition, value if true, value if false)"))
      return std::nullopt;
    auto c = lowerValue(*call.operands[0], ops);
    auto a = c ? lowerValue(*call.operands[1], ops) : std::nullopt;
    auto b = a ? lowerValue(*call.operands[2], ops) : std::nullopt;
    if (!c || !a || !b)
      return std::nullopt;
    if (!c->boolean || a->boolean || b->boolean) {
      diags.report(DiagID::err_sema_value_kind, call.loc, "the arguments of 'where'",
                   "a condition and two numbers",
                   describe(*c) + ", " + describe(*a) + " and " + describe(*b));
      return std::nullopt;
    }
    auto ab = combine(*a, *b, call.loc, "'where'");
    auto out = ab ? combine(*c, *ab, call.loc, "'where'") : std::nullopt;
    if (!out)
      return std::nullopt;
    out->bound = ab->bound;
    out->e.kind = ir::Elementwise::Kind::Where;
    out->e.operands.push_back(std::move(c->e));
    out->e.operands.push_back(std::move(a->e));
    out->e.operands.push_back(std::move(b->e));
    return out;
  }
  if (f == "row" || f == "col") {
    if (!wantArity(1, "one grid index"))
      return std::nullopt;
    const Expr &arg = *call.operands[0];
    const ir::IterVar *var = arg.kind == Expr::Kind::Name ? findIterVar(arg.text) : nullptr;
    if (!var) {
      diags.report(
          DiagID::err_sema_value_kind, arg.loc, "the argument of '" + f.str() + "'", "a grid index",
          arg.kind == Expr::Kind::Name ? "'" + arg.text + "'" : std::string("an expression"));
      return std::nullopt;
    }
    Typed t;
    t.e.kind = f == "row" ? ir::Elementwise::Kind::RowIndex : ir::Elementwise::Kind::ColIndex;
    t.e.var = var->name;
    t.e.step = var->step;
    if (f == "row") {
      t.hasRows = true;
      t.rows = var->step;
    } else {
      t.hasCols = true;
      t.cols = var->step;
    }
    return t;
  }
  if (f == "rowmax" || f == "rowsum") {
    if (!wantArity(1, "one tile"))
      return std::nullopt;
    auto x = lowerValue(*call.operands[0], ops);
    if (!x)
      return std::nullopt;
    if (!x->hasRows || !x->hasCols || x->boolean) {
      diags.report(DiagID::err_sema_value_kind, call.operands[0]->loc,
                   "the argument of '" + f.str() + "'", "a tile", describe(*x));
      return std::nullopt;
    }
    Typed result;
    result.hasRows = true;
    result.rows = x->rows;
    unsigned dst = newTemporary(result, call.loc);
    ir::ProgramOp op;
    op.kind = ir::ProgramOp::Kind::RowReduce;
    op.dst = dst;
    op.reduce = f == "rowmax" ? ir::Reduce::Max : ir::Reduce::Sum;
    op.cols = x->cols;
    op.reduceBound = x->bound;
    op.expr = std::move(x->e);
    op.loc = call.loc;
    ops.push_back(std::move(op));
    return typedValue(dst);
  }
  diags.report(DiagID::err_sema_unknown_function, call.loc, f.str(), "'" + currentBody + "'",
               "exp2, exp, log2, log, sqrt, rcp, tanh, abs, gelu, gelu_erf, sigmoid, silu, sin, "
               "cos, max, min, pow, clamp, where, row, col, "
               "rowmax, rowsum");
  return std::nullopt;
}

std::optional<ir::ColumnBound> Lowering::stageTileBound(unsigned tile, int dim) const {
  for (const ir::Load &load : kernel.loads) {
    if (load.tile != tile)
      continue;
    const ir::Global &g = kernel.globals[load.global];
    size_t d = g.dims.size() - 2 + dim;
    const ir::StageTile &t = kernel.stageTiles[tile];
    int64_t span = dim == 0 ? t.rows : t.cols;
    const ir::Coord &c = load.coords[d];
    // A constant extent the tiles cover whole has no partial tile.
    if (g.dims[d].constant &&
        (c.var.empty() ? *g.dims[d].constant >= span : *g.dims[d].constant % span == 0))
      return std::nullopt;
    if (c.expr)
      return std::nullopt;
    return ir::ColumnBound{g.dims[d], c.var, span};
  }
  return std::nullopt;
}

std::optional<Typed> Lowering::lowerProduct(const Expr &product, std::vector<ir::ProgramOp> &ops,
                                            std::optional<unsigned> into, bool accumulate) {
  const Expr &lhs = *product.operands[0];
  const Expr &rhs = *product.operands[1];
  ir::ProgramOp op;
  op.kind = ir::ProgramOp::Kind::Mma;
  op.accumulate = accumulate;
  op.loc = product.loc;
  const int64_t blockRows = rowsOfBlock();

  // Stage tiles exist only while a stage is computed on.
  for (const Expr *side : {&lhs, &rhs}) {
    const Expr &base = side->kind == Expr::Kind::Member ? *side->operands[0] : *side;
    if (currentBody != "compute" && base.kind == Expr::Kind::Name && tileIndex.count(base.text)) {
      diags.report(DiagID::err_sema_stage_tile_body, base.loc, base.text, currentBody);
      return std::nullopt;
    }
  }

  if (lhs.kind == Expr::Kind::Member && lhs.text == "T" && !isSharedTile(lhs)) {
    if (into || accumulate) {
      diags.report(DiagID::err_sema_unsupported, lhs.loc, "a transposed register left operand here",
                   "its product is added into a global every stage, as the whole value of a "
                   "'+=' store in 'compute' ('G[...] += x.T @ k')");
      return std::nullopt;
    }
    return lowerStagedProduct(product, ops);
  }

  // Right operand: shared memory.
  if (!isSharedTile(rhs)) {
    std::string found = rhs.kind == Expr::Kind::Name ? "'" + rhs.text + "'" : "this operand";
    diags.report(DiagID::err_sema_not_shared_operand, rhs.loc, found);
    return std::nullopt;
  }
  const Expr &rhsBase = rhs.kind == Expr::Kind::Member ? *rhs.operands[0] : rhs;
  op.b.transposed = rhs.kind == Expr::Kind::Member;
  int64_t bRows = 0, bCols = 0;
  std::optional<ir::ColumnBound> resultBound, contractionBound;
  if (auto it = tileIndex.find(rhsBase.text); it != tileIndex.end()) {
    op.b.where = ir::MmaOperand::Where::Stage;
    op.b.index = it->second;
    const ir::StageTile &t = kernel.stageTiles[it->second];
    bRows = op.b.transposed ? t.cols : t.rows;
    bCols = op.b.transposed ? t.rows : t.cols;
    resultBound = stageTileBound(it->second, op.b.transposed ? 0 : 1);
    contractionBound = stageTileBound(it->second, op.b.transposed ? 1 : 0);
  } else {
    op.b.where = ir::MmaOperand::Where::Warpgroup;
    op.b.index = warpgroupTileIndex.lookup(rhsBase.text);
    const ir::WarpgroupTile &t = kernel.warpgroupTiles[op.b.index];
    bRows = op.b.transposed ? t.cols : t.rows;
    bCols = op.b.transposed ? t.rows : t.cols;
  }

  // Left operand: shared (a stage tile split over the warpgroups, or a
  // per-warpgroup tile) or registers.
  int64_t aRows = 0, aCols = 0;
  std::optional<ir::ColumnBound> aBound;
  if (isSharedTile(lhs)) {
    // `a.T`: a shared tile [K, rows] multiplied transposed (MN-major A).
    const bool transposed = lhs.kind == Expr::Kind::Member;
    const std::string &name = transposed ? lhs.operands[0]->text : lhs.text;
    op.a.transposed = transposed;
    if (auto it = tileIndex.find(name); it != tileIndex.end()) {
      op.a.where = ir::MmaOperand::Where::Stage;
      op.a.index = it->second;
      const ir::StageTile &t = kernel.stageTiles[it->second];
      aRows = transposed ? t.cols : t.rows;
      aCols = transposed ? t.rows : t.cols;
    } else {
      op.a.where = ir::MmaOperand::Where::Warpgroup;
      op.a.index = warpgroupTileIndex.lookup(name);
      const ir::WarpgroupTile &t = kernel.warpgroupTiles[op.a.index];
      aRows = (transposed ? t.cols : t.rows) * kernel.consumerWarpgroups;
      aCols = transposed ? t.rows : t.cols;
    }
    if (transposed && (aRows / kernel.consumerWarpgroups) % 64 != 0) {
      diags.report(DiagID::err_sema_shape, lhs.loc, "the transposed left operand of '@'",
                   fmt::format("{} columns a warpgroup", aRows / kernel.consumerWarpgroups),
                   "64 columns for each consumer warpgroup");
      return std::nullopt;
    }
  } else {
    auto a = lowerRegisterOperand(lhs, lhs.loc, ops);
    if (!a)
      return std::nullopt;
    op.a.where = ir::MmaOperand::Where::Register;
    op.a.index = a->first;
    aRows = a->second.rows;
    aCols = a->second.cols;
    aBound = a->second.bound;
  }
  // wgmma multiplies 16-bit operands. A stage tile of another type was refused where it is
  // loaded; a per-warpgroup tile is refused here.
  for (const auto &[o, side] : {std::pair{&op.a, &lhs}, std::pair{&op.b, &rhs}})
    if (o->where == ir::MmaOperand::Where::Warpgroup &&
        kernel.warpgroupTiles[o->index].dtype == spec::DType::F32) {
      diags.report(DiagID::err_sema_dtype, side->loc, "a shared operand of '@'", "bf16 or f16",
                   "f32");
      return std::nullopt;
    }
  // wgmma takes 8-bit floats from shared memory only, both operands K-major: A as loaded,
  // B transposed (its tile [N, K]).
  {
    const spec::DType bType = ir::productDType(kernel, op.b, op.b);
    const bool aFp8 = op.a.where != ir::MmaOperand::Where::Register &&
                      spec::isFp8(ir::productDType(kernel, op.a, op.a));
    if (spec::isFp8(bType) || aFp8) {
      const char *why = op.a.where == ir::MmaOperand::Where::Register
                            ? "an fp8 product takes both operands from shared memory; the left "
                              "one is in registers"
                        : !op.b.transposed || op.a.transposed
                            ? "fp8 operands are both K-major: load the left operand as [rows, K] "
                              "and the right one as its transpose, a tile [N, K], and write "
                              "'a @ b.T'"
                            : nullptr;
      if (why) {
        diags.report(DiagID::err_sema_unsupported, product.loc, "this product of 8-bit floats",
                     why);
        return std::nullopt;
      }
    }
  }
  if (op.a.where != ir::MmaOperand::Where::Register) {
    spec::DType aType = ir::productDType(kernel, op.a, op.a);
    spec::DType bType = ir::productDType(kernel, op.b, op.b);
    if (aType != bType && aType != spec::DType::F32 && bType != spec::DType::F32) {
      diags.report(DiagID::err_sema_dtype, product.loc,
                   "the right operand of '@' (the left operand '" + lhs.text + "' is " +
                       spelling(aType) + ")",
                   spelling(aType), spelling(bType));
      return std::nullopt;
    }
  }
  if (aCols != bRows) {
    diags.report(DiagID::err_sema_shape, product.loc, "the matrix product", shapeText(aRows, aCols),
                 shapeText(bRows, bCols));
    return std::nullopt;
  }
  if (aRows != blockRows) {
    diags.report(DiagID::err_sema_shape, lhs.loc, "the left operand of '@'",
                 fmt::format("{} rows", aRows),
                 fmt::format("{} rows of the consumer ({} warpgroups of 64)", blockRows,
                             kernel.consumerWarpgroups));
    return std::nullopt;
  }
  if (bCols % 16 != 0 || bCols > 256) {
    diags.report(DiagID::err_sema_product_width, rhs.loc, rhsBase.text, bCols);
    return std::nullopt;
  }
  if (aCols % 16 != 0) {
    diags.report(DiagID::err_sema_shape, product.loc, "the matrix product",
                 fmt::format("a contraction of {} elements", aCols), "a multiple of 16");
    return std::nullopt;
  }
  if (aBound && !(contractionBound && *contractionBound == *aBound)) {
    diags.report(DiagID::err_sema_contraction_bound, lhs.loc, aBound->extent.str(), rhsBase.text);
    return std::nullopt;
  }
  if (!arch.hasWgmma) {
    diags.report(DiagID::err_arch_lacks_op, product.loc, "a matrix product", "wgmma",
                 arch.name.str(), archListWith([](const ArchInfo &a) { return a.hasWgmma; }));
    return std::nullopt;
  }
  Typed result;
  result.hasRows = result.hasCols = true;
  result.rows = aRows;
  result.cols = bCols;
  result.bound = resultBound;
  if (into) {
    const ir::RegValue &dst = program.values[*into];
    if (dst.shape != ir::RegValue::Shape::Tile || dst.rows != aRows || dst.cols != bCols) {
      diags.report(DiagID::err_sema_shape, product.loc, "the assignment",
                   "'" + dst.name + "' " + describe(dst), "the product " + describe(result));
      return std::nullopt;
    }
    op.dst = *into;
    program.values[*into].bound = resultBound;
  } else {
    op.dst = newTemporary(result, product.loc);
  }
  unsigned dst = op.dst;
  ops.push_back(std::move(op));
  return typedValue(dst);
}

std::optional<std::pair<unsigned, Typed>>
Lowering::lowerRegisterOperand(const Expr &operand, SourceLoc loc,
                               std::vector<ir::ProgramOp> &ops) {
  auto a = lowerValue(operand, ops);
  if (!a)
    return std::nullopt;
  if (!a->hasRows || !a->hasCols || a->boolean) {
    diags.report(DiagID::err_sema_value_kind, loc, "the left operand of '@'", "a tile",
                 describe(*a));
    return std::nullopt;
  }
  if (a->e.kind == ir::Elementwise::Kind::Value)
    return std::pair{a->e.value, *a};
  const unsigned index = newTemporary(*a, loc);
  ir::ProgramOp assign;
  assign.kind = ir::ProgramOp::Kind::Assign;
  assign.dst = index;
  assign.expr = a->e;
  assign.loc = loc;
  ops.push_back(std::move(assign));
  return std::pair{index, *a};
}

std::optional<Typed> Lowering::lowerStagedProduct(const Expr &product,
                                                  std::vector<ir::ProgramOp> &ops) {
  const Expr &lhs = *product.operands[0];
  const Expr &rhs = *product.operands[1];
  if (&product != stagedStore) {
    diags.report(DiagID::err_sema_unsupported, lhs.loc, "a transposed register left operand here",
                 "its product is added into a global every stage, as the whole value of a '+=' "
                 "store in 'compute' ('G[...] += x.T @ k')");
    return std::nullopt;
  }
  // The right operand holds the contraction, the block's rows: each warpgroup's copy of a
  // per-warpgroup tile, 64 rows of it.
  const bool rhsTransposed = rhs.kind == Expr::Kind::Member;
  const Expr &rhsBase = rhsTransposed ? *rhs.operands[0] : rhs;
  auto wt = rhsBase.kind == Expr::Kind::Name ? warpgroupTileIndex.find(rhsBase.text)
                                             : warpgroupTileIndex.end();
  if (wt == warpgroupTileIndex.end() || rhsTransposed ||
      kernel.warpgroupTiles[wt->second].rows != 64) {
    diags.report(DiagID::err_sema_unsupported, rhs.loc,
                 "this right operand of a transposed register left operand",
                 "the product contracts over the block's rows, so its right operand is a "
                 "per-warpgroup tile ('per: consumer_warpgroup') of 64 rows, not transposed");
    return std::nullopt;
  }
  const ir::WarpgroupTile &b = kernel.warpgroupTiles[wt->second];
  if (b.dtype != spec::DType::BF16 && b.dtype != spec::DType::F16) {
    diags.report(DiagID::err_sema_dtype, rhs.loc, "the right operand of a staged product",
                 "bf16 or f16", spelling(b.dtype));
    return std::nullopt;
  }
  auto x = lowerRegisterOperand(*lhs.operands[0], lhs.loc, ops);
  if (!x)
    return std::nullopt;
  const unsigned index = x->first;
  // The result's rows are x's columns, 64 a warpgroup; where they are fewer than the
  // warpgroups' rows, the warpgroups split its columns too.
  const int64_t rows = x->second.cols, cols = b.cols;
  const int wgs = kernel.consumerWarpgroups;
  ir::Parts parts;
  if (rows % 64 != 0 || wgs % (rows / 64) != 0) {
    diags.report(DiagID::err_sema_shape, lhs.loc, "the transposed register left operand of '@'",
                 fmt::format("{} columns", rows),
                 fmt::format("64 columns times a divisor of the {} consumer warpgroups", wgs));
    return std::nullopt;
  }
  parts.rows = static_cast<int>(rows / 64);
  parts.cols = wgs / parts.rows;
  if (cols % parts.cols != 0 || (cols / parts.cols) % 16 != 0) {
    diags.report(DiagID::err_sema_shape, rhs.loc, "the staged product's columns",
                 fmt::format("{} columns in {} parts (one a warpgroup)", cols, parts.cols),
                 "parts of a multiple of 16 columns");
    return std::nullopt;
  }
  if (!arch.hasWgmma) {
    diags.report(DiagID::err_arch_lacks_op, product.loc, "a matrix product", "wgmma",
                 arch.name.str(), archListWith([](const ArchInfo &a) { return a.hasWgmma; }));
    return std::nullopt;
  }
  ir::ProgramOp op;
  op.kind = ir::ProgramOp::Kind::Mma;
  op.loc = product.loc;
  op.a.where = ir::MmaOperand::Where::Register;
  op.a.index = index;
  op.a.transposed = true;
  op.a.staging = static_cast<unsigned>(kernel.operandStagings.size());
  kernel.operandStagings.push_back(
      ir::OperandStaging{fmt::format("tkc_op{}", kernel.operandStagings.size()), b.dtype, rows});
  op.b.where = ir::MmaOperand::Where::Warpgroup;
  op.b.index = wt->second;
  Typed result;
  result.hasRows = result.hasCols = true;
  result.rows = rows;
  result.cols = cols;
  op.dst = newTemporary(result, product.loc);
  program.values[op.dst].stageRows = parts;
  unsigned dst = op.dst;
  ops.push_back(std::move(op));
  return typedValue(dst);
}

} // namespace tkc::lower
