//===- Statements.cpp - Consumer statements -------------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The consumer's statements: assignments (a product computed straight into
// its target or accumulated into it, `x op= e`), globals added to a tile in
// `finish`, per-warpgroup tile loads in `setup` and stores in `finish`.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "llvm/ADT/STLExtras.h"

#include <memory>

namespace tkc::lower {

namespace {

bool mentions(const Expr &expr, llvm::StringRef name) {
  if (expr.kind == Expr::Kind::Name && expr.text == name)
    return true;
  return llvm::any_of(expr.operands, [&](const auto &o) { return mentions(*o, name); });
}

void collectProducts(const Expr &expr, std::vector<const Expr *> &out) {
  if (expr.kind == Expr::Kind::Binary && expr.text == "@") {
    out.push_back(&expr);
    return;
  }
  for (const auto &operand : expr.operands)
    collectProducts(*operand, out);
}

/// G[...] in `x = x + G[...]`, `x = G[...] + x` or `x += G[...]`; null otherwise.
const Expr *addedGlobal(const stmt::Stmt &statement, bool targetExists) {
  const Expr &target = *statement.target;
  const Expr &value = *statement.value;
  if (!targetExists)
    return nullptr;
  if (statement.op == "+=")
    return value.kind == Expr::Kind::Index ? &value : nullptr;
  if (statement.op != "=" || value.kind != Expr::Kind::Binary || value.text != "+")
    return nullptr;
  for (int side = 0; side < 2; ++side) {
    const Expr &self = *value.operands[side], &other = *value.operands[1 - side];
    if (self.kind == Expr::Kind::Name && self.text == target.text &&
        other.kind == Expr::Kind::Index)
      return &other;
  }
  return nullptr;
}

ir::ProgramOp assignOp(unsigned dst, ir::Elementwise e, SourceLoc loc) {
  ir::ProgramOp op;
  op.kind = ir::ProgramOp::Kind::Assign;
  op.dst = dst;
  op.expr = std::move(e);
  op.loc = loc;
  return op;
}

std::unique_ptr<Expr> cloneExpr(const Expr &expr) {
  auto out = std::make_unique<Expr>();
  out->kind = expr.kind;
  out->text = expr.text;
  out->loc = expr.loc;
  for (const auto &operand : expr.operands)
    out->operands.push_back(cloneExpr(*operand));
  return out;
}

} // namespace

std::optional<unsigned> Lowering::assignTarget(const Expr &target, const Typed &value) {
  if (auto it = valueIndex.find(target.text); it != valueIndex.end()) {
    const ir::RegValue &dst = program.values[it->second];
    bool fits = value.hasRows ? value.rows == dst.rows : true;
    if (value.hasCols)
      fits = fits && dst.shape == ir::RegValue::Shape::Tile && value.cols == dst.cols;
    if (!fits || value.boolean) {
      diags.report(DiagID::err_sema_reassign_shape, target.loc, target.text, describe(dst),
                   describe(value));
      return std::nullopt;
    }
    return it->second;
  }
  if (declared.count(target.text)) {
    diags.report(DiagID::err_sema_value_kind, target.loc, "'" + target.text + "'",
                 "a register value to assign", "a name of another kind");
    return std::nullopt;
  }
  if (!value.hasRows || value.boolean) {
    diags.report(DiagID::err_sema_temp_shape, target.loc, target.text, describe(value));
    return std::nullopt;
  }
  if (!usableName(target.text, target.loc))
    return std::nullopt;
  unsigned index = newValue(target.text, value, false, target.loc);
  valueIndex[target.text] = index;
  bodyLocals.push_back(target.text);
  return index;
}

void Lowering::lowerAssignment(const stmt::Stmt &statement, std::vector<ir::ProgramOp> &ops) {
  const Expr &target = *statement.target;
  const Expr &value = *statement.value;
  std::string op = statement.op;
  if (op != "=" && op != "+=" && op != "-=" && op != "*=" && op != "/=") {
    unsupported(statement, currentBody, "assign with =, +=, -=, *= or /=");
    return;
  }
  auto existing = valueIndex.find(target.text);
  bool exists = existing != valueIndex.end();
  if (op != "=" && !exists) {
    if (declared.count(target.text))
      diags.report(DiagID::err_sema_value_kind, target.loc, "'" + target.text + "'",
                   "a register value to assign", "a name of another kind");
    else
      reportUnknownName(target, "'" + currentBody + "'", declaredNames());
    return;
  }

  // `x = x + G[...]` or `x += G[...]` (x a tile): the global added in place.
  if (const Expr *access = addedGlobal(statement, exists)) {
    lowerAddGlobal(statement, existing->second, *access, ops);
    return;
  }

  // `x += a @ b` and `x = e + a @ b` (x a tile): set x to e, then
  // accumulate the product into x.
  const Expr *accumulated = nullptr;
  const Expr *rest = nullptr;
  if (op == "+=" && value.kind == Expr::Kind::Binary && value.text == "@") {
    accumulated = &value;
  } else if (op == "=" && value.kind == Expr::Kind::Binary && value.text == "+") {
    for (int side = 0; side < 2 && !accumulated; ++side) {
      const Expr &candidate = *value.operands[side];
      if (candidate.kind == Expr::Kind::Binary && candidate.text == "@" && exists &&
          !mentions(candidate, target.text)) {
        accumulated = &candidate;
        rest = value.operands[1 - side].get();
      }
    }
  }
  if (accumulated) {
    unsigned dst = existing->second;
    if (program.values[dst].state && currentBody != "setup" && !setInSetup.count(target.text) &&
        (op == "+=" || mentions(*rest, target.text))) {
      diags.report(DiagID::err_sema_accumulator_unset, target.loc, target.text);
      return;
    }
    if (rest && !(rest->kind == Expr::Kind::Name && rest->text == target.text)) {
      auto e = lowerValue(*rest, ops);
      if (!e)
        return;
      if (!assignTarget(target, *e))
        return;
      ops.push_back(assignOp(dst, std::move(e->e), statement.loc));
    }
    lowerProduct(*accumulated, ops, dst, true);
    return;
  }

  // `x op= e` is `x = x op e`.
  std::unique_ptr<Expr> desugared;
  const Expr *rhs = &value;
  if (op != "=") {
    desugared = std::make_unique<Expr>();
    desugared->kind = Expr::Kind::Binary;
    desugared->text = op.substr(0, 1);
    desugared->loc = statement.loc;
    auto lhsCopy = std::make_unique<Expr>();
    lhsCopy->kind = Expr::Kind::Name;
    lhsCopy->text = target.text;
    lhsCopy->loc = target.loc;
    desugared->operands.push_back(std::move(lhsCopy));
    desugared->operands.push_back(cloneExpr(value));
    rhs = desugared.get();
  }

  // A single product in a value that does not read the target is computed
  // straight into the target (`s = q @ k.T * c`): no second tile.
  std::vector<const Expr *> products;
  collectProducts(*rhs, products);
  if (products.size() == 1 && !mentions(*rhs, target.text)) {
    const Expr &product = *products[0];
    std::optional<unsigned> dst;
    if (exists) {
      dst = existing->second;
      if (!lowerProduct(product, ops, *dst, false))
        return;
    } else {
      if (declared.count(target.text)) {
        diags.report(DiagID::err_sema_value_kind, target.loc, "'" + target.text + "'",
                     "a register value to assign", "a name of another kind");
        return;
      }
      if (!usableName(target.text, target.loc))
        return;
      // The product's own temporary becomes the new name.
      auto t = lowerProduct(product, ops, std::nullopt, false);
      if (!t)
        return;
      dst = t->e.value;
      program.values[*dst].name = target.text;
      program.values[*dst].loc = target.loc;
      --temporaries; // its number is free again
      valueIndex[target.text] = *dst;
      bodyLocals.push_back(target.text);
    }
    noteSet(target.text);
    if (&product == rhs)
      return;
    productAlias = {&product, *dst};
    auto e = lowerValue(*rhs, ops);
    productAlias = {nullptr, 0};
    if (!e || !assignTarget(target, *e))
      return;
    ops.push_back(assignOp(*dst, std::move(e->e), statement.loc));
    noteSet(target.text);
    return;
  }

  auto e = lowerValue(*rhs, ops);
  if (!e)
    return;
  auto dst = assignTarget(target, *e);
  if (!dst)
    return;
  ops.push_back(assignOp(*dst, std::move(e->e), statement.loc));
  noteSet(target.text);
}

void Lowering::lowerAddGlobal(const stmt::Stmt &statement, unsigned dst, const Expr &access,
                              std::vector<ir::ProgramOp> &ops) {
  const ir::RegValue &v = program.values[dst];
  const std::string what = "'" + currentBody + "'";
  if (currentBody != "finish") {
    unsupported(statement, currentBody, "a global is added to a tile in 'finish'");
    return;
  }
  if (v.shape != ir::RegValue::Shape::Tile) {
    diags.report(DiagID::err_sema_value_kind, statement.target->loc,
                 "'" + v.name + "', to which a global is added", "a tile", describe(v));
    return;
  }
  if (v.state && !setInSetup.count(v.name)) {
    diags.report(DiagID::err_sema_unset_state, statement.target->loc, v.name, what);
    return;
  }
  size_t rank = globalRank(access);
  if (rank > 2) {
    diags.report(DiagID::err_sema_unsupported, access.loc,
                 fmt::format("adding a global of rank {}", rank),
                 "a vector along the columns (rank 1) or a tile (rank 2) is added");
    return;
  }
  bool perColumn = rank == 1;
  auto lowered = perColumn ? lowerAccess(access, {v.cols}, what, "a row of '" + v.name + "'")
                           : lowerAccess(access, {v.rows, v.cols}, what, "'" + v.name + "'");
  if (!lowered)
    return;
  ir::ProgramOp op;
  op.kind = ir::ProgramOp::Kind::AddGlobal;
  op.dst = dst;
  op.perColumn = perColumn;
  op.global = lowered->first;
  op.coords = std::move(lowered->second);
  op.loc = statement.loc;
  ops.push_back(std::move(op));
}

size_t Lowering::globalRank(const Expr &access) const {
  const Expr &base = *access.operands[0];
  auto it = globalIndex.find(base.text);
  return it == globalIndex.end() ? 0 : kernel.globals[it->second].dims.size();
}

void Lowering::noteSet(const std::string &name) {
  if (currentBody == "setup")
    setInSetup.insert(name);
}

void Lowering::lowerLoadTile(const stmt::Stmt &statement, std::vector<ir::ProgramOp> &ops) {
  const Expr &target = *statement.target;
  unsigned tile = warpgroupTileIndex.lookup(target.text);
  const ir::WarpgroupTile &t = kernel.warpgroupTiles[tile];
  if (statement.op != "=" || statement.value->kind != Expr::Kind::Index) {
    unsupported(statement, currentBody, "load a per-warpgroup tile with 'q = Q[...]'");
    return;
  }
  if (currentBody != "setup") {
    unsupported(statement, currentBody, "per-warpgroup tiles are loaded in 'setup'");
    return;
  }
  // Each warpgroup loads its own 64-row slice of the block's rows.
  auto access = lowerAccess(*statement.value, {t.rows * kernel.consumerWarpgroups, t.cols},
                            "'setup'", "tile '" + t.name + "' of every warpgroup");
  if (!access)
    return;
  const ir::Global &g = kernel.globals[access->first];
  if (g.dtype != t.dtype) {
    diags.report(DiagID::err_sema_dtype, statement.value->loc,
                 "global '" + g.name + "' loaded into tile '" + t.name + "'", spelling(t.dtype),
                 spelling(g.dtype));
    return;
  }
  if (t.rows != 64) {
    diags.report(DiagID::err_sema_shape, t.loc, "tile '" + t.name + "'",
                 fmt::format("{} rows", t.rows), "64 rows (one warpgroup's)");
    return;
  }
  ir::ProgramOp op;
  op.kind = ir::ProgramOp::Kind::LoadTile;
  op.tile = tile;
  op.global = access->first;
  op.coords = std::move(access->second);
  op.loc = statement.loc;
  ops.push_back(std::move(op));
}

void Lowering::lowerStoreOp(const stmt::Stmt &statement, std::vector<ir::ProgramOp> &ops) {
  const bool inCompute = currentBody == "compute";
  if (currentBody != "finish" && !inCompute) {
    unsupported(statement, currentBody, "results are stored in 'compute' or 'finish'");
    return;
  }
  if (statement.op != "=" && statement.op != "+=") {
    unsupported(statement, currentBody, "store with '=' or add into a global with '+='");
    return;
  }
  // `G[...] += x.T @ k` in compute: the one place a register tile is staged for a product.
  const Expr &stored = *statement.value;
  const bool stagedProduct =
      inCompute && statement.op == "+=" && stored.kind == Expr::Kind::Binary && stored.text == "@";
  stagedStore = stagedProduct ? &stored : nullptr;
  auto value = lowerValue(stored, ops);
  stagedStore = nullptr;
  if (!value)
    return;
  if (!value->hasRows || value->boolean) {
    diags.report(DiagID::err_sema_store_value, statement.target->loc, "this statement",
                 describe(*value));
    return;
  }
  bool tile = value->hasCols;
  std::vector<int64_t> span =
      tile ? std::vector<int64_t>{value->rows, value->cols} : std::vector<int64_t>{value->rows};
  if (inCompute && !tile) {
    unsupported(statement, currentBody,
                "a row vector stored every stage (a tile is; row vectors are stored in 'finish')");
    return;
  }
  if (inCompute && (tailStep || !spec.grid->tail.empty())) {
    unsupported(statement, currentBody, "a store every stage in a loop that ends in a tail");
    return;
  }
  auto access = lowerAccess(*statement.target, span, "'" + currentBody + "'",
                            tile ? "the stored tile" : "the stored row vector");
  if (!access)
    return;
  const ir::Global &g = kernel.globals[access->first];
  if (tile && g.dtype == spec::DType::I32) {
    diags.report(DiagID::err_sema_dtype, statement.target->loc,
                 "the stored tile's global '" + g.name + "'", "bf16, f16 or f32", "i32");
    return;
  }
  const bool add = statement.op == "+=";
  if (add && !tile) {
    unsupported(statement, currentBody,
                "a tile added into a global with '+=' (a row vector is stored with '=')");
    return;
  }
  if (add && kernel.sequences) {
    for (size_t d = 0; d < g.dims.size(); ++d)
      if (ir::alongSequences(kernel, g, d)) {
        unsupported(statement, currentBody,
                    "'+=' into a global along sequences (its tiles are stored by the "
                    "warpgroup's threads, which do not add)");
        return;
      }
  }
  ir::ProgramOp op;
  op.kind = tile ? ir::ProgramOp::Kind::StoreTile : ir::ProgramOp::Kind::StoreRows;
  op.accumulate = add;
  op.global = access->first;
  op.coords = std::move(access->second);
  op.expr = std::move(value->e);
  op.loc = statement.loc;
  if (tile) {
    if (value->cols % 64 != 0) {
      diags.report(DiagID::err_sema_shape, statement.target->loc, "the stored tile",
                   fmt::format("{} columns", value->cols), "a multiple of 64");
      return;
    }
    // Stage through a per-warpgroup tile of the same shape when there is
    // one (its task is over by now); otherwise through the finish block.
    if (inCompute) {
      if (kernel.sequences)
        for (size_t d = 0; d < g.dims.size(); ++d)
          if (ir::alongSequences(kernel, g, d)) {
            unsupported(statement, currentBody,
                        "a store every stage into a global along sequences");
            return;
          }
      // With '=', every stage must store its own tile: TMA stores of one tile from two stages
      // are not ordered, so the one left would be either (adds commute: '+=' may).
      if (!add && llvm::none_of(op.coords, [&](const ir::Coord &c) {
            return !c.expr && c.var == kernel.loop.name;
          })) {
        const std::string why = fmt::format("a store every stage to the same tile (index it by "
                                            "the loop's '{}', or add into it with '+=')",
                                            kernel.loop.name);
        unsupported(statement, currentBody, why.c_str());
        return;
      }
      // Its own staging tile, each stage's written once the previous stage's store has read
      // it; a staged product's result is staged a warpgroup's part at a time
      // (RegValue::stageRows).
      int64_t stagedCols = value->cols;
      if (op.expr.kind == ir::Elementwise::Kind::Value)
        stagedCols = program.values[op.expr.value].warpgroupCols();
      op.tile = static_cast<unsigned>(kernel.stagingTiles.size());
      kernel.stagingTiles.push_back(ir::StagingTile{
          fmt::format("tkc_out{}", kernel.stagingTiles.size()), g.dtype, stagedCols});
      op.cols = value->cols;
      ops.push_back(std::move(op));
      return;
    }
    op.tile = static_cast<unsigned>(kernel.warpgroupTiles.size());
    for (size_t i = 0; i < kernel.warpgroupTiles.size(); ++i) {
      const ir::WarpgroupTile &w = kernel.warpgroupTiles[i];
      if (w.rows == 64 && w.cols == value->cols && w.dtype == g.dtype)
        op.tile = static_cast<unsigned>(i);
    }
    op.cols = value->cols;
  } else if (g.dtype != spec::DType::F32) {
    diags.report(DiagID::err_sema_dtype, statement.target->loc,
                 "the row-vector global '" + g.name + "'", "f32", spelling(g.dtype));
    return;
  }
  ops.push_back(std::move(op));
}

} // namespace tkc::lower
