//===- KernelPrinter.cpp - The kernel struct and its names ----------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Each kernel becomes a struct in the shape kittens::lcf expects: tile types,
// the layout (globals, input, scratch and finish blocks, common and consumer
// state), the plan's constants, block_entry, common_setup and the producer.
// Names in the generated code come from the spec (tiles, globals, indices),
// so the output reads like the spec it came from; every kittens name is fully
// qualified.
//
//===----------------------------------------------------------------------===//
#include "KernelPrinter.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>

namespace tkc::emit {

const char *kittensSharedTile(spec::DType dtype) {
  switch (dtype) {
  case spec::DType::BF16:
    return "kittens::st_bf";
  case spec::DType::F16:
    return "kittens::st_hf";
  case spec::DType::F32:
    return "kittens::st_fl";
  case spec::DType::F8E4M3:
    return "kittens::st_fp8e4m3";
  case spec::DType::F8E5M2:
    return "kittens::st_fp8e5m2";
  case spec::DType::I32:
    break; // never a tile (the lowering refuses one)
  }
  return "?";
}

const char *kittensOperandTile(spec::DType dtype) {
  return dtype == spec::DType::F16 ? "kittens::rt_hf" : "kittens::rt_bf";
}

const char *kittensScalar(spec::DType dtype) {
  switch (dtype) {
  case spec::DType::BF16:
    return "kittens::bf16";
  case spec::DType::F16:
    return "kittens::half";
  case spec::DType::F32:
    return "float";
  case spec::DType::I32:
    return "int";
  case spec::DType::F8E4M3:
    return "kittens::fp8e4m3";
  case spec::DType::F8E5M2:
    return "kittens::fp8e5m2";
  }
  return "?";
}

std::string floatLiteral(double value) {
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  std::string text = fmt::format("{}", static_cast<float>(value));
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + "f";
}

std::string kittensCoord(std::vector<std::string> parts) {
  while (parts.size() < 4)
    parts.insert(parts.begin(), "0");
  return "{" + llvm::join(parts, ", ") + "}";
}

KernelPrinter::KernelPrinter(const ir::Kernel &kernel, CudaWriter &w, std::string layoutOf)
    : k(kernel), w(w), structName(kernel.name + "_kernel"), layoutOf(std::move(layoutOf)) {}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

const std::string &KernelPrinter::publicName() const { return k.entry ? k.entry->name : k.name; }

bool KernelPrinter::isChosen() const { return k.entry && k.entry->name != k.name; }

std::string KernelPrinter::describe(bool launcher) const {
  bool choosing = launcher && isChosen();
  std::string text = (launcher ? publicName() : k.name) + ": kernel '" + k.specName + "'";
  llvm::SmallVector<std::string, 4> params;
  for (const auto &[name, value] : k.params)
    if (!launcher || !k.entry || !llvm::is_contained(k.entry->selected, name))
      params.push_back(name + "=" + value);
  if (!params.empty())
    text += " with " + llvm::join(params, ", ");
  if (choosing)
    text += "; " + llvm::join(k.entry->selected, ", ") + " chosen at each call (" +
            k.entry->written + ")";
  return text + ".";
}

std::string KernelPrinter::glType(const ir::Global &g) const {
  if (!g.layout.empty())
    return fmt::format("kittens::gl<{}>", kittensScalar(g.dtype));
  if (g.dims.size() == 1)
    return fmt::format("kittens::gl<{}, 1, 1, 1, -1>", kittensScalar(g.dtype));
  if (g.dims.size() == 3)
    return fmt::format("kittens::gl<{}, 1, -1, -1, -1>", kittensScalar(g.dtype));
  if (g.dims.size() == 4)
    return fmt::format("kittens::gl<{}, -1, -1, -1, -1>", kittensScalar(g.dtype));
  return fmt::format("kittens::gl<{}, 1, 1, -1, -1>", kittensScalar(g.dtype));
}

std::string KernelPrinter::glValue(const ir::Global &g, bool constCast) const {
  std::string ptr =
      constCast ? fmt::format("const_cast<{} *>({})", kittensScalar(g.dtype), g.name) : g.name;
  if (!g.layout.empty()) {
    // Its dims in another order in memory: the view takes each one's stride (the leading
    // dims a view of fewer than four lacks have one element, and any stride).
    std::vector<std::string> dims(4 - g.dims.size(), "1");
    std::vector<std::string> strides(4 - g.dims.size(), "0");
    const std::vector<std::string> given = g.strides([](const ir::Size &s) { return s.str(); });
    for (size_t d = 0; d < g.dims.size(); ++d) {
      dims.push_back(g.dims[d].str());
      strides.push_back(given[d]);
    }
    return fmt::format("{}({}, {}, {}, {}, {})", glType(g), ptr, llvm::join(dims, ", "), strides[2],
                       strides[1], strides[0]);
  }
  if (g.dims.size() == 1)
    return fmt::format("{}({}, 1, 1, 1, {})", glType(g), ptr, g.dims[0].str());
  if (g.dims.size() == 3)
    return fmt::format("{}({}, 1, {}, {}, {})", glType(g), ptr, g.dims[0].str(), g.dims[1].str(),
                       g.dims[2].str());
  if (g.dims.size() == 4)
    return fmt::format("{}({}, {}, {}, {}, {})", glType(g), ptr, g.dims[0].str(), g.dims[1].str(),
                       g.dims[2].str(), g.dims[3].str());
  return fmt::format("{}({}, 1, 1, {}, {})", glType(g), ptr, g.dims[0].str(), g.dims[1].str());
}

std::string KernelPrinter::tileOf(unsigned global) const {
  for (const ir::Load &load : k.loads)
    if (load.global == global)
      return k.stageTiles[load.tile].name + "_tile";
  for (const ir::ProgramOp &op : k.program.setup)
    if (op.kind == ir::ProgramOp::Kind::LoadTile && op.global == global)
      return k.warpgroupTiles[op.tile].name + "_tile";
  for (const ir::ProgramOp &op : k.program.finish)
    if (op.kind == ir::ProgramOp::Kind::StoreTile && op.global == global)
      return stagingType(op);
  for (const ir::ProgramOp &op : k.program.compute)
    if (op.kind == ir::ProgramOp::Kind::StoreTile && op.global == global)
      return k.stagingTiles[op.tile].name + "_tile";
  TKC_INTERNAL_ASSERT(false, "a TMA global without a tile");
  return "";
}

std::string KernelPrinter::stagingType(const ir::ProgramOp &store) const {
  if (store.tile < k.warpgroupTiles.size())
    return k.warpgroupTiles[store.tile].name + "_tile";
  return "result_tile";
}

std::string KernelPrinter::stagingRef(const ir::ProgramOp &store) const {
  if (store.tile < k.warpgroupTiles.size())
    return warpgroupTileRef(store.tile);
  return "args.finish.result";
}

std::string KernelPrinter::warpgroupTileRef(unsigned tile, bool next,
                                            const std::string &warpgroup) const {
  const std::string &name = k.warpgroupTiles[tile].name;
  if (k.plan.setupBuffers != 2)
    return fmt::format("args.scratch.{}[{}]", name, warpgroup);
  return fmt::format("args.scratch.{}[{}][{}]", name,
                     next ? "(args.task_iter + 1) & 1" : "args.task_iter & 1", warpgroup);
}

bool KernelPrinter::needsFinishBlock() const { return k.plan.finishPerWarpgroup; }

int64_t KernelPrinter::partCols() const {
  return k.program.values[k.plan.resultValue].cols / k.plan.resultParts;
}

std::string KernelPrinter::loopIndex() const {
  if (k.alternateLoop)
    return "tkc_" + k.loop.name;
  if (!k.loopBound.start)
    return "args.iter";
  return fmt::format("(args.common.{}_start + args.iter)", k.loop.name);
}

std::string KernelPrinter::deviceIndex(const ir::IndexExpr &e, const std::string &common) const {
  return e.render([&](const ir::IndexExpr &leaf) {
    if (leaf.kind == ir::IndexExpr::Kind::Size)
      return "args.globals." + leaf.name;
    return leaf.name == k.loop.name ? loopIndex() : common + leaf.name;
  });
}

std::string KernelPrinter::coordExpr(const ir::Coord &c, const std::string &common) const {
  if (c.expr)
    return deviceIndex(*c.expr, common);
  if (c.var.empty())
    return "0";
  if (c.var == k.loop.name)
    return loopIndex();
  return common + c.var;
}

std::string KernelPrinter::tileCoord(const std::vector<ir::Coord> &coords) const {
  std::vector<std::string> parts;
  for (const ir::Coord &c : coords)
    parts.push_back(coordExpr(c));
  return kittensCoord(std::move(parts));
}

std::string KernelPrinter::elementCoord(const ir::Load &load) const {
  const ir::StageTile &t = k.stageTiles[load.tile];
  std::vector<std::string> parts;
  for (size_t d = 0; d < load.coords.size(); ++d) {
    const ir::Coord &c = load.coords[d];
    const int dim = ir::spannedTileDim(load, d);
    if (dim < 0)
      parts.push_back(coordExpr(c));
    else if (!c.expr && c.var == k.loop.name && k.loopTail)
      parts.push_back("tkc_element");
    else if (!c.expr && c.var.empty())
      parts.push_back("0");
    else
      parts.push_back(fmt::format("{} * {}", coordExpr(c), dim == 0 ? t.rows : t.cols));
    if (ir::alongSequences(k, k.globals[load.global], d))
      parts.back() = sequenceStart() + " + " + parts.back();
  }
  return kittensCoord(std::move(parts));
}

std::string KernelPrinter::loopTailElement(const std::string &index,
                                           const std::string &cast) const {
  return fmt::format("{3}args.globals.{0}_full * {1} + {3}({4} - args.globals.{0}_full) * {2}",
                     k.loop.name, k.loop.step, k.loopTail->step, cast, index);
}

std::string KernelPrinter::varExpr(const std::string &var) const {
  if (var.empty())
    return "0";
  if (var == k.loop.name)
    return loopIndex();
  return "args.common." + var;
}

std::string KernelPrinter::sizeExpr(const ir::Size &size) const {
  return size.constant ? std::to_string(*size.constant) : "args.globals." + size.symbol;
}

std::string KernelPrinter::extentExpr(const ir::Size &size, const std::string &common) const {
  if (k.sequences && !size.constant && size.symbol == k.sequences->size)
    return common + "tkc_seq_len";
  return sizeExpr(size);
}

std::string KernelPrinter::sequenceStart(const std::string &common) const {
  return common + "tkc_seq_start";
}

bool KernelPrinter::storedByThreads(unsigned g) const {
  if (ir::globalRole(k, g) != ir::GlobalRole::TmaStore)
    return false;
  for (size_t d = 0; d < k.globals[g].dims.size(); ++d)
    if (ir::alongSequences(k, k.globals[g], d))
      return true;
  return false;
}

std::string KernelPrinter::warpgroupElementCoord(const std::vector<ir::Coord> &coords,
                                                 const ir::Global &g, int64_t rows, int64_t cols,
                                                 bool next) const {
  const std::string common = next ? "args.next_common." : "args.common.";
  std::vector<std::string> parts;
  for (size_t d = 0; d < coords.size(); ++d) {
    std::string c = coordExpr(coords[d], common);
    if (d + 2 == coords.size()) {
      c = fmt::format("({} * {} + {}) * {}", c, k.consumerWarpgroups, rowsBlock(next), rows);
      if (ir::alongSequences(k, g, d))
        c = sequenceStart(common) + " + " + c;
    } else if (d + 1 == coords.size() && c != "0") {
      c = fmt::format("{} * {}", c, cols);
    }
    parts.push_back(c);
  }
  return kittensCoord(std::move(parts));
}

std::string KernelPrinter::columnLimit(const ir::ColumnBound &bound) const {
  if (tailOf && bound.var == k.loop.name)
    return fmt::format("static_cast<int>({} - tkc_element)", extentExpr(bound.extent));
  return fmt::format("static_cast<int>({} - (long long){} * {})", extentExpr(bound.extent),
                     varExpr(bound.var), bound.step);
}

std::string KernelPrinter::minusLeadBlocks() const {
  if (!k.plan.rowsFromEnd)
    return "";
  return fmt::format(" - args.globals.{}_lead", k.loopBound.stopVar);
}

std::string KernelPrinter::minusLeadRows() const {
  return k.plan.rowsFromEnd ? minusLeadBlocks() + " * 64" : "";
}

std::string KernelPrinter::deviceShift(const std::vector<ir::SizeTerm> &shift) const {
  return ir::sizeTermsText(
      shift, [](const std::string &size) { return "(long long)args.globals." + size; });
}

std::string KernelPrinter::stopShift() const {
  std::string terms = deviceShift(k.loopBound.shift);
  if (!k.loopBound.stopScalar.empty())
    terms += fmt::format(" + (long long)ceil((double)args.globals.{}) - 1", k.loopBound.stopScalar);
  return terms;
}

std::string KernelPrinter::loopStartElement(const std::string &rowOffset) const {
  const ir::LoopBound::Start &start = *k.loopBound.start;
  return fmt::format("(double)((long long)args.common.{} * {}{}{}{}) - {} {} {}.0", start.var,
                     start.step, rowOffset, start.var == k.loopBound.stopVar ? minusLeadRows() : "",
                     deviceShift(start.shift),
                     start.scalar.empty() ? fmt::format("{}.0", start.constant)
                                          : "(double)args.globals." + start.scalar,
                     start.offset < 0 ? '-' : '+', std::abs(start.offset));
}

std::string KernelPrinter::rowsBlock(bool next) const {
  if (!k.plan.rotateRowBlocks)
    return "tkc_wg";
  return next ? "tkc_next_block" : "tkc_block";
}

std::string KernelPrinter::stageRowBlock(const ir::Parts &parts) {
  return parts.cols > 1 ? fmt::format("tkc_wg / {}", parts.cols) : "tkc_wg";
}

std::string KernelPrinter::warpgroupCoord(const std::vector<ir::Coord> &coords, bool next,
                                          const std::optional<ir::Parts> &stageRows,
                                          bool perWarp) const {
  std::vector<std::string> parts;
  for (size_t d = 0; d < coords.size(); ++d) {
    std::string c = coordExpr(coords[d], next ? "args.next_common." : "args.common.");
    if (stageRows) {
      // This warpgroup's block of a value whose rows are the stage's (RegValue::stageRows).
      if (d + 2 == coords.size() && stageRows->rows > 1)
        c = fmt::format("{} * {} + {}", c, stageRows->rows, stageRowBlock(*stageRows));
      else if (d + 1 == coords.size() && stageRows->cols > 1)
        c = fmt::format("{} * {} + tkc_wg % {}", c, stageRows->cols, stageRows->cols);
    } else if (d + 2 == coords.size()) {
      c = fmt::format("{} * {} + {}{}", c, k.consumerWarpgroups, rowsBlock(next),
                      coords[d].var == k.loopBound.stopVar ? minusLeadBlocks() : "");
    }
    if (perWarp && d + 2 == coords.size())
      c = fmt::format("({}) * {} + kittens::warpgroup::warpid()", c, kWarpgroupWarps);
    parts.push_back(c);
  }
  return kittensCoord(std::move(parts));
}

//===----------------------------------------------------------------------===//
// The struct
//===----------------------------------------------------------------------===//

void KernelPrinter::printStruct() {
  const ir::Program &prog = k.program;
  w.comment(describe());
  if (!layoutOf.empty())
    w.comment("Without the code for a partial last tile: the launcher runs it where every tile "
              "lies wholly inside its size.");
  auto kernelScope = w.scope("struct " + structName, ";");
  for (const ir::StageTile &t : k.stageTiles)
    w.linef("using {}_tile = {}<{}, {}>;", t.name, kittensSharedTile(t.dtype), t.rows, t.cols);
  for (const ir::WarpgroupTile &t : k.warpgroupTiles)
    w.linef("using {}_tile = {}<{}, {}>; // one per consumer warpgroup", t.name,
            kittensSharedTile(t.dtype), t.rows, t.cols);
  for (const ir::StagingTile &t : k.stagingTiles) {
    // Each warp stages its own rows (printStageStore). A float tile takes the 64-byte
    // swizzle: its TMA copies then move 64 bytes a request (two sectors; under 32 bytes, one),
    // and kittens' store orders each half-warp's pairs so that they fill the banks once.
    w.linef("using {}_tile = {}<{}, {}{}>; // one warp's rows of a store every stage", t.name,
            kittensSharedTile(t.dtype), kWarpRows, t.cols,
            t.dtype == spec::DType::F32 ? ", 64" : "");
  }
  for (const ir::OperandStaging &t : k.operandStagings)
    w.linef("using {}_tile = {}<64, {}>; // a register operand staged for a product", t.name,
            kittensSharedTile(t.dtype), t.cols);
  for (const ir::ProgramOp &op : prog.finish)
    if (op.kind == ir::ProgramOp::Kind::StoreTile && op.tile >= k.warpgroupTiles.size()) {
      if (k.plan.resultParts && op.expr.isValue(k.plan.resultValue)) {
        w.comment(fmt::format("The result in {} column parts (split-finish): each staged and "
                              "stored on its own through a staging tile of one part.",
                              k.plan.resultParts));
        w.linef("using result_tile = {}<64, {}>;", kittensSharedTile(k.globals[op.global].dtype),
                partCols());
      } else {
        w.linef("using result_tile = {}<64, {}>;", kittensSharedTile(k.globals[op.global].dtype),
                op.cols);
      }
      break;
    }
  w.comment("Each consumer warp holds 16 rows of every register value.");
  w.linef("using row_vector = kittens::rt_fl<{0}, {0}>::col_vec;", kWarpRows);
  if (k.plan.resultParts)
    w.linef("using accumulator = kittens::rt_fl<{}, {}>; // one part of '{}'", kWarpRows,
            partCols(), prog.values[k.plan.resultValue].name);
  w.blank();
  if (!layoutOf.empty())
    w.linef("using layout = {}::layout; // the same globals and shared memory", layoutOf);
  else
    printLayout();
  printConstants();
  w.blank();
  if (k.plan.prefetchDescriptors) {
    printBlockEntry();
    w.blank();
  }
  printCommonSetup();
  w.blank();
  printProducer();
  w.blank();
  if (k.plan.resultParts) {
    printStorePart();
    w.blank();
  }
  printConsumer();
}

void KernelPrinter::printGlobalMember(unsigned g) {
  const ir::Global &global = k.globals[g];
  switch (ir::globalRole(k, g)) {
  case ir::GlobalRole::TmaLoad:
  case ir::GlobalRole::TmaStore:
    if (storedByThreads(g))
      w.linef("{} {}; // stored by the warpgroups' threads, up to each sequence's end",
              glType(global), global.name);
    else
      w.linef("kittens::tile_map<{}> {};", tileOf(g), global.name);
    return;
  case ir::GlobalRole::Offsets:
    w.linef("const int *{}; // where the sequences of {} start and end", global.name,
            k.sequences->size);
    return;
  case ir::GlobalRole::AddColumn:
  case ir::GlobalRole::AddTile:
    w.linef("{} {};", glType(global), global.name);
    return;
  case ir::GlobalRole::Rows:
    w.linef("{} *{}; // one value per row", kittensScalar(global.dtype), global.name);
    return;
  case ir::GlobalRole::Read: {
    bool perRow = false;
    ir::forEachOp(k.program, [&](ir::Body, const ir::ProgramOp &op) {
      perRow =
          perRow || (op.kind == ir::ProgramOp::Kind::LoadRows && &k.globals[op.global] == &global);
    });
    const bool perColumn = llvm::any_of(
        k.columnReads, [&](const ir::ColumnRead &r) { return &k.globals[r.global] == &global; });
    w.linef("const {} *{}; // read as numbers, {}", kittensScalar(global.dtype), global.name,
            perRow      ? "one value per row"
            : perColumn ? "one value per column of each stage"
                        : "once per task");
    return;
  }
  case ir::GlobalRole::Unused:
    w.linef("// '{}' is declared but this instantiation does not use it", global.name);
    return;
  }
}

void KernelPrinter::printTaskDivisors() {
  if (k.plan.taskOrder == ir::TaskOrder::Grouped)
    w.linef("kittens::grouped_tiles<{}> order; // each task's tile", k.plan.groupRows);
  else
    for (const ir::IterVar &v : k.tasks)
      w.linef("kittens::fast_div {0}_div; // divides by {0}_count", v.name);
}

void KernelPrinter::printLayout() {
  const ir::Plan &p = k.plan;
  const ir::Program &prog = k.program;
  auto layout = w.scope("struct layout", ";");
  {
    auto globals = w.scope("struct globals", ";");
    for (size_t g = 0; g < k.globals.size(); ++g)
      printGlobalMember(static_cast<unsigned>(g));
    for (const std::string &size : ir::launchSizeSymbols(k))
      w.linef("int {};", size);
    for (const ir::Scalar &s : k.scalars)
      w.linef("float {};", s.name);
    for (const ir::IterVar &v : k.tasks)
      w.linef("int {}_count; // tasks along {}", v.name, v.size.str());
    printTaskDivisors();
    if (p.rowsFromEnd)
      w.linef("int {0}_lead; // 64-row blocks the first task of {0} starts before row 0",
              k.loopBound.stopVar);
    w.linef("int {}_count; // stages of a task over all of {} ({} / {})", k.loop.name,
            k.loop.size.str(), k.loop.size.str(), k.loop.step);
    if (const auto &tail = k.loopTail)
      w.linef("int {0}_full; // stages of {1} first; the rest of {0}_count are of {2}", k.loop.name,
              k.loop.step, tail->step);
  }
  {
    auto input = w.scope("struct input_block", ";");
    for (const ir::Load &load : k.loads)
      w.linef("{0}_tile {0};", k.stageTiles[load.tile].name);
    for (size_t r = 0; r < k.columnReads.size(); ++r)
      w.linef("alignas(8) {} tkc_cols{}[{}]; // '{}' at the stage's columns (the producer's "
              "copy; read in pairs)",
              kittensScalar(k.globals[k.columnReads[r].global].dtype), r, k.loop.step,
              k.columnReads[r].text);
  }
  if (!k.warpgroupTiles.empty() || !k.stagingTiles.empty() || !k.operandStagings.empty()) {
    auto scratch = w.scope("struct scratch_block", ";");
    for (const ir::WarpgroupTile &t : k.warpgroupTiles) {
      if (p.setupBuffers == 2)
        w.linef("{0}_tile {0}[2][{1}]; // this task's and the next task's, alternating", t.name,
                k.consumerWarpgroups);
      else
        w.linef("{0}_tile {0}[{1}];", t.name, k.consumerWarpgroups);
    }
    for (const ir::StagingTile &t : k.stagingTiles)
      w.linef("{0}_tile {0}[{1}]; // one per consumer warp", t.name,
              k.consumerWarpgroups * kWarpgroupWarps);
    for (const ir::OperandStaging &t : k.operandStagings)
      w.linef("{0}_tile {0}[{1}][{2}]; // one per stage-ring slot and warpgroup", t.name, p.stages,
              k.consumerWarpgroups);
  }
  if (needsFinishBlock()) {
    w.comment("One per consumer warpgroup (FINISH_PER_WARPGROUP).");
    w.line("struct finish_block { result_tile result; };");
  }
  {
    auto common = w.scope("struct common_state", ";");
    for (const ir::IterVar &v : k.tasks)
      w.linef("int {};", v.name);
    if (const auto &seq = k.sequences) {
      w.linef("int tkc_seq_start; // the first element of the task's sequence along {}", seq->size);
      w.linef("int tkc_seq_len;   // its length: {} within the task", seq->size);
    }
    if (k.loopBound.start)
      w.linef("int {}_start; // the task's first tile of {}", k.loop.name, k.loop.size.str());
  }
  {
    auto state = w.scope("struct consumer_state", ";");
    for (size_t i = 0; i < prog.values.size(); ++i) {
      const ir::RegValue &v = prog.values[i];
      if (!v.state)
        continue;
      if (p.resultParts && i == p.resultValue)
        w.linef("accumulator {}[{}];", v.name, p.resultParts);
      else if (v.shape == ir::RegValue::Shape::RowVector)
        w.linef("row_vector {};", v.name);
      else
        w.linef("kittens::rt_fl<{}, {}> {};", kWarpRows, v.cols, v.name);
    }
    for (size_t r = 0; r < k.taskReads.size(); ++r)
      w.linef("float tkc_read{}; // {}", r, k.taskReads[r].text);
  }
}

void KernelPrinter::printConstants() {
  const ir::Plan &p = k.plan;
  w.linef("static constexpr int INPUT_STAGES = {};", p.stages);
  w.linef("static constexpr int NUM_CONSUMER_WARPGROUPS = {};", k.consumerWarpgroups);
  w.linef("static constexpr int PRODUCER_ARRIVALS = {};", p.producerArrivals);
  w.linef("static constexpr int CONSUMER_ARRIVALS = {};", p.consumerArrivals);
  w.linef("static constexpr int PRODUCER_REGISTERS = {};", p.producerRegisters);
  w.linef("static constexpr int CONSUMER_REGISTERS = {};", p.consumerRegisters);
  if (p.finishPerWarpgroup) {
    w.comment("Each consumer warpgroup stages its rows in a finish block of its own, so that a "
              "warpgroup whose block lies past the stages need not wait for the others.");
    w.line("static constexpr bool FINISH_PER_WARPGROUP = true;");
  }
  switch (p.ringStart) {
  case ir::RingStart::First:
    break;
  case ir::RingStart::Continue:
    w.comment("Tasks differ in length: each starts its stages where the previous one stopped, "
              "so that its first load takes the slot released longest ago.");
    w.line("static constexpr int RING_START = kittens::lcf::RING_CONTINUE;");
    break;
  case ir::RingStart::SkipLast:
    w.comment("Tasks of one length start at stage slot 0, unless the previous one just ended "
              "there; then at slot 1, released longest ago.");
    w.line("static constexpr int RING_START = kittens::lcf::RING_SKIP_LAST;");
    break;
  }
  if (p.splitStages) {
    w.comment("Each task's last stages whose halves are computed apart (split-finish): the "
              "left half's store leaves while the right half's products run.");
    w.linef("static constexpr int SPLIT_STAGES = {};", p.splitStages);
  }
  if (p.earlyStages) {
    w.comment("Task 0's first stage loaded by thread 0 as soon as the semaphores exist, before "
              "the block-wide barrier.");
    w.linef("static constexpr int EARLY_STAGES = {};", p.earlyStages);
  }
}

void KernelPrinter::printBlockEntry() {
  w.comment("At the block's entry: the TMA descriptors into the descriptor cache, so that the "
            "first copies and stores do not wait for them.");
  auto fn = w.scope("__device__ static void block_entry(const layout::globals &g)");
  for (unsigned g = 0; g < k.globals.size(); ++g) {
    ir::GlobalRole role = ir::globalRole(k, g);
    if ((role == ir::GlobalRole::TmaLoad || role == ir::GlobalRole::TmaStore) &&
        !storedByThreads(g))
      w.linef("kittens::tma::prefetch(g.{});", k.globals[g].name);
  }
}

void KernelPrinter::printStaticAsserts() {
  const ir::Plan &p = k.plan;
  if (k.columnReads.empty()) {
    w.linef("static_assert(sizeof({}::layout::input_block) == {},", structName, p.expectBytes);
    w.linef("              \"{}: one stage must hold exactly the {} bytes its TMA loads "
            "deliver\");",
            k.name, p.expectBytes);
  } else {
    w.linef("static_assert(sizeof({}::layout::input_block) == {},", structName, p.stageBytes);
    w.linef("              \"{}: one stage must hold the {} bytes its TMA loads deliver and "
            "the columns the producer copies, {} in all\");",
            k.name, p.expectBytes, p.stageBytes);
  }
  w.linef("static_assert(kittens::lcf::traits<{}>::SAFE_STAGES == {},", structName, p.safeStages);
  w.linef("              \"{}: tkc planned {} stages before the finish block\");", k.name,
          p.safeStages);
  w.linef("static_assert(kittens::lcf::traits<{}>::DYNAMIC_SHARED_BYTES == {},", structName,
          p.dynamicSharedBytes);
  w.linef("              \"{}: tkc planned {} bytes of dynamic shared memory\");", k.name,
          p.dynamicSharedBytes);
}

void KernelPrinter::printWholeTiles() {
  if (!k.wholeTiles)
    return;
  KernelPrinter whole(*k.wholeTiles, w, structName);
  w.blank();
  whole.printStruct();
  w.blank();
  whole.printStaticAsserts();
}

//===----------------------------------------------------------------------===//
// common_setup: the task of each round
//===----------------------------------------------------------------------===//

void KernelPrinter::printCommonSetup() {
  auto fn = w.scope(fmt::format(
      "__device__ static void common_setup(kittens::lcf::common_args<{}> &args)", structName));
  if (k.sequences) {
    printSequencedTask();
    return;
  }
  std::string total;
  for (const ir::IterVar &v : k.tasks)
    total += (total.empty() ? "" : " * ") + fmt::format("args.globals.{}_count", v.name);
  switch (k.plan.taskOrder) {
  case ir::TaskOrder::Grouped:
    w.line("const int task = args.task_iter * gridDim.x + blockIdx.x;");
    w.linef("if (task >= {}) {{", total);
    w.line("  args.num_iters = -1; // no task left for this block");
    w.line("  return;");
    w.line("}");
    printTileOfTask();
    w.linef("args.num_iters = args.globals.{}_count;", k.loop.name);
    printWholeLoopStart();
    return;
  case ir::TaskOrder::Rotated:
    w.comment(fmt::format("Each round goes to the blocks shifted by one: were the count of "
                          "'{0}' to divide the grid, round-robin would give a block the same "
                          "'{0}' every round, and the blocks drawing a head's partial last "
                          "task would idle at the end.",
                          k.tasks.back().name));
    printRotatedTask(total, "The last task index varies fastest: neighbouring blocks share "
                            "their loop's operands in L2.");
    if (!k.loopBound.stopVar.empty()) {
      printStoppedLoop();
      return;
    }
    w.linef("args.num_iters = args.globals.{}_count;", k.loop.name);
    printWholeLoopStart();
    return;
  case ir::TaskOrder::ByLength:
    printTasksByLength();
    return;
  }
}

/// A loop over its whole size that starts at the task's rows (LoopBound::Start): the tiles
/// before the start are not the task's; its last tile always is.
void KernelPrinter::printWholeLoopStart() {
  const auto &start = k.loopBound.start;
  if (!start || !k.loopBound.stopVar.empty())
    return;
  w.comment(fmt::format("The task's rows need the elements of {} from row({}){} on (its "
                        "first row's, the earliest): the loop begins at that element's tile, "
                        "and keeps its last tile at least.",
                        k.loop.size.str(), start->var, start->str()));
  w.linef("const double first = {};", loopStartElement(""));
  w.linef("const int tkc_first_tile = first > 0 ? static_cast<int>((long long)first / {}) : 0;",
          k.loop.step);
  w.linef("args.common.{}_start = tkc_first_tile < args.num_iters ? tkc_first_tile : "
          "args.num_iters - 1;",
          k.loop.name);
  w.linef("args.num_iters -= args.common.{}_start;", k.loop.name);
}

/// The task of this round in rotated order (kittens::rotated_task) out of `total`, its indices
/// in `args.common` (the last varying fastest); none left: num_iters = -1.
void KernelPrinter::printRotatedTask(const std::string &total, const std::string &order) {
  w.line("const int task = kittens::rotated_task(args.task_iter, gridDim.x, blockIdx.x);");
  w.linef("if (task >= {}) {{", total);
  w.line("  args.num_iters = -1; // no task left for this block");
  w.line("  return;");
  w.line("}");
  w.line("int rest = task;");
  if (!order.empty())
    w.comment(order);
  printTileOfTask();
}

/// Tasks along sequences (ir::Sequences): rotated rounds; the task index over the sequences'
/// size numbers every sequence's tiles together, and becomes the tile's index in its own.
void KernelPrinter::printSequencedTask() {
  const ir::Sequences &seq = *k.sequences;
  std::string total;
  for (const ir::IterVar &v : k.tasks)
    total += (total.empty() ? "" : " * ") + fmt::format("args.globals.{}_count", v.name);
  w.comment("Each round goes to the blocks shifted by one; the last task index varies fastest, "
            "so that a sequence's tiles of a head run side by side and share its loop's "
            "operands in L2.");
  printRotatedTask(total, "");
  w.comment(fmt::format("'{0}' numbers the tiles of all the sequences of {1} together "
                        "(kittens/lcf/sequences.cuh): this tile's sequence, and its index "
                        "there. Within the task, {1} is the sequence's length and positions "
                        "along it count from its start.",
                        seq.task, seq.size));
  w.linef("const kittens::sequence_tile tkc_seq = kittens::find_sequence(args.globals.{}, "
          "args.globals.{}, args.globals.{}, {}, args.common.{});",
          k.globals[seq.global].name, seq.count, seq.size, seq.step, seq.task);
  w.line("args.common.tkc_seq_start = tkc_seq.start;");
  w.line("args.common.tkc_seq_len = tkc_seq.length;");
  w.linef("args.common.{} = tkc_seq.tile;", seq.task);
  w.linef("if ((long long)args.common.{} * {} >= args.common.tkc_seq_len) {{", seq.task, seq.step);
  w.line("  args.num_iters = 0; // a number past its sequence's last tile: no rows to compute");
  w.line("  return;");
  w.line("}");
  if (!k.loopBound.stopVar.empty()) {
    w.comment("The loop stops at the tile's rows, so a sequence's last tiles are its longest: "
              "they take its first numbers, and a sequence's tasks come longest first.");
    w.linef("args.common.{0} = (args.common.tkc_seq_len + {1} - 1) / {1} - 1 - args.common.{0};",
            seq.task, seq.step);
  }
  const std::string extent = extentExpr(k.loop.size);
  if (k.loopBound.stopVar.empty()) {
    w.linef("args.num_iters = static_cast<int>(((long long){} + {} - 1) / {});", extent,
            k.loop.step, k.loop.step);
    return;
  }
  w.linef("const long long end = (long long)(args.common.{} + 1) * {};", k.loopBound.stopVar,
          k.loopBound.stopStep);
  w.linef("const long long extent = end < {0} ? end : {0};", extent);
  w.linef("args.num_iters = static_cast<int>((extent + {0} - 1) / {0});", k.loop.step);
}

/// `args.common`'s task indices from `task` (grouped) or `rest` (the others, the last varying
/// fastest).
void KernelPrinter::printTileOfTask() {
  if (k.plan.taskOrder == ir::TaskOrder::Grouped) {
    w.comment(fmt::format("Grouped order: {} rows of tiles at a time, so that neighbouring "
                          "blocks share their operands in L2 (the launcher builds its "
                          "divisions).",
                          k.plan.groupRows));
    w.line("const kittens::tile_mn tile = args.globals.order.tile(task);");
    w.linef("args.common.{} = tile.m;", k.tasks[0].name);
    w.linef("args.common.{} = tile.n;", k.tasks[1].name);
    return;
  }
  for (size_t i = k.tasks.size(); i-- > 0;) {
    const ir::IterVar &v = k.tasks[i];
    w.linef("args.common.{0} = args.globals.{0}_div.mod(rest);", v.name);
    if (i)
      w.linef("rest = args.globals.{}_div.div(rest);", v.name);
  }
}

void KernelPrinter::printTasksByLength() {
  const ir::Plan &plan = k.plan;
  // A loop over its whole size that starts at a task's rows: that index's first tasks are the
  // longest. Otherwise the loop stops at the rows of `stop`, whose last tasks are.
  const bool fromStart = k.loopBound.stopVar.empty();
  const std::string &stop = fromStart ? k.loopBound.start->var : k.loopBound.stopVar;
  std::string total, others;
  for (const ir::IterVar &v : k.tasks) {
    std::string count = fmt::format("args.globals.{}_count", v.name);
    total += (total.empty() ? "" : " * ") + count;
    if (v.name != stop)
      others += (others.empty() ? "" : " * ") + count;
  }
  if (others.empty())
    others = "1";
  // The task indices other than the stopping one, the last varying fastest;
  // `rest` is divided past the slowest of them only when it is read afterwards.
  auto printOthers = [&](bool restReadAfter) {
    size_t slowest = k.tasks.size();
    for (size_t i = 0; i < k.tasks.size() && slowest == k.tasks.size(); ++i)
      if (k.tasks[i].name != stop)
        slowest = i;
    for (size_t i = k.tasks.size(); i-- > 0;) {
      const ir::IterVar &v = k.tasks[i];
      if (v.name == stop)
        continue;
      w.linef("args.common.{0} = args.globals.{0}_div.mod(rest);", v.name);
      if (i != slowest || restReadAfter)
        w.linef("rest = args.globals.{}_div.div(rest);", v.name);
    }
  };
  // A round order: the block's task ordinal, or none left.
  auto printOrdinal = [&](const char *order) {
    w.linef("const int task = kittens::{}(args.task_iter, gridDim.x, blockIdx.x);", order);
    w.linef("if (task >= {}) {{", total);
    w.line("  args.num_iters = -1; // no task left for this block");
    w.line("  return;");
    w.line("}");
    w.line("int rest = task;");
  };
  // Longest first: the stopping index slowest and backwards (the starting index forwards).
  auto printLongestFirst = [&] {
    w.comment("Tasks differ in length and come longest first: blocks take each round's in "
              "serpentine order, so that none takes the longest of every round.");
    printOrdinal("serpentine_task");
    if (fromStart) {
      w.comment(fmt::format("The loop of a task starts at its own first row, so tasks differ "
                            "in length: '{}' varies slowest, and the longest tasks start first.",
                            stop));
      printOthers(/*restReadAfter=*/true);
      w.linef("args.common.{} = rest;", stop);
      return;
    }
    w.comment(fmt::format("The loop of a task ends at its own last row, so tasks differ in "
                          "length: '{}' varies slowest and runs backwards, and the longest "
                          "tasks start first.",
                          stop));
    printOthers(/*restReadAfter=*/true);
    w.linef("args.common.{0} = args.globals.{0}_count - 1 - rest;", stop);
  };
  // A head's tasks together, 'stop' fastest and backwards.
  auto printHeadMajor = [&] {
    w.comment("Tasks differ in length and come longest first per head: blocks take each "
              "round's in serpentine order, so that none takes the longest of every round.");
    printOrdinal("serpentine_task");
    w.comment(fmt::format("Few tasks share the other indices: those tasks run together, '{}' "
                          "fastest and backwards, and read the same operands from L2 (with "
                          "'{}' slowest, the blocks running at once would each read "
                          "different ones from memory, and a ring of {} stages does not hide "
                          "that).",
                          stop, stop, plan.stages));
    w.linef("args.common.{0} = args.globals.{0}_count - 1 - args.globals.{0}_div.mod(rest);", stop);
    w.linef("rest = args.globals.{}_div.div(rest);", stop);
    printOthers(/*restReadAfter=*/false);
  };
  // A head's tasks in pairs of about one length (kittens::paired_task).
  auto printPaired = [&] {
    w.comment(fmt::format("The loop of a task {0} at its own {2} row: task '{1}' and task "
                          "count - 1 - '{1}' of a head together need about the same stages. "
                          "A block takes such a pair; a head's pairs go to neighbouring "
                          "blocks, which read its operands from L2 together.",
                          fromStart ? "starts" : "ends", stop, fromStart ? "first" : "last"));
    w.line("int head = 0;");
    w.linef("if (!kittens::paired_task(args.task_iter, gridDim.x, blockIdx.x, {}, "
            "args.globals.{}_count, head, args.common.{})) {{",
            others, stop, stop);
    w.line("  args.num_iters = -1; // no task left for this block");
    w.line("  return;");
    w.line("}");
    if (k.tasks.size() > 1) {
      w.line("int rest = head;");
      printOthers(/*restReadAfter=*/false);
    }
  };
  std::string pairedIf = fmt::format("args.globals.{}_count <= {}", stop, plan.pairedMaxCount);
  if (plan.pairedMinCount > 1)
    pairedIf =
        fmt::format("args.globals.{}_count >= {} && {}", stop, plan.pairedMinCount, pairedIf);
  // By the count of that index: pairs within [pairedMinCount, pairedMaxCount], else up to
  // `secondMax` the second order, else longest first.
  auto printByCount = [&](int secondMax, const std::function<void()> &printSecond) {
    std::optional<CudaWriter::Scope> branch;
    if (plan.pairedMaxCount > 0) {
      branch.emplace(w.scope(fmt::format("if ({})", pairedIf)));
      printPaired();
      branch.reset();
    }
    if (secondMax > 0) {
      branch.emplace(w.scope(fmt::format("{}if (args.globals.{}_count <= {})",
                                         plan.pairedMaxCount > 0 ? "else " : "", stop, secondMax)));
      printSecond();
      branch.reset();
    }
    if (plan.pairedMaxCount > 0 || secondMax > 0)
      branch.emplace(w.scope("else"));
    printLongestFirst();
  };
  if (fromStart) {
    printByCount(plan.rotatedMaxCount, [&] {
      printRotatedTask(total, "Few tasks a head: the last task index varies fastest, each "
                              "round shifted by one block.");
    });
    w.linef("args.num_iters = args.globals.{}_count;", k.loop.name);
    printWholeLoopStart();
    return;
  }
  printByCount(plan.headMajorMaxCount, printHeadMajor);
  printStoppedLoop();
}

/// A task's stages where the loop stops at its rows (and may start at them): from its start's
/// tile to its last row's stop, none where that ends before the loop's first element.
void KernelPrinter::printStoppedLoop() {
  const std::string &stop = k.loopBound.stopVar;
  w.linef("const long long end = (long long)(args.common.{} + 1) * {}{}{};", stop,
          k.loopBound.stopStep, minusLeadRows(), stopShift());
  w.linef("const long long extent = end < args.globals.{0} ? end : args.globals.{0};",
          k.loop.size.str());
  if (k.loopBound.shift.empty() && k.loopBound.stopScalar.empty()) {
    w.linef("args.num_iters = static_cast<int>((extent + {0} - 1) / {0});", k.loop.step);
  } else {
    w.comment("A shift may end a task before the loop's first element: no stage then.");
    w.linef("args.num_iters = extent > 0 ? static_cast<int>((extent + {0} - 1) / {0}) : 0;",
            k.loop.step);
  }
  if (const auto &start = k.loopBound.start) {
    w.comment(fmt::format("The task's rows need the elements of {} from row({}){} on "
                          "(its first row's, the earliest): the loop begins at that "
                          "element's tile.",
                          k.loop.size.str(), start->var, start->str()));
    w.linef("const double first = {};", loopStartElement(""));
    w.linef("args.common.{0}_start = first > 0 ? static_cast<int>((long long)first / {1}) : "
            "0;",
            k.loop.name, k.loop.step);
    w.linef("args.num_iters -= args.common.{}_start;", k.loop.name);
    if (!k.loopBound.stopScalar.empty()) {
      w.comment(fmt::format("A {} below 1 may stop the task before it starts: no stage then.",
                            k.loopBound.stopScalar));
      w.line("if (args.num_iters < 0)");
      w.line("  args.num_iters = 0;");
    }
  }
}

//===----------------------------------------------------------------------===//
// The producer
//===----------------------------------------------------------------------===//

void KernelPrinter::printProducer() {
  auto producer = w.scope("struct producer", ";");
  w.linef("__device__ static void setup(kittens::lcf::producer_setup_args<{}> &) {{}}", structName);
  auto fn = w.scope(fmt::format(
      "__device__ static void load(kittens::lcf::producer_load_args<{}> &args)", structName));
  // This stage's position along the loop where a tail or the alternate order moves it; its
  // first element.
  auto printPosition = [&] {
    if (const auto &tail = k.loopTail) {
      w.comment(fmt::format("This stage's first element along {}: after the full stages come "
                            "tail stages of {}, each loaded at the start of its slot (a full "
                            "tile from there: the rest is not read).",
                            k.loop.size.str(), tail->step));
      w.linef("const int tkc_element = args.iter < args.globals.{}_full ? args.iter * {} : {};",
              k.loop.name, k.loop.step, loopTailElement("args.iter", ""));
    } else if (k.alternateLoop) {
      w.comment(fmt::format("This stage's tile along {}: a block's odd tasks walk the loop "
                            "backward, beginning on the tiles its previous task read last.",
                            k.loop.size.str()));
      w.linef("const int {} = kittens::alternating_iter(args.task_iter, args.num_iters, "
              "args.iter);",
              loopIndex());
    }
  };
  const std::string first = k.loopTail
                                ? "(long long)tkc_element"
                                : fmt::format("(long long){} * {}", loopIndex(), k.loop.step);
  {
    auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
    w.linef("kittens::expect_bytes(args.inputs_arrived, {});", k.plan.expectBytes);
    printPosition();
    for (const ir::Load &load : k.loads) {
      const ir::Global &g = k.globals[load.global];
      bool sequenced = false;
      for (size_t d = 0; d < g.dims.size(); ++d)
        sequenced = sequenced || ir::alongSequences(k, g, d);
      if (k.loopTail)
        w.linef("kittens::tma::load_async_at(args.input.{0}, args.globals.{1}, {2}, "
                "args.inputs_arrived);",
                k.stageTiles[load.tile].name, g.name, elementCoord(load));
      else if (sequenced)
        w.linef("kittens::tma::load_async_at(args.input.{0}, args.globals.{1}, {2}, "
                "args.inputs_arrived); // from the sequence's first element",
                k.stageTiles[load.tile].name, g.name, elementCoord(load));
      else
        w.linef("kittens::tma::load_async(args.input.{0}, args.globals.{1}, {2}, "
                "args.inputs_arrived);",
                k.stageTiles[load.tile].name, g.name, tileCoord(load.coords));
    }
  }
  if (k.columnReads.empty())
    return;
  w.comment("The second warp copies the globals read per column at the stage's columns into the "
            "stage (0 past the end: TMA cannot, their rows need not be 16-byte aligned); each "
            "lane arrives once its stores are done.");
  auto copier = w.scope("if (kittens::warpgroup::warpid() == 1)");
  printPosition();
  for (size_t r = 0; r < k.columnReads.size(); ++r) {
    const auto [base, limit] = columnReadAccess(k.columnReads[r], first);
    auto scope = w.scope("");
    w.linef("const auto *tkc_src = {};", base);
    w.linef("const int tkc_limit = {};", limit);
    w.linef("for (int tkc_c = kittens::laneid(); tkc_c < {}; tkc_c += 32)", k.loop.step);
    w.linef("  args.input.tkc_cols{0}[tkc_c] = tkc_c < tkc_limit ? tkc_src[tkc_c] : "
            "static_cast<{1}>(0.0f);",
            r, kittensScalar(k.globals[k.columnReads[r].global].dtype));
  }
  w.line("kittens::arrive(args.inputs_arrived);");
}

} // namespace tkc::emit
