//===- OpPrinter.cpp - Program ops as kittens code -------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Each register value is one warp's 16 rows of it: a tile is `rt_fl<16, cols>`,
// a row vector the tile's `col_vec`. Elementwise assignments become one
// `kittens::apply` with a lambda per element, so a statement is one fused pass
// over registers; products are wgmma calls waited for within their hook;
// globals are added with kittens' epilogue reads; stores go through a shared
// tile and TMA, or one value per row straight to global. How an assignment is
// computed (with its row sum, skipped under a mask or a unit factor) was
// decided by fuse-elementwise.
//
//===----------------------------------------------------------------------===//
#include "KernelPrinter.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>

#include <functional>

namespace tkc::emit {

namespace {
bool usesKind(const ir::Elementwise &e, ir::Elementwise::Kind kind) {
  return ir::anyOf(e, [&](const ir::Elementwise &x) { return x.kind == kind; });
}

/// The C++ function of a unary operator of the tile language.
const char *unaryFunction(ir::UnaryOp op) {
  switch (op) {
  case ir::UnaryOp::Exp2:
    return "kittens::fast::exp2";
  case ir::UnaryOp::Exp:
    return "kittens::fast::exp";
  case ir::UnaryOp::Log2:
    return "kittens::fast::log2";
  case ir::UnaryOp::Log:
    return "kittens::fast::log";
  case ir::UnaryOp::Sqrt:
    return "sqrtf";
  case ir::UnaryOp::Rcp:
    return "kittens::fast::rcp";
  case ir::UnaryOp::Tanh:
    return "kittens::fast::tanh";
  case ir::UnaryOp::Abs:
    return "fabsf";
  case ir::UnaryOp::Gelu:
    return "gelu_tanh{}";
  case ir::UnaryOp::GeluErf:
    return "kittens::gelu_erf";
  case ir::UnaryOp::Sigmoid:
    return "kittens::fast::sigmoid";
  case ir::UnaryOp::Silu:
    return "kittens::fast::silu";
  case ir::UnaryOp::Sin:
    return "sinf";
  case ir::UnaryOp::Cos:
    return "cosf";
  case ir::UnaryOp::Neg:
  case ir::UnaryOp::Not:
    break;
  }
  TKC_INTERNAL_ASSERT(false, "an operator without a function");
  return "";
}
} // namespace

void KernelPrinter::beginFunction() {
  declared.clear();
  operandsWritten.clear();
}

std::string KernelPrinter::valueRef(unsigned index) const {
  if (!resultPart.empty() && k.plan.resultParts && index == k.plan.resultValue)
    return resultPart;
  const ir::RegValue &v = k.program.values[index];
  return v.state ? "args.state." + v.name : v.name;
}

std::string KernelPrinter::taskReadRef(unsigned index) const {
  return fmt::format("args.state.tkc_read{}", index);
}

/// A column read's (ir::ColumnRead) pointer to the stage's first column, whose element along
/// the loop is `first`, and the count of columns present from there.
std::pair<std::string, std::string>
KernelPrinter::columnReadAccess(const ir::ColumnRead &read, const std::string &first) const {
  const ir::Global &g = k.globals[read.global];
  std::string offset = "0";
  for (size_t d = 0; d + 1 < read.coords.size(); ++d)
    offset = d == 0 ? fmt::format("(long long){}", coordExpr(read.coords[0]))
                    : fmt::format("({}) * {} + {}", offset, sizeExpr(g.dims[d]),
                                  coordExpr(read.coords[d]));
  if (read.coords.size() > 1)
    offset = fmt::format("({}) * (long long){}", offset, sizeExpr(g.dims.back()));
  if (ir::alongSequences(k, g, g.dims.size() - 1))
    offset = fmt::format("{} + {}", offset, sequenceStart());
  return {fmt::format("args.globals.{} + {} + {}", g.name, offset, first),
          fmt::format("static_cast<int>({} - {})", extentExpr(g.dims.back()), first)};
}

/// Each task's reads of globals as numbers, once, at its setup's start.
void KernelPrinter::printTaskReads() {
  for (size_t r = 0; r < k.taskReads.size(); ++r) {
    const ir::TaskRead &read = k.taskReads[r];
    const ir::Global &g = k.globals[read.global];
    std::string offset;
    for (size_t d = 0; d < read.coords.size(); ++d)
      offset = d == 0 ? fmt::format("(long long){}", coordExpr(read.coords[0]))
                      : fmt::format("({}) * {} + {}", offset, sizeExpr(g.dims[d]),
                                    coordExpr(read.coords[d]));
    w.comment(fmt::format("'{}', this task's", read.text));
    w.linef("{} = static_cast<float>(args.globals.{}[{}]);", taskReadRef(static_cast<unsigned>(r)),
            g.name, offset);
  }
}

namespace {
/// A whole number the same in every element of a task: a launch size, a task index, an
/// integer below 2^31 in magnitude; or a sum or difference of them.
bool isTaskInteger(const ir::Elementwise &e) {
  using Kind = ir::Elementwise::Kind;
  switch (e.kind) {
  case Kind::Size:
  case Kind::TaskIndex:
    return true;
  case Kind::Number:
    return e.number == std::trunc(e.number) && std::fabs(e.number) < 2147483648.0;
  case Kind::Unary:
    return e.unary == ir::UnaryOp::Neg && isTaskInteger(e.operands[0]);
  case Kind::Binary:
    return (e.binary == ir::BinaryOp::Add || e.binary == ir::BinaryOp::Sub) &&
           isTaskInteger(e.operands[0]) && isTaskInteger(e.operands[1]);
  default:
    return false;
  }
}

/// A position, or a sum or difference of positions and task integers (isTaskInteger) with at
/// least one position: an integer in the printed code (`row(i) + N - M` exactly, where a float
/// would round past 2^24).
bool isPosition(const ir::Elementwise &e) {
  using Kind = ir::Elementwise::Kind;
  switch (e.kind) {
  case Kind::RowIndex:
  case Kind::ColIndex:
    return true;
  case Kind::Unary:
    return e.unary == ir::UnaryOp::Neg && isPosition(e.operands[0]);
  case Kind::Binary:
    return (e.binary == ir::BinaryOp::Add || e.binary == ir::BinaryOp::Sub) &&
           (isPosition(e.operands[0]) || isPosition(e.operands[1])) &&
           (isPosition(e.operands[0]) || isTaskInteger(e.operands[0])) &&
           (isPosition(e.operands[1]) || isTaskInteger(e.operands[1]));
  default:
    return false;
  }
}

/// The same in every element of a task: numbers, scalars, per-task reads, sizes and task
/// indices, and what is computed from them alone (no register value, position or read of a
/// stage or of columns).
bool isUniform(const ir::Elementwise &e) {
  using Kind = ir::Elementwise::Kind;
  return !ir::anyOf(e, [](const ir::Elementwise &x) {
    return x.kind == Kind::Value || x.kind == Kind::RowIndex || x.kind == Kind::ColIndex ||
           x.kind == Kind::StageRead || x.kind == Kind::ColumnRead;
  });
}
} // namespace

/// A task integer (isTaskInteger) in a position's integer arithmetic: 64-bit, so that a sum of
/// sizes cannot overflow.
std::string KernelPrinter::taskInteger(const ir::Elementwise &e) const {
  using Kind = ir::Elementwise::Kind;
  switch (e.kind) {
  case Kind::Size:
    return fmt::format("(long long){}", extentExpr(ir::Size{std::nullopt, e.var}));
  case Kind::TaskIndex:
    return fmt::format("(long long)args.common.{}", e.var);
  case Kind::Number:
    return fmt::format("{}ll", static_cast<long long>(e.number));
  case Kind::Unary:
    return "(-" + taskInteger(e.operands[0]) + ")";
  default:
    return fmt::format("({} {} {})", taskInteger(e.operands[0]), ir::spelling(e.binary),
                       taskInteger(e.operands[1]));
  }
}

/// A position (isPosition) in three parts: the block's (an integer the same in every element),
/// the lane's (floats kittens converted once) and a constant of the unrolled loops.
KernelPrinter::PositionParts KernelPrinter::positionParts(const ir::Elementwise &e) const {
  using Kind = ir::Elementwise::Kind;
  PositionParts parts;
  auto add = [](std::string &sum, bool negative, const std::string &term) {
    sum = sum.empty() ? (negative ? "-" : "") + term
                      : fmt::format("{} {} {}", sum, negative ? "-" : "+", term);
  };
  std::function<void(const ir::Elementwise &, bool)> collect = [&](const ir::Elementwise &x,
                                                                   bool negative) {
    switch (x.kind) {
    case Kind::RowIndex:
      add(parts.block, negative,
          fmt::format("({} * {}{} + tkc_row)", varExpr(x.var), x.step,
                      x.var == k.loopBound.stopVar ? minusLeadRows() : ""));
      add(parts.lane, negative, "tkc_e.lane_row");
      add(parts.constant, negative, "tkc_e.const_row");
      return;
    case Kind::ColIndex:
      add(parts.block, negative,
          tailOf && x.var == k.loop.name ? std::string("tkc_element")
                                         : fmt::format("{} * {}", varExpr(x.var), x.step));
      add(parts.lane, negative, "tkc_e.lane_col");
      add(parts.constant, negative, "tkc_e.const_col");
      return;
    case Kind::Unary:
      collect(x.operands[0], !negative);
      return;
    case Kind::Binary:
      if (!isPosition(x)) {
        add(parts.block, negative, taskInteger(x));
        return;
      }
      collect(x.operands[0], negative);
      collect(x.operands[1], x.binary == ir::BinaryOp::Sub ? !negative : negative);
      return;
    default:
      add(parts.block, negative, taskInteger(x));
      return;
    }
  };
  collect(e, false);
  return parts;
}

/// A position as a float: the block's integer converted once, the lane's floats added, and each
/// element adds its one constant; no integer is converted per element.
std::string KernelPrinter::floatPosition(const ir::Elementwise &e) const {
  PositionParts p = positionParts(e);
  return fmt::format("((static_cast<float>({}) + ({})) + static_cast<float>({}))", p.block, p.lane,
                     p.constant);
}

/// A factor the same in every element times a position (ALiBi's `slope * (col(j) - row(i))`),
/// distributed: the factor times the block's and the lane's parts is the same in every element
/// (computed once), and each element adds the factor times its constant in one fused
/// multiply-add, where the undistributed product costs an add and a multiply.
std::string KernelPrinter::scaledPosition(const std::string &factor,
                                          const ir::Elementwise &position) const {
  PositionParts p = positionParts(position);
  return fmt::format("fmaf({0}, static_cast<float>({1}), {0} * (static_cast<float>({2}) + ({3})))",
                     factor, p.constant, p.block, p.lane);
}

std::string KernelPrinter::elementwise(const ir::Elementwise &e) const {
  using Kind = ir::Elementwise::Kind;
  auto operand = [&](size_t i) { return elementwise(e.operands[i]); };
  // A factor, divisor or function argument that is a position: as a float.
  auto number = [&](size_t i) {
    return isPosition(e.operands[i]) ? floatPosition(e.operands[i]) : operand(i);
  };
  switch (e.kind) {
  case Kind::Value:
    return fmt::format("kittens::at({}, tkc_e)", valueRef(e.value));
  case Kind::Number:
    return floatLiteral(e.number);
  case Kind::Scalar:
    return "args.globals." + k.scalars[e.value].name;
  case Kind::TaskRead:
    return taskReadRef(e.value);
  case Kind::Size:
    return fmt::format("static_cast<float>({})", extentExpr(ir::Size{std::nullopt, e.var}));
  case Kind::TaskIndex:
    return fmt::format("static_cast<float>(args.common.{})", e.var);
  case Kind::RowIndex:
    return fmt::format("({} * {}{} + tkc_row + tkc_e.row)", varExpr(e.var), e.step,
                       e.var == k.loopBound.stopVar ? minusLeadRows() : "");
  case Kind::ColIndex:
    if (tailOf && e.var == k.loop.name)
      return "(tkc_element + tkc_e.col)";
    return fmt::format("({} * {} + tkc_e.col)", varExpr(e.var), e.step);
  case Kind::StageRead:
    // This warp's rows of the stage tile, loaded into registers at the top of compute.
    return fmt::format("kittens::at({}, tkc_e)", stageRegisters(e.value));
  case Kind::ColumnRead:
    // The lane's columns, loaded before their first reader, or read from the stage at each
    // element (column-reads-in-place).
    if (!k.columnReads[e.value].inPlace)
      return fmt::format("kittens::at(tkc_cols{}, tkc_e)", e.value);
    return fmt::format("kittens::column_at(args.input.tkc_cols{}, tkc_e)", e.value);
  case Kind::Unary:
    if (e.unary == ir::UnaryOp::Neg)
      return "(-" + operand(0) + ")";
    if (e.unary == ir::UnaryOp::Not)
      return "(!" + operand(0) + ")";
    return std::string(unaryFunction(e.unary)) + "(" + number(0) + ")";
  case Kind::Binary:
    switch (e.binary) {
    case ir::BinaryOp::Max:
    case ir::BinaryOp::Min:
      return fmt::format("f{}f({}, {})", ir::spelling(e.binary), operand(0), operand(1));
    case ir::BinaryOp::Pow:
      return fmt::format("powf({}, {})", number(0), number(1));
    case ir::BinaryOp::Mul:
      for (size_t i = 0; i < 2; ++i)
        if (isPosition(e.operands[1 - i]) && isUniform(e.operands[i]))
          return scaledPosition(operand(i), e.operands[1 - i]);
      [[fallthrough]];
    case ir::BinaryOp::Div:
      return fmt::format("({} {} {})", number(0), ir::spelling(e.binary), number(1));
    case ir::BinaryOp::And:
      return fmt::format("({} && {})", operand(0), operand(1));
    case ir::BinaryOp::Or:
      return fmt::format("({} || {})", operand(0), operand(1));
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
      if (isPosition(e)) {
        // Integers: the task integers in 64 bits, the positions as they print.
        auto side = [&](size_t i) {
          return isPosition(e.operands[i]) ? operand(i) : taskInteger(e.operands[i]);
        };
        return fmt::format("({} {} {})", side(0), ir::spelling(e.binary), side(1));
      }
      [[fallthrough]];
    default:
      // A position against a task integer (`col(j) >= N`): in integers, exact at every size.
      if (ir::isComparison(e.binary))
        for (size_t i = 0; i < 2; ++i)
          if (isPosition(e.operands[i]) && isTaskInteger(e.operands[1 - i]))
            return i == 0 ? fmt::format("({} {} {})", operand(0), ir::spelling(e.binary),
                                        taskInteger(e.operands[1]))
                          : fmt::format("({} {} {})", taskInteger(e.operands[0]),
                                        ir::spelling(e.binary), operand(1));
      return fmt::format("({} {} {})", operand(0), ir::spelling(e.binary), operand(1));
    }
  case Kind::Where:
    return fmt::format("({} ? {} : {})", operand(0), operand(1), operand(2));
  }
  return "";
}

bool KernelPrinter::bodyUsesRows(const std::vector<ir::ProgramOp> &ops) const {
  return llvm::any_of(ops, [](const ir::ProgramOp &op) {
    return usesKind(op.expr, ir::Elementwise::Kind::RowIndex) ||
           usesKind(op.expr, ir::Elementwise::Kind::StageRead) ||
           op.kind == ir::ProgramOp::Kind::StoreRows || op.kind == ir::ProgramOp::Kind::LoadRows ||
           (op.kind == ir::ProgramOp::Kind::AddGlobal && !op.perColumn);
  });
}

void KernelPrinter::declareIfNew(unsigned index) {
  const ir::RegValue &v = k.program.values[index];
  if (v.state || !declared.insert(v.name).second)
    return;
  if (v.shape == ir::RegValue::Shape::RowVector)
    w.linef("row_vector {};", v.name);
  else
    w.linef("kittens::rt_fl<{}, {}> {};", kWarpRows, v.warpgroupCols(), v.name);
}

void KernelPrinter::printApply(const std::string &dst, bool tile, const ir::Elementwise &e) {
  w.linef("kittens::apply({}, [&](const kittens::{} &tkc_e) {{ return {}; }});", dst,
          tile ? "element" : "vector_element", elementwise(e));
}

std::string KernelPrinter::rowReduceCall(const ir::ProgramOp &reduce, const std::string &f) const {
  bool max = reduce.reduce == ir::Reduce::Max;
  return fmt::format("kittens::row_reduce_elements{}<kittens::rt_fl<{}, {}>>({}, "
                     "kittens::base_ops::{}{{}}, {}, {}",
                     reduce.laneShares ? "_partial" : "", kWarpRows, reduce.cols,
                     valueRef(reduce.dst), max ? "max" : "add", max ? "-INFINITY" : "0.0f", f);
}

void KernelPrinter::printOps(const std::vector<ir::ProgramOp> &ops) {
  printOps(ops.data(), ops.data() + ops.size());
}

void KernelPrinter::printOps(const ir::ProgramOp *begin, const ir::ProgramOp *end) {
  // Products in flight, in issue order, with the op before which each is waited for: wgmma
  // groups retire in order, so one wait covers the latest product needed and all before it.
  struct InFlight {
    const ir::ProgramOp *waitAt;
    int groups;
  };
  std::vector<InFlight> inFlight;
  bodyBegin = begin;
  bodyEnd = end;
  auto waitFor = [&](const ir::ProgramOp *at) {
    size_t needed = 0; // products to retire: the first `needed`
    for (size_t i = 0; i < inFlight.size(); ++i)
      if (inFlight[i].waitAt <= at)
        needed = i + 1;
    if (!needed)
      return;
    int younger = 0;
    for (size_t i = needed; i < inFlight.size(); ++i)
      younger += inFlight[i].groups;
    if (younger)
      w.comment(fmt::format("Wait for the products needed from here on; the {} issued after "
                            "them stay{} in flight.",
                            inFlight.size() - needed, inFlight.size() - needed == 1 ? "s" : ""));
    w.linef("kittens::warpgroup::mma_async_wait<{}>();", younger);
    inFlight.erase(inFlight.begin(), inFlight.begin() + static_cast<std::ptrdiff_t>(needed));
  };
  for (const ir::ProgramOp *it = begin; it != end; ++it) {
    const ir::ProgramOp &op = *it;
    waitFor(it);
    if (op.kind == ir::ProgramOp::Kind::Assign && op.fusedRowSum && it + 1 != end)
      waitFor(it + 1);
    // After the wait: loaded before it, the columns made the backward 1-4 % slower.
    printColumnReadsFor(op);
    switch (op.kind) {
    case ir::ProgramOp::Kind::Assign:
      if (op.fusedRowSum) {
        TKC_INTERNAL_ASSERT(it + 1 != end, "a fused row sum lies in another range");
        printAssignAndRowSum(op, *(it + 1));
        ++it;
        break;
      }
      printAssign(op);
      break;
    case ir::ProgramOp::Kind::RowReduce:
      printRowReduce(op);
      break;
    case ir::ProgramOp::Kind::Mma:
      printMma(op);
      if (op.shadow)
        w.comment(fmt::format("In flight while the next {} (none needs its result or changes "
                              "its operands).",
                              op.shadow == 1 ? std::string("op runs")
                                             : fmt::format("{} ops run", op.shadow)));
      inFlight.push_back({std::min(it + 1 + op.shadow, end), ir::productGroups(k, op)});
      break;
    case ir::ProgramOp::Kind::AddGlobal:
      printAddGlobal(op);
      break;
    case ir::ProgramOp::Kind::LoadTile:
      break; // issued together at the top of setup
    case ir::ProgramOp::Kind::StoreTile:
      printStoreTile(op);
      break;
    case ir::ProgramOp::Kind::StoreRows:
      printStoreRows(op);
      break;
    case ir::ProgramOp::Kind::LoadRows:
      printLoadRows(op);
      break;
    }
  }
  // Waited for within the range (a hook): a product left in flight past it makes ptxas
  // serialize every wgmma of the kernel (C7518), measured slower.
  waitFor(end);
}

void KernelPrinter::printAssign(const ir::ProgramOp &op) {
  declareIfNew(op.dst);
  const ir::RegValue &v = k.program.values[op.dst];
  if (op.skipUntouched) {
    printMaskedAssign(op, v);
    return;
  }
  if (op.skipUnitFactor) {
    w.comment(fmt::format("A factor of 1 in every row of this warp leaves '{}' as it is: skip "
                          "the pass (the rows' maximum did not move).",
                          v.name));
    w.linef("if (kittens::warp_any_differs({}, 1.0f))", valueRef(*op.skipUnitFactor));
  }
  printApply(valueRef(op.dst), v.shape == ir::RegValue::Shape::Tile, op.expr);
}

/// `p = e` and `t = rowsum(p)` in one pass (fuse-elementwise): each element computed and added
/// to its row's sum; with `writesOperand` the pass writes the product's bf16 operand, and p
/// exists in f32 only for a partial last tile, whose sum skips the absent columns.
void KernelPrinter::printAssignAndRowSum(const ir::ProgramOp &op, const ir::ProgramOp &sum) {
  const ir::RegValue &v = k.program.values[op.dst];
  const bool direct = op.writesOperand;
  const spec::DType dtype = operandDType(op.dst);
  const std::string operand = operandName(op.dst, dtype);
  if (!direct || sum.reduceBound)
    declareIfNew(op.dst);
  declareIfNew(sum.dst);
  if (direct) {
    if (declared.insert(operand).second)
      w.linef("{}<{}, {}> {}; // the product's operand", kittensOperandTile(dtype), kWarpRows,
              v.cols, operand);
    operandsWritten.insert(operand);
  }
  auto scope = w.scope("");
  w.linef("auto tkc_v = [&](const kittens::element &tkc_e) {{ return {}; }};",
          elementwise(op.expr));
  std::string fused =
      rowReduceCall(sum,
                    fmt::format("[&](const kittens::element &tkc_e) {{ const float tkc_x = "
                                "tkc_v(tkc_e); kittens::set({}, tkc_e, tkc_x); return tkc_x; }}",
                                direct ? operand : valueRef(op.dst))) +
      ");";
  w.comment(direct ? fmt::format("'{}' (as the product's {} operand) and its row sum in one "
                                 "pass.",
                                 v.name, spec::spelling(dtype))
                   : fmt::format("'{}' and its row sum in one pass.", v.name));
  if (!sum.reduceBound) {
    w.line(fused);
    return;
  }
  w.linef("const int tkc_limit = {};", columnLimit(*sum.reduceBound));
  {
    auto full = w.scope(fmt::format("if (tkc_limit >= {})", sum.cols));
    w.line(fused);
  }
  auto partial = w.scope("else");
  w.comment("The last tile: the sum skips the absent columns.");
  w.linef("kittens::apply({}, tkc_v);", valueRef(op.dst));
  w.line(rowReduceCall(sum, fmt::format("[&](const kittens::element &tkc_e) {{ return "
                                        "kittens::at({}, tkc_e); }}",
                                        valueRef(op.dst))) +
         ", tkc_limit);");
  if (direct)
    w.linef("kittens::copy({}, {});", operand, valueRef(op.dst));
}

/// C++ that is true only if `e` holds nowhere (`holds` false) or everywhere (`holds` true) in
/// the warp's slice: an affine comparison takes its extremes at the slice's corners.
std::string KernelPrinter::uniformly(const ir::Elementwise &e, bool holds) {
  if (e.kind == ir::Elementwise::Kind::Binary && ir::isComparison(e.binary)) {
    std::string name = fmt::format("tkc_cmp{}", comparisons++);
    w.linef("auto {} = [&](const kittens::element &tkc_e) {{ return {}; }};", name, elementwise(e));
    std::vector<std::string> corners;
    for (int c = 0; c < 4; ++c)
      corners.push_back(fmt::format("{}{}(tkc_corner[{}])", holds ? "" : "!", name, c));
    return "(" + llvm::join(corners, " && ") + ")";
  }
  if (e.kind == ir::Elementwise::Kind::Unary)
    return uniformly(e.operands[0], !holds);
  // and: nowhere if either side is nowhere; everywhere if both are.
  // or: nowhere if both are; everywhere if either is.
  bool both = (e.binary == ir::BinaryOp::And) == holds;
  std::string a = uniformly(e.operands[0], holds);
  std::string b = uniformly(e.operands[1], holds);
  return "(" + a + (both ? " && " : " || ") + b + ")";
}

/// `x = where(c, a, x)` (or `where(c, x, a)`), c affine in the position (skipUntouched).
void KernelPrinter::printMaskedAssign(const ir::ProgramOp &op, const ir::RegValue &v) {
  const ir::Elementwise &e = op.expr;
  bool keepWhenFalse = e.operands[2].isValue(op.dst);
  auto scope = w.scope("");
  w.comment("The mask is affine in the element's row and column, so its value at the four "
            "corners of this warp's rows decides whether any element changes.");
  w.linef("const kittens::element tkc_corner[4] = {{{{0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, {0}}}, "
          "{{0, 0, 0, 0, {1}, 0}}, {{0, 0, 0, 0, {1}, {0}}}}};",
          v.cols - 1, kWarpRows - 1);
  std::string untouched = uniformly(e.operands[0], /*holds=*/!keepWhenFalse);
  w.linef("if (!{})", untouched);
  printApply("  " + valueRef(op.dst), true, e);
}

void KernelPrinter::printRowReduce(const ir::ProgramOp &op) {
  declareIfNew(op.dst);
  std::string call = rowReduceCall(op, "tkc_f");
  auto scope = w.scope("");
  w.linef("auto tkc_f = [&](const kittens::element &tkc_e) {{ return {}; }};",
          elementwise(op.expr));
  if (!op.reduceBound) {
    w.line(call + ");");
    return;
  }
  w.comment("Columns past the end of the loaded tile are absent: skipped, not zero (only "
            "the last tile has any).");
  w.linef("const int tkc_limit = {};", columnLimit(*op.reduceBound));
  w.linef("if (tkc_limit >= {})", op.cols);
  w.line("  " + call + ");");
  w.line("else");
  w.line("  " + call + ", tkc_limit);");
}

std::string KernelPrinter::stageRef(const ir::StageTile &t) const {
  return (tailOf ? "tkc_tail_" : "args.input.") + t.name;
}

std::string KernelPrinter::stagePart(const std::string &tile, const ir::StageTile &t,
                                     bool transposed, int p) const {
  const int parts = k.plan.resultParts;
  return transposed ? fmt::format("{}.subtile<{}, {}>({}, 0)", tile, t.rows / parts, t.cols, p)
                    : fmt::format("{}.subtile<{}, {}>(0, {})", tile, t.rows, t.cols / parts, p);
}

spec::DType KernelPrinter::operandDType(unsigned value) const {
  spec::DType dtype = spec::DType::BF16;
  ir::forEachOp(k.program, [&](ir::Body, const ir::ProgramOp &op) {
    if (op.kind == ir::ProgramOp::Kind::Mma && op.a.where == ir::MmaOperand::Where::Register &&
        op.a.index == value)
      dtype = ir::productDType(k, op.a, op.b);
  });
  return dtype;
}

std::string KernelPrinter::operandName(unsigned value, spec::DType dtype) const {
  return fmt::format("tkc_{}_{}", k.program.values[value].name, spec::spelling(dtype));
}

std::string KernelPrinter::mmaOperand(const ir::MmaOperand &o, bool left, int64_t contraction,
                                      const std::optional<ir::ColumnBound> &bound,
                                      spec::DType dtype, bool copied) {
  switch (o.where) {
  case ir::MmaOperand::Where::Stage: {
    const ir::StageTile &t = k.stageTiles[o.index];
    // A left operand holds the block's rows: each warpgroup multiplies its own 64 (the
    // columns of a transposed one).
    if (!left || k.consumerWarpgroups == 1)
      return stageRef(t);
    std::string name = "tkc_" + t.name + "_rows";
    if (declared.insert(name).second) {
      if (o.transposed)
        w.linef("auto {} = {}.subtile<{}, {}>(0, {});", name, stageRef(t), t.rows,
                t.cols / k.consumerWarpgroups, rowsBlock());
      else
        w.linef("auto {} = {}.subtile<{}, {}>({}, 0);", name, stageRef(t),
                t.rows / k.consumerWarpgroups, t.cols, rowsBlock());
    }
    return name;
  }
  case ir::MmaOperand::Where::Warpgroup:
    return warpgroupTileRef(o.index);
  case ir::MmaOperand::Where::Register:
    return operandCopy(o.index, dtype, contraction, bound, copied);
  }
  return "";
}

std::string KernelPrinter::operandCopy(unsigned value, spec::DType dtype, int64_t cols,
                                       const std::optional<ir::ColumnBound> &bound, bool copied) {
  const ir::RegValue &v = k.program.values[value];
  std::string name = operandName(value, dtype);
  if (copied) {
    w.comment(fmt::format("'{}' as the {} copy an earlier product made of it", v.name,
                          spec::spelling(dtype)));
    return name;
  }
  // Unless the pass that computed it wrote it (printAssignAndRowSum).
  if (!operandsWritten.count(name)) {
    w.comment(fmt::format("'{}' as the {} register operand of the product", v.name,
                          spec::spelling(dtype)));
    if (declared.insert(name).second)
      w.linef("{}<{}, {}> {};", kittensOperandTile(dtype), kWarpRows, cols, name);
    w.linef("kittens::copy({}, {});", name, valueRef(value));
  }
  if (bound) {
    w.comment("Its absent columns meet the zero-filled rows TMA loaded past the end: make "
              "them zero too, so nothing else can leak in.");
    w.linef("if ({} < {})", columnLimit(*bound), cols);
    w.linef("  kittens::zero_columns_from({}, {});", name, columnLimit(*bound));
  }
  return name;
}

bool KernelPrinter::copiedBefore(const ir::ProgramOp &op) const {
  if (&op < bodyBegin || &op >= bodyEnd)
    return false;
  return ir::operandCopySource(k, llvm::ArrayRef<ir::ProgramOp>(bodyBegin, bodyEnd),
                               static_cast<size_t>(&op - bodyBegin))
      .has_value();
}

std::string KernelPrinter::mmaFunction(const ir::ProgramOp &mma) const {
  return std::string("mma_") + (mma.a.transposed ? "At" : "A") + (mma.b.transposed ? "Bt" : "B");
}

void KernelPrinter::printStagedMma(const ir::ProgramOp &op) {
  const ir::RegValue &x = k.program.values[op.a.index];
  const ir::RegValue &r = k.program.values[op.dst];
  const ir::OperandStaging &t = k.operandStagings[op.a.staging];
  const ir::WarpgroupTile &b = k.warpgroupTiles[op.b.index];
  const ir::Parts parts = *r.stageRows;
  declareIfNew(op.dst);
  // Staged from its bf16 copy (declared out here: a later product of it may read the copy).
  const std::string copy =
      operandCopy(op.a.index, ir::productDType(k, op.a, op.b), x.cols, x.bound, copiedBefore(op));
  auto scope = w.scope("");
  w.comment(fmt::format("'{}.T @ {}' contracts over the block's rows: each warpgroup stages its "
                        "rows of '{}' in this stage's ring slot (a stage that reuses the slot "
                        "starts only once every warpgroup has released this one), and all "
                        "meet before the products read every copy.",
                        x.name, b.name, x.name));
  w.linef("auto &tkc_staged = args.scratch.{}[kittens::lcf::traits<{}>::slot(args.ring_base, "
          "args.iter)];",
          t.name, structName);
  w.linef("kittens::warpgroup::store(tkc_staged[tkc_wg], {});", copy);
  w.line("kittens::fence_async_shared(); // make the stores visible to wgmma");
  w.linef("kittens::named_sync({}, NUM_CONSUMER_WARPGROUPS * kittens::WARPGROUP_THREADS);",
          k.plan.consumersBarrierId);
  std::string rowPart = parts.rows > 1 ? stageRowBlock(parts) : "";
  std::string colPart = parts.cols > 1 ? fmt::format("tkc_wg % {}", parts.cols) : "";
  w.comment(fmt::format("This warpgroup's block of the result: {}{}{}.",
                        rowPart.empty() ? "all its rows" : "row block " + rowPart, ", ",
                        colPart.empty() ? "all its columns" : "column block " + colPart));
  for (int wg = 0; wg < k.consumerWarpgroups; ++wg) {
    std::string a = fmt::format("tkc_staged[{}]", wg);
    if (!rowPart.empty())
      a += fmt::format(".subtile<64, 64>(0, {})", rowPart);
    std::string bt = warpgroupTileRef(op.b.index, false, std::to_string(wg));
    if (!colPart.empty())
      bt += fmt::format(".subtile<{}, {}>(0, {})", b.rows, b.cols / parts.cols, colPart);
    w.linef("kittens::warpgroup::mma_AtB({}, {}, {}, {});", valueRef(op.dst), a, bt,
            wg > 0 ? "true" : "false");
  }
}

void KernelPrinter::printMma(const ir::ProgramOp &op) {
  if (op.a.where == ir::MmaOperand::Where::Register && op.a.transposed) {
    printStagedMma(op);
    return;
  }
  const ir::Program &prog = k.program;
  declareIfNew(op.dst);
  int64_t contraction = 0;
  switch (op.a.where) {
  case ir::MmaOperand::Where::Stage:
    contraction = op.a.transposed ? k.stageTiles[op.a.index].rows : k.stageTiles[op.a.index].cols;
    break;
  case ir::MmaOperand::Where::Warpgroup:
    contraction =
        op.a.transposed ? k.warpgroupTiles[op.a.index].rows : k.warpgroupTiles[op.a.index].cols;
    break;
  case ir::MmaOperand::Where::Register:
    contraction = prog.values[op.a.index].cols;
    break;
  }
  std::optional<ir::ColumnBound> aBound;
  if (op.a.where == ir::MmaOperand::Where::Register)
    aBound = prog.values[op.a.index].bound;
  const spec::DType dtype = ir::productDType(k, op.a, op.b);
  std::string a = mmaOperand(op.a, true, contraction, aBound, dtype, copiedBefore(op));
  std::string b = mmaOperand(op.b, false, contraction, std::nullopt, dtype, false);
  const std::string fn = mmaFunction(op);
  const std::string accumulate = op.firstStageOverwrites ? "args.iter > 0"
                                 : op.accumulate         ? "true"
                                                         : "false";
  if (k.plan.resultParts && op.dst == k.plan.resultValue) {
    // The result in column parts: one product a part, on that part of B's columns.
    TKC_INTERNAL_ASSERT(op.b.where == ir::MmaOperand::Where::Stage,
                        "a result in parts multiplies a stage tile");
    for (int p = 0; p < k.plan.resultParts; ++p)
      w.linef("kittens::warpgroup::{}({}[{}], {}, {}, {});", fn, valueRef(op.dst), p, a,
              stagePart(b, k.stageTiles[op.b.index], op.b.transposed, p), accumulate);
  } else {
    w.linef("kittens::warpgroup::{}({}, {}, {}, {});", fn, valueRef(op.dst), a, b, accumulate);
  }
}

/// `x = x + G[...]`: kittens' epilogue reads, bounded by the global's extents. In store_part
/// (a result in parts), part P's columns.
void KernelPrinter::printAddGlobal(const ir::ProgramOp &op) {
  const ir::RegValue &v = k.program.values[op.dst];
  const bool inPart = !resultPart.empty() && k.plan.resultParts && op.dst == k.plan.resultValue;
  std::string col = fmt::format("{} * {}", coordExpr(op.coords.back()), v.cols);
  if (inPart)
    col += fmt::format(" + P * {}", partCols());
  const std::string &name = k.globals[op.global].name;
  if (op.perColumn) {
    w.linef("kittens::add_col_from_global({}, args.globals.{}, {{0, 0, 0, {}}});", valueRef(op.dst),
            name, col);
    return;
  }
  std::string row =
      fmt::format("{} * {} + tkc_row", coordExpr(op.coords[op.coords.size() - 2]), v.rows);
  w.linef("kittens::add_from_global({}, args.globals.{}, {{0, 0, {}, {}}});", valueRef(op.dst),
          name, row, col);
}

/// The finish's last store that stages in this task's copy of a double-buffered warpgroup
/// tile: its TMA read is waited for by the next task's setup, before it loads into the copy.
bool KernelPrinter::readWaitDeferred(const ir::ProgramOp &store) const {
  if (k.plan.setupBuffers != 2 || store.tile >= k.warpgroupTiles.size())
    return false;
  const std::vector<ir::ProgramOp> &finish = k.program.finish;
  auto last = std::find_if(finish.rbegin(), finish.rend(), [&](const ir::ProgramOp &op) {
    return op.kind == ir::ProgramOp::Kind::StoreTile;
  });
  return last != finish.rend() && &*last == &store;
}

/// The finish's last store that stages in the finish block: its TMA read is waited for in
/// release_finish, during the next task's first products.
bool KernelPrinter::releaseDeferred(const ir::ProgramOp &store) const {
  const std::vector<ir::ProgramOp> &finish = k.program.finish;
  auto last = std::find_if(finish.rbegin(), finish.rend(), [&](const ir::ProgramOp &op) {
    return op.kind == ir::ProgramOp::Kind::StoreTile && op.tile >= k.warpgroupTiles.size();
  });
  return last != finish.rend() && &*last == &store;
}

std::string KernelPrinter::storeCall(const ir::ProgramOp &store) const {
  return store.accumulate ? "store_add_async" : "store_async";
}

std::string KernelPrinter::storedTile(const ir::ProgramOp &store) {
  if (store.expr.kind == ir::Elementwise::Kind::Value)
    return valueRef(store.expr.value);
  w.linef("kittens::rt_fl<{}, {}> tkc_out;", kWarpRows, store.cols);
  printApply("tkc_out", true, store.expr);
  return "tkc_out";
}

/// A store in compute: every stage, each consumer warp stages its rows in a tile of its own,
/// once its previous stage's TMA store has read that, and stores (or adds) them by TMA. The
/// warps go on without meeting: a warpgroup's tile would need two warpgroup barriers a stage
/// (the tile free, then every warp's rows written) where a warp's needs two __syncwarp.
void KernelPrinter::printStageStore(const ir::ProgramOp &op) {
  const ir::StagingTile &t = k.stagingTiles[op.tile];
  const std::string staging = fmt::format(
      "args.scratch.{}[tkc_wg * {} + kittens::warpgroup::warpid()]", t.name, kWarpgroupWarps);
  auto scope = w.scope("");
  const std::string src = storedTile(op);
  w.comment(fmt::format("'{}' every stage, each warp its own rows: the warp's previous store "
                        "must have read its staging tile before it is written again.",
                        k.globals[op.global].name));
  w.line("if (kittens::laneid() == 0)");
  w.line("  kittens::tma::store_async_read_wait<0>();");
  w.line("__syncwarp();");
  w.linef("kittens::store({}, {});", staging, src);
  w.line("kittens::fence_async_shared(); // make the stores visible to TMA");
  w.line("__syncwarp();");
  auto elected = w.scope("if (kittens::laneid() == 0)");
  std::optional<ir::Parts> stageRows;
  if (op.expr.kind == ir::Elementwise::Kind::Value)
    stageRows = k.program.values[op.expr.value].stageRows;
  w.linef("kittens::tma::{}(args.globals.{}, {}, {});", storeCall(op), k.globals[op.global].name,
          staging, warpgroupCoord(op.coords, false, stageRows, /*perWarp=*/true));
  w.line("kittens::tma::store_commit_group();");
}

void KernelPrinter::printStoreTile(const ir::ProgramOp &op) {
  if (!k.program.compute.empty() && &op >= k.program.compute.data() &&
      &op < k.program.compute.data() + k.program.compute.size()) {
    printStageStore(op);
    return;
  }
  const bool inPart =
      !resultPart.empty() && k.plan.resultParts && op.expr.isValue(k.plan.resultValue);
  const std::string src = storedTile(op);
  std::string staging = inPart ? "staging" : stagingRef(op);
  int barrier = k.plan.finishBarrierIds.front();
  w.linef("kittens::warpgroup::store({}, {});", staging, src);
  if (storedByThreads(op.global)) {
    w.comment(fmt::format("The warpgroup's threads copy the staged tile to {}, up to the end of "
                          "the task's sequence (a TMA store would write the rows past it, which "
                          "are the next sequence's).",
                          k.globals[op.global].name));
    w.linef("kittens::warpgroup::sync({} + tkc_wg);", barrier);
    w.linef("kittens::store<kittens::WARPGROUP_THREADS>(args.globals.{}.row_window({}, {}), {}, "
            "{});",
            k.globals[op.global].name, sequenceStart(),
            extentExpr(ir::Size{std::nullopt, k.sequences->size}), staging,
            warpgroupCoord(op.coords));
    w.linef("kittens::warpgroup::sync({} + tkc_wg); // read before the tile is written again",
            barrier);
    return;
  }
  w.line("kittens::fence_async_shared(); // make the stores visible to TMA");
  w.linef("kittens::warpgroup::sync({} + tkc_wg);", barrier);
  if (inPart) {
    std::vector<std::string> parts;
    for (size_t d = 0; d < op.coords.size(); ++d) {
      std::string c = coordExpr(op.coords[d]);
      if (d + 2 == op.coords.size())
        c = fmt::format("{} * {} + tkc_wg", c, k.consumerWarpgroups);
      else if (d + 1 == op.coords.size())
        c = fmt::format("{} * {} + P", c, k.plan.resultParts);
      parts.push_back(c);
    }
    auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
    w.linef("kittens::tma::{}(args.globals.{}, staging, {});", storeCall(op),
            k.globals[op.global].name, kittensCoord(std::move(parts)));
    w.line("kittens::tma::store_commit_group(); // its read is waited for before the staging is "
           "written again, or in release_finish");
    return;
  }
  bool released = releaseDeferred(op);
  bool deferred = released || readWaitDeferred(op);
  {
    auto elected = w.scope("if (kittens::warpgroup::laneid() == 0)");
    if (op.accumulate)
      w.comment(fmt::format("Added into {}: the TMA reduce-add adds each element atomically.",
                            k.globals[op.global].name));
    w.linef("kittens::tma::{}(args.globals.{}, {}, {});", storeCall(op), k.globals[op.global].name,
            staging, warpgroupCoord(op.coords));
    w.line("kittens::tma::store_commit_group();");
    if (released) {
      w.comment("Its read is waited for in release_finish.");
    } else if (deferred) {
      w.comment("The next task's setup waits for the read before it loads into this copy; "
                "the block's last task waits here.");
      w.line("if (args.next_num_iters < 0)");
      w.line("  kittens::tma::store_async_read_wait<0>();");
    } else {
      w.line("kittens::tma::store_async_read_wait<0>();");
    }
  }
  if (!deferred)
    w.linef("kittens::warpgroup::sync({} + tkc_wg);", barrier);
}

/// `G[coords]` addressed one value per row: the first row's element, and the warp's first
/// row's position in the last dimension (`rows`); the extent of that dimension is the limit.
std::pair<std::string, std::string> KernelPrinter::rowsAccess(const ir::ProgramOp &op) const {
  const ir::Global &g = k.globals[op.global];
  // Leading coordinates address single elements; the last one blocks of rows.
  std::string offset = "0";
  for (size_t d = 0; d + 1 < op.coords.size(); ++d)
    offset = d == 0 ? coordExpr(op.coords[0])
                    : fmt::format("({}) * {} + {}", offset, sizeExpr(g.dims[d]),
                                  coordExpr(op.coords[d]));
  if (op.coords.size() > 1)
    offset = fmt::format("({}) * (long long){}", offset, sizeExpr(g.dims.back()));
  if (ir::alongSequences(k, g, g.dims.size() - 1))
    offset = fmt::format("{} + {}", offset, sequenceStart());
  const ir::Coord &row = op.coords.back();
  return {offset,
          fmt::format("(long long){} * {}{} + tkc_row", coordExpr(row), 64 * k.consumerWarpgroups,
                      row.var == k.loopBound.stopVar ? minusLeadRows() : "")};
}

void KernelPrinter::printStoreRows(const ir::ProgramOp &op) {
  const ir::Global &g = k.globals[op.global];
  auto scope = w.scope("");
  std::string src;
  if (op.expr.kind == ir::Elementwise::Kind::Value) {
    src = valueRef(op.expr.value);
  } else {
    src = "tkc_out";
    w.line("row_vector tkc_out;");
    printApply(src, false, op.expr);
  }
  auto [offset, row] = rowsAccess(op);
  w.linef("float *tkc_base = args.globals.{} + {};", g.name, offset);
  w.linef("kittens::store_rows(tkc_base, {}, {}, {});", src, row, extentExpr(g.dims.back()));
}

void KernelPrinter::printLoadRows(const ir::ProgramOp &op) {
  const ir::Global &g = k.globals[op.global];
  auto [offset, row] = rowsAccess(op);
  w.comment(fmt::format("'{}': one value of {} per row of this task's (0 past its end)",
                        k.program.values[op.dst].name, g.name));
  w.linef("kittens::load_rows({}, args.globals.{} + {}, {}, {});", valueRef(op.dst), g.name, offset,
          row, extentExpr(g.dims.back()));
}

} // namespace tkc::emit
