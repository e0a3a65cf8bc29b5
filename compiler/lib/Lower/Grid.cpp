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
    return ir::LoopBound{task->name, *step, /*perRow=*/false, std::nullopt};
  }
  return std::nullopt;
}

std::optional<ir::LoopBound> Lowering::parseRowEnd(const Expr &expr) const {
  const Expr *row = plusOne(expr);
  if (!row || row->kind != Expr::Kind::Call || row->text != "row" || row->operands.size() != 1)
    return std::nullopt;
  const Expr &var = *row->operands[0];
  const ir::IterVar *task = var.kind == Expr::Kind::Name ? findTask(var.text) : nullptr;
  if (!task) {
    diags.report(DiagID::err_sema_loop_stop_row, var.loc,
                 var.kind == Expr::Kind::Name ? var.text : std::string("an expression"));
    return ir::LoopBound{};
  }
  return ir::LoopBound{var.text, task->step, /*perRow=*/true, std::nullopt};
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
      auto end = parseTaskEnd(*size.operands[1]);
      if (!end)
        end = parseRowEnd(*size.operands[1]);
      if (end) {
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
  term(*chosen, 1);
  if (!ok || !row) {
    diags.report(DiagID::err_sema_loop_start_form, chosen->loc, what, "another expression");
    return;
  }
  const std::string &stop = kernel.loopBound.stopVar;
  if (stop.empty() || !kernel.loopBound.perRow || row->text != stop) {
    diags.report(DiagID::err_sema_loop_start_stop, row->loc, what, row->text,
                 stop.empty() ? std::string("runs over its whole size")
                              : "stops at the rows of '" + stop + "'" +
                                    (kernel.loopBound.perRow ? "" : " as a whole"));
    return;
  }
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

} // namespace tkc::lower
