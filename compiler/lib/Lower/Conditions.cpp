//===- Conditions.cpp - Parameters, conditions and constants --------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// Evaluating `when`/`if` conditions on one instantiation's parameter values
// (a misspelt parameter or value is an error, never a silently false guard),
// folding `constants` and other constant values, choosing the branch of a
// conditional value, and scalars' `check:` comparisons.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "tkc/dsl/SpecParser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

namespace tkc::lower {

namespace {

bool paramHasSymbol(const spec::ParamDecl &param, llvm::StringRef symbol) {
  return llvm::any_of(param.values, [&](const spec::ParamValue &v) {
    return v.kind == spec::ParamValue::Kind::Name && v.text == symbol;
  });
}

std::string paramValueList(const spec::ParamDecl &param) {
  llvm::SmallVector<std::string, 8> names;
  for (const spec::ParamValue &value : param.values)
    names.push_back(paramValueName(value));
  return llvm::join(names, ", ");
}

/// Constants a value may name besides parameters.
std::optional<double> namedConstant(llvm::StringRef name) {
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

} // namespace

const spec::ParamDecl *Lowering::findParam(llvm::StringRef name) const {
  for (const spec::ParamDecl &param : spec.params)
    if (param.name.value == name)
      return &param;
  return nullptr;
}

const spec::ParamValue &Lowering::valueOf(const spec::ParamDecl &param) const {
  return *instance.values[&param - spec.params.data()];
}

std::optional<CondValue> Lowering::evalCond(const Expr &expr, const std::string &what) {
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
    auto [ptr, ec] = std::from_chars(expr.text.data(), expr.text.data() + expr.text.size(), number);
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

std::optional<CondValue> Lowering::evalBinary(const Expr &expr, const CondValue &lhs,
                                              const CondValue &rhs, const std::string &what) {
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

bool Lowering::expectBool(const CondValue &value, const Expr &expr, const std::string &what) {
  if (value.kind == CondValue::Kind::Bool)
    return true;
  if (value.unresolved) {
    reportUnknownName(*value.unresolved, what, paramNames());
    return false;
  }
  diags.report(DiagID::err_sema_not_condition, expr.loc, what, value.describe());
  return false;
}

std::optional<bool> Lowering::holds(const Expr *cond, const std::string &what) {
  if (!cond)
    return true;
  auto value = evalCond(*cond, what);
  if (!value)
    return std::nullopt;
  if (!expectBool(*value, *cond, what))
    return std::nullopt;
  return value->boolean;
}

std::vector<llvm::StringRef> Lowering::paramNames() const {
  std::vector<llvm::StringRef> names;
  for (const spec::ParamDecl &param : spec.params)
    names.push_back(param.name.value);
  return names;
}

void Lowering::reportUnknownName(const Expr &expr, const std::string &what,
                                 llvm::ArrayRef<llvm::StringRef> candidates) {
  std::string suggestion = suggestSpelling(expr.text, candidates);
  if (suggestion.empty())
    diags.report(DiagID::err_sema_unknown_name, expr.loc, expr.text, what);
  else
    diags.report(DiagID::err_sema_unknown_name_suggest, expr.loc, expr.text, what, suggestion);
}

std::optional<int64_t> Lowering::intParam(llvm::StringRef name) const {
  if (const spec::ParamDecl *param = findParam(name)) {
    const spec::ParamValue &value = valueOf(*param);
    if (value.kind == spec::ParamValue::Kind::Int)
      return value.intValue;
  }
  if (auto it = constantValues.find(name); it != constantValues.end())
    return it->second;
  return std::nullopt;
}

void Lowering::declareConstants() {
  for (const spec::ConstantDecl &constant : spec.constants) {
    if (!declareName(constant.name.value, constant.name.loc, "as a constant", /*inCode=*/false))
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

std::optional<double> Lowering::foldConstant(const Expr &expr) const {
  switch (expr.kind) {
  case Expr::Kind::Number: {
    double number = 0;
    auto [ptr, ec] = std::from_chars(expr.text.data(), expr.text.data() + expr.text.size(), number);
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
    if (args.size() == 1)
      if (std::optional<ir::UnaryOp> op = ir::unaryFunction(f))
        return ir::evaluate(*op, args[0]);
    if (args.size() == 2 && (f == "min" || f == "max" || f == "pow"))
      return ir::evaluate(*ir::binaryOperator(f), args[0], args[1]);
    if (args.size() == 3 && f == "clamp")
      return std::fmin(std::fmax(args[0], args[1]), args[2]);
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

const Expr *Lowering::chooseBranch(const Expr &expr) const {
  if (expr.kind != Expr::Kind::Conditional)
    return &expr;
  auto value = const_cast<Lowering *>(this)->holds(expr.operands[0].get(),
                                                   "the condition of a conditional value");
  if (!value)
    return nullptr;
  return chooseBranch(*expr.operands[*value ? 1 : 2]);
}

bool Lowering::lowerScalarCheck(const Expr &expr, const std::string &name,
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

} // namespace tkc::lower
