//===- CudaEmitter.cpp - Kernel IR to CUDA C++ on kittens ------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Each kernel becomes a struct in the shape kittens::lcf expects (a layout
// and the hooks), followed by a host launcher. Names in the generated code
// come from the spec (tiles, globals, indices), so the output reads like the
// spec it came from; every kittens name is fully qualified.
//
//===----------------------------------------------------------------------===//
#include "tkc/Emit/CudaEmitter.h"

#include "tkc/Emit/CudaWriter.h"
#include "tkc/Emit/Template.h"
#include "tkc/Emit/Templates/gelu.h"
#include "tkc/Emit/Templates/header.h"
#include "tkc/Emit/Templates/launch.h"
#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

namespace tkc {

namespace {

using ir::Kernel;

constexpr int kWarpRows = 16;

/// Tasks whose loop stops at their own row (causal attention) come in one of two orders,
/// chosen in the kernel from the stopping index's count: with at most this many tasks per
/// value of the other indices (per head), those tasks run together (stopping index fastest),
/// so that a head's keys and values are read from memory once and from L2 after; with more,
/// the stopping index varies slowest (longest tasks first), which balances the blocks. Only
/// kernels whose stage ring is at most kStopFastestMaxStages deep take the first order: a
/// deeper ring has enough loads in flight to hide the memory's latency. Measured on an H100
/// (bench/NOTES.md, session 8): with two stages (D = 128, 256) head-major is 1.13-1.56x faster
/// at 3-16 tasks per head (N <= 2048), 1.01-1.02x for D = 128 at 14 and 16 (N = 2560, 3072),
/// 0.97-1.02x at 22-32, and 0.57-0.83x at 43 or more; with five (D = 64) it gained at most
/// 1.5 % and lost 13 % at 14 (N = 2560).
constexpr int kStopFastestMaxCount = 16;
constexpr int kStopFastestMaxStages = 2;

/// Tasks whose loop stops at their own row and starts at 0 (causal attention) take the paired
/// order (kittens::paired_task: a head's task i with its task count - 1 - i, the head's pairs
/// on neighbouring blocks) for up to kPairedMaxCount tasks a head, and with a ring of at most
/// kStopFastestMaxStages stages from kPairedMinCountShallowRing and only with three consumer
/// warpgroups; the orders above elsewhere. Measured on an H100 (bench/NOTES.md, session 20),
/// paired against those orders, row blocks rotated in both: with a ring of five or four stages
/// (D = 64) 1.02-1.09x at 3-16 tasks a head (N = 512-3072), 1.00x at 22, 0.99x at 27-32; with
/// two (D = 128) 0.77x at 3 (a head's lone task 0 reads its operands from memory again after
/// the pairs), 0.99-1.08x at 6-16, and at 22-32 1.01-1.05x for plain attention but 0.91x for
/// soft-capping at 22 (N = 4096: 5.3 pairs a block, so a third of the blocks run a whole
/// pair more at the end); with two stages and two warpgroups (D = 256, three times D = 128's
/// bytes per score) 0.97x at 8, 0.99x at 16 against the head-major order.
constexpr int kPairedMaxCount = 16;
constexpr int kPairedMinCountShallowRing = 6;
constexpr int kPairedShallowRingMinWarpgroups = 3;

/// Causal kernels with at least this many consumer warpgroups take the task's row blocks in
/// turn (the last needs the most stages): 1.01-1.02x at N <= 2048 with three (D = 64, 128),
/// 0.99x at N >= 8192 with two (D = 256).
constexpr int kRotateMinWarpgroups = 3;

/// How a kernel uses each of its globals.
enum class Role { Unused, TmaLoad, TmaStore, RowVector, Tile, Rows };

const char *kittensScalar(spec::DType dtype) {
  switch (dtype) {
  case spec::DType::BF16:
    return "kittens::bf16";
  case spec::DType::F16:
    return "kittens::half";
  case spec::DType::F32:
    return "float";
  }
  return "?";
}

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

class KernelEmitter {
public:
  /// `layoutOf`: for a kernel's whole-tile copy, the struct whose layout it shares.
  KernelEmitter(const Kernel &kernel, CudaWriter &w, DiagnosticEngine &diags,
                std::string layoutOf = "")
      : k(kernel), w(w), diags(diags), structName(kernel.name + "_kernel"),
        layoutOf(std::move(layoutOf)) {}

  /// Classifies the globals; reports what the emitter cannot express yet.
  bool prepare() {
    if (k.program)
      return prepareProgram();
    roles.assign(k.globals.size(), Role::Unused);
    bool ok = true;
    auto assign = [&](unsigned global, Role role, SourceLoc loc) {
      if (roles[global] != Role::Unused && roles[global] != role) {
        diags.report(DiagID::err_sema_unsupported, loc,
                     "using global '" + k.globals[global].name + "' in two ways",
                     "give each use its own global");
        ok = false;
      }
      roles[global] = role;
    };
    for (const ir::Load &load : k.loads)
      assign(load.global, Role::TmaLoad, load.loc);
    assign(k.store->global, Role::TmaStore, k.store->loc);
    for (const ir::EpilogueOp &op : k.epilogue)
      if (op.global)
        assign(*op.global,
               op.kind == ir::EpilogueOp::Kind::AddRowVector ? Role::RowVector : Role::Tile,
               op.loc);
    for (size_t g = 0; g < k.globals.size(); ++g)
      if (k.globals[g].dims.size() > 2) {
        diags.report(DiagID::err_sema_unsupported, k.globals[g].loc,
                     "a global of rank " + std::to_string(k.globals[g].dims.size()),
                     "the lcf emitter handles matrices and vectors today");
        ok = false;
      }
    if (k.groupedOrder && k.tasks.size() != 2) {
      diags.report(DiagID::err_sema_unsupported, k.tasks.front().loc,
                   "grouped task order over " + std::to_string(k.tasks.size()) + " indices",
                   "use 'order: linear', or two task indices");
      ok = false;
    }
    const ir::State &acc = k.state[k.store->state];
    resultParts = std::max(k.plan.resultParts, 1);
    resultRows = static_cast<int>(acc.rows) / k.consumerWarpgroups;
    resultCols = static_cast<int>(acc.cols) / resultParts;
    return ok;
  }

  void emitKernelStruct() {
    if (k.program) {
      emitProgramStruct();
      return;
    }
    const ir::Plan &p = k.plan;
    w.comment(describe());
    auto kernelScope = w.scope("struct " + structName, ";");
    for (const ir::StageTile &t : k.stageTiles)
      w.linef("using {}_tile = kittens::st_bf<{}, {}>;", t.name, t.rows, t.cols);
    if (resultParts == 1) {
      w.comment("Staging for the TMA store of the result: one tile per consumer warpgroup.");
      w.linef("using result_tile = kittens::st_bf<{}, {}>;", resultRows, resultCols);
      w.comment("Each consumer warp holds 16 rows of the accumulator.");
    } else {
      w.comment(fmt::format("The result in {} column parts: each stored on its own through a "
                            "staging tile of one part, one per consumer warpgroup.",
                            resultParts));
      w.linef("using result_tile = kittens::st_bf<{}, {}>;", resultRows, resultCols);
      w.comment("Each consumer warp holds 16 rows of one part of the accumulator.");
    }
    w.linef("using accumulator = kittens::rt_fl<{}, {}>;", kWarpRows, resultCols);
    w.blank();
    {
      auto layout = w.scope("struct layout", ";");
      {
        auto globals = w.scope("struct globals", ";");
        for (size_t g = 0; g < k.globals.size(); ++g)
          emitGlobalMember(static_cast<unsigned>(g));
        for (const ir::IterVar &v : k.tasks)
          w.linef("int {}_count; // tiles along {}", v.name, v.size.str());
        w.linef("int {}_count; // pipeline stages per task ({} / {})", k.loop.name,
                k.loop.size.str(), k.loop.step);
        emitTaskDivisors();
      }
      {
        auto input = w.scope("struct input_block", ";");
        for (const ir::Load &load : k.loads)
          w.linef("{0}_tile {0};", k.stageTiles[load.tile].name);
      }
      emitFinishBlock();
      {
        auto common = w.scope("struct common_state", ";");
        for (const ir::IterVar &v : k.tasks)
          w.linef("int {};", v.name);
      }
      if (resultParts == 1)
        w.linef("struct consumer_state {{ accumulator {}; }};", k.state[k.store->state].name);
      else
        w.linef("struct consumer_state {{ accumulator {}[{}]; }};", k.state[k.store->state].name,
                resultParts);
    }
    w.linef("static constexpr int INPUT_STAGES = {};", p.stages);
    w.linef("static constexpr int NUM_CONSUMER_WARPGROUPS = {};", k.consumerWarpgroups);
    w.linef("static constexpr int PRODUCER_ARRIVALS = {};", p.producerArrivals);
    w.linef("static constexpr int CONSUMER_ARRIVALS = {};", p.consumerArrivals);
    w.linef("static constexpr int PRODUCER_REGISTERS = {};", p.producerRegisters);
    w.linef("static constexpr int CONSUMER_REGISTERS = {};", p.consumerRegisters);
    emitFinishPerWarpgroup();
    if (k.plan.splitStages) {
      w.comment("Each task's last stages whose halves are computed apart (split-finish): the "
                "left half's store leaves while the right half's products run.");
      w.linef("static constexpr int SPLIT_STAGES = {};", k.plan.splitStages);
    }
    // kittens' EARLY_STAGES asks for a load issued from the warpgroup's lane 0 alone that keeps
    // no producer state, which the loads below are (bench/NOTES.md, session 28: with the
    // consumers' way to their first stage short, the copy decides when it is there).
    w.comment("Task 0's first stage loaded by thread 0 as soon as the semaphores exist, before "
              "the block-wide barrier.");
    w.line("static constexpr int EARLY_STAGES = 1;");
    w.blank();
    emitBlockEntry();
    w.blank();
    emitCommonSetup();
    w.blank();
    emitProducer();
    w.blank();
    emitStorePart();
    w.blank();
    emitConsumer();
  }

  /// The compiler's numbers, checked again by nvcc against kittens' own.
  void emitStaticAsserts() {
    const ir::Plan &p = k.plan;
    w.linef("static_assert(sizeof({}::layout::input_block) == {},", structName, p.expectBytes);
    w.linef("              \"{}: one stage must hold exactly the {} bytes its TMA loads "
            "deliver\");",
            k.name, p.expectBytes);
    w.linef("static_assert(kittens::lcf::traits<{}>::SAFE_STAGES == {},", structName, p.safeStages);
    w.linef("              \"{}: tkc planned {} stages before the finish block\");", k.name,
            p.safeStages);
    w.linef("static_assert(kittens::lcf::traits<{}>::DYNAMIC_SHARED_BYTES == {},", structName,
            p.dynamicSharedBytes);
    w.linef("              \"{}: tkc planned {} bytes of dynamic shared memory\");", k.name,
            p.dynamicSharedBytes);
  }

  /// The parameter list of the launcher, without the stream.
  std::string launcherParams() const {
    llvm::SmallVector<std::string, 12> params;
    for (size_t g = 0; g < k.globals.size(); ++g) {
      const ir::Global &global = k.globals[g];
      bool output = roles[g] == Role::TmaStore || roles[g] == Role::Rows;
      params.push_back(fmt::format("{}{} *{}", output ? "" : "const ",
                                   ir::cudaTypeName(global.dtype), global.name));
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

  /// The launcher's name: the kernel's own, or, for a kernel chosen at
  /// launch, the name of the launcher that chooses it.
  const std::string &publicName() const { return k.entry ? k.entry->name : k.name; }
  /// Whether this kernel's launcher is internal to the .cu (another one,
  /// publicName(), chooses between it and others at each call).
  bool isChosen() const { return k.entry && k.entry->name != k.name; }

  std::string launcherSignature(bool withDefault, const std::string &name) const {
    withDefaults = withDefault;
    return fmt::format("tkc::runtime::Status {}({}, cudaStream_t stream{})", name, launcherParams(),
                       withDefault ? " = 0" : "");
  }

  void emitLauncherDeclaration() {
    w.comment(describe(/*launcher=*/true));
    w.line(launcherSignature(/*withDefault=*/true, publicName()) + ";");
  }

  /// The launcher that chooses between `members` (this kernel first) at each
  /// call: each runs where its condition holds, the last one otherwise.
  void emitChoosingLauncher(llvm::ArrayRef<const KernelEmitter *> members) {
    const ir::Entry &entry = *k.entry;
    withDefaults = false;
    std::string params = launcherParams();
    std::vector<std::string> sizes = ir::launchSizeSymbols(k);
    std::vector<std::string> read;
    for (const KernelEmitter *member : members) {
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
      w.linef("if (!(status = tkc::runtime::checkExtent({0}, \"{0}\", 1, 2147483647)))", size);
      w.line("  return tkc::runtime::Status::error(std::string(kName) + \": \" + status.message);");
    }
    for (size_t m = 0; m + 1 < members.size(); ++m) {
      w.linef("if ({})", withoutOuterParens(members[m]->k.entry->condition));
      w.linef("  return {}{};", members[m]->k.name, call);
    }
    w.linef("return {}{};", members.back()->k.name, call);
  }

  void emitLauncher() {
    auto fn = w.scope(launcherSignature(/*withDefault=*/false, k.name));
    w.linef("constexpr const char *kName = \"{}\";", publicName());
    w.line("auto failed = [&](const tkc::runtime::Status &status) {");
    w.line("  return tkc::runtime::Status::error(std::string(kName) + \": \" + status.message);");
    w.line("};");
    w.line("tkc::runtime::Status status;");
    w.comment("Sizes: positive and small enough for 32-bit tile counts.");
    for (const std::string &size : ir::launchSizeSymbols(k))
      emitCheck(fmt::format("tkc::runtime::checkExtent({0}, \"{0}\", 1, 2147483647)", size));
    w.comment("Pointers: TMA needs 16-byte aligned tensors with 16-byte aligned rows.");
    for (size_t g = 0; g < k.globals.size(); ++g) {
      const ir::Global &global = k.globals[g];
      bool tma = roles[g] == Role::TmaLoad || roles[g] == Role::TmaStore;
      emitCheck(fmt::format("tkc::runtime::checkPointer({0}, \"{0}\", {1})", global.name,
                            tma ? 16 : ir::dtypeBytes(global.dtype)));
      if (tma && global.dims.size() >= 2)
        emitCheck(fmt::format("tkc::runtime::checkRowBytes({}, {}, \"{}\")",
                              global.dims.back().str(), ir::dtypeBytes(global.dtype), global.name));
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
    w.blank();
    w.linef("{}::layout::globals globals;", structName);
    {
      auto attempt = w.scope("try");
      for (size_t g = 0; g < k.globals.size(); ++g)
        emitGlobalInit(static_cast<unsigned>(g));
    }
    {
      auto handler = w.scope("catch (const kittens::tma_error &error)");
      w.line("return tkc::runtime::Status::error(std::string(kName) + \": \" + error.what());");
    }
    for (const ir::IterVar &v : k.tasks)
      w.linef("globals.{0}_count = static_cast<int>(({1} + {2} - 1) / {2});", v.name, v.size.str(),
              v.step);
    if (k.groupedOrder) // the divisions emitTaskDivisors declared
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
    if (k.program) {
      for (const std::string &size : ir::launchSizeSymbols(k))
        w.linef("globals.{0} = static_cast<int>({0});", size);
      for (const ir::Scalar &scalar : k.scalars)
        w.linef("globals.{0} = {0};", scalar.name);
      emitIndexChecks();
    }
    std::string tasks;
    for (const ir::IterVar &v : k.tasks)
      tasks += (tasks.empty() ? "" : " * ") + fmt::format("(long long)globals.{}_count", v.name);
    w.linef("const long long tasks = {};", tasks);
    w.line("if (tasks > 2147483647)");
    w.line("  return tkc::runtime::Status::error(std::string(kName) + \": \" + "
           "std::to_string(tasks) + \" output tiles are more than one launch can index\");");
    if (k.wholeTiles) {
      llvm::SmallVector<std::string, 2> whole;
      for (const ir::ColumnBound &b : ir::columnBounds(k)) {
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

  /// The struct of the kernel's whole-tile copy (Kernel::wholeTiles), sharing
  /// this kernel's layout; its launcher is this kernel's.
  void emitWholeTiles() {
    if (!k.wholeTiles)
      return;
    KernelEmitter whole(*k.wholeTiles, w, diags, structName);
    whole.prepare();
    w.blank();
    whole.emitKernelStruct();
    w.blank();
    whole.emitStaticAsserts();
  }

  bool usesGelu() const {
    if (k.program)
      return false;
    return llvm::any_of(
        k.epilogue, [](const ir::EpilogueOp &op) { return op.kind == ir::EpilogueOp::Kind::Gelu; });
  }

  const Kernel &kernel() const { return k; }

private:
  /// What the kernel computes; for its launcher (`launcher`), the parameters
  /// chosen at each call are named as such instead of given values.
  std::string describe(bool launcher = false) const {
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

  void emitCheck(const std::string &call) {
    w.linef("if (!(status = {}))", call);
    w.line("  return failed(status);");
  }

  std::string glType(const ir::Global &g) const {
    if (g.dims.size() == 1)
      return fmt::format("kittens::gl<{}, 1, 1, 1, -1>", kittensScalar(g.dtype));
    if (g.dims.size() == 3)
      return fmt::format("kittens::gl<{}, 1, -1, -1, -1>", kittensScalar(g.dtype));
    if (g.dims.size() == 4)
      return fmt::format("kittens::gl<{}, -1, -1, -1, -1>", kittensScalar(g.dtype));
    return fmt::format("kittens::gl<{}, 1, 1, -1, -1>", kittensScalar(g.dtype));
  }

  std::string glValue(const ir::Global &g, bool constCast) const {
    std::string ptr =
        constCast ? fmt::format("const_cast<{} *>({})", kittensScalar(g.dtype), g.name) : g.name;
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

  std::string tileOf(unsigned global) const {
    if (k.program)
      return tileTypes[global];
    for (const ir::Load &load : k.loads)
      if (load.global == global)
        return k.stageTiles[load.tile].name + "_tile";
    return "result_tile";
  }

  void emitGlobalMember(unsigned g) {
    const ir::Global &global = k.globals[g];
    switch (roles[g]) {
    case Role::TmaLoad:
    case Role::TmaStore:
      w.linef("kittens::tile_map<{}> {};", tileOf(g), global.name);
      return;
    case Role::RowVector:
    case Role::Tile:
      w.linef("{} {};", glType(global), global.name);
      return;
    case Role::Rows:
      w.linef("{} *{}; // one value per row", kittensScalar(global.dtype), global.name);
      return;
    case Role::Unused:
      w.linef("// '{}' is declared but this instantiation does not use it", global.name);
      return;
    }
  }

  void emitGlobalInit(unsigned g) {
    const ir::Global &global = k.globals[g];
    bool isConst = roles[g] != Role::TmaStore;
    switch (roles[g]) {
    case Role::TmaLoad:
    case Role::TmaStore:
      w.linef("globals.{} = kittens::make_tile_map<{}::{}>({});", global.name, structName,
              tileOf(g), glValue(global, isConst));
      return;
    case Role::RowVector:
    case Role::Tile:
      w.linef("globals.{} = {};", global.name, glValue(global, isConst));
      return;
    case Role::Rows:
      w.linef("globals.{0} = {0};", global.name);
      return;
    case Role::Unused:
      return;
    }
  }

  /// An index expression on the device; grid indices are read from `common`
  /// (the next task's in a setup that loads ahead).
  std::string deviceIndex(const ir::IndexExpr &e,
                          const std::string &common = "args.common.") const {
    return e.render([&](const ir::IndexExpr &leaf) {
      if (leaf.kind == ir::IndexExpr::Kind::Size)
        return "args.globals." + leaf.name;
      return leaf.name == k.loop.name ? loopIndex() : common + leaf.name;
    });
  }

  /// The loop index of the current stage: the iteration, counted from the
  /// task's first tile when the loop has a start (LoopBound::start). When the
  /// loop alternates, the producer's local that emitProducer declares (the
  /// lowering allows that in the matrix-product form only, where the producer's
  /// loads are the loop index's one use and the loop has no start).
  std::string loopIndex() const {
    if (k.alternateLoop)
      return "tkc_" + k.loop.name;
    if (!k.loopBound.start)
      return "args.iter";
    return fmt::format("(args.common.{}_start + args.iter)", k.loop.name);
  }

  std::string coordExpr(const ir::Coord &c, const std::string &common = "args.common.") const {
    if (c.expr)
      return deviceIndex(*c.expr, common);
    if (c.var.empty())
      return "0";
    if (c.var == k.loop.name)
      return loopIndex();
    return common + c.var;
  }

  /// kittens' 4-D coordinate {b, d, r, c} for an access of rank 1 to 4.
  std::string tileCoord(const std::vector<ir::Coord> &coords) const {
    std::vector<std::string> parts;
    for (const ir::Coord &c : coords)
      parts.push_back(coordExpr(c));
    return kittensCoord(std::move(parts));
  }

  /// A kittens::coord {b, d, r, c} of up to four parts, the missing leading ones 0.
  static std::string kittensCoord(std::vector<std::string> parts) {
    while (parts.size() < 4)
      parts.insert(parts.begin(), "0");
    return "{" + llvm::join(parts, ", ") + "}";
  }

  /// The first element along the loop of stage `index` of a kernel with a loop
  /// tail: the full stages first, then the tail's. `cast` prefixes each product.
  std::string loopTailElement(const std::string &index, const std::string &cast) const {
    return fmt::format("{3}args.globals.{0}_full * {1} + {3}({4} - args.globals.{0}_full) * {2}",
                       k.loop.name, k.loop.step, k.loopTail->step, cast, index);
  }

  /// The globals that split a task ordinal, which the launcher builds: the grouped order's
  /// (kittens::grouped_tiles), or a kittens::fast_div for each task index.
  void emitTaskDivisors() {
    if (k.groupedOrder)
      w.linef("kittens::grouped_tiles<{}> order; // each task's tile", k.plan.groupRows);
    else
      for (const ir::IterVar &v : k.tasks)
        w.linef("kittens::fast_div {0}_div; // divides by {0}_count", v.name);
  }

  void emitCommonSetup() {
    auto fn =
        w.scope(fmt::format("__device__ static void common_setup(kittens::lcf::common_args<{}> "
                            "&args)",
                            structName));
    {
      w.line("const int task = args.task_iter * gridDim.x + blockIdx.x;");
      std::string total;
      for (const ir::IterVar &v : k.tasks)
        total += (total.empty() ? "" : " * ") + fmt::format("args.globals.{}_count", v.name);
      w.linef("if (task >= {}) {{", total);
      w.line("  args.num_iters = -1; // no task left for this block");
      w.line("  return;");
      w.line("}");
    }
    emitTileOfTask();
    w.linef("args.num_iters = args.globals.{}_count;", k.loop.name);
  }

  /// `args.common`'s task indices from the tile ordinal `task`.
  void emitTileOfTask() {
    if (k.groupedOrder) {
      w.comment(fmt::format("Grouped order: {} rows of tiles at a time, so that neighbouring "
                            "blocks share their operands in L2 (the launcher builds its "
                            "divisions).",
                            k.plan.groupRows));
      w.line("const kittens::tile_mn tile = args.globals.order.tile(task);");
      w.linef("args.common.{} = tile.m;", k.tasks[0].name);
      w.linef("args.common.{} = tile.n;", k.tasks[1].name);
    } else {
      w.line("int rest = task;");
      for (size_t i = k.tasks.size(); i-- > 0;) {
        const ir::IterVar &v = k.tasks[i];
        w.linef("args.common.{0} = args.globals.{0}_div.mod(rest);", v.name);
        if (i)
          w.linef("rest = args.globals.{}_div.div(rest);", v.name);
      }
    }
  }

  /// kittens' block_entry: the TMA descriptors prefetched at the block's entry,
  /// while its semaphores are initialised, so that the first copies find them
  /// cached (bench/NOTES.md, session 27: +0.2-0.4 % at 2048^3, paired).
  void emitBlockEntry() {
    w.comment("At the block's entry: the TMA descriptors into the descriptor cache, so that the "
              "first copies and stores do not wait for them.");
    auto fn = w.scope("__device__ static void block_entry(const layout::globals &g)");
    for (unsigned g = 0; g < k.globals.size(); ++g)
      if (roles[g] == Role::TmaLoad || roles[g] == Role::TmaStore)
        w.linef("kittens::tma::prefetch(g.{});", k.globals[g].name);
  }

  void emitProducer() {
    auto producer = w.scope("struct producer", ";");
    w.linef("__device__ static void setup(kittens::lcf::producer_setup_args<{}> &) {{}}",
            structName);
    auto fn = w.scope(fmt::format(
        "__device__ static void load(kittens::lcf::producer_load_args<{}> &args)", structName));
    auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
    w.linef("kittens::expect_bytes(args.inputs_arrived, {});", k.plan.expectBytes);
    if (const auto &tail = k.loopTail) {
      w.comment(fmt::format("This stage's first element along {}: after the full stages come "
                            "tail stages of {}, each loaded at the start of its slot (a full "
                            "tile from there: the rest is not read).",
                            k.loop.size.str(), tail->step));
      w.linef("const int tkc_element = args.iter < args.globals.{}_full ? args.iter * {} : {};",
              k.loop.name, k.loop.step, loopTailElement("args.iter", ""));
      for (const ir::Load &load : k.loads)
        w.linef("kittens::tma::load_async_at(args.input.{0}, args.globals.{1}, {2}, "
                "args.inputs_arrived);",
                k.stageTiles[load.tile].name, k.globals[load.global].name, elementCoord(load));
      return;
    }
    if (k.alternateLoop) {
      w.comment(fmt::format("This stage's tile along {}: a block's odd tasks walk the loop "
                            "backward, beginning on the tiles its previous task read last.",
                            k.loop.size.str()));
      w.linef("const int {} = kittens::alternating_iter(args.task_iter, args.num_iters, "
              "args.iter);",
              loopIndex());
    }
    for (const ir::Load &load : k.loads)
      w.linef("kittens::tma::load_async(args.input.{0}, args.globals.{1}, {2}, "
              "args.inputs_arrived);",
              k.stageTiles[load.tile].name, k.globals[load.global].name, tileCoord(load.coords));
  }

  /// A load's coordinate in elements (kittens::tma::load_async_at): the loop's
  /// is the stage's first element (`tkc_element`), the other dimensions the tile
  /// spans are tile indices times its extent, the leading ones indices.
  std::string elementCoord(const ir::Load &load) const {
    const ir::StageTile &t = k.stageTiles[load.tile];
    std::vector<std::string> parts;
    for (size_t d = 0; d < load.coords.size(); ++d) {
      const ir::Coord &c = load.coords[d];
      const int dim = ir::spannedTileDim(load, d);
      if (dim < 0)
        parts.push_back(coordExpr(c));
      else if (!c.expr && c.var == k.loop.name)
        parts.push_back("tkc_element");
      else if (!c.expr && c.var.empty())
        parts.push_back("0");
      else
        parts.push_back(fmt::format("{} * {}", coordExpr(c), dim == 0 ? t.rows : t.cols));
    }
    return kittensCoord(std::move(parts));
  }

  /// `args.state.acc`, or part `p` of it (`args.state.acc[p]`).
  std::string accPart(int p) const {
    std::string name = "args.state." + k.state[k.store->state].name;
    return resultParts == 1 ? name : fmt::format("{}[{}]", name, p);
  }
  /// Part `p` of stage tile `t`'s columns of the result (the whole tile with one part).
  std::string stagePart(const ir::StageTile &t, const std::string &input, bool transposed,
                        int p) const {
    if (resultParts == 1)
      return input + "." + t.name;
    return transposed ? fmt::format("{}.{}.subtile<{}, {}>({}, 0)", input, t.name,
                                    t.rows / resultParts, t.cols, p)
                      : fmt::format("{}.{}.subtile<{}, {}>(0, {})", input, t.name, t.rows,
                                    t.cols / resultParts, p);
  }
  /// This warpgroup's rows of stage tile `a` in input block `input`.
  std::string warpgroupRows(const ir::StageTile &a, const std::string &input) const {
    if (k.consumerWarpgroups == 1)
      return input + "." + a.name;
    return fmt::format("{}.{}.subtile<{}, {}>(kittens::warpgroupid(), 0)", input, a.name,
                       a.rows / k.consumerWarpgroups, a.cols);
  }
  /// The products of one stage (`input`: its input block; `aRows`: this warpgroup's rows of
  /// its A tile) into the given parts of the result.
  void emitProducts(const std::string &input, const std::string &aRows,
                    std::initializer_list<int> which, const std::string &accumulate) {
    for (const ir::Mma &mma : k.mmas) {
      const ir::StageTile &b = k.stageTiles[mma.b];
      for (int p : which)
        w.linef("kittens::warpgroup::{}({}, {}, {}{});", mma.transposeB ? "mma_ABt" : "mma_AB",
                accPart(p), aRows, stagePart(b, input, mma.transposeB, p),
                accumulate.empty() ? "" : ", " + accumulate);
    }
  }
  void emitRelease(const std::string &semaphore, const std::string &what) {
    w.line("if (kittens::laneid() == 0)");
    w.linef("  kittens::arrive({}); // this warp is done with {}", semaphore, what);
  }

  void emitConsumer() {
    auto consumer = w.scope("struct consumer", ";");
    {
      // The accumulator starts at zero (the IR's zeroInit) without being zeroed: every stage
      // adds one product into it, the first stage's product overwrites it instead (wgmma's
      // scale-d off at iter 0), and every task has a stage, as the launcher refuses a size
      // below 1. Zeroing it anyway cost ~200 instructions a task on the consumers' way to
      // their first stage (bench/NOTES.md, session 28).
      TKC_INTERNAL_ASSERT(k.zeroInit.size() == 1 && k.zeroInit.front() == k.store->state,
                          "the matrix-product form zeroes exactly its stored accumulator");
      w.line("// Nothing to zero: every task has a stage (the launcher refuses sizes below");
      w.line("// 1), and the first stage's product overwrites the accumulator.");
      w.linef("__device__ static void setup(kittens::lcf::consumer_setup_args<{}> &) {{}}",
              structName);
    }
    TKC_INTERNAL_ASSERT(k.mmas.size() == 1 && llvm::is_contained(k.zeroInit, k.mmas.front().acc),
                        "the first stage's product overwrites a zeroed accumulator");
    {
      auto fn = w.scope(fmt::format(
          "__device__ static void compute(kittens::lcf::consumer_compute_args<{}> &args)",
          structName));
      const ir::StageTile &a = k.stageTiles[k.mmas.front().a];
      std::string aRows = warpgroupRows(a, "args.input");
      if (k.consumerWarpgroups > 1) {
        w.linef("auto {}_rows = {};", a.name, aRows);
        aRows = a.name + "_rows";
      }
      if (!k.plan.splitStages) {
        emitProducts("args.input", aRows,
                     resultParts == 1 ? std::initializer_list<int>{0}
                                      : std::initializer_list<int>{0, 1},
                     "args.iter > 0");
        w.line("kittens::warpgroup::mma_async_wait<0>();");
        emitRelease("args.inputs_finished", "the stage");
      } else {
        TKC_INTERNAL_ASSERT(resultParts == 2, "only a result in two parts is split");
        w.line("const int split = args.num_iters - SPLIT_STAGES; // the first split stage");
        {
          auto whole = w.scope("if (args.num_iters <= SPLIT_STAGES || args.iter < split)");
          emitProducts("args.input", aRows, {0, 1}, "args.iter > 0");
          w.line("kittens::warpgroup::mma_async_wait<0>();");
          emitRelease("args.inputs_finished", "the stage");
          w.line("return;");
        }
        w.comment("The split stages (never the task's first), all in the first one's call, so "
                  "that the pipe does not drain between them: the left half of each as it "
                  "arrives, then the right half of every one, and the left half stored while "
                  "those products run (no loop around them: ptxas would serialise a product in "
                  "flight across its back edge). A later split stage's own call only releases "
                  "it: released sooner, its slot could be loaded again and its semaphore pass "
                  "another phase before the template's wait for it, which would then wait for a "
                  "phase that never comes.");
        {
          auto later = w.scope("if (args.iter > split)");
          w.comment("Computed in the call for stage `split`.");
          emitRelease("args.inputs_finished", "the stage");
          w.line("return;");
        }
        emitProducts("args.input", aRows, {0}, "");
        for (int i = 1; i < k.plan.splitStages; ++i) {
          std::string held = fmt::format("held{}", i);
          w.linef("args.wait_arrived_at(split + {});", i);
          w.linef("auto &{} = args.input_at(split + {});", held, i);
          emitProducts(held, warpgroupRows(a, held), {0}, "");
        }
        w.line("auto &held0 = args.input_at(split + 0);");
        for (int i = 0; i < k.plan.splitStages; ++i) {
          std::string held = fmt::format("held{}", i);
          emitProducts(held, warpgroupRows(a, held), {1}, "");
        }
        w.line("kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); // the left halves are done");
        w.linef("store_part<0>(args, {}, args.finish.result);", accPart(0));
        w.line("kittens::warpgroup::mma_async_wait<0>();");
        w.comment("This stage only: the later split stages are released in their own calls.");
        emitRelease("args.inputs_finished", "the stage");
      }
    }
    {
      auto fn = w.scope(
          fmt::format("__device__ static void finish(kittens::lcf::consumer_finish_args<{}> &args)",
                      structName));
      if (resultParts == 1) {
        w.linef("store_part<0>(args, {}, args.finish.result);", accPart(0));
      } else {
        if (k.plan.splitStages) {
          w.comment("Split, compute stored the left half through the staging tile already.");
          w.line("if (args.num_iters <= SPLIT_STAGES)");
          w.linef("  store_part<0>(args, {}, args.finish.result);", accPart(0));
        } else {
          w.linef("store_part<0>(args, {}, args.finish.result);", accPart(0));
        }
        w.line("wait_staging_read();");
        w.linef("store_part<1>(args, {}, args.finish.result);", accPart(1));
      }
    }
    emitReleaseFinish();
  }

  /// Helpers of the consumer (before it): `store_part<P>`, the epilogue of part P of a
  /// warpgroup's result and its TMA store through a staging tile, and, with parts,
  /// `wait_staging_read`, which waits for the last store's read of the staging tile.
  void emitStorePart() {
    const ir::State &acc = k.state[k.store->state];
    const ir::Store &store = *k.store;
    int barrierBase = k.plan.finishBarrierIds.front();
    bool needsRow = llvm::any_of(k.epilogue, [](const ir::EpilogueOp &op) {
      return op.kind == ir::EpilogueOp::Kind::AddTile;
    });
    bool needsCol = llvm::any_of(
        k.epilogue, [](const ir::EpilogueOp &op) { return op.kind != ir::EpilogueOp::Kind::Gelu; });
    w.comment(resultParts == 1
                  ? "The finish: the epilogue on this warpgroup's result, then its TMA store "
                    "through `staging` (P = 0, the only part)."
                  : "Part P of this warpgroup's result: the epilogue, then its TMA store "
                    "through `staging`.");
    w.line("template <int P, class Args>");
    auto fn = w.scope("__device__ static void store_part(Args &args, accumulator &acc, "
                      "result_tile &staging)");
    w.line("const int wg = kittens::warpgroupid();");
    if (needsCol) {
      w.comment("This warp's rows and columns of the output, in elements.");
      if (needsRow)
        w.linef("const int row0 = {} * {} + wg * {} + kittens::warpgroup::warpid() * {};",
                coordExpr(store.coords[0]), acc.rows, resultRows, kWarpRows);
      if (resultParts == 1)
        w.linef("const int col0 = {} * {};", coordExpr(store.coords.back()), acc.cols);
      else
        w.linef("const int col0 = {} * {} + P * {};", coordExpr(store.coords.back()), acc.cols,
                resultCols);
    }
    for (const ir::EpilogueOp &op : k.epilogue) {
      switch (op.kind) {
      case ir::EpilogueOp::Kind::AddRowVector:
        w.linef("kittens::add_col_from_global(acc, args.globals.{}, {{0, 0, 0, col0}});",
                k.globals[*op.global].name);
        break;
      case ir::EpilogueOp::Kind::AddTile:
        w.linef("kittens::add_from_global(acc, args.globals.{}, {{0, 0, row0, col0}});",
                k.globals[*op.global].name);
        break;
      case ir::EpilogueOp::Kind::Gelu:
        w.line("kittens::map(acc, acc, gelu_tanh{});");
        break;
      }
    }
    w.line("kittens::warpgroup::store(staging, acc);");
    w.line("kittens::fence_async_shared(); // make the stores visible to TMA");
    w.linef("kittens::warpgroup::sync({} + wg);", barrierBase);
    {
      auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
      std::string row =
          fmt::format("{} * {} + wg", coordExpr(store.coords[0]), k.consumerWarpgroups);
      std::string col = coordExpr(store.coords[1]);
      if (resultParts > 1)
        col = fmt::format("{} * {} + P", col, resultParts);
      w.linef("kittens::tma::store_async(args.globals.{}, staging, {{0, 0, {}, {}}});",
              k.globals[store.global].name, row, col);
      w.line(resultParts == 1
                 ? "kittens::tma::store_commit_group(); // its read is waited for in release_finish"
                 : "kittens::tma::store_commit_group(); // its read is waited for before the "
                   "staging is written again, or in release_finish");
    }
    fn.close();
    if (resultParts > 1) {
      w.comment("The staging tile may be written again once this warpgroup's last store has "
                "read it.");
      auto wait = w.scope("__device__ static void wait_staging_read()");
      w.line("if (kittens::warpgroup::laneid() == 0)");
      w.line("  kittens::tma::store_async_read_wait<0>();");
      w.linef("kittens::warpgroup::sync({} + kittens::warpgroupid());", barrierBase);
    }
  }

  /// Each consumer warpgroup stages its rows in a finish block of its own, so
  /// that a warpgroup whose block lies past the stages need not wait for the
  /// others before its finish (the LCF template places warpgroup 0's last).
  void emitFinishBlock() {
    w.comment("One per consumer warpgroup (FINISH_PER_WARPGROUP).");
    w.line("struct finish_block { result_tile result; };");
  }
  void emitFinishPerWarpgroup() { w.line("static constexpr bool FINISH_PER_WARPGROUP = true;"); }

  /// The finish's last store reads the finish block while the next task's
  /// first products run: the template calls this hook after them, in each
  /// warpgroup, and the thread that issued the store waits for its read there
  /// and releases the block for the warpgroup's warps.
  void emitReleaseFinish() {
    auto fn = w.scope(fmt::format("__device__ static void "
                                  "release_finish(kittens::lcf::consumer_release_args<{}> &args)",
                                  structName));
    auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
    w.line("kittens::tma::store_async_read_wait<0>();");
    w.line("kittens::arrive(args.finish_finished, kittens::WARPGROUP_WARPS); // the finish block "
           "may be reused");
  }

#include "ProgramEmitter.inc"

  const Kernel &k;
  CudaWriter &w;
  DiagnosticEngine &diags;
  std::string structName;
  std::string layoutOf;
  /// Set while emitting `k`, a loop tail, as compute_tail of this kernel's struct.
  const Kernel *tailOf = nullptr;
  std::vector<Role> roles;
  int resultRows = 0, resultCols = 0; ///< one part of one warpgroup's result
  int resultParts = 1;                ///< column parts of the result (plan.resultParts)
  mutable bool withDefaults = false;
};

} // namespace

bool emitCuda(const std::vector<ir::Kernel> &kernels, const EmitOptions &options, EmittedFiles &out,
              DiagnosticEngine &diags) {
  TKC_INTERNAL_ASSERT(!kernels.empty(), "emitCuda needs at least one kernel");
  std::string banner = expandTemplate(templates::kHeader,
                                      {{"version", options.version}, {"spec", options.specName}});

  // The header: launcher declarations only.
  std::string header;
  llvm::raw_string_ostream headerStream(header);
  CudaWriter h(headerStream);
  std::string source;
  llvm::raw_string_ostream sourceStream(source);
  CudaWriter s(sourceStream);

  std::vector<std::unique_ptr<KernelEmitter>> emitters;
  bool ok = true;
  for (const ir::Kernel &kernel : kernels) {
    emitters.push_back(std::make_unique<KernelEmitter>(kernel, s, diags));
    ok &= emitters.back()->prepare();
  }
  if (!ok)
    return false;

  h.raw(banner);
  h.line("#pragma once");
  h.blank();
  h.line("#include <cuda_bf16.h>");
  h.line("#include <cuda_runtime.h>");
  h.line("#include <tkc/runtime/Check.h>");
  h.blank();
  {
    auto ns = h.scope("namespace tkc::kernels", "", "namespace tkc::kernels");
    llvm::StringSet<> declared;
    for (size_t i = 0; i < kernels.size(); ++i) {
      KernelEmitter declarations(kernels[i], h, diags);
      declarations.prepare();
      if (!declared.insert(declarations.publicName()).second)
        continue;
      h.blank();
      declarations.emitLauncherDeclaration();
    }
  }

  s.raw(banner);
  if (!options.headerName.empty()) {
    s.linef("#include \"{}\"", options.headerName);
    s.blank();
  } else {
    s.line("#include <cuda_bf16.h>");
    s.line("#include <cuda_runtime.h>");
    s.line("#include <tkc/runtime/Check.h>");
  }
  if (llvm::any_of(kernels, [](const Kernel &kernel) { return kernel.loopTail.has_value(); }))
    s.line("#include <tkc/runtime/Tiles.h>");
  s.line("#include <kittens/kittens.cuh>");
  s.line("#include <kittens/ops/global/epilogue_global.cuh>");
  s.blank();
  s.line("#include <string>");
  s.blank();
  {
    auto anon = s.scope("namespace", "", "namespace");
    if (llvm::any_of(emitters, [](const auto &e) { return e->usesGelu(); })) {
      s.raw(templates::kGelu);
      s.blank();
    }
    s.raw(templates::kLaunch);
    for (auto &emitter : emitters) {
      s.blank();
      emitter->emitKernelStruct();
      s.blank();
      emitter->emitStaticAsserts();
      emitter->emitWholeTiles();
    }
  }
  s.blank();
  {
    auto ns = s.scope("namespace tkc::kernels", "", "namespace tkc::kernels");
    // Launchers of kernels chosen at launch are internal: only the launcher
    // that chooses between them is declared.
    if (llvm::any_of(emitters, [](const auto &e) { return e->isChosen(); })) {
      s.blank();
      auto internal = s.scope("namespace", "", "namespace");
      for (auto &emitter : emitters)
        if (emitter->isChosen()) {
          s.blank();
          emitter->emitLauncher();
        }
    }
    llvm::StringSet<> emitted;
    for (auto &emitter : emitters) {
      if (!emitted.insert(emitter->publicName()).second)
        continue;
      s.blank();
      if (!emitter->isChosen()) {
        emitter->emitLauncher();
        continue;
      }
      llvm::SmallVector<const KernelEmitter *, 4> members;
      for (auto &other : emitters)
        if (other->publicName() == emitter->publicName())
          members.push_back(other.get());
      // Tried in order, the last unconditionally: the kernels chosen where
      // more conditions hold (rather than fail) read first.
      auto falseChoices = [](const KernelEmitter *e) {
        const Kernel &k = e->kernel();
        return llvm::count_if(k.params, [&](const auto &param) {
          return param.second == "false" && llvm::is_contained(k.entry->choices, param.first);
        });
      };
      llvm::stable_sort(members, [&](const KernelEmitter *a, const KernelEmitter *b) {
        return falseChoices(a) < falseChoices(b);
      });
      emitter->emitChoosingLauncher(members);
    }
  }
  headerStream.flush();
  sourceStream.flush();
  out.header = std::move(header);
  out.source = std::move(source);
  return true;
}

} // namespace tkc
