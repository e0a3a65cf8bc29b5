//===- Program.cpp - Loads and the consumer program -----------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The producer's TMA loads (`t = G[i, j]` per stage) and the checked
// accesses to globals they share with the consumer; the consumer's bodies
// lowered into an ir::Program, and the checks over the whole program (a
// product and a store, loaded per-warpgroup tiles, `loop_order: alternate`,
// one use per global).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

#include <set>

namespace tkc::lower {

std::vector<const stmt::Stmt *>
Lowering::activeStatements(const std::optional<spec::StageBody> &body) {
  std::vector<const stmt::Stmt *> out;
  if (!body)
    return out;
  for (const stmt::Stmt &statement : body->stmts) {
    auto keep =
        holds(statement.guard.get(), "the condition of a statement in '" + body->name.value + "'");
    if (keep && *keep)
      out.push_back(&statement);
  }
  return out;
}

std::optional<std::pair<unsigned, std::vector<ir::Coord>>>
Lowering::lowerAccess(const Expr &access, std::vector<int64_t> span, const std::string &what,
                      const std::string &unitName) {
  TKC_INTERNAL_ASSERT(access.kind == Expr::Kind::Index, "lowerAccess needs an index");
  const Expr &base = *access.operands[0];
  if (base.kind != Expr::Kind::Name || !known(base, what))
    return std::nullopt;
  auto it = globalIndex.find(base.text);
  if (it == globalIndex.end()) {
    diags.report(DiagID::err_sema_not_global, base.loc, base.text, what);
    return std::nullopt;
  }
  const ir::Global &global = kernel.globals[it->second];
  size_t numIndices = access.operands.size() - 1;
  if (numIndices != global.dims.size()) {
    diags.report(DiagID::err_sema_index_count, access.loc, global.name, global.dims.size(),
                 numIndices);
    return std::nullopt;
  }
  // The tile spans the last span.size() dimensions of the global.
  size_t firstSpanned = global.dims.size() - std::min(span.size(), global.dims.size());
  std::vector<ir::Coord> coords;
  bool ok = true;
  for (size_t d = 0; d < numIndices; ++d) {
    const Expr &index = *access.operands[d + 1];
    if (index.kind == Expr::Kind::Number && index.text == "0") {
      coords.push_back(ir::Coord{});
      continue;
    }
    const ir::IterVar *var = index.kind == Expr::Kind::Name ? findIterVar(index.text) : nullptr;
    if (!var && index.kind != Expr::Kind::Name && d < firstSpanned) {
      // An index expression in a dimension the tile does not span, e.g.
      // the key/value head of a query head: `h / (H / H_kv)`.
      auto lowered = lowerIndexExpr(index, d + 1, global.name);
      if (!lowered) {
        ok = false;
        continue;
      }
      coords.push_back(ir::Coord{{}, std::move(*lowered)});
      continue;
    }
    if (!var) {
      if (index.kind == Expr::Kind::Name && !declared.count(index.text)) {
        reportUnknownName(index, what, declaredNames());
      } else {
        std::string found =
            index.kind == Expr::Kind::Name ? "'" + index.text + "'" : std::string("an expression");
        diags.report(DiagID::err_sema_index_not_var, index.loc, d + 1, global.name, found);
      }
      ok = false;
      continue;
    }
    int64_t tileSpan = d >= firstSpanned ? span[d - firstSpanned] : 1;
    if (!(var->size == global.dims[d])) {
      diags.report(DiagID::err_sema_index_size, index.loc, var->name, var->size.str(), d + 1,
                   global.name, global.dims[d].str());
      ok = false;
    } else if (var->step != tileSpan) {
      diags.report(DiagID::err_sema_index_step, index.loc, var->name, var->step, unitName, tileSpan,
                   d + 1, global.name, global.dims[d].str());
      ok = false;
    }
    coords.push_back(ir::Coord{var->name, std::nullopt});
  }
  if (!ok)
    return std::nullopt;
  return std::pair{static_cast<unsigned>(it->second), std::move(coords)};
}

void Lowering::unsupported(const stmt::Stmt &statement, const std::string &body, const char *hint) {
  diags.report(DiagID::err_sema_unsupported, statement.loc, "this statement in '" + body + "'",
               hint);
}

void Lowering::lowerLoads() {
  for (const stmt::Stmt *statement : activeStatements(spec.producer.load)) {
    const std::string what = "'load'";
    if (statement->op != "=" || statement->target->kind != Expr::Kind::Name ||
        statement->value->kind != Expr::Kind::Index) {
      unsupported(*statement, "load", "write 'tile = Global[i, j]'");
      continue;
    }
    const Expr &target = *statement->target;
    if (!known(target, what))
      continue;
    auto tile = tileIndex.find(target.text);
    if (tile == tileIndex.end()) {
      diags.report(DiagID::err_sema_load_target, target.loc, target.text);
      continue;
    }
    const ir::StageTile &t = kernel.stageTiles[tile->second];
    // A stage holds one copy of each tile: a second load would declare it twice.
    if (auto first =
            llvm::find_if(kernel.loads, [&](const ir::Load &l) { return l.tile == tile->second; });
        first != kernel.loads.end()) {
      diags.report(DiagID::err_sema_load_twice, statement->loc, t.name);
      diags.report(DiagID::note_loaded_here, first->loc, t.name);
      continue;
    }
    auto access = lowerAccess(*statement->value, {t.rows, t.cols}, what, "tile '" + t.name + "'");
    if (!access)
      continue;
    const ir::Global &g = kernel.globals[access->first];
    if (g.dtype != t.dtype) {
      diags.report(DiagID::err_sema_dtype, statement->value->loc,
                   "global '" + g.name + "' loaded into tile '" + t.name + "'", spelling(t.dtype),
                   spelling(g.dtype));
      continue;
    }
    // wgmma multiplies 16-bit operands (the load is kept: it is not also "never loaded").
    if (t.dtype == spec::DType::F32)
      diags.report(DiagID::err_sema_dtype, t.loc, "tile '" + t.name + "'", "bf16 or f16",
                   spelling(t.dtype));
    kernel.loads.push_back(
        ir::Load{tile->second, access->first, std::move(access->second), statement->loc});
  }
}

void Lowering::checkTaskReadsAlone() {
  std::set<unsigned> reported;
  for (const ir::ColumnRead &read : kernel.columnReads) {
    ir::GlobalRole role = ir::globalRole(kernel, read.global);
    if (role != ir::GlobalRole::Read && role != ir::GlobalRole::Offsets &&
        reported.insert(read.global).second)
      diags.report(DiagID::err_sema_read_global_role, read.loc, kernel.globals[read.global].name);
  }
  for (const ir::TaskRead &read : kernel.taskReads) {
    ir::GlobalRole role = ir::globalRole(kernel, read.global);
    if (role != ir::GlobalRole::Read && role != ir::GlobalRole::Offsets &&
        reported.insert(read.global).second)
      diags.report(DiagID::err_sema_read_global_role, read.loc, kernel.globals[read.global].name);
  }
  // A global read one value per row is used by no other kind of op (its role is Read
  // from the first op found, the load at the top of setup).
  for (const ir::ProgramOp &load : kernel.program.setup) {
    if (load.kind != ir::ProgramOp::Kind::LoadRows || reported.count(load.global))
      continue;
    bool other =
        llvm::any_of(kernel.loads, [&](const ir::Load &l) { return l.global == load.global; });
    ir::forEachOp(kernel.program, [&](ir::Body, const ir::ProgramOp &op) {
      other = other || (op.kind != ir::ProgramOp::Kind::LoadRows &&
                        (op.kind == ir::ProgramOp::Kind::LoadTile ||
                         op.kind == ir::ProgramOp::Kind::StoreTile ||
                         op.kind == ir::ProgramOp::Kind::StoreRows ||
                         op.kind == ir::ProgramOp::Kind::AddGlobal) &&
                        op.global == load.global);
    });
    if (other && reported.insert(load.global).second)
      diags.report(DiagID::err_sema_read_global_role, load.loc, kernel.globals[load.global].name);
  }
}

void Lowering::checkEveryLoadIsUsed() {
  for (const ir::Load &load : kernel.loads) {
    bool used = false;
    for (const ir::ProgramOp &op : kernel.program.compute) {
      auto reads = [&](const ir::MmaOperand &o) {
        return o.where == ir::MmaOperand::Where::Stage && o.index == load.tile;
      };
      used = used || (op.kind == ir::ProgramOp::Kind::Mma && (reads(op.a) || reads(op.b))) ||
             ir::anyOf(op.expr, [&](const ir::Elementwise &e) {
               return e.kind == ir::Elementwise::Kind::StageRead && e.value == load.tile;
             });
    }
    if (!used)
      diags.report(DiagID::err_sema_unused_load, load.loc, kernel.stageTiles[load.tile].name);
  }
}

void Lowering::lowerBody(const std::optional<spec::StageBody> &body, const std::string &name,
                         std::vector<ir::ProgramOp> &ops) {
  currentBody = name;
  for (const stmt::Stmt *statement : activeStatements(body)) {
    if (!statement->target) {
      unsupported(*statement, name, "a statement assigns or stores");
      continue;
    }
    const Expr &target = *statement->target;
    if (target.kind == Expr::Kind::Index) {
      lowerStoreOp(*statement, ops);
      continue;
    }
    if (warpgroupTileIndex.count(target.text)) {
      lowerLoadTile(*statement, ops);
      continue;
    }
    if (tileIndex.count(target.text)) {
      diags.report(DiagID::err_sema_unsupported, target.loc,
                   "assigning to stage tile '" + target.text + "' in '" + name + "'",
                   "the producer loads stage tiles");
      continue;
    }
    lowerAssignment(*statement, ops);
    // A statement that defined nothing failed (and said so, or read a name
    // that did): its target must not cascade into unknown-name errors.
    if (target.kind == Expr::Kind::Name && !valueIndex.count(target.text) &&
        !declared.count(target.text)) {
      poisoned.insert(target.text);
      bodyLocals.push_back(target.text);
    }
  }
  // Names a body introduces are its own.
  for (const std::string &local : bodyLocals) {
    valueIndex.erase(local);
    poisoned.erase(local);
  }
  bodyLocals.clear();
}

void Lowering::lowerProgram() {
  program = ir::Program{};
  rowsReads.clear();
  rowsLoads.clear();
  // Tiles first, then row vectors, each in the order declared.
  for (bool tiles : {true, false})
    for (const StateDecl &s : stateDecls) {
      if ((s.cols > 1) != tiles)
        continue;
      Typed shape;
      shape.hasRows = true;
      shape.rows = s.rows;
      shape.hasCols = tiles;
      shape.cols = tiles ? s.cols : 0;
      valueIndex[s.name] = newValue(s.name, shape, true, s.loc);
    }
  unsigned errors = diags.getNumErrors();
  lowerBody(spec.consumer.setup, "setup", program.setup);
  lowerBody(spec.consumer.compute, "compute", program.compute);
  lowerBody(spec.consumer.finish, "finish", program.finish);
  program.setup.insert(program.setup.begin(), rowsLoads.begin(), rowsLoads.end());
  if (diags.getNumErrors() != errors)
    return;
  // Compute consumes each stage: it multiplies a stage tile or reads one as numbers.
  bool readsStage =
      !ir::stageTilesRead(program).empty() ||
      llvm::any_of(program.compute, [](const ir::ProgramOp &op) {
        return op.kind == ir::ProgramOp::Kind::Mma && (op.a.where == ir::MmaOperand::Where::Stage ||
                                                       op.b.where == ir::MmaOperand::Where::Stage);
      });
  if (!readsStage)
    diags.report(DiagID::err_sema_compute_reads_no_stage,
                 spec.consumer.compute ? spec.consumer.compute->name.loc : spec.consumer.loc);
  auto isStore = [](const ir::ProgramOp &op) {
    return op.kind == ir::ProgramOp::Kind::StoreTile || op.kind == ir::ProgramOp::Kind::StoreRows;
  };
  bool stores = llvm::any_of(program.finish, isStore) || llvm::any_of(program.compute, isStore);
  if (!stores)
    diags.report(DiagID::err_sema_missing_store,
                 spec.consumer.finish ? spec.consumer.finish->name.loc : spec.consumer.loc);
  for (const ir::ProgramOp &op : program.compute) {
    if (op.kind != ir::ProgramOp::Kind::Mma)
      continue;
    for (const ir::MmaOperand *o : {&op.a, &op.b}) {
      if (o->where == ir::MmaOperand::Where::Stage &&
          llvm::none_of(kernel.loads, [&](const ir::Load &l) { return l.tile == o->index; }))
        diags.report(DiagID::err_sema_stage_tile_unloaded, op.loc,
                     kernel.stageTiles[o->index].name);
      if (o->where != ir::MmaOperand::Where::Warpgroup)
        continue;
      bool loaded = llvm::any_of(program.setup, [&](const ir::ProgramOp &load) {
        return load.kind == ir::ProgramOp::Kind::LoadTile && load.tile == o->index;
      });
      if (!loaded)
        diags.report(DiagID::err_sema_warpgroup_tile_unloaded, op.loc,
                     kernel.warpgroupTiles[o->index].name);
    }
  }
  // Walking the loop backward reorders what reads its index; only the
  // producer's loads may.
  if (kernel.alternateLoop) {
    bool readsLoop = false;
    ir::forEachOp(program, [&](ir::Body, const ir::ProgramOp &op) {
      readsLoop = readsLoop || ir::anyOf(op.expr, [&](const ir::Elementwise &e) {
                    return (e.kind == ir::Elementwise::Kind::ColIndex ||
                            e.kind == ir::Elementwise::Kind::RowIndex) &&
                           e.var == kernel.loop.name;
                  });
    });
    for (const ir::RegValue &v : program.values)
      readsLoop = readsLoop || (v.bound && v.bound->var == kernel.loop.name && !v.state);
    if (readsLoop || kernel.loopTail || !kernel.loopBound.stopVar.empty() || kernel.loopBound.start)
      diags.report(DiagID::err_sema_unsupported, spec.grid->loopOrder->loc,
                   "'loop_order: alternate' here",
                   "a loop walks backward only where the producer's loads alone read its "
                   "index, over the whole size, without a tail");
  }
  checkGlobalUses();
  kernel.program = std::move(program);
}

void Lowering::checkGlobalUses() {
  std::vector<std::optional<std::pair<ir::GlobalRole, std::string>>> uses(kernel.globals.size());
  auto use = [&](unsigned global, ir::GlobalRole role, const std::string &tile, SourceLoc loc) {
    auto &seen = uses[global];
    if (seen && (seen->first != role || seen->second != tile)) {
      diags.report(DiagID::err_sema_unsupported, loc,
                   "using global '" + kernel.globals[global].name + "' in two ways",
                   "give each use its own global");
      return;
    }
    seen = std::pair{role, tile};
  };
  for (const ir::Load &load : kernel.loads)
    use(load.global, ir::GlobalRole::TmaLoad, kernel.stageTiles[load.tile].name, load.loc);
  ir::forEachOp(program, [&](ir::Body, const ir::ProgramOp &op) {
    switch (op.kind) {
    case ir::ProgramOp::Kind::LoadTile:
      use(op.global, ir::GlobalRole::TmaLoad, kernel.warpgroupTiles[op.tile].name, op.loc);
      break;
    case ir::ProgramOp::Kind::StoreTile:
      use(op.global, ir::GlobalRole::TmaStore, fmt::format("{}", op.tile), op.loc);
      break;
    case ir::ProgramOp::Kind::StoreRows:
      use(op.global, ir::GlobalRole::Rows, "", op.loc);
      break;
    case ir::ProgramOp::Kind::AddGlobal:
      use(op.global, op.perColumn ? ir::GlobalRole::AddColumn : ir::GlobalRole::AddTile,
          fmt::format("{}x{}", program.values[op.dst].rows, program.values[op.dst].cols), op.loc);
      break;
    default:
      break;
    }
  });
  // A layout is followed by the tile maps alone (the launcher gives them the strides).
  // 8-bit floats are '@' operands loaded by TMA, nothing else.
  std::set<unsigned> fp8Reported;
  auto fp8Use = [&](unsigned g, SourceLoc loc) {
    if (spec::isFp8(kernel.globals[g].dtype) && fp8Reported.insert(g).second)
      diags.report(DiagID::err_sema_dtype, loc,
                   "global '" + kernel.globals[g].name + "', stored or read as numbers",
                   "bf16, f16 or f32 (8-bit floats are operands of '@' only)",
                   spelling(kernel.globals[g].dtype));
  };
  ir::forEachOp(program, [&](ir::Body, const ir::ProgramOp &op) {
    using Kind = ir::ProgramOp::Kind;
    if (op.kind == Kind::StoreTile || op.kind == Kind::StoreRows || op.kind == Kind::LoadRows ||
        op.kind == Kind::AddGlobal)
      fp8Use(op.global, op.loc);
  });
  for (const ir::TaskRead &read : kernel.taskReads)
    fp8Use(read.global, read.loc);
  for (const ir::ColumnRead &read : kernel.columnReads)
    fp8Use(read.global, read.loc);
  std::set<unsigned> reported;
  ir::forEachOp(program, [&](ir::Body, const ir::ProgramOp &op) {
    using Kind = ir::ProgramOp::Kind;
    if ((op.kind == Kind::StoreRows || op.kind == Kind::LoadRows || op.kind == Kind::AddGlobal) &&
        !kernel.globals[op.global].layout.empty() && reported.insert(op.global).second)
      diags.report(DiagID::err_sema_layout_use, op.loc, kernel.globals[op.global].name,
                   "this statement");
  });
  for (const ir::TaskRead &read : kernel.taskReads)
    if (!kernel.globals[read.global].layout.empty())
      diags.report(DiagID::err_sema_layout_use, read.loc, kernel.globals[read.global].name,
                   "'" + read.text + "'");
  for (const ir::ColumnRead &read : kernel.columnReads)
    if (!kernel.globals[read.global].layout.empty())
      diags.report(DiagID::err_sema_layout_use, read.loc, kernel.globals[read.global].name,
                   "'" + read.text + "'");
}

} // namespace tkc::lower
