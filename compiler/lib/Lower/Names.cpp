//===- Names.cpp - Spec names the generated C++ can take --------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// A spec may name a global, a size, a scalar, a tile, a grid index, a state value or a
// temporary anything the tile language parses, `do` (backward specs' dO) and `int`
// included. Those the generated C++ cannot take — C++ keywords, CUDA built-ins, the names
// the generated code declares around the spec's — are renamed in the parsed spec, before
// any instantiation is lowered, to `tkc_u_` and the name: a prefix no spec can write
// (names starting with `tkc_`, and with `__`, are refused where they are written). Messages,
// the IR dump and the manifest show the spec's own names (unmangled).
//
//===----------------------------------------------------------------------===//
#include "tkc/Lower/SpecToIR.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

namespace tkc {

namespace {
/// Names the generated C++ cannot take for a spec's own: C++ and CUDA keywords and
/// built-ins, and the names the generated code declares around the spec's
/// (launcher locals, hook parameters, the kernel struct's members).
constexpr const char *kReservedNames[] = {
    // C++20 keywords
    "alignas", "alignof", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval",
    "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield",
    "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit",
    "export", "extern", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
    "namespace", "new", "noexcept", "not_eq", "nullptr", "operator", "or_eq", "private",
    "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
    "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "and_eq",
    // CUDA built-ins and the namespaces the generated code names
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "kittens", "tkc", "std",
    // what the generated code declares around the spec's names
    "args", "globals", "stream", "status", "failed", "kName", "tasks", "layout", "producer",
    "consumer", "accumulator", "row_vector", "result_tile", "staging", "P", "Args", "g", "e",
    "split", "held0", "held1", "task", "rest", "head", "end", "extent", "first"};

constexpr llvm::StringLiteral kPrefix = ir::kRenamedPrefix;

void renameIn(stmt::Expr *e, const llvm::StringSet<> &renamed) {
  if (!e)
    return;
  if (e->kind == stmt::Expr::Kind::Name && renamed.count(e->text))
    e->text = (kPrefix + e->text).str();
  for (auto &operand : e->operands)
    renameIn(operand.get(), renamed);
}

void renameIn(std::optional<spec::StageBody> &body, const llvm::StringSet<> &renamed) {
  if (!body)
    return;
  for (stmt::Stmt &s : body->stmts) {
    renameIn(s.target.get(), renamed);
    renameIn(s.value.get(), renamed);
    renameIn(s.guard.get(), renamed);
  }
}

void rename(std::string &name, const llvm::StringSet<> &renamed) {
  if (renamed.count(name))
    name = (kPrefix + name).str();
}

using NameList = std::vector<std::pair<std::string, SourceLoc>>;

void assignedNames(const std::optional<spec::StageBody> &body, NameList &out) {
  if (!body)
    return;
  for (const stmt::Stmt &s : body->stmts)
    if (s.target && s.target->kind == stmt::Expr::Kind::Name)
      out.emplace_back(s.target->text, s.target->loc);
}
} // namespace

bool isReservedCxxName(llvm::StringRef name) { return llvm::is_contained(kReservedNames, name); }

bool isMangledName(llvm::StringRef name) {
  return name.startswith(kPrefix) && isReservedCxxName(name.drop_front(kPrefix.size()));
}

std::string unmangledNames(llvm::StringRef text) { return ir::specSpelling(text); }

bool mangleReservedNames(spec::KernelSpec &spec, DiagnosticEngine &diags) {
  // Every name that can reach the generated code: declarations, sizes and the statements'
  // temporaries. Parameters and constants are folded away and keep theirs.
  NameList list;
  for (const spec::GlobalDecl &g : spec.globals) {
    list.emplace_back(g.name.value, g.name.loc);
    for (const spec::Extent &d : g.dims)
      if (!d.isNumber())
        list.emplace_back(d.name, d.loc);
    for (const spec::Extent &d : g.layout)
      if (!d.isNumber())
        list.emplace_back(d.name, d.loc);
  }
  for (const spec::ScalarDecl &s : spec.scalars)
    list.emplace_back(s.name.value, s.name.loc);
  for (const spec::TileDecl &t : spec.tiles) {
    list.emplace_back(t.name.value, t.name.loc);
    for (const auto &of : t.of)
      list.emplace_back(of.value, of.loc);
  }
  if (spec.grid) {
    for (const auto *vars : {&spec.grid->tasks, &spec.grid->loop})
      for (const spec::IterVar &v : *vars)
        list.emplace_back(v.name.value, v.name.loc);
  }
  for (const spec::StateDecl &s : spec.consumer.state)
    list.emplace_back(s.name.value, s.name.loc);
  assignedNames(spec.producer.load, list);
  assignedNames(spec.consumer.setup, list);
  assignedNames(spec.consumer.compute, list);
  assignedNames(spec.consumer.finish, list);
  llvm::StringSet<> folded;
  for (const spec::ParamDecl &p : spec.params)
    folded.insert(p.name.value);
  for (const spec::ConstantDecl &c : spec.constants)
    folded.insert(c.name.value);

  // The prefixes stay the compiler's: refused where they are written, before anything is
  // renamed into them.
  bool ok = true;
  llvm::StringSet<> names, reported;
  for (const auto &[name, loc] : list) {
    if (folded.count(name))
      continue;
    llvm::StringRef text = name;
    if ((text.startswith("tkc_") || text.startswith("__")) && reported.insert(name).second) {
      diags.report(DiagID::err_sema_reserved_name, loc, name);
      ok = false;
    }
    names.insert(name);
  }
  // The kernel's name is the launcher's (or its stem): not renamed, so not a reserved one.
  llvm::StringRef kernel = spec.name.value;
  if (isReservedCxxName(kernel) || kernel.startswith("tkc_") || kernel.startswith("__")) {
    diags.report(DiagID::err_sema_reserved_kernel_name, spec.name.loc, spec.name.value);
    ok = false;
  }
  if (!ok)
    return false;

  llvm::StringSet<> renamed;
  for (const auto &entry : names)
    if (isReservedCxxName(entry.getKey()))
      renamed.insert(entry.getKey());
  if (renamed.empty())
    return true;

  for (spec::GlobalDecl &g : spec.globals) {
    rename(g.name.value, renamed);
    for (spec::Extent &d : g.dims)
      if (!d.isNumber())
        rename(d.name, renamed);
    for (spec::Extent &d : g.layout)
      if (!d.isNumber())
        rename(d.name, renamed);
  }
  for (spec::ScalarDecl &s : spec.scalars) {
    rename(s.name.value, renamed);
    renameIn(s.check.get(), renamed);
  }
  for (spec::TileDecl &t : spec.tiles) {
    rename(t.name.value, renamed);
    for (auto &of : t.of)
      rename(of.value, renamed);
    for (spec::Extent &d : t.shape)
      if (!d.isNumber())
        rename(d.name, renamed);
  }
  if (spec.grid) {
    for (auto *vars : {&spec.grid->tasks, &spec.grid->loop, &spec.grid->start, &spec.grid->tail,
                       &spec.grid->sequences})
      for (spec::IterVar &v : *vars) {
        rename(v.name.value, renamed);
        renameIn(v.extent.get(), renamed);
      }
  }
  for (spec::SelectDecl &s : spec.selects)
    renameIn(s.cond.get(), renamed);
  for (spec::StateDecl &s : spec.consumer.state)
    rename(s.name.value, renamed);
  renameIn(spec.producer.load, renamed);
  renameIn(spec.consumer.setup, renamed);
  renameIn(spec.consumer.compute, renamed);
  renameIn(spec.consumer.finish, renamed);
  return true;
}

} // namespace tkc
