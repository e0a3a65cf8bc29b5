//===- SpecToIR.cpp - Spec AST to kernel IR --------------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Name resolution, condition evaluation and shape/dtype checking for one
// instantiation, producing the kernel IR: the producer's TMA loads (`t = G[i, j]`
// per stage) and the consumer's program (LowerProgram.inc). Anything the lcf
// lowering cannot express is reported as not supported yet, at its location.
//
//===----------------------------------------------------------------------===//
#include "tkc/Lower/SpecToIR.h"

#include "tkc/Lower/Select.h"

#include "tkc/dsl/InternalError.h"
#include "tkc/dsl/SpecParser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <variant>

namespace tkc {

using stmt::Expr;

namespace {

/// A compile-time value in a condition.
struct CondValue {
  enum class Kind { Bool, Number, Symbol };
  Kind kind;
  bool boolean = false;
  double number = 0;
  std::string symbol;
  /// For a parameter's value: the parameter (to check symbols against it).
  const spec::ParamDecl *param = nullptr;
  /// A bare name that is not a parameter: it must turn out to be a value of
  /// the parameter it is compared with, or it is an unknown name.
  const Expr *unresolved = nullptr;

  std::string describe() const {
    switch (kind) {
    case Kind::Bool:
      return boolean ? "true" : "false";
    case Kind::Number:
      return fmt::format("the number {}", number);
    case Kind::Symbol:
      return "'" + symbol + "'";
    }
    return "?";
  }
};

std::string paramValueName(const spec::ParamValue &value) {
  switch (value.kind) {
  case spec::ParamValue::Kind::Bool:
    return value.boolValue ? "true" : "false";
  default:
    return value.text;
  }
}

class Lowering {
public:
  /// `tailStep`: lower the instantiation as its loop tail (LoopTail), the
  /// stage tiles' extent along the loop and the loop's step set to it.
  Lowering(const spec::KernelSpec &spec, const Instance &instance, const ArchInfo &arch,
           DiagnosticEngine &diags, std::optional<int64_t> tailStep = std::nullopt)
      : spec(spec), instance(instance), arch(arch), diags(diags), tailStep(tailStep) {}

  std::optional<ir::Kernel> run() {
    kernel.specName = spec.name.value;
    kernel.specFile = spec.fileName;
    kernel.name = instance.name;
    kernel.entry = instance.entry;
    kernel.arch = &arch;
    for (size_t i = 0; i < spec.params.size(); ++i)
      kernel.params.emplace_back(spec.params[i].name.value, paramValueName(*instance.values[i]));
    unsigned errorsAtStart = diags.getNumErrors();
    // Missing arch features are reported, but the statements are still
    // checked: a spec gets every error it has in one run.
    checkTemplateFeatures();
    unsigned errorsBefore = diags.getNumErrors();
    declareConstants();
    if (!declareConsumerWarpgroups())
      return std::nullopt;
    declareGlobals();
    declareScalars();
    declareTiles();
    declareGrid();
    declareState();
    if (diags.getNumErrors() != errorsBefore)
      return std::nullopt;

    lowerLoads();
    if (tailStep)
      applyTailStep();
    lowerProgram();
    if (diags.getNumErrors() != errorsBefore)
      return std::nullopt;
    checkEveryLoadIsUsed();
    if (diags.getNumErrors() != errorsAtStart)
      return std::nullopt;
    return std::move(kernel);
  }

private:
  //===--------------------------------------------------------------------===//
  // Conditions
  //===--------------------------------------------------------------------===//

  const spec::ParamDecl *findParam(llvm::StringRef name) const {
    for (const spec::ParamDecl &param : spec.params)
      if (param.name.value == name)
        return &param;
    return nullptr;
  }

  const spec::ParamValue &valueOf(const spec::ParamDecl &param) const {
    return *instance.values[&param - spec.params.data()];
  }

  static bool paramHasSymbol(const spec::ParamDecl &param, llvm::StringRef symbol) {
    return llvm::any_of(param.values, [&](const spec::ParamValue &v) {
      return v.kind == spec::ParamValue::Kind::Name && v.text == symbol;
    });
  }

  static std::string paramValueList(const spec::ParamDecl &param) {
    llvm::SmallVector<std::string, 8> names;
    for (const spec::ParamValue &value : param.values)
      names.push_back(paramValueName(value));
    return llvm::join(names, ", ");
  }

  std::optional<CondValue> evalCond(const Expr &expr, const std::string &what) {
    switch (expr.kind) {
    case Expr::Kind::Name: {
      if (expr.text == "true" || expr.text == "false")
        return CondValue{CondValue::Kind::Bool, expr.text == "true", 0, {}, nullptr};
      if (const spec::ParamDecl *param = findParam(expr.text)) {
        const spec::ParamValue &value = valueOf(*param);
        switch (value.kind) {
        case spec::ParamValue::Kind::Bool:
          return CondValue{CondValue::Kind::Bool, value.boolValue, 0, {}, param};
        case spec::ParamValue::Kind::Int:
          return CondValue{
              CondValue::Kind::Number, false, static_cast<double>(value.intValue), {}, param};
        case spec::ParamValue::Kind::Float:
          return CondValue{CondValue::Kind::Number, false, value.floatValue, {}, param};
        case spec::ParamValue::Kind::Name:
          return CondValue{CondValue::Kind::Symbol, false, 0, value.text, param};
        }
      }
      // A bare name is checked against the parameter it is compared with; a
      // typo must never make a condition silently false.
      return CondValue{CondValue::Kind::Symbol, false, 0, expr.text, nullptr, &expr};
    }
    case Expr::Kind::Number: {
      double number = 0;
      auto [ptr, ec] =
          std::from_chars(expr.text.data(), expr.text.data() + expr.text.size(), number);
      if (ec != std::errc() || ptr != expr.text.data() + expr.text.size()) {
        diags.report(DiagID::err_expected_number, expr.loc, what, expr.text);
        return std::nullopt;
      }
      return CondValue{CondValue::Kind::Number, false, number, {}, nullptr};
    }
    case Expr::Kind::Unary: {
      auto operand = evalCond(*expr.operands[0], what);
      if (!operand)
        return std::nullopt;
      if (expr.text == "not") {
        if (!expectBool(*operand, *expr.operands[0], what))
          return std::nullopt;
        return CondValue{CondValue::Kind::Bool, !operand->boolean, 0, {}, nullptr};
      }
      if (operand->kind != CondValue::Kind::Number) {
        if (operand->unresolved) {
          reportUnknownName(*operand->unresolved, what, paramNames());
          return std::nullopt;
        }
        break;
      }
      return CondValue{CondValue::Kind::Number, false, -operand->number, {}, nullptr};
    }
    case Expr::Kind::Binary: {
      auto lhs = evalCond(*expr.operands[0], what);
      auto rhs = lhs ? evalCond(*expr.operands[1], what) : std::nullopt;
      if (!lhs || !rhs)
        return std::nullopt;
      return evalBinary(expr, *lhs, *rhs, what);
    }
    default:
      break;
    }
    diags.report(DiagID::err_sema_bad_condition, expr.loc, "this expression");
    return std::nullopt;
  }

  std::optional<CondValue> evalBinary(const Expr &expr, const CondValue &lhs, const CondValue &rhs,
                                      const std::string &what) {
    llvm::StringRef op = expr.text;
    auto boolean = [](bool b) { return CondValue{CondValue::Kind::Bool, b, 0, {}, nullptr}; };
    if (op == "and" || op == "or") {
      if (!expectBool(lhs, *expr.operands[0], what) || !expectBool(rhs, *expr.operands[1], what))
        return std::nullopt;
      return boolean(op == "and" ? lhs.boolean && rhs.boolean : lhs.boolean || rhs.boolean);
    }
    if (op == "==" || op == "!=") {
      for (const CondValue *side : {&lhs, &rhs})
        if (side->unresolved && !(side == &lhs ? rhs : lhs).param) {
          reportUnknownName(*side->unresolved, what, paramNames());
          return std::nullopt;
        }
      if (lhs.kind != rhs.kind) {
        diags.report(DiagID::err_sema_bad_condition, expr.loc,
                     "comparing " + lhs.describe() + " with " + rhs.describe());
        return std::nullopt;
      }
      // A bare name compared with a parameter must be one of its values.
      for (auto [param, symbol] : {std::pair{lhs.param, &rhs}, std::pair{rhs.param, &lhs}}) {
        if (!symbol->unresolved)
          continue;
        if (!param) {
          reportUnknownName(*symbol->unresolved, what, paramNames());
          return std::nullopt;
        }
        if (!paramHasSymbol(*param, symbol->symbol)) {
          diags.report(DiagID::err_sema_not_param_value, symbol->unresolved->loc, symbol->symbol,
                       param->name.value, paramValueList(*param));
          return std::nullopt;
        }
      }
      bool equal = lhs.kind == CondValue::Kind::Bool     ? lhs.boolean == rhs.boolean
                   : lhs.kind == CondValue::Kind::Number ? lhs.number == rhs.number
                                                         : lhs.symbol == rhs.symbol;
      return boolean(op == "==" ? equal : !equal);
    }
    if (op == "<" || op == "<=" || op == ">" || op == ">=") {
      for (const CondValue *side : {&lhs, &rhs})
        if (side->unresolved) {
          reportUnknownName(*side->unresolved, what, paramNames());
          return std::nullopt;
        }
      if (lhs.kind != CondValue::Kind::Number || rhs.kind != CondValue::Kind::Number) {
        diags.report(DiagID::err_sema_bad_condition, expr.loc,
                     "ordering " + lhs.describe() + " and " + rhs.describe());
        return std::nullopt;
      }
      bool result = op == "<"    ? lhs.number < rhs.number
                    : op == "<=" ? lhs.number <= rhs.number
                    : op == ">"  ? lhs.number > rhs.number
                                 : lhs.number >= rhs.number;
      return boolean(result);
    }
    diags.report(DiagID::err_sema_bad_condition, expr.loc, "'" + expr.text + "'");
    return std::nullopt;
  }

  bool expectBool(const CondValue &value, const Expr &expr, const std::string &what) {
    if (value.kind == CondValue::Kind::Bool)
      return true;
    if (value.unresolved) {
      reportUnknownName(*value.unresolved, what, paramNames());
      return false;
    }
    diags.report(DiagID::err_sema_not_condition, expr.loc, what, value.describe());
    return false;
  }

  /// Whether a declaration or statement guarded by `cond` is part of this
  /// instantiation. std::nullopt after an error.
  std::optional<bool> holds(const Expr *cond, const std::string &what) {
    if (!cond)
      return true;
    auto value = evalCond(*cond, what);
    if (!value)
      return std::nullopt;
    if (!expectBool(*value, *cond, what))
      return std::nullopt;
    return value->boolean;
  }

  std::vector<llvm::StringRef> paramNames() const {
    std::vector<llvm::StringRef> names;
    for (const spec::ParamDecl &param : spec.params)
      names.push_back(param.name.value);
    return names;
  }

  void reportUnknownName(const Expr &expr, const std::string &what,
                         llvm::ArrayRef<llvm::StringRef> candidates) {
    std::string suggestion = suggestSpelling(expr.text, candidates);
    if (suggestion.empty())
      diags.report(DiagID::err_sema_unknown_name, expr.loc, expr.text, what);
    else
      diags.report(DiagID::err_sema_unknown_name_suggest, expr.loc, expr.text, what, suggestion);
  }

  /// The lcf template runs a TMA producer warpgroup that hands its registers
  /// to the consumers with setmaxnreg.
  void checkTemplateFeatures() {
    llvm::SmallVector<llvm::StringRef, 2> missing;
    if (!arch.hasTma)
      missing.push_back("TMA (the bulk tensor copy)");
    if (!arch.hasSetmaxnreg)
      missing.push_back("setmaxnreg");
    if (missing.empty())
      return;
    diags.report(DiagID::err_arch_lacks_template, spec.tmpl.loc, spec::spelling(spec.tmpl.value),
                 llvm::join(missing, " and "), arch.name.str(),
                 archListWith([](const ArchInfo &a) { return a.hasTma && a.hasSetmaxnreg; }));
  }

  //===--------------------------------------------------------------------===//
  // Declarations
  //===--------------------------------------------------------------------===//

  /// Every name a statement may use, with where it was declared.
  bool declareName(const std::string &name, SourceLoc loc, const char *kind) {
    auto [it, inserted] = declared.try_emplace(name, loc);
    if (inserted)
      return true;
    diags.report(DiagID::err_sema_duplicate_name, loc, name, kind);
    diags.report(DiagID::note_declared_here, it->second, name);
    return false;
  }

  /// The value of an integer parameter in this instantiation.
  std::optional<int64_t> intParam(llvm::StringRef name) const {
    if (const spec::ParamDecl *param = findParam(name)) {
      const spec::ParamValue &value = valueOf(*param);
      if (value.kind == spec::ParamValue::Kind::Int)
        return value.intValue;
    }
    if (auto it = constantValues.find(name); it != constantValues.end())
      return it->second;
    return std::nullopt;
  }

  /// `warpgroups: 3`, or a constant or parameter's name; 1 when absent.
  bool declareConsumerWarpgroups() {
    SourceLoc loc = spec.consumer.loc;
    int64_t count = 1;
    if (spec.consumer.warpgroups) {
      count = spec.consumer.warpgroups->value;
      loc = spec.consumer.warpgroups->loc;
    } else if (const auto &name = spec.consumer.warpgroupsName) {
      loc = name->loc;
      auto value = intParam(name->value);
      if (!value) {
        diags.report(DiagID::err_sema_value_kind, loc, "'warpgroups' of the consumer",
                     "a number, or an integer constant or parameter", "'" + name->value + "'");
        return false;
      }
      count = *value;
    }
    if (count < 1 || count > 3) {
      diags.report(DiagID::err_sema_consumer_warpgroups, loc, count);
      return false;
    }
    kernel.consumerWarpgroups = static_cast<int>(count);
    return true;
  }

  /// `constants:` folded for this instantiation; each must be an integer.
  void declareConstants() {
    for (const spec::ConstantDecl &constant : spec.constants) {
      if (!declareName(constant.name.value, constant.name.loc, "as a constant"))
        continue;
      auto value = foldConstant(*constant.value);
      if (!value || *value != std::floor(*value) || std::abs(*value) > 1e15) {
        diags.report(DiagID::err_sema_value_kind, constant.value->loc,
                     "constant '" + constant.name.value + "'",
                     "an integer computed from numbers and parameters", "another expression");
        // A stand-in keeps the shapes that use it from reporting again.
        constantValues[constant.name.value] = 1;
        continue;
      }
      constantValues[constant.name.value] = static_cast<int64_t>(*value);
    }
  }

  /// An extent: a number, an integer parameter (a constant here) or a size
  /// bound at launch.
  ir::Size toSize(const spec::Extent &extent) const {
    if (extent.isNumber())
      return ir::Size{*extent.number, {}};
    if (auto value = intParam(extent.name))
      return ir::Size{*value, {}};
    return ir::Size{std::nullopt, extent.name};
  }

  /// Constants a value may name besides parameters.
  static std::optional<double> namedConstant(llvm::StringRef name) {
    if (name == "inf")
      return std::numeric_limits<double>::infinity();
    if (name == "log2e")
      return 1.4426950408889634;
    if (name == "ln2")
      return 0.6931471805599453;
    if (name == "pi")
      return 3.141592653589793;
    return std::nullopt;
  }

  /// `expr` folded to a number if it only uses numbers, numeric parameters,
  /// named constants, + - * /, and sqrt/exp2/log2/exp/log/min/max. Reports
  /// nothing; std::nullopt if it is not constant.
  std::optional<double> foldConstant(const Expr &expr) const {
    switch (expr.kind) {
    case Expr::Kind::Number: {
      double number = 0;
      auto [ptr, ec] =
          std::from_chars(expr.text.data(), expr.text.data() + expr.text.size(), number);
      if (ec != std::errc() || ptr != expr.text.data() + expr.text.size())
        return std::nullopt;
      return number;
    }
    case Expr::Kind::Name: {
      if (const spec::ParamDecl *param = findParam(expr.text)) {
        const spec::ParamValue &value = valueOf(*param);
        if (value.kind == spec::ParamValue::Kind::Int)
          return static_cast<double>(value.intValue);
        if (value.kind == spec::ParamValue::Kind::Float)
          return value.floatValue;
        return std::nullopt;
      }
      if (auto it = constantValues.find(expr.text); it != constantValues.end())
        return static_cast<double>(it->second);
      if (declared.count(expr.text))
        return std::nullopt;
      return namedConstant(expr.text);
    }
    case Expr::Kind::Unary: {
      auto operand = foldConstant(*expr.operands[0]);
      if (!operand || expr.text != "-")
        return std::nullopt;
      return -*operand;
    }
    case Expr::Kind::Binary: {
      auto lhs = foldConstant(*expr.operands[0]);
      auto rhs = lhs ? foldConstant(*expr.operands[1]) : std::nullopt;
      if (!lhs || !rhs)
        return std::nullopt;
      if (expr.text == "+")
        return *lhs + *rhs;
      if (expr.text == "-")
        return *lhs - *rhs;
      if (expr.text == "*")
        return *lhs * *rhs;
      if (expr.text == "/")
        return *lhs / *rhs;
      return std::nullopt;
    }
    case Expr::Kind::Call: {
      std::vector<double> args;
      for (const auto &operand : expr.operands) {
        auto value = foldConstant(*operand);
        if (!value)
          return std::nullopt;
        args.push_back(*value);
      }
      llvm::StringRef f = expr.text;
      if (args.size() == 1) {
        if (f == "sqrt")
          return std::sqrt(args[0]);
        if (f == "exp2")
          return std::exp2(args[0]);
        if (f == "log2")
          return std::log2(args[0]);
        if (f == "exp")
          return std::exp(args[0]);
        if (f == "log")
          return std::log(args[0]);
      }
      if (args.size() == 2 && (f == "min" || f == "max"))
        return f == "min" ? std::min(args[0], args[1]) : std::max(args[0], args[1]);
      return std::nullopt;
    }
    case Expr::Kind::Conditional: {
      const Expr *chosen = chooseBranch(expr);
      return chosen ? foldConstant(*chosen) : std::nullopt;
    }
    default:
      return std::nullopt;
    }
  }

  /// `a if c else b` with `c` a condition on parameters: the branch this
  /// instantiation takes (recursively); `expr` itself otherwise. Null after
  /// an error in the condition.
  const Expr *chooseBranch(const Expr &expr) const {
    if (expr.kind != Expr::Kind::Conditional)
      return &expr;
    auto value = const_cast<Lowering *>(this)->holds(expr.operands[0].get(),
                                                     "the condition of a conditional value");
    if (!value)
      return nullptr;
    return chooseBranch(*expr.operands[*value ? 1 : 2]);
  }

  void declareGlobals() {
    for (const spec::ParamDecl &param : spec.params)
      declareName(param.name.value, param.name.loc, "as a parameter");
    for (const spec::GlobalDecl &global : spec.globals) {
      auto active = holds(global.when.get(), "the 'when' of global '" + global.name.value + "'");
      if (!active || !*active)
        continue;
      if (!declareName(global.name.value, global.name.loc, "as a global"))
        continue;
      ir::Global g{global.name.value, global.dtype.value, {}, global.name.loc};
      for (const spec::Extent &dim : global.dims)
        g.dims.push_back(toSize(dim));
      if (g.dims.size() > 4) {
        diags.report(DiagID::err_sema_unsupported, global.name.loc,
                     fmt::format("a global of {} dimensions", g.dims.size()),
                     "TMA tile maps here have at most 4");
        continue;
      }
      globalIndex[global.name.value] = static_cast<unsigned>(kernel.globals.size());
      kernel.globals.push_back(std::move(g));
    }
  }

  void declareScalars() {
    for (const spec::ScalarDecl &decl : spec.scalars) {
      if (!declareName(decl.name.value, decl.name.loc, "as a scalar"))
        continue;
      if (decl.dtype.value != spec::DType::F32) {
        diags.report(DiagID::err_sema_dtype, decl.dtype.loc, "scalar '" + decl.name.value + "'",
                     "f32", spelling(decl.dtype.value));
        continue;
      }
      ir::Scalar scalar{decl.name.value, decl.dtype.value, std::nullopt, decl.name.loc};
      if (decl.defaultValue) {
        auto value = foldConstant(*decl.defaultValue);
        if (!value || !std::isfinite(*value)) {
          diags.report(DiagID::err_sema_value_kind, decl.defaultValue->loc,
                       "the default of scalar '" + decl.name.value + "'",
                       "a finite number computed from numbers and parameters",
                       "another expression");
          continue;
        }
        scalar.defaultValue = *value;
      }
      if (decl.check) {
        if (!lowerScalarCheck(*decl.check, decl.name.value, scalar.checks))
          continue;
        for (const ir::Scalar::Check &check : scalar.checks)
          if (scalar.defaultValue && !check.accepts(*scalar.defaultValue)) {
            diags.report(DiagID::err_sema_scalar_default_check, decl.defaultValue->loc,
                         decl.name.value, fmt::format("{}", *scalar.defaultValue),
                         check.str(decl.name.value));
            break;
          }
      }
      scalarIndex[decl.name.value] = static_cast<unsigned>(kernel.scalars.size());
      kernel.scalars.push_back(std::move(scalar));
    }
  }

  /// `check:` as comparisons `name op number`, appended to `out`; the
  /// number may be on either side and is folded like a default.
  bool lowerScalarCheck(const Expr &expr, const std::string &name,
                        std::vector<ir::Scalar::Check> &out) {
    if (expr.kind == Expr::Kind::Binary && expr.text == "and")
      return lowerScalarCheck(*expr.operands[0], name, out) &&
             lowerScalarCheck(*expr.operands[1], name, out);
    static const std::map<std::string, std::string> flipped = {
        {">", "<"}, {">=", "<="}, {"<", ">"}, {"<=", ">="}};
    if (expr.kind == Expr::Kind::Binary && flipped.count(expr.text)) {
      auto isName = [&](const Expr &e) { return e.kind == Expr::Kind::Name && e.text == name; };
      const Expr &lhs = *expr.operands[0], &rhs = *expr.operands[1];
      if (isName(lhs) && !isName(rhs))
        if (auto bound = foldConstant(rhs); bound && std::isfinite(*bound)) {
          out.push_back({expr.text, *bound});
          return true;
        }
      if (isName(rhs) && !isName(lhs))
        if (auto bound = foldConstant(lhs); bound && std::isfinite(*bound)) {
          out.push_back({flipped.at(expr.text), *bound});
          return true;
        }
    }
    diags.report(DiagID::err_sema_scalar_check, expr.loc, name, "another expression");
    return false;
  }

  void declareTiles() {
    const spec::TileDecl *firstStaged = nullptr;
    for (const spec::TileDecl &tile : spec.tiles) {
      auto active = holds(tile.when.get(), "the 'when' of tile '" + tile.name.value + "'");
      if (!active || !*active)
        continue;
      if (tile.space.value != spec::MemSpace::Shared) {
        diags.report(DiagID::err_sema_unsupported, tile.space.loc, "a register tile",
                     "declare consumer registers under 'state'");
        continue;
      }
      if (tile.count) {
        diags.report(DiagID::err_sema_unsupported, tile.count->loc, "'count' on a tile",
                     "declare each tile by name, or list names with 'of'");
        continue;
      }
      if (tile.per && tile.per->value != "consumer_warpgroup") {
        diags.report(DiagID::err_sema_value_kind, tile.per->loc,
                     "'per' of tile '" + tile.name.value + "'", "'consumer_warpgroup'",
                     "'" + tile.per->value + "'");
        continue;
      }
      if (tile.shape.size() != 2) {
        diags.report(DiagID::err_sema_tile_dims, tile.name.loc, tile.name.value, tile.shape.size());
        continue;
      }
      int64_t extents[2] = {0, 0};
      bool constant = true;
      for (int d = 0; d < 2; ++d) {
        ir::Size size = toSize(tile.shape[d]);
        if (!size.constant) {
          diags.report(DiagID::err_sema_unsupported, tile.shape[d].loc,
                       "a tile extent given by a size ('" + tile.shape[d].name + "')",
                       "write a number or an integer parameter");
          constant = false;
        } else {
          extents[d] = *size.constant;
        }
      }
      if (!constant)
        continue;
      // TMA boxes and wgmma descriptors are built for 128-byte swizzled rows.
      if (extents[1] % 64 != 0) {
        diags.report(DiagID::err_sema_tile_width, tile.shape[1].loc, tile.name.value, extents[1]);
        continue;
      }
      // `of: [k, v]` declares one tile of this shape per name.
      std::vector<spec::Located<std::string>> names;
      if (tile.of.empty())
        names.push_back(tile.name);
      else
        names.assign(tile.of.begin(), tile.of.end());
      if (tile.per) {
        if (tile.stages) {
          diags.report(DiagID::err_sema_value_kind, tile.stages->loc,
                       "tile '" + tile.name.value + "'", "staged or per warpgroup",
                       "both 'stages' and 'per'");
          continue;
        }
        for (const spec::Located<std::string> &name : names) {
          if (!declareName(name.value, name.loc, "as a tile"))
            continue;
          warpgroupTileIndex[name.value] = static_cast<unsigned>(kernel.warpgroupTiles.size());
          kernel.warpgroupTiles.push_back(
              ir::WarpgroupTile{name.value, tile.dtype.value, extents[0], extents[1], name.loc});
        }
        continue;
      }
      if (tile.stages) {
        if (firstStaged && firstStaged->stages &&
            (firstStaged->stages->isAuto != tile.stages->isAuto ||
             firstStaged->stages->count != tile.stages->count)) {
          auto show = [](const spec::StageCount &s) {
            return s.isAuto ? std::string("auto") : std::to_string(s.count);
          };
          diags.report(DiagID::err_sema_stage_count, tile.stages->loc, firstStaged->name.value,
                       show(*firstStaged->stages), tile.name.value, show(*tile.stages));
        } else if (!firstStaged) {
          firstStaged = &tile;
          kernel.requestedStages = *tile.stages;
        }
      }
      for (const spec::Located<std::string> &name : names) {
        if (!declareName(name.value, name.loc, "as a tile"))
          continue;
        tileIndex[name.value] = static_cast<unsigned>(kernel.stageTiles.size());
        kernel.stageTiles.push_back(
            ir::StageTile{name.value, tile.dtype.value, extents[0], extents[1], name.loc});
      }
    }
  }

  static std::optional<int64_t> positiveInteger(const Expr &expr) {
    if (expr.kind != Expr::Kind::Number)
      return std::nullopt;
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(expr.text.data(), expr.text.data() + expr.text.size(), value);
    if (ec != std::errc() || ptr != expr.text.data() + expr.text.size() || value <= 0)
      return std::nullopt;
    return value;
  }

  /// A size by name: a launch size, or an integer parameter (a constant).
  ir::Size sizeNamed(const std::string &name) const {
    if (auto value = intParam(name))
      return ir::Size{*value, {}};
    return ir::Size{std::nullopt, name};
  }

  /// `STEP * (VAR + 1)` or `(VAR + 1) * STEP`: the end row of task index VAR.
  std::optional<ir::LoopBound> parseTaskEnd(const Expr &expr) const {
    if (expr.kind != Expr::Kind::Binary || expr.text != "*")
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      auto step = positiveInteger(*expr.operands[side]);
      if (!step && expr.operands[side]->kind == Expr::Kind::Name)
        if (auto value = intParam(expr.operands[side]->text); value && *value > 0)
          step = value;
      const Expr *var = step ? plusOne(*expr.operands[1 - side]) : nullptr;
      const ir::IterVar *task =
          var && var->kind == Expr::Kind::Name ? findTask(var->text) : nullptr;
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

  /// X in `X + 1`, else null.
  static const Expr *plusOne(const Expr &expr) {
    if (expr.kind != Expr::Kind::Binary || expr.text != "+")
      return nullptr;
    const Expr &one = *expr.operands[1];
    if (one.kind != Expr::Kind::Number || one.text != "1")
      return nullptr;
    return expr.operands[0].get();
  }

  /// `row(VAR) + 1`: the loop's elements up to each row of task index VAR.
  /// The task as a whole stops where `STEP * (VAR + 1)` would.
  std::optional<ir::LoopBound> parseRowEnd(const Expr &expr) const {
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

  /// `M / 128` as (size M, step 128); for the loop also
  /// `min(N, 192 * (i + 1)) / 128` (stop at the task's last row) and
  /// `min(N, row(i) + 1) / 128` (stop at each row).
  std::optional<std::pair<ir::Size, int64_t>>
  parseIterExtent(const Expr &written, const std::string &what, ir::LoopBound *bound) {
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

  /// `start: {LOOP: row(TASK) - WINDOW + OFFSET}` (or a conditional choosing
  /// one per instantiation): the terms of a sum of `row(TASK)` once, integers,
  /// and at most one subtracted scalar or integer constant. TASK must be the
  /// index the loop stops at.
  void declareLoopStart(const spec::IterVar &var) {
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

  /// `tail: {LOOP: T}` (or a conditional choosing one per instantiation): T
  /// a positive multiple of 16 up to the loop's step, an integer or an integer
  /// constant; the step itself is no tail. Only for a loop over its whole size.
  void declareLoopTail(const spec::IterVar &var) {
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

  /// Lowering a loop tail: each stage tile's extent along the loop becomes the
  /// tail's step, and so does the loop's (what col() and the bounds read).
  void applyTailStep() {
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
  }

  void declareGrid() {
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
                   "used with two task indices",
                   fmt::format("{} task indices", kernel.tasks.size()));
    // Tasks whose loop stops at their rows differ in length: they are ordered by it.
    if (kernel.groupedOrder && spec.grid->order && !kernel.loopBound.stopVar.empty())
      diags.report(DiagID::err_sema_value_kind, spec.grid->order->loc, "'order: grouped'",
                   "used with a loop over its whole size",
                   "a loop that stops at the rows of '" + kernel.loopBound.stopVar + "'");
    kernel.alternateLoop = spec.grid->loopOrder && spec.grid->loopOrder->value == "alternate";
  }

  void declareState() {
    for (const spec::StateDecl &state : spec.consumer.state) {
      if (!declareName(state.name.value, state.name.loc, "as consumer state"))
        continue;
      // "f32[128, 256]" (a tile) or "f32[192]" (one value per row)
      llvm::StringRef type = llvm::StringRef(state.type.value).trim();
      auto bad = [&] {
        diags.report(DiagID::err_sema_state_type, state.type.loc, state.name.value,
                     state.type.value);
      };
      auto [dtypeText, rest] = type.split('[');
      dtypeText = dtypeText.trim();
      if (!rest.consume_back("]")) {
        bad();
        continue;
      }
      llvm::SmallVector<llvm::StringRef, 4> dims;
      rest.split(dims, ',');
      llvm::SmallVector<int64_t, 2> extents;
      for (llvm::StringRef dim : dims) {
        dim = dim.trim();
        int64_t value = 0;
        if (!dim.getAsInteger(10, value) && value > 0)
          extents.push_back(value);
        else if (auto param = intParam(dim); param && *param > 0)
          extents.push_back(*param);
      }
      if (extents.size() != dims.size() || extents.empty() || extents.size() > 2) {
        bad();
        continue;
      }
      std::optional<spec::DType> dtype;
      for (spec::DType candidate : {spec::DType::BF16, spec::DType::F16, spec::DType::F32})
        if (dtypeText == spec::spelling(candidate))
          dtype = candidate;
      if (!dtype) {
        bad();
        continue;
      }
      if (*dtype != spec::DType::F32) {
        diags.report(DiagID::err_sema_dtype, state.type.loc,
                     "the accumulator '" + state.name.value + "'", "f32", spelling(*dtype));
        continue;
      }
      int64_t rows = extents[0];
      int64_t wantRows = 64 * kernel.consumerWarpgroups;
      if (rows != wantRows) {
        diags.report(DiagID::err_sema_state_rows, state.type.loc, state.name.value, rows,
                     kernel.consumerWarpgroups, wantRows);
        continue;
      }
      stateDecls.push_back(
          StateDecl{state.name.value, rows, extents.size() == 1 ? 1 : extents[1], state.name.loc});
    }
  }

  //===--------------------------------------------------------------------===//
  // Statements
  //===--------------------------------------------------------------------===//

  /// The statements of `body` that this instantiation keeps.
  std::vector<const stmt::Stmt *> activeStatements(const std::optional<spec::StageBody> &body) {
    std::vector<const stmt::Stmt *> out;
    if (!body)
      return out;
    for (const stmt::Stmt &statement : body->stmts) {
      auto keep = holds(statement.guard.get(),
                        "the condition of a statement in '" + body->name.value + "'");
      if (keep && *keep)
        out.push_back(&statement);
    }
    return out;
  }

  std::vector<llvm::StringRef> declaredNames() const {
    std::vector<llvm::StringRef> names;
    for (const auto &entry : declared)
      names.push_back(entry.getKey());
    llvm::sort(names);
    return names;
  }

  /// Checks that `name` is declared; reports it otherwise.
  bool known(const Expr &name, const std::string &what) {
    if (declared.count(name.text))
      return true;
    reportUnknownName(name, what, declaredNames());
    return false;
  }

  const ir::IterVar *findTask(llvm::StringRef name) const {
    for (const ir::IterVar &var : kernel.tasks)
      if (var.name == name)
        return &var;
    return nullptr;
  }

  const ir::IterVar *findIterVar(llvm::StringRef name) const {
    if (const ir::IterVar *task = findTask(name))
      return task;
    if (kernel.loop.name == name)
      return &kernel.loop;
    return nullptr;
  }

  /// `G[i, j]` addressed in units of a `rows x cols` tile (cols only for a
  /// vector): checks each index and returns the coordinates.
  std::optional<std::pair<unsigned, std::vector<ir::Coord>>>
  lowerAccess(const Expr &access, std::vector<int64_t> span, const std::string &what,
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
          std::string found = index.kind == Expr::Kind::Name ? "'" + index.text + "'"
                                                             : std::string("an expression");
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
        diags.report(DiagID::err_sema_index_step, index.loc, var->name, var->step, unitName,
                     tileSpan, d + 1, global.name, global.dims[d].str());
        ok = false;
      }
      coords.push_back(ir::Coord{var->name, std::nullopt});
    }
    if (!ok)
      return std::nullopt;
    return std::pair{static_cast<unsigned>(it->second), std::move(coords)};
  }

  void unsupported(const stmt::Stmt &statement, const std::string &body, const char *hint) {
    diags.report(DiagID::err_sema_unsupported, statement.loc, "this statement in '" + body + "'",
                 hint);
  }

  void lowerLoads() {
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
      if (t.dtype != spec::DType::BF16) {
        diags.report(DiagID::err_sema_dtype, t.loc, "tile '" + t.name + "'", "bf16",
                     spelling(t.dtype));
        continue;
      }
      kernel.loads.push_back(
          ir::Load{tile->second, access->first, std::move(access->second), statement->loc});
    }
  }

  void checkEveryLoadIsUsed() {
    for (const ir::Load &load : kernel.loads) {
      bool used = false;
      for (const ir::ProgramOp &op : kernel.program.compute) {
        auto reads = [&](const ir::MmaOperand &o) {
          return o.where == ir::MmaOperand::Where::Stage && o.index == load.tile;
        };
        used = used || (op.kind == ir::ProgramOp::Kind::Mma && (reads(op.a) || reads(op.b)));
      }
      if (!used)
        diags.report(DiagID::err_sema_unused_load, load.loc, kernel.stageTiles[load.tile].name);
    }
  }

  const spec::KernelSpec &spec;
  const Instance &instance;
  const ArchInfo &arch;
  DiagnosticEngine &diags;
  std::optional<int64_t> tailStep;
  ir::Kernel kernel;
  llvm::StringMap<SourceLoc> declared;
  llvm::StringMap<unsigned> globalIndex, tileIndex, scalarIndex, warpgroupTileIndex;
  /// `state:` declarations: tiles (cols > 1) and row vectors (cols 1).
  struct StateDecl {
    std::string name;
    int64_t rows, cols;
    SourceLoc loc;
  };
  std::vector<StateDecl> stateDecls;
  llvm::StringMap<int64_t> constantValues;
#include "LowerProgram.inc"
};

std::string sanitize(std::string text) {
  for (char &c : text)
    if (!llvm::isAlnum(c) && c != '_')
      c = c == '-' ? 'm' : '_';
  return text;
}

bool isSelected(const spec::KernelSpec &spec, size_t param) {
  return llvm::any_of(spec.selects, [&](const spec::SelectDecl &select) {
    return select.param.value == spec.params[param].name.value;
  });
}

std::string instanceSuffix(const spec::ParamDecl &param, const spec::ParamValue &value) {
  switch (value.kind) {
  case spec::ParamValue::Kind::Bool:
    return value.boolValue ? param.name.value : "";
  case spec::ParamValue::Kind::Name:
    return value.text;
  case spec::ParamValue::Kind::Int:
    return param.name.value + (value.intValue < 0 ? "m" + std::to_string(-value.intValue)
                                                  : std::to_string(value.intValue));
  case spec::ParamValue::Kind::Float:
    return sanitize(param.name.value + value.text);
  }
  return "";
}

} // namespace

bool checkParamRestrictions(const spec::KernelSpec &spec, llvm::ArrayRef<ParamRestriction> only,
                            DiagnosticEngine &diags) {
  bool ok = true;
  for (const ParamRestriction &r : only) {
    auto param = llvm::find_if(spec.params,
                               [&](const spec::ParamDecl &p) { return p.name.value == r.name; });
    if (param == spec.params.end()) {
      llvm::SmallVector<std::string, 4> names;
      for (const spec::ParamDecl &p : spec.params)
        names.push_back(p.name.value);
      if (names.empty())
        diags.report(DiagID::err_param_option_no_params, SourceLoc(), r.name);
      else
        diags.report(DiagID::err_param_option_unknown, SourceLoc(), r.name,
                     llvm::join(names, ", "));
      ok = false;
    } else if (llvm::any_of(spec.selects, [&](const spec::SelectDecl &select) {
                 return select.param.value == r.name;
               })) {
      diags.report(DiagID::err_param_option_selected, SourceLoc(), r.name);
      ok = false;
    } else if (llvm::none_of(param->values, [&](const spec::ParamValue &v) {
                 return paramValueName(v) == r.value;
               })) {
      llvm::SmallVector<std::string, 8> values;
      for (const spec::ParamValue &v : param->values)
        values.push_back(paramValueName(v));
      diags.report(DiagID::err_param_option_value, SourceLoc(), r.name, r.value,
                   llvm::join(values, ", "));
      ok = false;
    }
  }
  return ok;
}

std::vector<Instance> enumerateInstances(const spec::KernelSpec &spec, DiagnosticEngine &diags,
                                         llvm::ArrayRef<ParamRestriction> only) {
  size_t count = 1;
  for (const spec::ParamDecl &param : spec.params) {
    count *= param.values.size();
    if (count > kMaxInstances) {
      diags.report(DiagID::err_sema_too_many_instances, param.name.loc, count, kMaxInstances);
      return {};
    }
  }
  std::vector<Instance> instances;
  for (size_t i = 0; i < count; ++i) {
    Instance instance;
    size_t rest = i;
    std::vector<size_t> choice(spec.params.size());
    for (size_t p = spec.params.size(); p-- > 0;) {
      choice[p] = rest % spec.params[p].values.size();
      rest /= spec.params[p].values.size();
    }
    instance.name = spec.name.value;
    for (size_t p = 0; p < spec.params.size(); ++p) {
      const spec::ParamValue &value = spec.params[p].values[choice[p]];
      instance.values.push_back(&value);
      if (isSelected(spec, p))
        continue; // named by applySelections
      std::string suffix = instanceSuffix(spec.params[p], value);
      if (!suffix.empty())
        instance.name += "_" + suffix;
    }
    instances.push_back(std::move(instance));
  }
  // Short names can collide (two boolean parameters, one true each): then
  // every instance spells out every parameter. Instances that differ only in
  // selected parameters share a launcher, hence a name.
  llvm::StringSet<> names;
  size_t launchers = 1;
  for (size_t p = 0; p < spec.params.size(); ++p)
    if (!isSelected(spec, p))
      launchers *= spec.params[p].values.size();
  for (const Instance &i : instances)
    names.insert(i.name);
  if (names.size() != launchers)
    for (Instance &instance : instances) {
      instance.name = spec.name.value;
      for (size_t p = 0; p < spec.params.size(); ++p)
        if (!isSelected(spec, p))
          instance.name +=
              "_" + spec.params[p].name.value + "_" + sanitize(paramValueName(*instance.values[p]));
    }
  // --param restrictions drop instances after naming, so names stay stable.
  llvm::erase_if(instances, [&](const Instance &instance) {
    for (size_t p = 0; p < spec.params.size(); ++p) {
      bool restricted = false, kept = false;
      for (const ParamRestriction &r : only) {
        if (r.name != spec.params[p].name.value)
          continue;
        restricted = true;
        kept = kept || r.value == paramValueName(*instance.values[p]);
      }
      if (restricted && !kept)
        return true;
    }
    return false;
  });
  if (!applySelections(spec, instances, diags))
    return {};
  return instances;
}

std::optional<ir::Kernel> lowerSpecToIR(const spec::KernelSpec &spec, const Instance &instance,
                                        const ArchInfo &arch, DiagnosticEngine &diags,
                                        std::optional<int64_t> tailStep) {
  return Lowering(spec, instance, arch, diags, tailStep).run();
}

} // namespace tkc
