//===- LauncherPrinter.cpp - Host launchers and their checks ---------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Each kernel's launcher takes device pointers, the launch sizes, the spec's
// scalars and a stream, checks them (extents, alignment, row pitches, outputs
// that overlap nothing, scalars, index expressions; then, asking CUDA, that no
// earlier error is pending and that the memory is the device's) and returns a
// tkc::runtime::Status instead of launching a shape the kernel cannot do. A
// problem whose outputs are all empty returns success before any CUDA call; a
// size of 0 that would leave an output non-empty but unwritten is refused.
// Where the spec selects parameters at launch, a choosing launcher calls one
// of the kernels' launchers by the sizes.
//
//===----------------------------------------------------------------------===//
#include "KernelPrinter.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace tkc::emit {

namespace {
/// `(a && b)` as `a && b`; `(a) && (b)` unchanged.
std::string withoutOuterParens(const std::string &text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return text;
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0)
      return text; // the first parenthesis closes before the end
  }
  return text.substr(1, text.size() - 2);
}

/// C++ for an index expression in the launcher: sizes are the launcher's arguments, grid
/// indices at their last value.
std::string hostIndex(const ir::IndexExpr &e) {
  return e.render([](const ir::IndexExpr &leaf) {
    if (leaf.kind == ir::IndexExpr::Kind::Size)
      return leaf.name;
    return fmt::format("(globals.{}_count - 1)", leaf.name);
  });
}

bool isTma(ir::GlobalRole role) {
  return role == ir::GlobalRole::TmaLoad || role == ir::GlobalRole::TmaStore;
}

/// The launcher's local that holds a global's bytes (a tkc::runtime::Span).
std::string spanOf(const ir::Global &global) { return "tkc_span_" + global.name; }

/// Whether some size may leave the global without elements.
bool canBeEmpty(const ir::Global &global) {
  return llvm::any_of(global.dims,
                      [](const ir::Size &d) { return !d.constant || *d.constant <= 0; });
}

bool hasDim(const ir::Global &global, const std::string &size) {
  return llvm::any_of(global.dims,
                      [&](const ir::Size &d) { return !d.constant && d.symbol == size; });
}

/// Calls f(coords, global) for every tile access of the kernel that may index with
/// expressions: the producer's loads, then setup's and finish's loads, stores and adds.
template <class F> void forEachAccess(const ir::Kernel &k, F f) {
  for (const ir::Load &load : k.loads)
    f(load.coords, load.global);
  for (const auto *ops : {&k.program.setup, &k.program.finish})
    for (const ir::ProgramOp &op : *ops)
      if (op.kind == ir::ProgramOp::Kind::LoadTile || op.kind == ir::ProgramOp::Kind::StoreTile ||
          op.kind == ir::ProgramOp::Kind::StoreRows || op.kind == ir::ProgramOp::Kind::AddGlobal)
        f(op.coords, op.global);
}

/// Adds the sizes that divide on their own somewhere in `e` (`H / H_kv`: H_kv), which the
/// division checks refuse below 1.
void collectDivisors(const ir::IndexExpr &e, llvm::StringSet<> &divisors) {
  for (const ir::IndexExpr &o : e.operands)
    collectDivisors(o, divisors);
  if (e.kind == ir::IndexExpr::Kind::Div && e.operands[1].kind == ir::IndexExpr::Kind::Size)
    divisors.insert(e.operands[1].name);
}
} // namespace

std::string KernelPrinter::launcherParams() const {
  llvm::SmallVector<std::string, 12> params;
  for (size_t g = 0; g < k.globals.size(); ++g) {
    const ir::Global &global = k.globals[g];
    bool output = ir::writesGlobal(k, static_cast<unsigned>(g));
    params.push_back(fmt::format("{}{} *{}", output ? "" : "const ", ir::cudaTypeName(global.dtype),
                                 global.name));
  }
  for (const std::string &size : ir::launchSizeSymbols(k))
    params.push_back("long long " + size);
  // Defaults only in the declaration, and only when every scalar has one
  // (a default may not precede a parameter without one).
  bool defaults = withDefaults && llvm::all_of(k.scalars, [](const ir::Scalar &scalar) {
                    return scalar.defaultValue.has_value();
                  });
  for (const ir::Scalar &scalar : k.scalars)
    params.push_back(
        defaults ? fmt::format("float {} = {}", scalar.name, floatLiteral(*scalar.defaultValue))
                 : "float " + scalar.name);
  return llvm::join(params, ", ");
}

std::string KernelPrinter::launcherSignature(bool withDefault, const std::string &name) const {
  withDefaults = withDefault;
  return fmt::format("tkc::runtime::Status {}({}, cudaStream_t stream{})", name, launcherParams(),
                     withDefault ? " = 0" : "");
}

void KernelPrinter::printLauncherDeclaration() {
  w.comment(describe(/*launcher=*/true));
  w.line(launcherSignature(/*withDefault=*/true, publicName()) + ";");
}

void KernelPrinter::printChoosingLauncher(llvm::ArrayRef<const KernelPrinter *> members) {
  const ir::Entry &entry = *k.entry;
  withDefaults = false;
  std::string params = launcherParams();
  std::vector<std::string> sizes = ir::launchSizeSymbols(k);
  std::vector<std::string> read;
  for (const KernelPrinter *member : members) {
    // checkEntries made sure, before anything was emitted.
    TKC_INTERNAL_ASSERT(member->launcherParams() == params,
                        "the kernels behind " + entry.name + " take different arguments");
    for (const std::string &size : member->k.entry->sizes) {
      TKC_INTERNAL_ASSERT(llvm::is_contained(sizes, size),
                          entry.name + " reads a size it does not take");
      if (!llvm::is_contained(read, size))
        read.push_back(size);
    }
  }
  llvm::SmallVector<std::string, 12> args;
  for (const ir::Global &global : k.globals)
    args.push_back(global.name);
  for (const std::string &size : sizes)
    args.push_back(size);
  for (const ir::Scalar &scalar : k.scalars)
    args.push_back(scalar.name);
  args.push_back("stream");
  std::string call = "(" + llvm::join(args, ", ") + ")";
  auto fn = w.scope(launcherSignature(/*withDefault=*/false, entry.name));
  w.comment(fmt::format("Chosen at each call from the sizes ({}); each kernel checks the "
                        "arguments itself, the sizes read here first.",
                        entry.written));
  w.linef("constexpr const char *kName = \"{}\";", entry.name);
  w.line("tkc::runtime::Status status;");
  for (const std::string &size : read) {
    w.linef("if (!(status = tkc::runtime::checkExtent({}, \"{}\", 0, 2147483647)))", size,
            ir::specSpelling(size));
    w.line("  return tkc::runtime::Status::error(std::string(kName) + \": \" + status.message);");
  }
  for (size_t m = 0; m + 1 < members.size(); ++m) {
    w.linef("if ({})", withoutOuterParens(members[m]->k.entry->condition));
    w.linef("  return {}{};", members[m]->k.name, call);
  }
  w.linef("return {}{};", members.back()->k.name, call);
}

void KernelPrinter::printCheck(const std::string &call) {
  w.linef("if (!(status = {}))", call);
  w.line("  return failed(status);");
}

void KernelPrinter::printGlobalInit(unsigned g) {
  const ir::Global &global = k.globals[g];
  ir::GlobalRole role = ir::globalRole(k, g);
  bool isConst = role != ir::GlobalRole::TmaStore;
  switch (role) {
  case ir::GlobalRole::TmaLoad:
  case ir::GlobalRole::TmaStore:
    if (storedByThreads(g))
      w.linef("globals.{} = {};", global.name, glValue(global, isConst));
    else
      w.linef("globals.{} = kittens::make_tile_map<{}::{}>({});", global.name, structName,
              tileOf(g), glValue(global, isConst));
    return;
  case ir::GlobalRole::Offsets:
    w.linef("globals.{0} = {0};", global.name);
    return;
  case ir::GlobalRole::AddColumn:
  case ir::GlobalRole::AddTile:
    w.linef("globals.{} = {};", global.name, glValue(global, isConst));
    return;
  case ir::GlobalRole::Rows:
  case ir::GlobalRole::Read:
    w.linef("globals.{0} = {0};", global.name);
    return;
  case ir::GlobalRole::Unused:
    return;
  }
}

void KernelPrinter::printLauncher() {
  auto fn = w.scope(launcherSignature(/*withDefault=*/false, k.name));
  w.linef("constexpr const char *kName = \"{}\";", publicName());
  w.line("auto failed = [&](const tkc::runtime::Status &status) {");
  w.line("  return tkc::runtime::Status::error(std::string(kName) + \": \" + status.message);");
  w.line("};");
  w.line("tkc::runtime::Status status;");
  const std::vector<std::string> sizes = ir::launchSizeSymbols(k);
  w.comment("Sizes: 0 or more, and small enough for 32-bit tile counts.");
  for (const std::string &size : sizes)
    printCheck(fmt::format("tkc::runtime::checkExtent({}, \"{}\", 0, 2147483647)", size,
                           ir::specSpelling(size)));
  w.comment("Each global's bytes, contiguous and row-major. One without elements is neither read "
            "nor written: its pointer is not checked and may be null.");
  llvm::SmallVector<std::string, 8> spans;
  llvm::SmallVector<unsigned, 2> outputs;
  for (size_t g = 0; g < k.globals.size(); ++g) {
    const ir::Global &global = k.globals[g];
    bool output = ir::writesGlobal(k, static_cast<unsigned>(g));
    if (output)
      outputs.push_back(static_cast<unsigned>(g));
    llvm::SmallVector<std::string, 4> dims;
    for (const ir::Size &d : global.dims)
      dims.push_back(d.str());
    w.linef(
        "const tkc::runtime::Span {}{{\"{}\", {}, tkc::runtime::elementCount({{{}}}), {}, {}}};",
        spanOf(global), ir::specSpelling(global.name), global.name, llvm::join(dims, ", "),
        ir::dtypeBytes(global.dtype), output ? "true" : "false");
    spans.push_back(spanOf(global));
  }
  w.comment("Pointers: TMA needs 16-byte aligned tensors with 16-byte aligned rows.");
  for (size_t g = 0; g < k.globals.size(); ++g) {
    const ir::Global &global = k.globals[g];
    bool tma = isTma(ir::globalRole(k, static_cast<unsigned>(g)));
    std::string guard = canBeEmpty(global) ? spanOf(global) + ".elements != 0 && " : "";
    auto check = [&](const std::string &call) {
      w.linef("if ({}!(status = {}))", guard, call);
      w.line("  return failed(status);");
    };
    check(fmt::format("tkc::runtime::checkPointer({}, \"{}\", {})", global.name,
                      ir::specSpelling(global.name), tma ? 16 : ir::dtypeBytes(global.dtype)));
    if (tma && global.dims.size() >= 2)
      check(fmt::format("tkc::runtime::checkRowBytes({}, {}, \"{}\")", global.dims.back().str(),
                        ir::dtypeBytes(global.dtype), ir::specSpelling(global.name)));
  }
  if (!outputs.empty() && spans.size() > 1) {
    w.comment("An output shares no byte with another global.");
    printCheck("tkc::runtime::checkDisjoint({" + llvm::join(spans, ", ") + "})");
  }
  for (const ir::Scalar &scalar : k.scalars) {
    w.comment(fmt::format("'{}' must be finite (x - x is 0 only for finite x).", scalar.name));
    w.linef("if (!({0} - {0} == 0.0f))", scalar.name);
    w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": {} must be finite, "
            "got \" + std::to_string({}));",
            scalar.name, scalar.name);
    for (const ir::Scalar::Check &check : scalar.checks) {
      std::string bound = floatLiteral(check.bound);
      w.linef("if (!({} {} {}))", scalar.name, check.op, bound);
      w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": {} must be {} {}, "
              "got \" + std::to_string({}));",
              scalar.name, check.op, fmt::format("{}", check.bound), scalar.name);
    }
  }
  if (!k.requirements.empty())
    w.comment("The spec's 'requires': relations of the sizes this kernel is written for.");
  for (const ir::Requirement &r : k.requirements) {
    auto cpp = [](const ir::IndexExpr &e) {
      return e.render([](const ir::IndexExpr &leaf) { return "(long long)" + leaf.name; });
    };
    llvm::SmallVector<std::string, 4> named, got;
    for (const ir::IndexExpr *side : {&r.lhs, &r.rhs})
      ir::walk(*side, [&](const ir::IndexExpr &leaf) {
        if (leaf.kind == ir::IndexExpr::Kind::Size && !llvm::is_contained(named, leaf.name))
          named.push_back(leaf.name);
      });
    for (const std::string &size : named)
      got.push_back(fmt::format("\"{} = \" + std::to_string({})", ir::specSpelling(size), size));
    w.linef("if (!({} {} {}))", cpp(r.lhs), r.op, cpp(r.rhs));
    w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": this kernel requires "
            "{}{}\"{});",
            ir::specSpelling(r.str()), got.empty() ? "" : "; got ",
            got.empty() ? "" : " + " + llvm::join(got, " + \", \" + "));
  }
  // Divisions of sizes in index expressions read nothing but sizes: checked before the
  // empty-problem return, like the other shape relations (printIndexChecks skips them then).
  llvm::StringSet<> divisors;
  forEachAccess(k, [&](const std::vector<ir::Coord> &coords, unsigned global) {
    for (const ir::Coord &coord : coords)
      if (coord.expr) {
        printDivisionChecks(*coord.expr, k.globals[global].name);
        collectDivisors(*coord.expr, divisors);
      }
  });
  // Every output empty: success without a launch. A size of 0 that leaves an output with
  // elements is refused: they would not be written.
  bool allCanBeEmpty = !outputs.empty() &&
                       llvm::all_of(outputs, [&](unsigned g) { return canBeEmpty(k.globals[g]); });
  if (allCanBeEmpty) {
    llvm::SmallVector<std::string, 2> empty;
    for (unsigned g : outputs)
      empty.push_back(spanOf(k.globals[g]) + ".elements == 0");
    w.comment("Every output is empty: nothing to compute, nothing launched, no CUDA call made.");
    w.linef("if ({})", llvm::join(empty, " && "));
    w.line("  return tkc::runtime::Status::success();");
  }
  bool refusing = false;
  for (const std::string &size : sizes) {
    const ir::Global *full = nullptr;
    for (unsigned g : outputs)
      if (!full && !hasDim(k.globals[g], size))
        full = &k.globals[g];
    // Empties every output (returned above), or refused below 1 by a division check.
    if (!full || divisors.contains(size))
      continue;
    if (!refusing)
      w.comment("A size of 0 that leaves an output with elements: refused, since this kernel "
                "would not write them.");
    refusing = true;
    w.linef("if ({} == 0)", size);
    if (!k.loop.size.constant && k.loop.size.symbol == size)
      w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": {0} is 0: the loop "
              "over {0} has no stage, and this kernel writes its output only from stages; use "
              "a size of at least 1\");",
              size);
    else
      w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": {} is 0 while the "
              "output {} has elements: this kernel cannot produce that shape; use a size of at "
              "least 1\");",
              size, full->name);
  }
  if (const auto &seq = k.sequences) {
    w.comment(
        fmt::format("The sequences of {} are S - 1: with elements, at least one.", seq->size));
    w.linef("if ({} < 2)", seq->count);
    w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": {0} has {1} = \" + "
            "std::to_string({1}) + \" offsets, which split {2} = \" + std::to_string({2}) + "
            "\" elements into no sequence; pass the number of sequences + 1 offsets, the "
            "first 0 and the last {2}\");",
            ir::specSpelling(k.globals[seq->global].name), seq->count, seq->size);
  }
  w.comment("CUDA: no error pending from earlier work, and every global with elements in "
            "memory of the current device (or managed).");
  printCheck("check_cuda({" + llvm::join(spans, ", ") + "})");
  w.blank();
  w.linef("{}::layout::globals globals;", structName);
  {
    auto attempt = w.scope("try");
    for (size_t g = 0; g < k.globals.size(); ++g)
      printGlobalInit(static_cast<unsigned>(g));
  }
  {
    auto handler = w.scope("catch (const kittens::tma_error &error)");
    w.line("return tkc::runtime::Status::error(std::string(kName) + \": \" + error.what());");
  }
  for (const ir::IterVar &v : k.tasks) {
    if (k.sequences && v.name == k.sequences->task) {
      w.comment(fmt::format("'{}' numbers the tiles of all the sequences together "
                            "(kittens/lcf/sequences.cuh): fewer than {} / {} + {} - 1.",
                            v.name, v.size.str(), v.step, k.sequences->count));
      w.linef("if ({0} / {1} + {2} - 1 > 2147483647)", v.size.str(), v.step, k.sequences->count);
      w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": \" + "
              "std::to_string({0} / {1} + {2} - 1) + \" tiles of {0} are more than one launch "
              "can index\");",
              v.size.str(), v.step, k.sequences->count);
      w.linef("globals.{0}_count = static_cast<int>({1} / {2} + {3} - 1);", v.name, v.size.str(),
              v.step, k.sequences->count);
      continue;
    }
    w.linef("globals.{0}_count = static_cast<int>(({1} + {2} - 1) / {2});", v.name, v.size.str(),
            v.step);
  }
  if (k.plan.taskOrder == ir::TaskOrder::Grouped) // the divisions printTaskDivisors declared
    w.linef("globals.order = kittens::grouped_tiles<{}>(globals.{}_count, globals.{}_count);",
            k.plan.groupRows, k.tasks[0].name, k.tasks[1].name);
  else
    for (const ir::IterVar &v : k.tasks)
      w.linef("globals.{0}_div = kittens::fast_div(globals.{0}_count);", v.name);
  if (const auto &tail = k.loopTail) {
    w.comment(fmt::format("Tiles of {} along {}, then tail tiles of {}: the cover computing "
                          "the least past its end.",
                          k.loop.step, k.loop.size.str(), tail->step));
    w.linef("const tkc::runtime::TailCover tkc_cover = tkc::runtime::coverWithTail({}, {}, {});",
            k.loop.size.str(), k.loop.step, tail->step);
    w.linef("globals.{}_full = static_cast<int>(tkc_cover.full);", k.loop.name);
    w.linef("globals.{}_count = static_cast<int>(tkc_cover.full + tkc_cover.tail);", k.loop.name);
  } else {
    w.linef("globals.{0}_count = static_cast<int>(({1} + {2} - 1) / {2});", k.loop.name,
            k.loop.size.str(), k.loop.step);
  }
  if (k.plan.rowsFromEnd) {
    const std::string &stop = k.loopBound.stopVar;
    const ir::IterVar &task = ir::stopTask(k);
    w.comment(fmt::format("The tasks of '{}' end at its last block of 64 rows; the first starts "
                          "this many blocks before row 0.",
                          stop));
    w.linef("globals.{0}_lead = static_cast<int>((long long)globals.{0}_count * {1} - ({2} + "
            "63) / 64);",
            stop, k.consumerWarpgroups, task.size.str());
  }
  for (const std::string &size : ir::launchSizeSymbols(k))
    w.linef("globals.{0} = static_cast<int>({0});", size);
  for (const ir::Scalar &scalar : k.scalars)
    w.linef("globals.{0} = {0};", scalar.name);
  printIndexChecks();
  std::string tasks;
  for (const ir::IterVar &v : k.tasks)
    tasks += (tasks.empty() ? "" : " * ") + fmt::format("(long long)globals.{}_count", v.name);
  w.linef("const long long tasks = {};", tasks);
  w.line("if (tasks > 2147483647)");
  w.line("  return tkc::runtime::Status::error(std::string(kName) + \": \" + "
         "std::to_string(tasks) + \" output tiles are more than one launch can index\");");
  if (k.wholeTiles) {
    llvm::SmallVector<std::string, 2> whole;
    for (const ir::ColumnBound &b : ir::wholeTileBounds(k)) {
      std::string c = k.loopTail && b.var == k.loop.name
                          ? fmt::format("tkc_cover.full * {} + tkc_cover.tail * {} == {}",
                                        k.loop.step, k.loopTail->step, b.extent.str())
                          : fmt::format("{} % {} == 0", b.extent.str(), b.step);
      if (!llvm::is_contained(whole, c))
        whole.push_back(c);
    }
    w.comment("Every tile lies wholly inside its size: the same kernel without the code for a "
              "partial last tile.");
    w.linef("if ({})", llvm::join(whole, " && "));
    w.linef("  return launch_persistent<{}_kernel>(globals, tasks, stream, kName);",
            k.wholeTiles->name);
  }
  w.linef("return launch_persistent<{}>(globals, tasks, stream, kName);", structName);
}

/// Divisions of sizes must be exact and by at least 1.
void KernelPrinter::printDivisionChecks(const ir::IndexExpr &e, const std::string &global) {
  for (const ir::IndexExpr &o : e.operands)
    printDivisionChecks(o, global);
  if (e.kind != ir::IndexExpr::Kind::Div)
    return;
  // Lowering keeps grid indices out of divisors.
  TKC_INTERNAL_ASSERT(!e.operands[1].usesVar(), "a grid index in a divisor");
  std::string divisor = hostIndex(e.operands[1]);
  std::string text = e.str();
  if (!e.operands[0].usesVar()) {
    std::string dividend = hostIndex(e.operands[0]);
    if (!emittedChecks.insert(dividend + " % " + divisor).second)
      return;
    w.linef("if ({1} < 1 || {0} % {1} != 0)", dividend, divisor);
    w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": {} must be a "
            "positive multiple of {} (it divides in the index '{}' of {}); got \" + "
            "std::to_string({}) + \" and \" + std::to_string({}));",
            e.operands[0].str(), e.operands[1].str(), text, global, dividend, divisor);
  } else {
    // A divisor that is itself an exact division of sizes is already >= 1.
    bool checked =
        e.operands[1].kind == ir::IndexExpr::Kind::Div && !e.operands[1].operands[0].usesVar();
    if (checked || !emittedChecks.insert(divisor + " >= 1").second)
      return;
    w.linef("if ({} < 1)", divisor);
    w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": {} must be at "
            "least 1 (it divides in an index of {}); got \" + std::to_string({}));",
            e.operands[1].str(), global, divisor);
  }
}

/// Every index expression stays inside its dimension (they grow with their grid indices, so
/// the last task decides). Their divisions were checked before the empty-problem return
/// (printLauncher), so printDivisionChecks prints nothing new here.
void KernelPrinter::printIndexChecks() {
  auto check = [&](const std::vector<ir::Coord> &coords, unsigned global) {
    const ir::Global &g = k.globals[global];
    for (size_t d = 0; d < coords.size(); ++d) {
      if (!coords[d].expr)
        continue;
      const ir::IndexExpr &e = *coords[d].expr;
      printDivisionChecks(e, g.name);
      std::string largest = hostIndex(e);
      if (!emittedChecks.insert(largest + " < " + g.dims[d].str()).second)
        continue;
      w.linef("if ({} >= {})", largest, g.dims[d].str());
      w.linef("  return tkc::runtime::Status::error(std::string(kName) + \": index '{}' of {} "
              "reaches \" + std::to_string({}) + \", past dimension {} ({} = \" + "
              "std::to_string({}) + \")\");",
              e.str(), g.name, largest, d + 1, g.dims[d].str(), g.dims[d].str());
    }
  };
  forEachAccess(k, check);
}

} // namespace tkc::emit
