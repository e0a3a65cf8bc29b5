//===- KernelIR.cpp - Printing and verifying kernel IR ---------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/IR/KernelIR.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <fmt/format.h>

#include <cstdlib>

namespace tkc::ir {

unsigned dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F8E4M3:
  case DType::F8E5M2:
    return 1;
  }
  return 0;
}

const char *cudaTypeName(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "__nv_bfloat16";
  case DType::F16:
    return "__half";
  case DType::F32:
    return "float";
  case DType::I32:
    return "int";
  case DType::F8E4M3:
    return "__nv_fp8_e4m3";
  case DType::F8E5M2:
    return "__nv_fp8_e5m2";
  }
  return "?";
}

namespace {
struct UnaryInfo {
  UnaryOp op;
  const char *spelling;
};
constexpr UnaryInfo kUnary[] = {
    {UnaryOp::Neg, "-"},           {UnaryOp::Not, "not"},   {UnaryOp::Exp2, "exp2"},
    {UnaryOp::Exp, "exp"},         {UnaryOp::Log2, "log2"}, {UnaryOp::Log, "log"},
    {UnaryOp::Sqrt, "sqrt"},       {UnaryOp::Rcp, "rcp"},   {UnaryOp::Tanh, "tanh"},
    {UnaryOp::Abs, "abs"},         {UnaryOp::Gelu, "gelu"}, {UnaryOp::GeluErf, "gelu_erf"},
    {UnaryOp::Sigmoid, "sigmoid"}, {UnaryOp::Silu, "silu"}, {UnaryOp::Sin, "sin"},
    {UnaryOp::Cos, "cos"},
};
struct BinaryInfo {
  BinaryOp op;
  const char *spelling;
};
constexpr BinaryInfo kBinary[] = {
    {BinaryOp::Add, "+"},   {BinaryOp::Sub, "-"},   {BinaryOp::Mul, "*"},   {BinaryOp::Div, "/"},
    {BinaryOp::Max, "max"}, {BinaryOp::Min, "min"}, {BinaryOp::Pow, "pow"}, {BinaryOp::Eq, "=="},
    {BinaryOp::Ne, "!="},   {BinaryOp::Lt, "<"},    {BinaryOp::Le, "<="},   {BinaryOp::Gt, ">"},
    {BinaryOp::Ge, ">="},   {BinaryOp::And, "and"}, {BinaryOp::Or, "or"},
};
} // namespace

const char *spelling(UnaryOp op) {
  for (const UnaryInfo &info : kUnary)
    if (info.op == op)
      return info.spelling;
  return "?";
}

const char *spelling(BinaryOp op) {
  for (const BinaryInfo &info : kBinary)
    if (info.op == op)
      return info.spelling;
  return "?";
}

std::optional<UnaryOp> unaryFunction(llvm::StringRef name) {
  for (const UnaryInfo &info : kUnary)
    if (info.op != UnaryOp::Neg && info.op != UnaryOp::Not && name == info.spelling)
      return info.op;
  return std::nullopt;
}

std::optional<BinaryOp> binaryOperator(llvm::StringRef op) {
  for (const BinaryInfo &info : kBinary)
    if (op == info.spelling)
      return info.op;
  return std::nullopt;
}

bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return true;
  default:
    return false;
  }
}

std::string specSpelling(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    size_t at = text.find(kRenamedPrefix);
    if (at == llvm::StringRef::npos) {
      out += text.str();
      break;
    }
    out += text.take_front(at).str();
    text = text.drop_front(at + kRenamedPrefix.size());
  }
  return out;
}

double evaluate(UnaryOp op, double x) {
  switch (op) {
  case UnaryOp::Neg:
    return -x;
  case UnaryOp::Not:
    return x == 0 ? 1 : 0;
  case UnaryOp::Exp2:
    return std::exp2(x);
  case UnaryOp::Exp:
    return std::exp(x);
  case UnaryOp::Log2:
    return std::log2(x);
  case UnaryOp::Log:
    return std::log(x);
  case UnaryOp::Sqrt:
    return std::sqrt(x);
  case UnaryOp::Rcp:
    return 1.0 / x;
  case UnaryOp::Tanh:
    return std::tanh(x);
  case UnaryOp::Abs:
    return std::fabs(x);
  case UnaryOp::Gelu:
    return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  case UnaryOp::GeluErf:
    return 0.5 * x * (1.0 + std::erf(x * 0.7071067811865476));
  case UnaryOp::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case UnaryOp::Silu:
    return x / (1.0 + std::exp(-x));
  case UnaryOp::Sin:
    return std::sin(x);
  case UnaryOp::Cos:
    return std::cos(x);
  }
  return std::nan("");
}

double evaluate(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  case BinaryOp::Max: // fmaxf and fminf on the GPU: NaN only where both are
    return std::fmax(a, b);
  case BinaryOp::Min:
    return std::fmin(a, b);
  case BinaryOp::Pow:
    return std::pow(a, b);
  default:
    return std::nan("");
  }
}

BinaryOp swapped(BinaryOp op) {
  switch (op) {
  case BinaryOp::Lt:
    return BinaryOp::Gt;
  case BinaryOp::Le:
    return BinaryOp::Ge;
  case BinaryOp::Gt:
    return BinaryOp::Lt;
  case BinaryOp::Ge:
    return BinaryOp::Le;
  default:
    return op;
  }
}

const char *spelling(Body body) {
  return body == Body::Setup ? "setup" : body == Body::Compute ? "compute" : "finish";
}

Elementwise Elementwise::valueOf(unsigned index) {
  Elementwise e;
  e.kind = Kind::Value;
  e.value = index;
  return e;
}

Elementwise Elementwise::numberOf(double number) {
  Elementwise e;
  e.kind = Kind::Number;
  e.number = number;
  return e;
}

Elementwise Elementwise::unaryOf(UnaryOp op, Elementwise operand) {
  Elementwise e;
  e.kind = Kind::Unary;
  e.unary = op;
  e.operands.push_back(std::move(operand));
  return e;
}

Elementwise Elementwise::binaryOf(BinaryOp op, Elementwise lhs, Elementwise rhs) {
  Elementwise e;
  e.kind = Kind::Binary;
  e.binary = op;
  e.operands.push_back(std::move(lhs));
  e.operands.push_back(std::move(rhs));
  return e;
}

namespace {
const char *indexOperator(IndexExpr::Kind kind) {
  switch (kind) {
  case IndexExpr::Kind::Add:
    return " + ";
  case IndexExpr::Kind::Sub:
    return " - ";
  case IndexExpr::Kind::Mul:
    return " * ";
  default:
    return " / ";
  }
}
} // namespace

std::string IndexExpr::render(const std::function<std::string(const IndexExpr &)> &leaf) const {
  switch (kind) {
  case Kind::Var:
  case Kind::Size:
    return leaf(*this);
  case Kind::Number:
    return std::to_string(number);
  default:
    return "(" + operands[0].render(leaf) + indexOperator(kind) + operands[1].render(leaf) + ")";
  }
}

std::string IndexExpr::str() const {
  std::string text = render([](const IndexExpr &e) { return e.name; });
  // The outermost operation needs no parentheses.
  if (kind != Kind::Var && kind != Kind::Size && kind != Kind::Number)
    text = text.substr(1, text.size() - 2);
  return text;
}

bool IndexExpr::usesVar(const std::string &var) const {
  return (kind == Kind::Var && (var.empty() || name == var)) ||
         llvm::any_of(operands, [&](const IndexExpr &o) { return o.usesVar(var); });
}

const IterVar &stopTask(const Kernel &kernel) {
  const std::string &stop = kernel.loopBound.stopVar;
  auto task = llvm::find_if(kernel.tasks, [&](const IterVar &v) { return v.name == stop; });
  TKC_INTERNAL_ASSERT(task != kernel.tasks.end(), "the loop stops at an unknown task index");
  return *task;
}

int valueRegisters(const RegValue &v, int consumerWarpgroups) {
  if (v.shape == RegValue::Shape::RowVector)
    return 2;
  return static_cast<int>(v.rows * v.cols * static_cast<int64_t>(dtypeBytes(v.dtype)) / 4 /
                          (int64_t{kWarpgroupThreads} * consumerWarpgroups));
}

std::vector<unsigned> valuesRead(const ProgramOp &op) {
  std::vector<unsigned> out;
  walk(op.expr, [&](const Elementwise &e) {
    if (e.kind == Elementwise::Kind::Value)
      out.push_back(e.value);
  });
  if (op.kind == ProgramOp::Kind::AddGlobal)
    out.push_back(op.dst);
  if (op.kind == ProgramOp::Kind::Mma) {
    if (op.a.where == MmaOperand::Where::Register)
      out.push_back(op.a.index);
    if (op.b.where == MmaOperand::Where::Register)
      out.push_back(op.b.index);
    if (op.accumulate)
      out.push_back(op.dst);
  }
  return out;
}

bool writesValue(const ProgramOp &op, unsigned value) {
  bool hasDst = op.kind == ProgramOp::Kind::Assign || op.kind == ProgramOp::Kind::RowReduce ||
                op.kind == ProgramOp::Kind::Mma || op.kind == ProgramOp::Kind::AddGlobal ||
                op.kind == ProgramOp::Kind::LoadRows;
  return hasDst && op.dst == value;
}

bool needsProduct(const ProgramOp &op, const ProgramOp &mma) {
  if (writesValue(op, mma.dst) || llvm::is_contained(valuesRead(op), mma.dst))
    return true;
  for (const MmaOperand *o : {&mma.a, &mma.b}) {
    if (o->where != MmaOperand::Where::Register || o->transposed)
      continue;
    // (A later product of the same operand reads the copy: operandCopySource.)
    if (writesValue(op, o->index))
      return true;
  }
  return false;
}

int productGroups(const Kernel &kernel, const ProgramOp &mma) {
  if (mma.a.where == MmaOperand::Where::Register && mma.a.transposed)
    return kernel.consumerWarpgroups;
  if (kernel.plan.resultParts && mma.dst == kernel.plan.resultValue)
    return kernel.plan.resultParts;
  return 1;
}

std::optional<size_t> operandCopySource(const Kernel &kernel, llvm::ArrayRef<ProgramOp> ops,
                                        size_t at) {
  const ProgramOp &op = ops[at];
  if (op.kind != ProgramOp::Kind::Mma || op.a.where != MmaOperand::Where::Register)
    return std::nullopt;
  const unsigned value = op.a.index;
  const DType dtype = productDType(kernel, op.a, op.b);
  for (size_t j = at; j-- > 0;) {
    const ProgramOp &earlier = ops[j];
    if (earlier.kind == ProgramOp::Kind::Mma && earlier.a.where == MmaOperand::Where::Register &&
        earlier.a.index == value)
      return productDType(kernel, earlier.a, earlier.b) == dtype ? std::optional<size_t>(j)
                                                                 : std::nullopt;
    if (writesValue(earlier, value))
      return std::nullopt;
  }
  return std::nullopt;
}

bool Scalar::Check::accepts(double value) const {
  if (op == ">")
    return value > bound;
  if (op == ">=")
    return value >= bound;
  if (op == "<")
    return value < bound;
  return value <= bound;
}

std::string Scalar::Check::str(const std::string &scalar) const {
  return fmt::format("{} {} {}", scalar, op, bound);
}

bool Scalar::positive() const {
  return llvm::any_of(checks, [](const Check &c) {
    return (c.op == ">" && c.bound >= 0) || (c.op == ">=" && c.bound > 0);
  });
}

std::string Elementwise::str(const Program &program, const std::vector<Scalar> &scalars) const {
  switch (kind) {
  case Kind::Value:
    return program.values[value].name;
  case Kind::Number:
    return fmt::format("{}", number);
  case Kind::Scalar:
    return scalars[value].name;
  case Kind::TaskRead:
  case Kind::Size:
  case Kind::TaskIndex:
  case Kind::StageRead:
  case Kind::ColumnRead:
    return var;
  case Kind::RowIndex:
    return "row(" + var + ")";
  case Kind::ColIndex:
    return "col(" + var + ")";
  case Kind::Unary:
    return unary == UnaryOp::Neg
               ? "-" + operands[0].str(program, scalars)
               : std::string(spelling(unary)) + "(" + operands[0].str(program, scalars) + ")";
  case Kind::Binary:
    if (binary == BinaryOp::Max || binary == BinaryOp::Min || binary == BinaryOp::Pow)
      return std::string(spelling(binary)) + "(" + operands[0].str(program, scalars) + ", " +
             operands[1].str(program, scalars) + ")";
    return "(" + operands[0].str(program, scalars) + " " + spelling(binary) + " " +
           operands[1].str(program, scalars) + ")";
  case Kind::Where:
    return "where(" + operands[0].str(program, scalars) + ", " + operands[1].str(program, scalars) +
           ", " + operands[2].str(program, scalars) + ")";
  }
  return "?";
}

namespace {

std::string coords(const std::vector<Coord> &list) {
  llvm::SmallVector<std::string, 4> parts;
  for (const Coord &c : list)
    parts.push_back(c.str());
  return "[" + llvm::join(parts, ", ") + "]";
}

std::string dims(const std::vector<Size> &list) {
  llvm::SmallVector<std::string, 4> parts;
  for (const Size &s : list)
    parts.push_back(s.str());
  return "[" + llvm::join(parts, ", ") + "]";
}

} // namespace

std::vector<std::string> launchSizeSymbols(const Kernel &kernel) {
  std::vector<std::string> out;
  llvm::StringSet<> seen;
  auto add = [&](const Size &size) {
    if (!size.constant && seen.insert(size.symbol).second)
      out.push_back(size.symbol);
  };
  for (const IterVar &v : kernel.tasks)
    add(v.size);
  add(kernel.loop.size);
  for (const Global &g : kernel.globals)
    for (const Size &d : g.dims)
      add(d);
  return out;
}

namespace {
std::string operandText(const Kernel &k, const MmaOperand &o, DType dtype) {
  std::string name;
  switch (o.where) {
  case MmaOperand::Where::Stage:
    name = k.stageTiles[o.index].name + " (stage)";
    break;
  case MmaOperand::Where::Warpgroup:
    name = k.warpgroupTiles[o.index].name + " (warpgroup)";
    break;
  case MmaOperand::Where::Register:
    name = k.program.values[o.index].name +
           (o.transposed ? " (registers, staged in " + k.operandStagings[o.staging].name + ")"
                         : " (registers, as " + std::string(spec::spelling(dtype)) + ")");
    break;
  }
  return o.transposed ? name + ".T" : name;
}

void printOps(const Kernel &k, const char *body, const std::vector<ProgramOp> &ops,
              llvm::raw_ostream &os) {
  const Program &p = k.program;
  for (const ProgramOp &op : ops) {
    os << "  " << body << " ";
    switch (op.kind) {
    case ProgramOp::Kind::Assign:
      os << p.values[op.dst].name << " = " << op.expr.str(p, k.scalars);
      if (op.fusedRowSum)
        os << (op.writesOperand ? " (with the next row sum, as the product's operand)"
                                : " (with the next row sum)");
      if (op.skipUntouched)
        os << " (skipped in a warp the mask leaves as it is)";
      if (op.skipUnitFactor)
        os << " (skipped in a warp whose " << p.values[*op.skipUnitFactor].name << " is all 1)";
      os << "\n";
      break;
    case ProgramOp::Kind::RowReduce:
      os << p.values[op.dst].name << " = row" << (op.reduce == Reduce::Max ? "max" : "sum") << "("
         << op.expr.str(p, k.scalars) << ") over " << op.cols << " columns";
      if (op.reduceBound)
        os << " below " << op.reduceBound->extent.str() << " - " << op.reduceBound->var << " * "
           << op.reduceBound->step;
      if (op.laneShares)
        os << " (lane shares)";
      os << "\n";
      break;
    case ProgramOp::Kind::Mma:
      os << "mma " << p.values[op.dst].name << (op.accumulate ? " += " : " = ")
         << operandText(k, op.a, productDType(k, op.a, op.b)) << " @ "
         << operandText(k, op.b, productDType(k, op.a, op.b));
      if (op.firstStageOverwrites)
        os << " (overwrites at a task's first stage)";
      if (op.shadow)
        os << " (waited for after the next " << op.shadow << ")";
      os << "\n";
      break;
    case ProgramOp::Kind::AddGlobal:
      os << p.values[op.dst].name << " += " << k.globals[op.global].name << coords(op.coords)
         << (op.perColumn ? " (one value per column)" : " (tile)") << "\n";
      break;
    case ProgramOp::Kind::LoadTile:
      os << "load " << k.warpgroupTiles[op.tile].name << " = " << k.globals[op.global].name
         << coords(op.coords) << " (tma, per warpgroup)\n";
      break;
    case ProgramOp::Kind::StoreTile:
      os << "store " << k.globals[op.global].name << coords(op.coords)
         << (op.accumulate ? " += " : " = ") << op.expr.str(p, k.scalars)
         << (op.accumulate ? " (tma reduce-add, staged in " : " (tma, staged in ")
         << (std::string_view(body) == "compute" ? k.stagingTiles[op.tile].name + ", every stage"
             : op.tile < k.warpgroupTiles.size() ? k.warpgroupTiles[op.tile].name
                                                 : std::string("the finish block"))
         << ")\n";
      break;
    case ProgramOp::Kind::StoreRows:
      os << "store " << k.globals[op.global].name << coords(op.coords) << " = "
         << op.expr.str(p, k.scalars) << " (one value per row)\n";
      break;
    case ProgramOp::Kind::LoadRows:
      os << "load " << p.values[op.dst].name << " = " << k.globals[op.global].name
         << coords(op.coords) << " (one value per row, 0 past its end)\n";
      break;
    }
  }
}

void printValue(const RegValue &v, llvm::raw_ostream &os) {
  os << "  value " << v.name << " " << spec::spelling(v.dtype);
  if (v.shape == RegValue::Shape::Tile)
    os << "[" << v.rows << ", " << v.cols << "]";
  else
    os << "[" << v.rows << "] (row vector)";
  if (v.state)
    os << " state";
  if (v.laneShares)
    os << " (lane shares until finish)";
  if (v.bound)
    os << " columns below " << v.bound->extent.str();
  if (v.stageRows)
    os << " rows of the stage, warpgroups in " << v.stageRows->rows << " x " << v.stageRows->cols
       << " blocks";
  os << "\n";
}

/// What a program's consumer does outside compute, one printed line each:
/// its state, warpgroup tiles, setup and finish.
std::vector<std::string> outsideCompute(const Kernel &k) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const RegValue &v : k.program.values)
    if (v.state)
      printValue(v, os);
  for (const WarpgroupTile &t : k.warpgroupTiles)
    os << "  warpgroup tile " << t.name << " " << spec::spelling(t.dtype) << "[" << t.rows << ", "
       << t.cols << "]\n";
  printOps(k, "setup", k.program.setup, os);
  printOps(k, "finish", k.program.finish, os);
  os.flush();
  std::vector<std::string> lines;
  for (llvm::StringRef rest = text; !rest.empty();) {
    auto [line, after] = rest.split('\n');
    lines.push_back(line.trim().str());
    rest = after;
  }
  return lines;
}
} // namespace

void printProgram(const Kernel &k, llvm::raw_ostream &os) {
  const Program &p = k.program;
  for (const ColumnBound &b : p.maskedBounds)
    os << "  columns past " << b.extent.str() << " (loop " << b.var
       << "): the mask gives every reader its identity there in each stored row; no bound\n";
  for (const RegValue &v : p.values)
    printValue(v, os);
  printOps(k, "setup", p.setup, os);
  printOps(k, "compute", p.compute, os);
  printOps(k, "finish", p.finish, os);
}

int spannedTileDim(const Load &load, size_t d) {
  const size_t n = load.coords.size(), spanned = std::min<size_t>(2, n);
  if (d + spanned < n)
    return -1;
  return static_cast<int>(2 - spanned + d - (n - spanned));
}

void attachLoopTail(Kernel &kernel, Kernel tail) {
  TKC_INTERNAL_ASSERT(kernel.loopTail && !tail.loopTail,
                      "a loop tail attaches a program kernel lowered at the tail's step");
  TKC_INTERNAL_ASSERT(tail.loop.step == kernel.loopTail->step, "tail lowered at another step");
  // The state and warpgroup tiles are declared without the loop's step, setup and finish
  // cannot read compute's tiles, and the passes decide them from the program's form: the
  // tail's compute runs inside this kernel's setup, finish and plan.
  std::vector<std::string> mine = outsideCompute(kernel), theirs = outsideCompute(tail);
  for (size_t i = 0; i < std::max(mine.size(), theirs.size()); ++i) {
    std::string a = i < mine.size() ? mine[i] : "(nothing)";
    std::string b = i < theirs.size() ? theirs[i] : "(nothing)";
    TKC_INTERNAL_ASSERT(a == b,
                        "the loop tail differs outside compute: '" + a + "' against '" + b + "'");
  }
  TKC_INTERNAL_ASSERT(tail.plan.setupBuffers == kernel.plan.setupBuffers &&
                          tail.consumerWarpgroups == kernel.consumerWarpgroups,
                      "the loop tail's warpgroups or warpgroup tile copies differ");
  kernel.loopTail->kernel = std::make_shared<const Kernel>(std::move(tail));
}

namespace {
/// f(bound) for every value's and every op's column bound of `p` (a Program,
/// const or not).
template <class P, class F> void forEachBound(P &p, F f) {
  for (auto &v : p.values)
    f(v.bound);
  for (auto *ops : {&p.setup, &p.compute, &p.finish})
    for (auto &op : *ops)
      f(op.reduceBound);
}
} // namespace

std::vector<ColumnBound> columnBounds(const Kernel &kernel) {
  std::vector<ColumnBound> bounds;
  auto add = [&](const std::optional<ColumnBound> &b) {
    if (b && !llvm::is_contained(bounds, *b))
      bounds.push_back(*b);
  };
  // Only reductions and register operands of products have code for absent columns; a
  // bound elsewhere (an accumulator's) changes nothing the kernel does.
  auto collect = [&](const Kernel &k) {
    forEachOp(k.program, [&](Body, const ProgramOp &op) {
      add(op.reduceBound);
      if (op.kind == ProgramOp::Kind::Mma && op.a.where == MmaOperand::Where::Register)
        add(k.program.values[op.a.index].bound);
    });
  };
  collect(kernel);
  if (kernel.loopTail && kernel.loopTail->kernel)
    collect(*kernel.loopTail->kernel);
  return bounds;
}

void dropColumnBound(Program &program, const ColumnBound &bound) {
  forEachBound(program, [&](std::optional<ColumnBound> &b) {
    if (b == bound)
      b.reset();
  });
}

namespace {
/// `col(j) >= N` (or `N <= col(j)`) with col(j) and N those of a bound the program's own mask
/// keeps (drop-masked-bounds): false at every column below N.
bool pastExtent(const Elementwise &c, const std::vector<ColumnBound> &masked) {
  using Kind = Elementwise::Kind;
  if (c.kind != Kind::Binary || (c.binary != BinaryOp::Ge && c.binary != BinaryOp::Le))
    return false;
  const bool ge = c.binary == BinaryOp::Ge;
  const Elementwise &col = c.operands[ge ? 0 : 1], &size = c.operands[ge ? 1 : 0];
  return col.kind == Kind::ColIndex && size.kind == Kind::Size &&
         llvm::any_of(masked, [&](const ColumnBound &b) {
           return b.var == col.var && b.step == col.step && !b.extent.constant &&
                  b.extent.symbol == size.var;
         });
}

/// `e` with every `where(past N, a, b)` (pastExtent) replaced by b; `changed` set if any was.
Elementwise withoutExtentMasks(const Elementwise &e, const std::vector<ColumnBound> &masked,
                               bool &changed) {
  if (e.kind == Elementwise::Kind::Where && pastExtent(e.operands[0], masked)) {
    changed = true;
    return withoutExtentMasks(e.operands[2], masked, changed);
  }
  Elementwise out = e;
  for (Elementwise &o : out.operands)
    o = withoutExtentMasks(o, masked, changed);
  return out;
}

/// Removes from compute the masks of columns past a size (`s = where(col(j) >= N, -inf, s)`),
/// which change nothing where no tile crosses it; an op left as `x = x` goes, and the products
/// in flight across it count one op fewer. Returns whether there was any.
bool dropExtentMasks(Program &p) {
  bool any = false;
  for (size_t i = 0; i < p.compute.size();) {
    ProgramOp &op = p.compute[i];
    bool changed = false;
    Elementwise e = withoutExtentMasks(op.expr, p.maskedBounds, changed);
    if (!changed) {
      ++i;
      continue;
    }
    any = true;
    op.expr = std::move(e);
    if (op.kind != ProgramOp::Kind::Assign || !op.expr.isValue(op.dst)) {
      op.skipUntouched = false;
      ++i;
      continue;
    }
    for (size_t m = 0; m < i; ++m)
      if (p.compute[m].shadow && m + p.compute[m].shadow >= i)
        --p.compute[m].shadow;
    p.compute.erase(p.compute.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return any;
}

/// Whether compute masks the columns past bound `b` (pastExtent).
bool masksPast(const Program &p, const ColumnBound &b) {
  Program copy = p;
  copy.maskedBounds = {b};
  return dropExtentMasks(copy);
}
} // namespace

std::vector<ColumnBound> wholeTileBounds(const Kernel &kernel) {
  std::vector<ColumnBound> bounds = columnBounds(kernel);
  auto add = [&](const Kernel &k) {
    for (const ColumnBound &b : k.program.maskedBounds)
      if (!llvm::is_contained(bounds, b) && masksPast(k.program, b))
        bounds.push_back(b);
  };
  add(kernel);
  if (kernel.loopTail && kernel.loopTail->kernel)
    add(*kernel.loopTail->kernel);
  return bounds;
}

void attachWholeTiles(Kernel &kernel) {
  if (!kernel.wantsWholeTiles || wholeTileBounds(kernel).empty())
    return;
  Kernel whole = kernel;
  auto clear = [](Kernel &k) {
    forEachBound(k.program, [](std::optional<ColumnBound> &b) { b.reset(); });
    dropExtentMasks(k.program);
  };
  clear(whole);
  if (whole.loopTail && whole.loopTail->kernel) {
    Kernel tail = *whole.loopTail->kernel;
    clear(tail);
    whole.loopTail->kernel = std::make_shared<const Kernel>(std::move(tail));
  }
  whole.name += "_whole";
  whole.wholeTiles.reset();
  kernel.wholeTiles = std::make_shared<const Kernel>(std::move(whole));
}

DType productDType(const Kernel &kernel, const MmaOperand &a, const MmaOperand &b) {
  for (const MmaOperand *o : {&b, &a}) {
    if (o->where == MmaOperand::Where::Stage)
      return kernel.stageTiles[o->index].dtype;
    if (o->where == MmaOperand::Where::Warpgroup)
      return kernel.warpgroupTiles[o->index].dtype;
  }
  TKC_INTERNAL_ASSERT(false, "a product without a shared operand");
  return DType::BF16;
}

std::string sizeTermsText(const std::vector<SizeTerm> &terms,
                          const std::function<std::string(const std::string &)> &spell) {
  std::string out;
  for (const SizeTerm &t : terms)
    out += (t.negative ? " - " : " + ") + spell(t.size);
  return out;
}

std::string LoopBound::Start::str() const {
  std::string out =
      sizeTermsText(shift, [](const std::string &size) { return specSpelling(size); });
  if (!scalar.empty() || constant != 0)
    out += " - " + (scalar.empty() ? std::to_string(constant) : specSpelling(scalar));
  if (offset != 0)
    out += fmt::format(" {} {}", offset < 0 ? '-' : '+', std::abs(offset));
  return out;
}

std::optional<OpSpan> columnReadReaders(const Program &program, unsigned read) {
  std::optional<OpSpan> span;
  for (size_t i = 0; i < program.compute.size(); ++i)
    if (anyOf(program.compute[i].expr, [&](const Elementwise &e) {
          return e.kind == Elementwise::Kind::ColumnRead && e.value == read;
        })) {
      if (!span)
        span = OpSpan{i, i};
      span->last = i;
    }
  return span;
}

std::optional<OpSpan> columnReadSpan(const Kernel &kernel, unsigned read) {
  if (kernel.columnReads[read].inPlace)
    return std::nullopt;
  return columnReadReaders(kernel.program, read);
}

std::vector<unsigned> stageTilesRead(const Program &program) {
  std::vector<unsigned> out;
  for (const ProgramOp &op : program.compute)
    walk(op.expr, [&](const Elementwise &e) {
      if (e.kind == Elementwise::Kind::StageRead && !llvm::is_contained(out, e.value))
        out.push_back(e.value);
    });
  llvm::sort(out);
  return out;
}

bool writesGlobal(const Kernel &k, unsigned g) {
  GlobalRole role = globalRole(k, g);
  return role == GlobalRole::TmaStore || role == GlobalRole::Rows;
}

std::vector<Size> Global::storedDims() const {
  if (layout.empty())
    return dims;
  std::vector<Size> out;
  for (unsigned d : layout)
    out.push_back(dims[d]);
  return out;
}

std::vector<std::string>
Global::strides(const std::function<std::string(const Size &)> &spell) const {
  std::vector<std::string> out(dims.size());
  std::string inner; // the product of the extents inside the current one
  const std::vector<unsigned> order = [&] {
    if (!layout.empty())
      return layout;
    std::vector<unsigned> packed(dims.size());
    for (unsigned d = 0; d < dims.size(); ++d)
      packed[d] = d;
    return packed;
  }();
  for (size_t m = order.size(); m-- > 0;) {
    out[order[m]] = inner.empty() ? "1" : inner;
    const std::string extent = spell(dims[order[m]]);
    inner = inner.empty() ? extent : inner + " * " + extent;
  }
  return out;
}

int stageReadRegisters(const StageTile &tile) {
  return static_cast<int>(tile.cols * dtypeBytes(tile.dtype) / 8);
}

int columnReadStageBytes(const Kernel &kernel, const ColumnRead &read) {
  return static_cast<int>(kernel.loop.step * dtypeBytes(kernel.globals[read.global].dtype));
}

int columnReadRegisters(const Kernel &kernel, const ColumnRead &read) {
  const int bytes = kernel.globals[read.global].dtype == DType::F32 ? 4 : 2;
  return static_cast<int>(kernel.loop.step * bytes / 16);
}

bool addsIntoGlobal(const Kernel &kernel, unsigned g) {
  bool adds = false;
  forEachOp(kernel.program, [&](Body, const ProgramOp &op) {
    adds = adds || (op.kind == ProgramOp::Kind::StoreTile && op.global == g && op.accumulate);
  });
  return adds;
}

bool alongSequences(const Kernel &kernel, const Global &g, size_t d) {
  return kernel.sequences && d < g.dims.size() && !g.dims[d].constant &&
         g.dims[d].symbol == kernel.sequences->size;
}

GlobalRole globalRole(const Kernel &k, unsigned g) {
  if (k.sequences && k.sequences->global == g)
    return GlobalRole::Offsets;
  for (const Load &load : k.loads)
    if (load.global == g)
      return GlobalRole::TmaLoad;
  GlobalRole role = GlobalRole::Unused;
  forEachOp(k.program, [&](Body, const ProgramOp &op) {
    if (role != GlobalRole::Unused || op.global != g)
      return;
    switch (op.kind) {
    case ProgramOp::Kind::LoadTile:
      role = GlobalRole::TmaLoad;
      break;
    case ProgramOp::Kind::StoreTile:
      role = GlobalRole::TmaStore;
      break;
    case ProgramOp::Kind::StoreRows:
      role = GlobalRole::Rows;
      break;
    case ProgramOp::Kind::LoadRows:
      role = GlobalRole::Read;
      break;
    case ProgramOp::Kind::AddGlobal:
      role = op.perColumn ? GlobalRole::AddColumn : GlobalRole::AddTile;
      break;
    default:
      break;
    }
  });
  if (role == GlobalRole::Unused &&
      (llvm::any_of(k.taskReads, [&](const TaskRead &r) { return r.global == g; }) ||
       llvm::any_of(k.columnReads, [&](const ColumnRead &r) { return r.global == g; })))
    role = GlobalRole::Read;
  return role;
}

void printKernel(const Kernel &k, llvm::raw_ostream &os) {
  os << "kernel " << k.name << " (spec " << k.specName << ", arch " << (k.arch ? k.arch->name : "?")
     << ")\n";
  if (!k.params.empty()) {
    os << "  params";
    for (const auto &[name, value] : k.params)
      os << " " << name << "=" << value;
    os << "\n";
  }
  if (k.entry && k.entry->name != k.name)
    os << "  launched by " << k.entry->name << " if " << k.entry->condition << "\n";
  for (const Global &g : k.globals)
    os << "  global " << g.name << " " << spec::spelling(g.dtype) << dims(g.dims)
       << (g.layout.empty() ? "" : " stored as " + dims(g.storedDims())) << "\n";
  for (const IterVar &v : k.tasks)
    os << "  task " << v.name << " over " << v.size.str() << " step " << v.step << "\n";
  if (const auto &seq = k.sequences)
    os << "  sequences of " << seq->size << " split at " << k.globals[seq->global].name << "["
       << seq->count << "], the tiles of " << seq->task << " numbered together\n";
  os << "  loop " << k.loop.name << " over " << k.loop.size.str() << " step " << k.loop.step
     << (k.alternateLoop ? " alternating" : "") << "\n";
  os << "  order " << (k.groupedOrder ? "grouped" : "linear") << "\n";
  os << "  consumer warpgroups " << k.consumerWarpgroups << "\n";
  for (const StageTile &t : k.stageTiles)
    os << "  stage tile " << t.name << " " << spec::spelling(t.dtype) << "[" << t.rows << ", "
       << t.cols << "] " << t.bytes() << " bytes\n";
  for (const Load &l : k.loads)
    os << "  load " << k.stageTiles[l.tile].name << " = " << k.globals[l.global].name
       << coords(l.coords) << " (tma, " << k.stageTiles[l.tile].bytes() << " bytes)\n";
  for (const WarpgroupTile &t : k.warpgroupTiles)
    os << "  warpgroup tile " << t.name << " " << spec::spelling(t.dtype) << "[" << t.rows << ", "
       << t.cols << "] " << t.bytes() << " bytes per warpgroup\n";
  for (const Scalar &s : k.scalars) {
    os << "  scalar " << s.name << " " << spec::spelling(s.dtype);
    if (s.defaultValue)
      os << " default " << fmt::format("{}", *s.defaultValue);
    for (const Scalar::Check &c : s.checks)
      os << " check " << c.str(s.name);
    os << "\n";
  }
  auto spell = [](const std::string &size) { return specSpelling(size); };
  for (const Requirement &r : k.requirements)
    os << "  requires " << specSpelling(r.str()) << "\n";
  if (!k.loopBound.stopVar.empty())
    os << "  loop " << k.loop.name << " stops at " << k.loopBound.stopStep << " * ("
       << k.loopBound.stopVar << " + 1)" << sizeTermsText(k.loopBound.shift, spell)
       << (k.loopBound.stopScalar.empty() ? "" : " + ceil(" + k.loopBound.stopScalar + ") - 1")
       << (k.loopBound.perRow ? ", each consumer warpgroup after its own last row" : "") << "\n";
  if (const auto &start = k.loopBound.start)
    os << "  loop " << k.loop.name << " starts at the tile of max(0, row(" << start->var << ")"
       << start->str() << "), row() the task's first"
       << (k.loopBound.stopVar.empty() ? ", its last tile at the latest" : "") << "\n";
  if (const auto &tail = k.loopTail) {
    os << "  loop " << k.loop.name << " may end in tiles of " << tail->step << " (tail)\n";
    if (tail->kernel) {
      for (const StageTile &t : tail->kernel->stageTiles)
        os << "  tail stage tile " << t.name << " " << spec::spelling(t.dtype) << "[" << t.rows
           << ", " << t.cols << "] in a full stage's slot\n";
      printOps(*tail->kernel, "tail compute", tail->kernel->program.compute, os);
    }
  }
  if (k.wholeTiles) {
    std::vector<std::string> extents;
    for (const ColumnBound &b : wholeTileBounds(k))
      if (!llvm::is_contained(extents, b.extent.str()))
        extents.push_back(b.extent.str());
    for (const std::string &e : extents)
      os << "  whole tiles: a copy without the code for a partial tile runs when no tile crosses "
         << e << "\n";
  }
  printProgram(k, os);
  const Plan &p = k.plan;
  if (p.resultParts)
    os << "  plan finish: " << k.program.values[p.resultValue].name
       << " result_parts=" << p.resultParts << " split_stages=" << p.splitStages << "\n";
  if (p.stages) {
    os << "  plan smem: stages=" << p.stages << " stage_bytes=" << p.stageBytes
       << " finish_bytes=" << p.finishBytes << " safe_stages=" << p.safeStages
       << " dynamic_bytes=" << p.dynamicSharedBytes;
    if (!k.warpgroupTiles.empty())
      os << " scratch_bytes=" << p.scratchBytes << " setup_buffers=" << p.setupBuffers;
    if (p.operandStagingBytes)
      os << " operand_staging_bytes=" << p.operandStagingBytes << " (each slot)";
    os << "\n";
  }
  if (p.consumerRegisters) {
    os << "  plan registers: producer=" << p.producerRegisters
       << " consumer=" << p.consumerRegisters;
    if (p.liveRegisters)
      os << " live=" << p.liveRegisters;
    os << "\n";
  }
  for (const ColumnRead &read : k.columnReads)
    if (read.inPlace)
      os << "  plan column read " << read.text << ": in place (not held in registers)\n";
  if (p.producerArrivals) {
    os << "  plan sync: producer_arrivals=" << p.producerArrivals
       << " consumer_arrivals=" << p.consumerArrivals << " expect_bytes=" << p.expectBytes
       << " finish_barriers=[";
    llvm::interleave(p.finishBarrierIds, os, ", ");
    os << "]";
    if (p.consumersBarrierId)
      os << " consumers_barrier=" << p.consumersBarrierId;
    if (p.rowsFromEnd)
      os << " rows_from_end=" << k.loopBound.stopVar;
    os << "\n";
  }
  if (p.scheduled) {
    os << "  plan schedule: order=";
    switch (p.taskOrder) {
    case TaskOrder::Grouped:
      os << "grouped group_rows=" << p.groupRows;
      break;
    case TaskOrder::Rotated:
      os << "rotated";
      break;
    case TaskOrder::ByLength:
      if (k.loopBound.stopVar.empty())
        os << "by-length from the start paired=" << p.pairedMinCount << ".." << p.pairedMaxCount
           << " rotated_max=" << p.rotatedMaxCount;
      else
        os << "by-length paired=" << p.pairedMinCount << ".." << p.pairedMaxCount
           << " head_major_max=" << p.headMajorMaxCount;
      break;
    }
    if (p.rotateRowBlocks)
      os << " rotate_row_blocks";
    os << " ring_start="
       << (p.ringStart == RingStart::First      ? "first"
           : p.ringStart == RingStart::SkipLast ? "skip-last"
                                                : "continue");
    if (p.finishPerWarpgroup)
      os << " finish_per_warpgroup";
    if (p.earlyStages)
      os << " early_stages=" << p.earlyStages;
    if (p.prefetchDescriptors)
      os << " prefetch_descriptors";
    os << "\n";
  }
}

void verifyKernel(const Kernel &k) {
  TKC_INTERNAL_ASSERT(k.arch, "kernel without an arch");
  if (const auto &tail = k.loopTail) {
    TKC_INTERNAL_ASSERT(tail->step > 0 && tail->step < k.loop.step && k.loopBound.stopVar.empty() &&
                            !k.loopBound.start,
                        "a loop tail is narrower than the step, of a program's whole loop");
    if (tail->kernel)
      verifyKernel(*tail->kernel);
  }
  TKC_INTERNAL_ASSERT(!k.tasks.empty(), "kernel without tasks");
  TKC_INTERNAL_ASSERT(k.consumerWarpgroups >= 1 && k.consumerWarpgroups <= 3,
                      "consumer warpgroups out of range");
  for (const Load &l : k.loads) {
    TKC_INTERNAL_ASSERT(l.tile < k.stageTiles.size() && l.global < k.globals.size(),
                        "load refers to a missing tile or global");
    TKC_INTERNAL_ASSERT(l.coords.size() == k.globals[l.global].dims.size(),
                        "load coordinates do not match the global's rank");
  }
  const Program &p = k.program;
  for (const RegValue &v : p.values)
    TKC_INTERNAL_ASSERT(!v.laneShares || (v.state && v.shape == RegValue::Shape::RowVector),
                        "only a state row vector is held as lane shares");
  for (Body body : {Body::Setup, Body::Compute, Body::Finish}) {
    const std::vector<ProgramOp> &ops = p.body(body);
    for (size_t i = 0; i < ops.size(); ++i) {
      const ProgramOp &op = ops[i];
      TKC_INTERNAL_ASSERT(op.shadow == 0 ||
                              (op.kind == ProgramOp::Kind::Mma && i + op.shadow < ops.size()),
                          "only a product has ops in its shadow, and they exist");
      for (size_t j = i + 1; j <= i + op.shadow; ++j)
        TKC_INTERNAL_ASSERT(
            (ops[j].kind == ProgramOp::Kind::Assign || ops[j].kind == ProgramOp::Kind::RowReduce ||
             ops[j].kind == ProgramOp::Kind::Mma || ops[j].kind == ProgramOp::Kind::StoreTile) &&
                !needsProduct(ops[j], op),
            "only elementwise ops, reductions, products and stores that do not "
            "need a product run under it");
      bool hasDst = op.kind == ProgramOp::Kind::Assign || op.kind == ProgramOp::Kind::RowReduce ||
                    op.kind == ProgramOp::Kind::Mma || op.kind == ProgramOp::Kind::AddGlobal;
      TKC_INTERNAL_ASSERT(!hasDst || op.dst < p.values.size(), "program op without a value");
      TKC_INTERNAL_ASSERT(!op.laneShares ||
                              (body == Body::Compute && op.kind == ProgramOp::Kind::RowReduce &&
                               op.reduce == Reduce::Sum),
                          "only compute's row sums leave lane shares");
      TKC_INTERNAL_ASSERT(
          !op.firstStageOverwrites ||
              (body == Body::Compute && op.kind == ProgramOp::Kind::Mma && op.accumulate),
          "only compute's accumulating products overwrite at the first stage");
      TKC_INTERNAL_ASSERT(!op.fusedRowSum ||
                              (op.kind == ProgramOp::Kind::Assign && i + 1 < ops.size() &&
                               ops[i + 1].kind == ProgramOp::Kind::RowReduce &&
                               ops[i + 1].reduce == Reduce::Sum && ops[i + 1].expr.isValue(op.dst)),
                          "a fused row sum is the next op, a sum of the assigned value");
      TKC_INTERNAL_ASSERT(!op.writesOperand || op.fusedRowSum,
                          "only a fused pass writes a product's operand");
      TKC_INTERNAL_ASSERT(op.kind != ProgramOp::Kind::AddGlobal || body == Body::Finish,
                          "globals are added in finish");
      // Shares are read only by what keeps them shares: before finish, a value
      // held as shares (or a sum's shares) is read only by an update of a
      // value held as shares.
      if (body != Body::Finish)
        for (unsigned v : valuesRead(op)) {
          bool share = p.values[v].laneShares || llvm::any_of(p.compute, [&](const ProgramOp &o) {
                         return o.laneShares && o.dst == v;
                       });
          TKC_INTERNAL_ASSERT(
              !share || (op.kind == ProgramOp::Kind::Assign && p.values[op.dst].laneShares),
              "lane shares read before finish by other than their update");
        }
      if (op.kind == ProgramOp::Kind::Mma || op.kind == ProgramOp::Kind::AddGlobal)
        TKC_INTERNAL_ASSERT(p.values[op.dst].shape == RegValue::Shape::Tile,
                            "a product or a global added into a row vector");
      if (op.kind == ProgramOp::Kind::LoadTile || op.kind == ProgramOp::Kind::StoreTile ||
          op.kind == ProgramOp::Kind::StoreRows || op.kind == ProgramOp::Kind::AddGlobal)
        TKC_INTERNAL_ASSERT(op.global < k.globals.size() &&
                                op.coords.size() == k.globals[op.global].dims.size(),
                            "program access does not match the global's rank");
    }
  }
  const Plan &plan = k.plan;
  if (plan.resultParts) {
    TKC_INTERNAL_ASSERT(plan.resultParts == 2 && plan.resultValue < p.values.size() &&
                            p.values[plan.resultValue].state &&
                            p.values[plan.resultValue].cols % (64 * plan.resultParts) == 0,
                        "a result in parts is a state tile of whole 64-column chunks a part");
  }
  TKC_INTERNAL_ASSERT(plan.splitStages == 0 || plan.resultParts == 2,
                      "the last stages are split only for a result in two parts");
  if (plan.stages) {
    TKC_INTERNAL_ASSERT(plan.stages >= 1 && plan.stages <= 16, "stage count out of range");
    TKC_INTERNAL_ASSERT(plan.safeStages >= 1 && plan.safeStages <= plan.stages,
                        "no stage lies before the finish block");
    TKC_INTERNAL_ASSERT(plan.splitStages <= plan.stages,
                        "more stages held at a task's end than the ring has");
    // Compute stages the left half in the finish block while held stages are still read; the
    // emitted SAFE_STAGES assertion then checks kittens places the block past every stage.
    TKC_INTERNAL_ASSERT(plan.splitStages == 0 || plan.safeStages == plan.stages,
                        "a split result's finish block aliases a stage");
  }
  if (plan.producerArrivals) {
    int bytes = 0;
    for (const Load &l : k.loads)
      bytes += static_cast<int>(k.stageTiles[l.tile].bytes());
    TKC_INTERNAL_ASSERT(plan.expectBytes == bytes,
                        "the bytes armed per stage differ from the bytes loaded");
    TKC_INTERNAL_ASSERT(static_cast<int>(plan.finishBarrierIds.size()) == k.consumerWarpgroups,
                        "one finish barrier per consumer warpgroup");
    TKC_INTERNAL_ASSERT(plan.taskOrder != TaskOrder::Grouped ||
                            (k.tasks.size() == 2 && plan.groupRows > 0),
                        "a grouped order walks two task indices in groups of rows");
    TKC_INTERNAL_ASSERT(plan.taskOrder != TaskOrder::ByLength || !k.loopBound.stopVar.empty() ||
                            k.loopBound.start,
                        "tasks are ordered by length only where the loop stops or starts at "
                        "their rows");
  }
}

} // namespace tkc::ir
