//===- Grid.cpp - Task indices and the loop -------------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// `grid:`: the task indices and the loop with their extents and steps,
// where the loop stops (`min(N, ...)`) and starts (`start:`), its tail
// (`tail:`), and the loop tail's own lowering (applyTailStep).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"

#include <charconv>
#include <functional>

namespace tkc::lower {

namespace {

/// X in `X + 1`, else null.
const Expr *plusOne(const Expr &expr) {
  if (expr.kind != Expr::Kind::Binary || expr.text != "+")
    return nullptr;
  const Expr &one = *expr.operands[1];
  if (one.kind != Expr::Kind::Number || one.text != "1")
    return nullptr;
  return expr.operands[0].get();
}

} // namespace

std::optional<int64_t> Lowering::positiveInteger(const Expr &expr) {
  if (expr.kind != Expr::Kind::Number)
    return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(expr.text.data(), expr.text.data() + expr.text.size(), value);
  if (ec != std::errc() || ptr != expr.text.data() + expr.text.size() || value <= 0)
    return std::nullopt;
  return value;
}

ir::Size Lowering::sizeNamed(const std::string &name) const {
  if (auto value = intParam(name))
    return ir::Size{*value, {}};
  return ir::Size{std::nullopt, name};
}

std::optional<ir::LoopBound> Lowering::parseTaskEnd(const Expr &expr) const {
  if (expr.kind != Expr::Kind::Binary || expr.text != "*")
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    auto step = positiveInteger(*expr.operands[side]);
    if (!step && expr.operands[side]->kind == Expr::Kind::Name)
      if (auto value = intParam(expr.operands[side]->text); value && *value > 0)
        step = value;
    const Expr *var = step ? plusOne(*expr.operands[1 - side]) : nullptr;
    const ir::IterVar *task = var && var->kind == Expr::Kind::Name ? findTask(var->text) : nullptr;
    if (!task)
      continue;
    if (task->step != *step) {
      // Any other row would skip keys the task's rows may see.
      diags.report(DiagID::err_sema_loop_stop_step, expr.loc, task->name, task->step, *step);
      return ir::LoopBound{};
    }
    return ir::LoopBound{task->name, *step, {}, /*perRow=*/false, std::nullopt};
  }
  return std::nullopt;
}

std::optional<ir::LoopBound> Lowering::parseRowEnd(const Expr &row) const {
  if (row.kind != Expr::Kind::Call || row.text != "row" || row.operands.size() != 1)
    return std::nullopt;
  const Expr &var = *row.operands[0];
  const ir::IterVar *task = var.kind == Expr::Kind::Name ? findTask(var.text) : nullptr;
  if (!task) {
    diags.report(DiagID::err_sema_loop_stop_row, var.loc,
                 var.kind == Expr::Kind::Name ? var.text : std::string("an expression"));
    return ir::LoopBound{};
  }
  return ir::LoopBound{var.text, task->step, {}, /*perRow=*/true, std::nullopt};
}

void Lowering::signedTerms(const Expr &expr, bool negative,
                           std::vector<std::pair<const Expr *, bool>> &out) {
  if (expr.kind == Expr::Kind::Binary && (expr.text == "+" || expr.text == "-")) {
    signedTerms(*expr.operands[0], negative, out);
    signedTerms(*expr.operands[1], expr.text == "-" ? !negative : negative, out);
    return;
  }
  out.emplace_back(&expr, negative);
}

bool Lowering::isLaunchSize(const std::string &name) const {
  return !intParam(name) && !declared.count(name) &&
         llvm::is_contained(ir::launchSizeSymbols(kernel), name);
}

std::optional<ir::LoopBound> Lowering::parseStop(const Expr &expr) const {
  std::vector<std::pair<const Expr *, bool>> terms;
  signedTerms(expr, false, terms);
  std::optional<ir::LoopBound> bound;
  int64_t ones = 0;
  std::vector<ir::SizeTerm> shift;
  std::string scalar;
  for (const auto &[term, negative] : terms) {
    if (!negative && !bound) {
      if ((bound = parseTaskEnd(*term)) || (bound = parseRowEnd(*term))) {
        if (bound->stopVar.empty())
          return bound; // reported
        continue;
      }
    }
    if (term->kind == Expr::Kind::Name && isLaunchSize(term->text)) {
      shift.push_back(ir::SizeTerm{negative, term->text});
      continue;
    }
    if (auto one = positiveInteger(*term); one && *one == 1) {
      ones += negative ? -1 : 1;
      continue;
    }
    // `row(i) + window`: a scalar in place of the row form's `+ 1`.
    if (term->kind == Expr::Kind::Name && !negative && scalar.empty() &&
        scalarIndex.count(term->text)) {
      scalar = term->text;
      continue;
    }
    return std::nullopt;
  }
  // The row form ends after its row (`+ 1`, or a scalar); the task form's `+ 1` is inside its
  // product.
  if (!bound || ones != (bound->perRow && scalar.empty() ? 1 : 0) ||
      (!scalar.empty() && !bound->perRow))
    return std::nullopt;
  bound->shift = std::move(shift);
  bound->stopScalar = std::move(scalar);
  return bound;
}

std::optional<std::pair<ir::Size, int64_t>>
Lowering::parseIterExtent(const Expr &written, const std::string &what, ir::LoopBound *bound) {
  const Expr *chosen = chooseBranch(written);
  if (!chosen)
    return std::nullopt;
  const Expr &expr = *chosen;
  if (expr.kind == Expr::Kind::Binary && expr.text == "/") {
    auto step = positiveInteger(*expr.operands[1]);
    if (!step && expr.operands[1]->kind == Expr::Kind::Name)
      if (auto value = intParam(expr.operands[1]->text); value && *value > 0)
        step = value;
    const Expr &size = *expr.operands[0];
    if (step && size.kind == Expr::Kind::Name)
      return std::pair{sizeNamed(size.text), *step};
    if (step && bound && size.kind == Expr::Kind::Call && size.text == "min" &&
        size.operands.size() == 2 && size.operands[0]->kind == Expr::Kind::Name) {
      if (auto end = parseStop(*size.operands[1])) {
        *bound = *end;
        return std::pair{sizeNamed(size.operands[0]->text), *step};
      }
    }
  }
  if (expr.kind == Expr::Kind::Name)
    return std::pair{sizeNamed(expr.text), int64_t{1}};
  if (bound)
    diags.report(DiagID::err_sema_loop_form, expr.loc, what, "another expression");
  else
    diags.report(DiagID::err_sema_extent_form, expr.loc, what, "another expression");
  return std::nullopt;
}

void Lowering::declareLoopStart(const spec::IterVar &var) {
  if (var.name.value != kernel.loop.name) {
    diags.report(DiagID::err_sema_loop_start_var, var.name.loc, var.name.value, kernel.loop.name);
    return;
  }
  const std::string &what = var.name.value;
  ir::LoopBound::Start start;
  const Expr *row = nullptr;
  bool windowSeen = false, ok = true;
  // Walk the sum, each term with its sign.
  std::function<void(const Expr &, int)> term = [&](const Expr &e, int sign) {
    if (!ok)
      return;
    if (e.kind == Expr::Kind::Binary && (e.text == "+" || e.text == "-")) {
      term(*e.operands[0], sign);
      term(*e.operands[1], e.text == "-" ? -sign : sign);
      return;
    }
    if (e.kind == Expr::Kind::Call && e.text == "row" && e.operands.size() == 1 && sign > 0 &&
        !row && e.operands[0]->kind == Expr::Kind::Name) {
      row = e.operands[0].get();
      return;
    }
    if (e.kind == Expr::Kind::Number) {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(e.text.data(), e.text.data() + e.text.size(), value);
      if (ec == std::errc() && ptr == e.text.data() + e.text.size()) {
        start.offset += sign * value;
        return;
      }
    }
    if (e.kind == Expr::Kind::Name && isLaunchSize(e.text)) {
      start.shift.push_back(ir::SizeTerm{sign < 0, e.text});
      return;
    }
    if (e.kind == Expr::Kind::Name && sign < 0 && !windowSeen) {
      windowSeen = true;
      if (scalarIndex.count(e.text)) {
        start.scalar = e.text;
        return;
      }
      if (auto value = intParam(e.text)) {
        start.constant = *value;
        return;
      }
    }
    ok = false;
  };
  const Expr *chosen = chooseBranch(*var.extent); // `X if c else Y`, per instantiation
  if (!chosen)
    return;
  // `0`: the loop starts at its first element, as without a start.
  if (chosen->kind == Expr::Kind::Number && chosen->text == "0")
    return;
  term(*chosen, 1);
  if (!ok || !row) {
    diags.report(DiagID::err_sema_loop_start_form, chosen->loc, what, "another expression");
    return;
  }
  const std::string &stop = kernel.loopBound.stopVar;
  auto task =
      llvm::find_if(kernel.tasks, [&](const ir::IterVar &t) { return t.name == row->text; });
  if (stop.empty() ? task == kernel.tasks.end() : !kernel.loopBound.perRow || row->text != stop) {
    diags.report(DiagID::err_sema_loop_start_stop, row->loc, what, row->text,
                 stop.empty() ? "'" + row->text + "' is not a task index"
                              : "the loop stops at the rows of '" + stop + "'" +
                                    (kernel.loopBound.perRow ? "" : " as a whole"));
    return;
  }
  start.var = task->name;
  start.step = task->step;
  kernel.loopBound.start = start;
}

void Lowering::declareLoopTail(const spec::IterVar &var) {
  if (var.name.value != kernel.loop.name) {
    diags.report(DiagID::err_sema_loop_tail_var, var.name.loc, var.name.value, kernel.loop.name);
    return;
  }
  const Expr *chosen = chooseBranch(*var.extent);
  if (!chosen)
    return;
  std::optional<int64_t> step = positiveInteger(*chosen);
  if (!step && chosen->kind == Expr::Kind::Name)
    if (auto value = intParam(chosen->text); value && *value > 0)
      step = value;
  if (!step || *step % 16 != 0 || *step > kernel.loop.step) {
    std::string found = step ? std::to_string(*step)
                        : chosen->kind == Expr::Kind::Name || chosen->kind == Expr::Kind::Number
                            ? "'" + chosen->text + "'"
                            : std::string("another expression");
    diags.report(DiagID::err_sema_loop_tail_form, chosen->loc, var.name.value, kernel.loop.step,
                 found);
    return;
  }
  if (*step == kernel.loop.step)
    return;
  if (!kernel.loopBound.stopVar.empty()) {
    diags.report(DiagID::err_sema_loop_tail_loop, var.name.loc, var.name.value,
                 kernel.loop.size.str(),
                 "this loop stops at the rows of '" + kernel.loopBound.stopVar + "'");
    return;
  }
  if (const auto &start = kernel.loopBound.start) {
    diags.report(DiagID::err_sema_loop_tail_loop, var.name.loc, var.name.value,
                 kernel.loop.size.str(), "this loop starts at the rows of '" + start->var + "'");
    return;
  }
  kernel.loopTail = ir::LoopTail{*step, var.name.loc, nullptr};
}

void Lowering::applyTailStep() {
  for (const ir::Load &load : kernel.loads) {
    ir::StageTile &t = kernel.stageTiles[load.tile];
    for (size_t d = 0; d < load.coords.size(); ++d) {
      const ir::Coord &c = load.coords[d];
      const int dim = ir::spannedTileDim(load, d);
      if (dim < 0 || c.expr || c.var != kernel.loop.name)
        continue;
      int64_t &extent = dim == 0 ? t.rows : t.cols;
      TKC_INTERNAL_ASSERT(extent == kernel.loop.step || extent == *tailStep,
                          "a tile indexed by the loop spans its step");
      extent = *tailStep;
    }
  }
  kernel.loop.step = *tailStep;
  kernel.name += "_tail";
  kernel.isTail = true;
}

void Lowering::declareGrid() {
  if (!spec.grid || spec.grid->tasks.empty() || spec.grid->loop.empty()) {
    diags.report(DiagID::err_sema_needs_grid, spec.grid ? spec.grid->loc : spec.name.loc);
    return;
  }
  if (spec.grid->loop.size() != 1) {
    diags.report(DiagID::err_sema_one_loop, spec.grid->loop[1].name.loc, spec.grid->loop.size());
    return;
  }
  if (auto whole = holds(spec.grid->wholeTiles.get(), "the 'whole_tiles' of 'grid'"))
    kernel.wantsWholeTiles = *whole;
  auto declareVar = [&](const spec::IterVar &var,
                        ir::LoopBound *bound) -> std::optional<ir::IterVar> {
    if (!declareName(var.name.value, var.name.loc, "as a grid index"))
      return std::nullopt;
    auto extent = parseIterExtent(*var.extent, "the extent of '" + var.name.value + "'", bound);
    if (!extent)
      return std::nullopt;
    return ir::IterVar{var.name.value, extent->first, extent->second, var.name.loc};
  };
  for (const spec::IterVar &var : spec.grid->tasks)
    if (auto lowered = declareVar(var, nullptr))
      kernel.tasks.push_back(*lowered);
  if (auto lowered = declareVar(spec.grid->loop[0], &kernel.loopBound))
    kernel.loop = *lowered;
  for (const spec::IterVar &var : spec.grid->start)
    declareLoopStart(var);
  if (!tailStep)
    for (const spec::IterVar &var : spec.grid->tail)
      declareLoopTail(var);
  // Grouped order pairs two task indices (rows and columns of an output).
  if (spec.grid->order)
    kernel.groupedOrder = spec.grid->order->value == "grouped";
  else
    kernel.groupedOrder = kernel.tasks.size() == 2;
  if (kernel.groupedOrder && kernel.tasks.size() != 2)
    diags.report(DiagID::err_sema_value_kind, spec.grid->order->loc, "'order: grouped'",
                 "used with two task indices", fmt::format("{} task indices", kernel.tasks.size()));
  // Tasks whose loop stops at their rows differ in length: they are ordered by it.
  if (kernel.groupedOrder && spec.grid->order && !kernel.loopBound.stopVar.empty())
    diags.report(DiagID::err_sema_value_kind, spec.grid->order->loc, "'order: grouped'",
                 "used with a loop over its whole size",
                 "a loop that stops at the rows of '" + kernel.loopBound.stopVar + "'");
  kernel.alternateLoop = spec.grid->loopOrder && spec.grid->loopOrder->value == "alternate";
}

void Lowering::declareSequences() {
  if (!spec.grid || spec.grid->sequences.empty())
    return;
  const spec::IterVar &decl = spec.grid->sequences.front();
  auto refuse = [&](SourceLoc loc, const std::string &why) {
    diags.report(DiagID::err_sema_sequences, loc, why);
  };
  if (spec.grid->sequences.size() > 1)
    return refuse(spec.grid->sequences[1].name.loc,
                  fmt::format("splits one size; {} are given", spec.grid->sequences.size()));
  const std::string &size = decl.name.value;
  if (!isLaunchSize(size))
    return refuse(decl.name.loc,
                  fmt::format("splits '{}', which is not a size of any global's dims", size));
  const Expr &offsets = *decl.extent;
  auto global =
      offsets.kind == Expr::Kind::Name ? globalIndex.find(offsets.text) : globalIndex.end();
  if (global == globalIndex.end())
    return refuse(offsets.loc,
                  fmt::format("needs the name of a global holding the offsets of "
                              "'{}'; found {}",
                              size,
                              offsets.kind == Expr::Kind::Name ? "'" + offsets.text + "'"
                                                               : std::string("an expression")));
  const ir::Global &g = kernel.globals[global->second];
  if (g.dims.size() != 1 || g.dtype != spec::DType::I32 || g.dims[0].constant ||
      g.dims[0].symbol == size)
    return refuse(offsets.loc,
                  fmt::format("needs the offsets of '{}' in a global of i32 with one dimension, "
                              "a size of its own (S offsets, S - 1 sequences); '{}' is {}[{}]",
                              size, g.name, spelling(g.dtype), g.dims.front().str()));
  std::vector<const ir::IterVar *> over;
  for (const ir::IterVar &task : kernel.tasks)
    if (!task.size.constant && task.size.symbol == size)
      over.push_back(&task);
  if (over.size() != 1)
    return refuse(decl.name.loc,
                  fmt::format("needs one task index over '{}' (each task takes tiles of one "
                              "sequence); {} run over it",
                              size, over.size()));
  const ir::LoopBound &bound = kernel.loopBound;
  const char *loop = bound.start                ? "that starts at a row"
                     : !bound.shift.empty()     ? "with a shifted stop"
                     : !spec.grid->tail.empty() ? "that ends in a tail"
                     : kernel.alternateLoop     ? "walked alternately"
                                                : nullptr;
  if (loop)
    return refuse(decl.name.loc, fmt::format("is not supported with a loop {} yet", loop));
  if (spec.grid->order && spec.grid->order->value == "grouped")
    return refuse(spec.grid->order->loc,
                  "takes its tasks in rotated rounds, a sequence's tiles together; "
                  "'order: grouped' cannot hold");
  kernel.groupedOrder = false;
  // Tiles cross the end of a sequence wherever it lies: there is no kernel without the
  // code for partial tiles.
  kernel.wantsWholeTiles = false;
  kernel.sequences = ir::Sequences{size,          global->second, g.dims[0].symbol,
                                   over[0]->name, over[0]->step,  decl.name.loc};
}

void Lowering::checkSequencedAccesses() {
  if (!kernel.sequences)
    return;
  const ir::Sequences &seq = *kernel.sequences;
  // `rowDim`: the coordinate of the rows (none: -1); `var`s may index it.
  auto check = [&](unsigned global, const std::vector<ir::Coord> &coords, int rowDim, SourceLoc loc,
                   const char *what) {
    const ir::Global &g = kernel.globals[global];
    for (size_t d = 0; d < coords.size(); ++d) {
      if (!ir::alongSequences(kernel, g, d))
        continue;
      const ir::Coord &c = coords[d];
      std::string why;
      if (!what)
        why = "a tile's or a row vector's rows only may run along it, not here";
      else if (static_cast<int>(d) != rowDim)
        why = fmt::format("only {} may run along it", what);
      else if (c.expr || c.var.empty())
        why = "index it with a task or loop index";
      if (!why.empty()) {
        diags.report(DiagID::err_sema_sequences_index, loc, d + 1, g.name, seq.size, why);
        return;
      }
    }
  };
  for (const ir::Load &load : kernel.loads)
    check(load.global, load.coords, static_cast<int>(load.coords.size()) - 2, load.loc,
          "the loaded tile's rows");
  for (const ir::ColumnRead &read : kernel.columnReads)
    check(read.global, read.coords, static_cast<int>(read.coords.size()) - 1, read.loc,
          "the columns of a vector read per column");
  ir::forEachOp(kernel.program, [&](ir::Body, const ir::ProgramOp &op) {
    using Kind = ir::ProgramOp::Kind;
    const int last = static_cast<int>(op.coords.size()) - 1;
    switch (op.kind) {
    case Kind::LoadTile:
      check(op.global, op.coords, last - 1, op.loc, "the loaded tile's rows");
      break;
    case Kind::StoreTile:
      check(op.global, op.coords, last - 1, op.loc, "the stored tile's rows");
      break;
    case Kind::StoreRows:
    case Kind::LoadRows:
      check(op.global, op.coords, last, op.loc, "a row vector's rows");
      break;
    case Kind::AddGlobal:
      check(op.global, op.coords, -1, op.loc, nullptr);
      break;
    default:
      break;
    }
  });
  for (const ir::TaskRead &read : kernel.taskReads)
    check(read.global, read.coords, -1, read.loc, nullptr);
  // The offsets are the sequences' alone.
  ir::forEachOp(kernel.program, [&](ir::Body, const ir::ProgramOp &op) {
    using Kind = ir::ProgramOp::Kind;
    if ((op.kind == Kind::LoadTile || op.kind == Kind::StoreTile || op.kind == Kind::StoreRows ||
         op.kind == Kind::LoadRows || op.kind == Kind::AddGlobal) &&
        op.global == seq.global)
      diags.report(DiagID::err_sema_sequences, op.loc,
                   fmt::format("reads its offsets '{}' itself; no statement may use them",
                               kernel.globals[seq.global].name));
  });
  for (const ir::TaskRead &read : kernel.taskReads)
    if (read.global == seq.global)
      diags.report(DiagID::err_sema_sequences, read.loc,
                   fmt::format("reads its offsets '{}' itself; no statement may use them",
                               kernel.globals[seq.global].name));
}

std::optional<ir::IndexExpr> Lowering::lowerSizeExpr(const Expr &expr) {
  ir::IndexExpr out;
  switch (expr.kind) {
  case Expr::Kind::Number: {
    auto [ptr, ec] =
        std::from_chars(expr.text.data(), expr.text.data() + expr.text.size(), out.number);
    if (ec == std::errc() && ptr == expr.text.data() + expr.text.size())
      return out;
    break;
  }
  case Expr::Kind::Name:
    if (auto value = intParam(expr.text)) {
      out.number = *value;
      return out;
    }
    if (isLaunchSize(expr.text)) {
      out.kind = ir::IndexExpr::Kind::Size;
      out.name = expr.text;
      return out;
    }
    break;
  case Expr::Kind::Binary:
    if (expr.text == "+" || expr.text == "-" || expr.text == "*") {
      out.kind = expr.text == "+"   ? ir::IndexExpr::Kind::Add
                 : expr.text == "-" ? ir::IndexExpr::Kind::Sub
                                    : ir::IndexExpr::Kind::Mul;
      for (const auto &operand : expr.operands) {
        auto lowered = lowerSizeExpr(*operand);
        if (!lowered)
          return std::nullopt;
        out.operands.push_back(std::move(*lowered));
      }
      return out;
    }
    break;
  default:
    break;
  }
  diags.report(DiagID::err_sema_requires_form, expr.loc,
               expr.kind == Expr::Kind::Name     ? "'" + expr.text + "', which is not a size"
               : expr.kind == Expr::Kind::Number ? "'" + expr.text + "'"
                                                 : std::string("another expression"));
  return std::nullopt;
}

void Lowering::declareRequirements() {
  if (!spec.requirements)
    return;
  std::function<void(const Expr &)> add = [&](const Expr &written) {
    // `X if c else Y`: the relation of this instantiation.
    const Expr *chosen = chooseBranch(written);
    if (!chosen)
      return;
    const Expr &expr = *chosen;
    if (expr.kind == Expr::Kind::Binary && expr.text == "and") {
      add(*expr.operands[0]);
      add(*expr.operands[1]);
      return;
    }
    static const char *const comparisons[] = {"<", "<=", ">", ">=", "==", "!="};
    if (expr.kind != Expr::Kind::Binary || !llvm::is_contained(comparisons, expr.text)) {
      diags.report(DiagID::err_sema_requires_form, expr.loc, "another expression");
      return;
    }
    auto lhs = lowerSizeExpr(*expr.operands[0]);
    auto rhs = lowerSizeExpr(*expr.operands[1]);
    if (lhs && rhs)
      kernel.requirements.push_back(
          ir::Requirement{std::move(*lhs), std::move(*rhs), expr.text, expr.loc});
  };
  add(*spec.requirements);
}

} // namespace tkc::lower
