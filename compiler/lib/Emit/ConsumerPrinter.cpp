//===- ConsumerPrinter.cpp - The consumer's hooks --------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The consumer struct of a kernel: setup (per-warpgroup tile loads, the
// program's setup, the stages this warpgroup computes), compute (the program's
// compute; a loop tail's narrower stages; split stages), finish (the program's
// finish, or a result in parts through store_part) and release_finish.
//
//===----------------------------------------------------------------------===//
#include "KernelPrinter.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>

namespace tkc::emit {

void KernelPrinter::printRelease() {
  // The producer writes the columns read per column into the stage with ordinary stores: every
  // lane's reads of them come before lane 0's release.
  if (!k.columnReads.empty())
    w.line("__syncwarp(); // every lane has read the stage's columns");
  w.line("if (kittens::laneid() == 0)");
  w.line("  kittens::arrive(args.inputs_finished); // this warp is done with the stage");
}

void KernelPrinter::prologue(const std::vector<ir::ProgramOp> &ops, bool setup, bool next) {
  w.line("const int tkc_wg = kittens::warpgroupid();");
  if (k.plan.rotateRowBlocks) {
    if (setup)
      w.comment("Each warpgroup stops after its own rows, so the task's last row block needs "
                "the most stages: the warpgroups take the row blocks in turn, task by task.");
    w.line("const int tkc_block = (tkc_wg + args.task_iter) % NUM_CONSUMER_WARPGROUPS;");
    if (next)
      w.line("const int tkc_next_block = (tkc_wg + args.task_iter + 1) % "
             "NUM_CONSUMER_WARPGROUPS;");
  }
  if (bodyUsesRows(ops))
    w.linef("const int tkc_row = {} * 64 + kittens::warpgroup::warpid() * {}; // this "
            "warp's first row in the block",
            rowsBlock(), kWarpRows);
}

/// C++ that is true in a warpgroup whose rows all lie past the end of every
/// global its finish stores to: TMA clips tile stores and row stores skip rows
/// past the end, so nothing it computes is observable. Empty when a store is
/// not addressed by a task index (or there is none). With the tasks aligned to
/// the end, the warpgroups before row 0 instead (the finish skips them, which
/// keeps their row stores in bounds).
std::string KernelPrinter::idleWarpgroupCondition() const {
  if (k.plan.rowsFromEnd)
    // The last task ends in the last block of rows: only the first has idle warpgroups.
    return fmt::format("args.common.{} * {} + {}{} < 0", k.loopBound.stopVar, k.consumerWarpgroups,
                       rowsBlock(), minusLeadBlocks());
  std::vector<std::string> terms;
  for (const ir::ProgramOp &op : k.program.finish) {
    if (op.kind != ir::ProgramOp::Kind::StoreTile && op.kind != ir::ProgramOp::Kind::StoreRows)
      continue;
    size_t rowDim =
        op.kind == ir::ProgramOp::Kind::StoreTile ? op.coords.size() - 2 : op.coords.size() - 1;
    const ir::Coord &row = op.coords[rowDim];
    if (row.expr || row.var.empty() || row.var == k.loop.name)
      return "";
    std::string term =
        fmt::format("(long long)({} * {} + {}) * 64 >= {}", coordExpr(row), k.consumerWarpgroups,
                    rowsBlock(), extentExpr(k.globals[op.global].dims[rowDim]));
    if (!llvm::is_contained(terms, term))
      terms.push_back(term);
  }
  return llvm::join(terms, " && ");
}

/// The stages this warpgroup computes on, when fewer than the task's: none in
/// a warpgroup whose rows all lie past the end (`idle`), and with a loop that
/// stops after each row, those up to its own last row. The template releases
/// the rest without calling compute.
void KernelPrinter::printComputeIters(const std::string &idle) {
  // The consumer warpgroups meet every stage (a staged product): they all compute every stage.
  if (k.plan.consumersBarrierId)
    return;
  if (!idle.empty()) {
    w.comment(k.plan.rowsFromEnd
                  ? "Rows all before row 0 (the first task's leading warpgroups): nothing "
                    "computed here would be observable."
                  : "Rows all past the end of what finish stores: nothing computed here would "
                    "be observable.");
    w.linef("if ({})", idle);
    w.line("  args.compute_iters = 0;");
  }
  if (k.loopBound.perRow) {
    w.comment("Each row needs the stages up to itself only: this warpgroup stops after its "
              "own last row (the task's other warpgroups may need more).");
    auto scope = w.scope("");
    w.linef("const long long tkc_end = (long long)args.common.{} * {} + ({} + 1) * 64{}{};",
            k.loopBound.stopVar, k.loopBound.stopStep, rowsBlock(), minusLeadRows(), stopShift());
    w.linef("const long long tkc_extent = tkc_end < {0} ? tkc_end : {0};", extentExpr(k.loop.size));
    w.linef("const int tkc_iters = static_cast<int>((tkc_extent + {0} - 1) / {0}){1};", k.loop.step,
            k.loopBound.start ? fmt::format(" - args.common.{}_start", k.loop.name) : "");
    w.line("if (tkc_iters < args.compute_iters)");
    // A shift may end a warpgroup's rows before the loop's first element (C++ division
    // truncates toward zero, so tkc_iters may then be below 0).
    w.linef("  args.compute_iters = {};",
            k.loopBound.shift.empty() && k.loopBound.stopScalar.empty()
                ? "tkc_iters"
                : "tkc_iters > 0 ? tkc_iters : 0");
  }
  if (k.loopBound.start) {
    w.comment("And its rows need none of the stages before its own first row's first element "
              "(the task's loop begins at the task's first row's): the template releases those "
              "unread.");
    auto scope = w.scope("");
    w.linef("const double tkc_first = {};", loopStartElement(" + " + rowsBlock() + " * 64"));
    w.linef("const int tkc_begin = (tkc_first > 0 ? static_cast<int>((long long)tkc_first / {}) "
            ": 0) - args.common.{}_start;",
            k.loop.step, k.loop.name);
    w.line("if (tkc_begin > 0)");
    w.line("  args.compute_begin = tkc_begin;");
  }
}

/// With stores in compute, the block's last task waits for their reads of the staging tiles
/// (the shared memory must outlive them).
void KernelPrinter::printStageStoresDrained() {
  if (k.stagingTiles.empty())
    return;
  w.comment("The block's last task: each warp's stores every stage must have read its staging "
            "tiles before the block exits.");
  w.line("if (kittens::laneid() == 0 && args.next_num_iters < 0)");
  w.line("  kittens::tma::store_async_read_wait<0>();");
}

/// The compute hook's body: the program's compute, then this warp's release of the stage.
void KernelPrinter::printComputeBody() {
  prologue(k.program.compute);
  beginFunction();
  // Stage tiles read as numbers: each warp's 16 rows into registers once (ldmatrix), read
  // element by element from there.
  for (unsigned tile : ir::stageTilesRead(k.program)) {
    const ir::StageTile &t = k.stageTiles[tile];
    w.linef("{}<{}, {}> {}; // this warp's rows of '{}'", kittensOperandTile(t.dtype), kWarpRows,
            t.cols, stageRegisters(tile), t.name);
    w.linef("kittens::load({}, {}.subtile<{}, {}>(tkc_row / {}, 0));", stageRegisters(tile),
            stageRef(t), kWarpRows, t.cols, kWarpRows);
  }
  // Globals read per column: the lane's columns of the stage into registers once, before
  // their first reader (printColumnReadsFor).
  for (unsigned r = 0; r < k.columnReads.size(); ++r)
    if (auto span = ir::columnReadSpan(k, r))
      columnReadFirst.emplace_back(r, span->first);
  printOps(k.program.compute);
  columnReadFirst.clear();
  printRelease();
}

void KernelPrinter::printColumnReadsFor(const ir::ProgramOp &op) {
  const std::vector<ir::ProgramOp> &compute = k.program.compute;
  if (columnReadFirst.empty() || &op < compute.data() || &op >= compute.data() + compute.size())
    return;
  const size_t index = static_cast<size_t>(&op - compute.data());
  for (const auto &[r, first] : columnReadFirst) {
    if (first != index)
      continue;
    const ir::ColumnRead &read = k.columnReads[r];
    const spec::DType dtype =
        k.globals[read.global].dtype == spec::DType::F32 ? spec::DType::F32 : spec::DType::BF16;
    w.linef("{}<{}, {}>::row_vec tkc_cols{}; // '{}', this lane's columns of the stage",
            dtype == spec::DType::F32 ? "kittens::rt_fl" : "kittens::rt_bf", kWarpRows, k.loop.step,
            r, read.text);
    // A tail stage's columns lie where a full stage's do (the producer copied them there).
    w.linef("kittens::load_columns(tkc_cols{0}, args.input.tkc_cols{0}, {1});", r, k.loop.step);
  }
}

/// `k` being the loop tail of `of` (LoopTail): its compute as of's compute_tail, on the
/// tail's tiles at the start of of's stage.
void KernelPrinter::printTailCompute(const ir::Kernel &of) {
  tailOf = &of;
  auto fn = w.scope(fmt::format(
      "__device__ static void compute_tail(kittens::lcf::consumer_compute_args<{}> &args)",
      structName));
  w.comment(fmt::format("A tail stage: {} elements of {} from its first, held at the start of "
                        "the full stage's tiles.",
                        k.loop.step, k.loop.size.str()));
  for (const ir::Load &load : k.loads) {
    const ir::StageTile &t = k.stageTiles[load.tile];
    w.linef("auto &tkc_tail_{0} = *reinterpret_cast<{3}<{1}, {2}> *>(&args.input.{0});", t.name,
            t.rows, t.cols, kittensSharedTile(t.dtype));
  }
  w.linef("[[maybe_unused]] const long long tkc_element = {};",
          KernelPrinter(of, w).loopTailElement("args.iter", "(long long)"));
  printComputeBody();
  tailOf = nullptr;
}

/// Compute with split stages (split-finish): before them both halves of every stage; the split
/// stages all in the first one's call.
void KernelPrinter::printSplitCompute() {
  const ir::ProgramOp &mma = k.program.compute.front();
  TKC_INTERNAL_ASSERT(k.program.compute.size() == 1 && mma.kind == ir::ProgramOp::Kind::Mma &&
                          mma.dst == k.plan.resultValue,
                      "split stages compute one product into the result");
  w.line("const int tkc_wg = kittens::warpgroupid();");
  beginFunction();
  const ir::StageTile &a = k.stageTiles[mma.a.index];
  const ir::StageTile &b = k.stageTiles[mma.b.index];
  const std::string fn = mmaFunction(mma);
  const std::string acc = "args.state." + k.program.values[mma.dst].name;
  // This warpgroup's rows of the A tile of stage `input` (the columns of a transposed one).
  auto aRows = [&](const std::string &input) {
    if (k.consumerWarpgroups == 1)
      return input + "." + a.name;
    if (mma.a.transposed)
      return fmt::format("{}.{}.subtile<{}, {}>(0, tkc_wg)", input, a.name, a.rows,
                         a.cols / k.consumerWarpgroups);
    return fmt::format("{}.{}.subtile<{}, {}>(tkc_wg, 0)", input, a.name,
                       a.rows / k.consumerWarpgroups, a.cols);
  };
  auto products = [&](const std::string &input, const std::string &rows,
                      std::initializer_list<int> parts, const std::string &accumulate) {
    for (int p : parts)
      w.linef("kittens::warpgroup::{}({}[{}], {}, {}{});", fn, acc, p, rows,
              stagePart(input + "." + b.name, b, mma.b.transposed, p),
              accumulate.empty() ? "" : ", " + accumulate);
  };
  std::string rows = aRows("args.input");
  if (k.consumerWarpgroups > 1) {
    w.linef("auto tkc_{}_rows = {};", a.name, rows);
    rows = "tkc_" + a.name + "_rows";
  }
  const std::string first = mma.firstStageOverwrites ? "args.iter > 0" : "true";
  w.line("const int split = args.num_iters - SPLIT_STAGES; // the first split stage");
  {
    auto whole = w.scope("if (args.num_iters <= SPLIT_STAGES || args.iter < split)");
    products("args.input", rows, {0, 1}, first);
    w.line("kittens::warpgroup::mma_async_wait<0>();");
    printRelease();
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
    printRelease();
    w.line("return;");
  }
  products("args.input", rows, {0}, "");
  for (int i = 1; i < k.plan.splitStages; ++i) {
    std::string held = fmt::format("held{}", i);
    w.linef("args.wait_arrived_at(split + {});", i);
    w.linef("auto &{} = args.input_at(split + {});", held, i);
    products(held, aRows(held), {0}, "");
  }
  w.line("auto &held0 = args.input_at(split + 0);");
  for (int i = 0; i < k.plan.splitStages; ++i) {
    std::string held = fmt::format("held{}", i);
    products(held, aRows(held), {1}, "");
  }
  w.line("kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); // the left halves are done");
  w.linef("store_part<0>(args, {}[0], args.finish.result);", acc);
  w.line("kittens::warpgroup::mma_async_wait<0>();");
  w.comment("This stage only: the later split stages are released in their own calls.");
  printRelease();
}

/// `store_part<P>`: finish's ops on part P of this warpgroup's result, its TMA store through
/// `staging` last; and `wait_staging_read`, which waits for the last store's read of it.
void KernelPrinter::printStorePart() {
  const ir::Program &prog = k.program;
  w.comment("Part P of this warpgroup's result: finish's ops on it, then its TMA store through "
            "`staging`.");
  w.line("template <int P, class Args>");
  auto fn = w.scope("__device__ static void store_part(Args &args, accumulator &acc, "
                    "result_tile &staging)");
  w.line("const int tkc_wg = kittens::warpgroupid();");
  if (bodyUsesRows(prog.finish))
    w.linef("const int tkc_row = {} * 64 + kittens::warpgroup::warpid() * {}; // this "
            "warp's first row in the block",
            rowsBlock(), kWarpRows);
  beginFunction();
  resultPart = "acc";
  printOps(prog.finish);
  resultPart.clear();
  fn.close();
  w.comment("The staging tile may be written again once this warpgroup's last store has read "
            "it.");
  auto wait = w.scope("__device__ static void wait_staging_read()");
  w.line("if (kittens::warpgroup::laneid() == 0)");
  w.line("  kittens::tma::store_async_read_wait<0>();");
  w.linef("kittens::warpgroup::sync({} + kittens::warpgroupid());",
          k.plan.finishBarrierIds.front());
}

/// The finish's last store reads the finish block while the next task's first products run:
/// the template calls this hook after them, in each warpgroup, and the thread that issued the
/// store waits for its read there and releases the block for the warpgroup's warps.
void KernelPrinter::printReleaseFinish() {
  auto fn = w.scope(fmt::format(
      "__device__ static void release_finish(kittens::lcf::consumer_release_args<{}> &args)",
      structName));
  auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
  w.line("kittens::tma::store_async_read_wait<0>();");
  w.line("kittens::arrive(args.finish_finished, kittens::WARPGROUP_WARPS); // the finish block "
         "may be reused");
}

void KernelPrinter::printConsumer() {
  const ir::Program &prog = k.program;
  const std::string idle = idleWarpgroupCondition();
  auto consumer = w.scope("struct consumer", ";");
  {
    auto fn = w.scope(fmt::format(
        "__device__ static void setup(kittens::lcf::consumer_setup_args<{}> &args)", structName));
    bool loads = llvm::any_of(prog.setup, [](const ir::ProgramOp &op) {
      return op.kind == ir::ProgramOp::Kind::LoadTile;
    });
    if (llvm::any_of(prog.compute, [](const ir::ProgramOp &op) { return op.firstStageOverwrites; }))
      w.comment("Nothing to zero: every task has a stage (the launcher refuses sizes below 1), "
                "and the first stage's product overwrites the accumulator.");
    prologue(prog.setup, /*setup=*/true, /*next=*/loads && k.plan.setupBuffers == 2);
    // One thread arms the semaphore and issues every load of one task.
    auto issue = [&](const char *semaphore, bool next) {
      w.linef("kittens::expect_bytes(args.{}, {});", semaphore, k.plan.setupBytes);
      for (const ir::ProgramOp &op : prog.setup) {
        if (op.kind != ir::ProgramOp::Kind::LoadTile)
          continue;
        const ir::Global &g = k.globals[op.global];
        const ir::WarpgroupTile &t = k.warpgroupTiles[op.tile];
        if (k.sequences && ir::alongSequences(k, g, op.coords.size() - 2))
          w.linef("kittens::tma::load_async_at({}, args.globals.{}, {}, args.{});",
                  warpgroupTileRef(op.tile, next), g.name,
                  warpgroupElementCoord(op.coords, g, t.rows, t.cols, next), semaphore);
        else
          w.linef("kittens::tma::load_async({}, args.globals.{}, {}, args.{});",
                  warpgroupTileRef(op.tile, next), g.name, warpgroupCoord(op.coords, next),
                  semaphore);
      }
    };
    if (loads) {
      if (k.plan.setupBuffers == 2) {
        w.comment("This warpgroup's own rows of the per-warpgroup tiles: the first task loads "
                  "its own, every task the next one's into the other copy (below, once its "
                  "own have arrived), so that they have arrived when it starts.");
        auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
        if (llvm::any_of(prog.finish,
                         [&](const ir::ProgramOp &op) { return readWaitDeferred(op); })) {
          w.comment("The previous task's store may still read the copy loaded next.");
          w.line("kittens::tma::store_async_read_wait<0>();");
        }
        auto first = w.scope("if (args.task_iter == 0)");
        issue("setup_arrived", false);
      } else {
        w.comment("This warpgroup's own rows of the per-warpgroup tiles, waited for below.");
        auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
        issue("setup_arrived", false);
      }
    }
    beginFunction();
    printTaskReads();
    printOps(prog.setup);
    printComputeIters(idle);
    if (loads)
      w.line("kittens::wait(args.setup_arrived, args.setup_phase);");
    if (loads && k.plan.setupBuffers == 2) {
      // Requested beside the task's own, a block's first task would share its first loads with
      // the next one's, and its stages ran ~10 % slower.
      w.comment("The next task's rows, now that this one's have arrived.");
      auto elected = w.scope("if (kittens::warpgroup::laneid() == 0 && args.next_num_iters >= 0)");
      issue("next_setup_arrived", true);
    }
  }
  if (k.loopTail) {
    KernelPrinter tail(*k.loopTail->kernel, w);
    tail.structName = structName;
    tail.printTailCompute(k);
  }
  {
    auto fn = w.scope(
        fmt::format("__device__ static void compute(kittens::lcf::consumer_compute_args<{}> &args)",
                    structName));
    if (k.loopTail) {
      auto narrower = w.scope(fmt::format("if (args.iter >= args.globals.{}_full)", k.loop.name));
      w.line("compute_tail(args);");
      w.line("return;");
    }
    if (k.plan.splitStages)
      printSplitCompute();
    else
      printComputeBody();
  }
  auto fn = w.scope(fmt::format(
      "__device__ static void finish(kittens::lcf::consumer_finish_args<{}> &args)", structName));
  if (k.plan.consumersBarrierId) {
    w.comment("Every warpgroup's products of the last stage read this warpgroup's tiles: wait "
              "for them before the finish stages in those tiles or the next task loads there.");
    w.linef("kittens::named_sync({}, NUM_CONSUMER_WARPGROUPS * kittens::WARPGROUP_THREADS);",
            k.plan.consumersBarrierId);
  }
  printStageStoresDrained();
  if (k.plan.resultParts) {
    // The finish's ops are store_part's.
    w.line("const int tkc_wg = kittens::warpgroupid();");
    std::optional<CudaWriter::Scope> body;
    if (!idle.empty()) {
      w.comment("Nothing to store in a warpgroup whose rows all lie past the end.");
      body.emplace(w.scope(fmt::format("if (!({}))", idle)));
    }
    const std::string acc = "args.state." + prog.values[k.plan.resultValue].name;
    if (k.plan.splitStages) {
      w.comment("Split, compute stored the left half through the staging tile already.");
      w.line("if (args.num_iters <= SPLIT_STAGES)");
      w.linef("  store_part<0>(args, {}[0], args.finish.result);", acc);
    } else {
      w.linef("store_part<0>(args, {}[0], args.finish.result);", acc);
    }
    for (int part = 1; part < k.plan.resultParts; ++part) {
      w.line("wait_staging_read();");
      w.linef("store_part<{}>(args, {}[{}], args.finish.result);", part, acc, part);
    }
    body.reset();
    fn.close();
    printReleaseFinish();
    return;
  }
  prologue(prog.finish);
  {
    std::optional<CudaWriter::Scope> body;
    if (!idle.empty()) {
      w.comment(k.plan.rowsFromEnd ? "Nothing to store in a warpgroup whose rows all lie "
                                     "before row 0."
                                   : "Nothing to store in a warpgroup whose rows all lie "
                                     "past the end.");
      body.emplace(w.scope(fmt::format("if (!({}))", idle)));
    }
    for (const ir::RegValue &v : prog.values)
      if (v.laneShares) {
        w.comment(
            fmt::format("'{}' was kept as each lane's share of its rows: combine them.", v.name));
        w.linef("kittens::complete_row_reduce(args.state.{}, kittens::base_ops::add{{}});", v.name);
      }
    beginFunction();
    printOps(prog.finish);
  }
  if (needsFinishBlock()) {
    fn.close();
    printReleaseFinish();
    return;
  }
  w.line("if (kittens::laneid() == 0)");
  w.line("  kittens::arrive(args.finish_finished); // the finish block may be reused");
}

} // namespace tkc::emit
