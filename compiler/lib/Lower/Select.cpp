//===- Select.cpp - Parameters chosen at launch ----------------------------===//
//
// Part of tkc. See docs/SpecReference.md ("select").
//
//===----------------------------------------------------------------------===//
//
// `select: {wide: "N >= 8192"}` makes the boolean parameter `wide` a choice the
// launcher makes at each call instead of a suffix of the launchers' names. Each
// condition is evaluated once per instantiation with the parameters it reads
// known: where that leaves a constant, only the instantiation it picks is kept
// (an instantiation nobody can launch is never compiled); otherwise it becomes
// C++ over the launcher's size arguments.
//
//===----------------------------------------------------------------------===//
#include "tkc/Lower/Select.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace tkc {

using stmt::Expr;

namespace {

/// A value in a selection: known now (parameters and integers) or computed by
/// the launcher from its sizes.
struct SelValue {
  bool isBool = false;
  std::optional<int64_t> known; ///< booleans as 0 and 1
  std::string cpp;              ///< C++ over the launcher's sizes, when not known
  /// The largest magnitude it can take, sizes ranging over 1 .. 2^31 - 1 (the
  /// launcher checks that before it evaluates the condition).
  double bound = 0;

  std::string text() const {
    if (!known)
      return cpp;
    if (isBool)
      return *known ? "true" : "false";
    return std::to_string(*known) + (*known > INT32_MAX || *known < INT32_MIN ? "LL" : "");
  }
  std::string kindName() const { return isBool ? "a boolean" : "an integer"; }
};

/// Sizes are checked to lie in 1 .. 2^31 - 1 before a condition reads them.
constexpr double kMaxSize = 2147483647.0;

/// Binding strength of an operator as the spec's expression grammar has it.
int precedence(const Expr &e) {
  if (e.kind == Expr::Kind::Binary) {
    if (e.text == "or")
      return 1;
    if (e.text == "and")
      return 2;
    if (e.text == "+" || e.text == "-")
      return 5;
    if (e.text == "*" || e.text == "/" || e.text == "@")
      return 6;
    return 4; // comparisons
  }
  if (e.kind == Expr::Kind::Unary)
    return e.text == "not" ? 3 : 7;
  return 8;
}

/// The expression as a spec writes it (for comments in the generated code).
std::string written(const Expr &e) {
  auto operand = [&](const Expr &child, bool right) {
    bool paren = precedence(child) < precedence(e) ||
                 (right && precedence(child) == precedence(e) && e.kind == Expr::Kind::Binary);
    return paren ? "(" + written(child) + ")" : written(child);
  };
  switch (e.kind) {
  case Expr::Kind::Name:
  case Expr::Kind::Number:
    return e.text;
  case Expr::Kind::Unary:
    return e.text + (e.text == "not" ? " " : "") + operand(*e.operands[0], true);
  case Expr::Kind::Binary:
    return operand(*e.operands[0], false) + " " + e.text + " " + operand(*e.operands[1], true);
  default:
    return "...";
  }
}

/// Evaluates one selection's condition for one instantiation.
class Evaluator {
public:
  Evaluator(const spec::KernelSpec &spec, const spec::SelectDecl &select, const Instance &instance,
            const llvm::StringSet<> &selected, const std::vector<std::string> &sizes,
            DiagnosticEngine &diags)
      : spec(spec), select(select), instance(instance), selected(selected), sizes(sizes),
        diags(diags) {}

  std::optional<SelValue> eval(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::Name:
      return name(e);
    case Expr::Kind::Number: {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(e.text.data(), e.text.data() + e.text.size(), value);
      if (ec != std::errc() || ptr != e.text.data() + e.text.size())
        return fail(e, "the number " + e.text);
      return SelValue{false, value, "", std::abs(static_cast<double>(value))};
    }
    case Expr::Kind::Unary:
      return unary(e);
    case Expr::Kind::Binary:
      return binary(e);
    case Expr::Kind::Call:
      return fail(e, "a call to '" + e.text + "'");
    case Expr::Kind::Index:
      return fail(e, "an index");
    case Expr::Kind::Member:
      return fail(e, "'." + e.text + "'");
    case Expr::Kind::Conditional:
      return fail(e, "'... if ... else ...'");
    case Expr::Kind::Ellipsis:
      return fail(e, "'...'");
    }
    return std::nullopt;
  }

  /// The sizes the condition read, in order of first use.
  std::vector<std::string> sizesRead;

private:
  std::optional<SelValue> fail(const Expr &e, const std::string &what) {
    diags.report(DiagID::err_select_form, e.loc, what, select.param.value);
    return std::nullopt;
  }

  std::optional<SelValue> name(const Expr &e) {
    for (size_t p = 0; p < spec.params.size(); ++p) {
      if (spec.params[p].name.value != e.text)
        continue;
      if (selected.contains(e.text)) {
        diags.report(DiagID::err_select_selected, e.loc, select.param.value, e.text);
        return std::nullopt;
      }
      const spec::ParamValue &value = *instance.values[p];
      if (value.kind == spec::ParamValue::Kind::Bool)
        return SelValue{true, value.boolValue ? 1 : 0, "", 1};
      if (value.kind == spec::ParamValue::Kind::Int)
        return SelValue{false, value.intValue, "", std::abs(static_cast<double>(value.intValue))};
      diags.report(DiagID::err_select_param_value, e.loc, e.text, "'" + value.text + "'");
      return std::nullopt;
    }
    if (llvm::is_contained(sizes, e.text)) {
      if (!llvm::is_contained(sizesRead, e.text))
        sizesRead.push_back(e.text);
      return SelValue{false, std::nullopt, e.text, kMaxSize};
    }
    llvm::SmallVector<std::string, 8> params;
    for (const spec::ParamDecl &param : spec.params)
      if (!selected.contains(param.name.value))
        params.push_back(param.name.value);
    diags.report(DiagID::err_select_name, e.loc, e.text, select.param.value,
                 params.empty() ? std::string("none") : llvm::join(params, ", "),
                 sizes.empty() ? std::string("none") : llvm::join(sizes, ", "));
    return std::nullopt;
  }

  bool expect(const Expr &op, const SelValue &v, bool wantBool) {
    if (v.isBool == wantBool)
      return true;
    diags.report(DiagID::err_select_operand, op.loc, op.text, select.param.value,
                 wantBool ? "boolean" : "integer", v.kindName());
    return false;
  }

  std::optional<SelValue> unary(const Expr &e) {
    auto v = eval(*e.operands[0]);
    if (!v)
      return std::nullopt;
    bool isNot = e.text == "not";
    if (!expect(e, *v, isNot))
      return std::nullopt;
    if (v->known) {
      if (!isNot && *v->known == INT64_MIN)
        return overflow(e);
      return SelValue{isNot, isNot ? !*v->known : -*v->known, "", v->bound};
    }
    return SelValue{isNot, std::nullopt, (isNot ? "!(" : "-(") + v->cpp + ")", v->bound};
  }

  std::optional<SelValue> binary(const Expr &e) {
    const std::string &op = e.text;
    static const llvm::StringSet<> logical{"and", "or"}, ordering{"<", "<=", ">", ">="},
        equality{"==", "!="}, arithmetic{"+", "-", "*"};
    if (!logical.contains(op) && !ordering.contains(op) && !equality.contains(op) &&
        !arithmetic.contains(op))
      return fail(e, "'" + op + "'");
    auto lhs = eval(*e.operands[0]);
    if (!lhs)
      return std::nullopt;
    auto rhs = eval(*e.operands[1]);
    if (!rhs)
      return std::nullopt;

    if (logical.contains(op)) {
      if (!expect(e, *lhs, true) || !expect(e, *rhs, true))
        return std::nullopt;
      bool isAnd = op == "and";
      // A known operand decides (false and x, true or x) or drops out.
      for (const SelValue *v : {&*lhs, &*rhs})
        if (v->known && static_cast<bool>(*v->known) != isAnd)
          return SelValue{true, isAnd ? 0 : 1, "", 1};
      if (lhs->known)
        return rhs;
      if (rhs->known)
        return lhs;
      return SelValue{true, std::nullopt,
                      "(" + lhs->cpp + (isAnd ? " && " : " || ") + rhs->cpp + ")", 1};
    }
    bool wantBool = equality.contains(op) && lhs->isBool;
    if (!expect(e, *lhs, wantBool) || !expect(e, *rhs, wantBool))
      return std::nullopt;
    bool yieldsBool = !arithmetic.contains(op);
    double bound =
        !yieldsBool ? (op == "*" ? lhs->bound * rhs->bound : lhs->bound + rhs->bound) : 1;
    if (lhs->known && rhs->known) {
      int64_t a = *lhs->known, b = *rhs->known, r = 0;
      if (op == "+"   ? __builtin_add_overflow(a, b, &r)
          : op == "-" ? __builtin_sub_overflow(a, b, &r)
          : op == "*" ? __builtin_mul_overflow(a, b, &r)
                      : false)
        return overflow(e);
      if (yieldsBool)
        r = op == "<"    ? a < b
            : op == "<=" ? a <= b
            : op == ">"  ? a > b
            : op == ">=" ? a >= b
            : op == "==" ? a == b
                         : a != b;
      return SelValue{yieldsBool, r, "", std::abs(static_cast<double>(r))};
    }
    // The launcher computes in long long: refuse what could overflow it.
    if (bound >= 9.2e18)
      return overflow(e);
    return SelValue{yieldsBool, std::nullopt,
                    "(" + lhs->text() + " " + op + " " + rhs->text() + ")", bound};
  }

  std::optional<SelValue> overflow(const Expr &e) {
    diags.report(DiagID::err_select_overflow, e.loc, written(e), select.param.value);
    return std::nullopt;
  }

  const spec::KernelSpec &spec;
  const spec::SelectDecl &select;
  const Instance &instance;
  const llvm::StringSet<> &selected;
  const std::vector<std::string> &sizes;
  DiagnosticEngine &diags;
};

/// The names a launcher takes as sizes: the named extents of the globals
/// that are not parameters or constants.
std::vector<std::string> sizeNames(const spec::KernelSpec &spec) {
  std::vector<std::string> names;
  for (const spec::GlobalDecl &global : spec.globals)
    for (const spec::Extent &extent : global.dims) {
      if (extent.isNumber() || llvm::is_contained(names, extent.name))
        continue;
      bool param = llvm::any_of(
          spec.params, [&](const spec::ParamDecl &p) { return p.name.value == extent.name; });
      bool constant = llvm::any_of(
          spec.constants, [&](const spec::ConstantDecl &c) { return c.name.value == extent.name; });
      if (!param && !constant)
        names.push_back(extent.name);
    }
  return names;
}

bool checkDeclarations(const spec::KernelSpec &spec, DiagnosticEngine &diags) {
  bool ok = true;
  for (const spec::SelectDecl &select : spec.selects) {
    auto param = llvm::find_if(
        spec.params, [&](const spec::ParamDecl &p) { return p.name.value == select.param.value; });
    if (param == spec.params.end()) {
      llvm::SmallVector<std::string, 4> names;
      for (const spec::ParamDecl &p : spec.params)
        names.push_back(p.name.value);
      diags.report(DiagID::err_select_param, select.param.loc, select.param.value,
                   names.empty() ? std::string("none") : llvm::join(names, ", "));
      ok = false;
      continue;
    }
    bool hasFalse = false, hasTrue = false;
    llvm::SmallVector<std::string, 4> values;
    for (const spec::ParamValue &v : param->values) {
      values.push_back(v.text);
      if (v.kind == spec::ParamValue::Kind::Bool)
        (v.boolValue ? hasTrue : hasFalse) = true;
    }
    if (param->values.size() != 2 || !hasFalse || !hasTrue) {
      diags.report(DiagID::err_select_not_boolean, select.param.loc, select.param.value,
                   llvm::join(values, ", "));
      ok = false;
    }
  }
  return ok;
}

/// What a kernel's launcher takes, for comparing the kernels behind one.
std::string launcherArguments(const ir::Kernel &k) {
  llvm::SmallVector<std::string, 12> parts;
  for (size_t g = 0; g < k.globals.size(); ++g) {
    const ir::Global &global = k.globals[g];
    llvm::SmallVector<std::string, 4> dims;
    for (const ir::Size &d : global.dims)
      dims.push_back(d.str());
    parts.push_back(global.name + " " + spec::spelling(global.dtype) + "[" +
                    llvm::join(dims, ", ") + "]" +
                    (ir::writesGlobal(k, static_cast<unsigned>(g)) ? " (written)" : ""));
  }
  for (const std::string &size : ir::launchSizeSymbols(k))
    parts.push_back(size);
  for (const ir::Scalar &scalar : k.scalars)
    parts.push_back(scalar.name + (scalar.defaultValue
                                       ? " = " + std::to_string(*scalar.defaultValue)
                                       : std::string()));
  return llvm::join(parts, ", ");
}

} // namespace

bool checkEntries(const std::vector<ir::Kernel> &kernels, DiagnosticEngine &diags) {
  for (const ir::Kernel &k : kernels) {
    if (!k.entry || k.entry->name == k.name)
      continue;
    const ir::Kernel &first = *llvm::find_if(kernels, [&](const ir::Kernel &other) {
      return other.entry && other.entry->name == k.entry->name;
    });
    std::string theirs = launcherArguments(first), mine = launcherArguments(k);
    if (theirs != mine) {
      diags.report(DiagID::err_select_arguments, k.entry->loc, k.entry->name, theirs, mine);
      return false;
    }
    std::vector<std::string> sizes = ir::launchSizeSymbols(k);
    for (const std::string &size : k.entry->sizes)
      if (!llvm::is_contained(sizes, size)) {
        diags.report(DiagID::err_select_size, k.entry->loc, k.entry->name, size);
        return false;
      }
  }
  return true;
}

bool applySelections(const spec::KernelSpec &spec, std::vector<Instance> &instances,
                     DiagnosticEngine &diags) {
  if (spec.selects.empty())
    return true;
  if (!checkDeclarations(spec, diags))
    return false;
  llvm::StringSet<> selected;
  std::vector<size_t> selectedIndex;
  for (const spec::SelectDecl &select : spec.selects) {
    selected.insert(select.param.value);
    selectedIndex.push_back(static_cast<size_t>(llvm::find_if(spec.params,
                                                              [&](const spec::ParamDecl &p) {
                                                                return p.name.value ==
                                                                       select.param.value;
                                                              }) -
                                                spec.params.begin()));
  }
  const std::vector<std::string> sizes = sizeNames(spec);
  std::string spelled;
  for (const spec::SelectDecl &select : spec.selects)
    spelled += (spelled.empty() ? "" : "; ") + select.param.value + ": " + written(*select.cond);

  std::vector<Instance> kept;
  for (Instance &instance : instances) {
    ir::Entry entry;
    entry.name = instance.name;
    entry.written = spelled;
    entry.loc = spec.selects.front().param.loc;
    llvm::SmallVector<std::string, 2> conjuncts;
    bool picked = true;
    for (size_t s = 0; s < spec.selects.size(); ++s) {
      const spec::SelectDecl &select = spec.selects[s];
      Evaluator evaluator(spec, select, instance, selected, sizes, diags);
      std::optional<SelValue> value = evaluator.eval(*select.cond);
      if (!value)
        return false; // the first instance reports; the others would repeat it
      if (!value->isBool) {
        diags.report(DiagID::err_select_result, select.cond->loc, select.param.value,
                     value->kindName());
        return false;
      }
      bool mine = instance.values[selectedIndex[s]]->boolValue;
      entry.selected.push_back(select.param.value);
      if (value->known) {
        picked = picked && static_cast<bool>(*value->known) == mine;
        continue;
      }
      conjuncts.push_back(mine ? value->cpp : "!" + value->cpp);
      entry.choices.push_back(select.param.value);
      for (const std::string &size : evaluator.sizesRead)
        if (!llvm::is_contained(entry.sizes, size))
          entry.sizes.push_back(size);
    }
    if (!picked)
      continue;
    entry.condition = llvm::join(conjuncts, " && ");
    instance.entry = std::move(entry);
    kept.push_back(std::move(instance));
  }

  // A kernel left alone behind its launcher keeps the launcher's name;
  // the others spell out their selected values.
  llvm::StringMap<int> members;
  for (const Instance &instance : kept)
    ++members[instance.entry->name];
  llvm::StringSet<> names;
  for (Instance &instance : kept) {
    if (members[instance.entry->name] == 1) {
      instance.entry->condition.clear();
      instance.entry->sizes.clear();
      instance.entry->choices.clear();
    } else {
      for (size_t s = 0; s < spec.selects.size(); ++s)
        if (llvm::is_contained(instance.entry->choices, spec.selects[s].param.value))
          instance.name += "_" + spec.selects[s].param.value + "_" +
                           (instance.values[selectedIndex[s]]->boolValue ? "true" : "false");
    }
  }
  for (const Instance &instance : kept) {
    TKC_INTERNAL_ASSERT(names.insert(instance.name).second,
                        "two kernels named " + instance.name + " after selection");
    if (instance.name != instance.entry->name)
      names.insert(instance.entry->name);
  }
  for (const auto &member : members)
    TKC_INTERNAL_ASSERT(
        member.getValue() == 1 ||
            !llvm::any_of(kept, [&](const Instance &i) { return i.name == member.getKey(); }),
        "launcher " + member.getKey().str() + " is also a kernel's name");
  instances = std::move(kept);
  return true;
}

} // namespace tkc
