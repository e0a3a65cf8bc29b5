//===- SpecParser.cpp - YAML tree to spec AST ------------------------------===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/dsl/SpecParser.h"

#include "tkc/dsl/InternalError.h"
#include "tkc/dsl/StmtParser.h"
#include "tkc/dsl/YamlTree.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace tkc {

using spec::Located;
using yaml::Node;

namespace {

/// Largest count or extent a spec may write; bigger sizes are never meant.
constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
/// Rank limit of globals and tiles (TMA handles up to 5; kittens uses 4).
constexpr size_t kMaxRank = 4;

struct KeySpec {
  llvm::StringRef name;
  bool required;
};

/// Checks the keys of one mapping against its schema: reports unknown keys
/// (with a suggestion), duplicates (with a note at the first) and missing
/// required keys, then hands out the first entry of each known key.
class MapReader {
public:
  MapReader(const Node &map, std::string context, SourceLoc ownerLoc, llvm::ArrayRef<KeySpec> keys,
            DiagnosticEngine &diags)
      : context(std::move(context)) {
    TKC_INTERNAL_ASSERT(map.isMapping(), "MapReader needs a mapping");
    llvm::SmallVector<llvm::StringRef, 16> names;
    for (const KeySpec &key : keys)
      names.push_back(key.name);
    llvm::StringMap<const yaml::Entry *> seen;
    for (const yaml::Entry &entry : map.entries) {
      if (!llvm::is_contained(names, entry.key)) {
        std::string suggestion = suggestSpelling(entry.key, names);
        if (suggestion.empty())
          diags.report(DiagID::err_unknown_key, entry.keyLoc, entry.key, this->context);
        else
          diags.report(DiagID::err_unknown_key_suggest, entry.keyLoc, entry.key, this->context,
                       suggestion);
        continue;
      }
      auto [it, inserted] = seen.try_emplace(entry.key, &entry);
      if (!inserted) {
        diags.report(DiagID::err_duplicate_key, entry.keyLoc, entry.key, this->context);
        diags.report(DiagID::note_first_given_here, it->second->keyLoc, entry.key);
        continue;
      }
      found[entry.key] = &entry;
    }
    for (const KeySpec &key : keys)
      if (key.required && !found.count(key.name))
        diags.report(DiagID::err_missing_key, ownerLoc, key.name, this->context);
  }

  const yaml::Entry *get(llvm::StringRef key) const {
    auto it = found.find(key);
    return it == found.end() ? nullptr : it->second;
  }

  const std::string &getContext() const { return context; }

private:
  std::string context;
  llvm::StringMap<const yaml::Entry *> found;
};

/// A name's length over the limit: reported at `loc`.
bool tooLong(llvm::StringRef text, SourceLoc loc, DiagnosticEngine &diags) {
  if (text.size() <= stmt::kMaxNameLength)
    return false;
  diags.report(DiagID::err_name_too_long, loc, text.substr(0, 24).str(), text.size(),
               stmt::kMaxNameLength);
  return true;
}

bool isIdentifier(llvm::StringRef text) {
  if (text.empty() || !(llvm::isAlpha(text[0]) || text[0] == '_'))
    return false;
  return llvm::all_of(text, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

bool looksLikeInteger(llvm::StringRef text) {
  llvm::StringRef digits = text;
  digits.consume_front("-") || digits.consume_front("+");
  return !digits.empty() && llvm::all_of(digits, llvm::isDigit);
}

class Parser {
public:
  Parser(DiagnosticEngine &diags) : diags(diags) {}

  std::optional<spec::KernelSpec> run(const Node &root, unsigned bufferId) {
    spec::KernelSpec spec;
    spec.fileName = diags.getSourceManager().getBufferName(bufferId).str();
    if (root.isNull()) {
      diags.report(DiagID::err_yaml_empty, root.loc);
      return std::nullopt;
    }
    if (!expectKind(root, Node::Kind::Mapping, "the spec"))
      return std::nullopt;

    static const KeySpec keys[] = {
        {"kernel", true},    {"arch", false},    {"template", true},   {"params", false},
        {"globals", true},   {"tiles", true},    {"grid", false},      {"producer", true},
        {"consumer", true},  {"scalars", false}, {"constants", false}, {"select", false},
        {"requires", false},
    };
    MapReader reader(root, "the spec", root.loc, keys, diags);

    if (const yaml::Entry *e = reader.get("kernel"))
      if (auto name = parseName(*e->value, "'kernel'"))
        spec.name = *name;
    if (const yaml::Entry *e = reader.get("arch"))
      if (auto arch = parseScalarText(*e->value, "'arch'"))
        spec.arch = *arch;
    if (const yaml::Entry *e = reader.get("template"))
      if (auto tmpl = parseEnum<spec::Template>(*e->value, "template", "'template'",
                                                {{"lcf", spec::Template::LCF}}))
        spec.tmpl = *tmpl;
    if (const yaml::Entry *e = reader.get("params"))
      parseParams(*e, spec.params);
    if (const yaml::Entry *e = reader.get("select"))
      forEachDecl(*e, "'select'", /*allowEmpty=*/false,
                  [&](const Located<std::string> &name, const yaml::Entry &entry) {
                    std::unique_ptr<stmt::Expr> cond;
                    if (parseCondition(*entry.value, "the selection of '" + name.value + "'", cond))
                      spec.selects.push_back(spec::SelectDecl{name, std::move(cond)});
                  });
    if (const yaml::Entry *e = reader.get("globals"))
      parseGlobals(*e, spec.globals);
    if (const yaml::Entry *e = reader.get("constants"))
      forEachDecl(*e, "'constants'", /*allowEmpty=*/false,
                  [&](const Located<std::string> &name, const yaml::Entry &entry) {
                    std::unique_ptr<stmt::Expr> value;
                    if (parseCondition(*entry.value, "constant '" + name.value + "'", value))
                      spec.constants.push_back(spec::ConstantDecl{name, std::move(value)});
                  });
    if (const yaml::Entry *e = reader.get("scalars"))
      parseScalars(*e, spec.scalars);
    if (const yaml::Entry *e = reader.get("requires"))
      parseCondition(*e->value, "'requires'", spec.requirements);
    if (const yaml::Entry *e = reader.get("tiles"))
      parseTiles(*e, spec.tiles);
    if (const yaml::Entry *e = reader.get("grid"))
      parseGrid(*e, spec.grid);
    if (const yaml::Entry *e = reader.get("producer"))
      parseProducer(*e, spec.producer);
    if (const yaml::Entry *e = reader.get("consumer"))
      parseConsumer(*e, spec.consumer);

    if (diags.hasErrors())
      return std::nullopt;
    return spec;
  }

private:
  //===--------------------------------------------------------------------===//
  // Values
  //===--------------------------------------------------------------------===//

  static const char *kindPhrase(Node::Kind kind) {
    switch (kind) {
    case Node::Kind::Null:
      return "an empty value";
    case Node::Kind::Scalar:
      return "a single value";
    case Node::Kind::Sequence:
      return "a list";
    case Node::Kind::Mapping:
      return "a mapping";
    }
    return "a value";
  }

  bool expectKind(const Node &node, Node::Kind kind, const std::string &what) {
    if (node.kind == kind)
      return true;
    diags.report(DiagID::err_expected_kind, node.loc, kindPhrase(kind), what, node.describe());
    return false;
  }

  std::optional<Located<std::string>> parseScalarText(const Node &node, const std::string &what) {
    if (!expectKind(node, Node::Kind::Scalar, what))
      return std::nullopt;
    if (node.value.empty()) {
      diags.report(DiagID::err_empty_value, node.loc, what);
      return std::nullopt;
    }
    return Located<std::string>{node.value, node.loc};
  }

  std::optional<Located<std::string>> parseName(const Node &node, const std::string &what) {
    auto text = parseScalarText(node, what);
    if (!text)
      return std::nullopt;
    if (tooLong(text->value, node.loc, diags))
      return std::nullopt;
    if (!isIdentifier(text->value)) {
      diags.report(DiagID::err_invalid_name, node.loc, text->value);
      return std::nullopt;
    }
    return text;
  }

  /// A mapping key used as a declared name (a global, tile, param, ...).
  std::optional<Located<std::string>> checkDeclName(const yaml::Entry &entry) {
    if (tooLong(entry.key, entry.keyLoc, diags))
      return std::nullopt;
    if (!isIdentifier(entry.key)) {
      diags.report(DiagID::err_invalid_name, entry.keyLoc, entry.key);
      return std::nullopt;
    }
    return Located<std::string>{entry.key, entry.keyLoc};
  }

  std::optional<Located<int64_t>> parseInteger(const Node &node, const std::string &what,
                                               int64_t min, int64_t max) {
    if (!expectKind(node, Node::Kind::Scalar, what))
      return std::nullopt;
    if (node.quoted || !looksLikeInteger(node.value)) {
      diags.report(DiagID::err_expected_integer, node.loc, what, node.value);
      return std::nullopt;
    }
    llvm::StringRef text = node.value;
    text.consume_front("+");
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.begin(), text.end(), value);
    if (ec != std::errc() || ptr != text.end() || value < min || value > max) {
      diags.report(DiagID::err_integer_out_of_range, node.loc, node.value, what, min, max);
      return std::nullopt;
    }
    return Located<int64_t>{value, node.loc};
  }

  template <typename T>
  std::optional<Located<T>> parseEnum(const Node &node, const char *category,
                                      const std::string &what,
                                      std::initializer_list<std::pair<llvm::StringRef, T>> table) {
    auto text = parseScalarText(node, what);
    if (!text)
      return std::nullopt;
    llvm::SmallVector<llvm::StringRef, 8> names;
    for (const auto &[name, value] : table) {
      if (name == text->value)
        return Located<T>{value, node.loc};
      names.push_back(name);
    }
    std::string suggestion = suggestSpelling(text->value, names);
    if (!suggestion.empty())
      diags.report(DiagID::err_unknown_enum_suggest, node.loc, category, text->value, suggestion);
    else
      diags.report(DiagID::err_unknown_enum, node.loc, category, text->value,
                   llvm::join(names, ", "));
    return std::nullopt;
  }

  std::optional<Located<spec::DType>> parseDType(const Node &node, const std::string &what) {
    return parseEnum<spec::DType>(node, "dtype", what,
                                  {{"bf16", spec::DType::BF16},
                                   {"f16", spec::DType::F16},
                                   {"f32", spec::DType::F32},
                                   {"i32", spec::DType::I32},
                                   {"f8e4m3", spec::DType::F8E4M3},
                                   {"f8e5m2", spec::DType::F8E5M2}});
  }

  /// The optional 'dtype' key of `reader` into `out`; false when it is there
  /// but not a dtype (a missing required key is the reader's to report).
  bool readDType(const MapReader &reader, const std::string &what, Located<spec::DType> &out,
                 std::unique_ptr<stmt::Expr> *choice = nullptr) {
    const yaml::Entry *e = reader.get("dtype");
    if (!e)
      return true;
    const Node &node = *e->value;
    // `X if COND else Y`: a dtype chosen per instantiation, where one may be.
    if (choice && node.isScalar() && llvm::StringRef(node.value).contains(" if ")) {
      *choice = parseExpression(node.value, node.loc, "'dtype' of " + what, diags);
      if (!*choice)
        return false;
      return dtypeBranches(**choice, what, out);
    }
    auto dtype = parseDType(node, "'dtype' of " + what);
    if (dtype)
      out = *dtype;
    return dtype.has_value();
  }

  /// Every branch of a conditional dtype names one; `first` takes the first.
  bool dtypeBranches(const stmt::Expr &expr, const std::string &what, Located<spec::DType> &first) {
    if (expr.kind == stmt::Expr::Kind::Conditional) {
      Located<spec::DType> other;
      bool ok = dtypeBranches(*expr.operands[1], what, first);
      return dtypeBranches(*expr.operands[2], what, other) && ok;
    }
    if (expr.kind == stmt::Expr::Kind::Name)
      if (auto dtype = spec::dtypeNamed(expr.text)) {
        first = Located<spec::DType>{*dtype, expr.loc};
        return true;
      }
    diags.report(DiagID::err_unknown_enum, expr.loc, "dtype",
                 expr.kind == stmt::Expr::Kind::Name ? expr.text : std::string("an expression"),
                 "bf16, f16, f32, i32, f8e4m3, f8e5m2");
    return false;
  }

  /// A list of extents, each a positive integer or a name.
  bool parseExtents(const Node &node, const std::string &what, std::vector<spec::Extent> &out) {
    if (!expectKind(node, Node::Kind::Sequence, what))
      return false;
    if (node.items.empty()) {
      diags.report(DiagID::err_empty_value, node.loc, what);
      return false;
    }
    if (node.items.size() > kMaxRank) {
      diags.report(DiagID::err_too_many_dims, node.loc, what, node.items.size(), kMaxRank);
      return false;
    }
    bool ok = true;
    for (const auto &item : node.items) {
      std::string itemWhat = "an extent of " + what;
      if (item->isScalar() && !item->quoted && looksLikeInteger(item->value)) {
        if (auto value = parseInteger(*item, itemWhat, 1, kMaxExtent))
          out.push_back(spec::Extent{value->value, {}, item->loc});
        else
          ok = false;
        continue;
      }
      if (auto name = parseName(*item, itemWhat))
        out.push_back(spec::Extent{std::nullopt, name->value, item->loc});
      else
        ok = false;
    }
    return ok;
  }

  std::optional<spec::StageBody> parseBody(const yaml::Entry &entry, const std::string &what) {
    auto text = parseScalarText(*entry.value, what);
    if (!text)
      return std::nullopt;
    spec::StageBody body{{entry.key, entry.keyLoc}, text->value, text->loc, {}};
    if (!parseStatements(body, diags))
      return std::nullopt;
    return body;
  }

  //===--------------------------------------------------------------------===//
  // Sections
  //===--------------------------------------------------------------------===//

  /// Calls `each` for every entry of a mapping section whose key is a valid
  /// name. Duplicate names are reported with a note at the first.
  template <typename Fn>
  void forEachDecl(const yaml::Entry &section, const std::string &what, bool allowEmpty, Fn each) {
    const Node &node = *section.value;
    if (!expectKind(node, Node::Kind::Mapping, what))
      return;
    if (node.entries.empty() && !allowEmpty) {
      diags.report(DiagID::err_empty_value, node.loc, what);
      return;
    }
    llvm::StringMap<SourceLoc> seen;
    for (const yaml::Entry &entry : node.entries) {
      if (diags.shouldStop())
        return;
      auto [it, inserted] = seen.try_emplace(entry.key, entry.keyLoc);
      if (!inserted) {
        diags.report(DiagID::err_duplicate_key, entry.keyLoc, entry.key, what);
        diags.report(DiagID::note_first_given_here, it->second, entry.key);
        continue;
      }
      if (auto name = checkDeclName(entry))
        each(*name, entry);
    }
  }

  void parseParams(const yaml::Entry &section, std::vector<spec::ParamDecl> &out) {
    forEachDecl(
        section, "'params'", /*allowEmpty=*/true,
        [&](const Located<std::string> &name, const yaml::Entry &entry) {
          spec::ParamDecl param{name, {}};
          std::string what = "parameter '" + name.value + "'";
          const Node &node = *entry.value;
          std::vector<const Node *> values;
          if (node.isSequence()) {
            for (const auto &item : node.items)
              values.push_back(item.get());
            if (values.empty()) {
              diags.report(DiagID::err_empty_value, node.loc, what);
              return;
            }
          } else {
            values.push_back(&node);
          }
          bool ok = true;
          for (const Node *value : values) {
            auto parsed = parseParamValue(*value, "a value of " + what);
            if (!parsed) {
              ok = false;
              continue;
            }
            if (llvm::any_of(param.values,
                             [&](const spec::ParamValue &v) { return v.text == parsed->text; })) {
              diags.report(DiagID::err_duplicate_param_value, value->loc, parsed->text, name.value);
              ok = false;
              continue;
            }
            param.values.push_back(*parsed);
          }
          if (ok)
            out.push_back(std::move(param));
        });
  }

  std::optional<spec::ParamValue> parseParamValue(const Node &node, const std::string &what) {
    if (!expectKind(node, Node::Kind::Scalar, what))
      return std::nullopt;
    spec::ParamValue value;
    value.text = node.value;
    value.loc = node.loc;
    llvm::StringRef text = node.value;
    if (!node.quoted && (text == "true" || text == "false")) {
      value.kind = spec::ParamValue::Kind::Bool;
      value.boolValue = text == "true";
      return value;
    }
    if (!node.quoted && looksLikeInteger(text)) {
      auto parsed = parseInteger(node, what, std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::max());
      if (!parsed)
        return std::nullopt;
      value.kind = spec::ParamValue::Kind::Int;
      value.intValue = parsed->value;
      return value;
    }
    if (!node.quoted && !text.empty() &&
        (llvm::isDigit(text[0]) || text[0] == '.' || text[0] == '-' || text[0] == '+')) {
      double number = 0;
      auto [ptr, ec] = std::from_chars(text.begin(), text.end(), number);
      if (ec != std::errc() || ptr != text.end() || !std::isfinite(number)) {
        diags.report(DiagID::err_expected_number, node.loc, what, node.value);
        return std::nullopt;
      }
      value.kind = spec::ParamValue::Kind::Float;
      value.floatValue = number;
      return value;
    }
    if (tooLong(text, node.loc, diags))
      return std::nullopt;
    if (!isIdentifier(text)) {
      diags.report(DiagID::err_invalid_name, node.loc, node.value);
      return std::nullopt;
    }
    value.kind = spec::ParamValue::Kind::Name;
    return value;
  }

  void parseGlobals(const yaml::Entry &section, std::vector<spec::GlobalDecl> &out) {
    forEachDecl(section, "'globals'", /*allowEmpty=*/false,
                [&](const Located<std::string> &name, const yaml::Entry &entry) {
                  std::string what = "global '" + name.value + "'";
                  if (!expectKind(*entry.value, Node::Kind::Mapping, what))
                    return;
                  static const KeySpec keys[] = {
                      {"dtype", true}, {"dims", true}, {"when", false}, {"layout", false}};
                  MapReader reader(*entry.value, what, entry.keyLoc, keys, diags);
                  spec::GlobalDecl global{name, {}, nullptr, {}, nullptr};
                  bool ok = reader.get("dtype") && reader.get("dims");
                  if (const yaml::Entry *e = reader.get("when"))
                    ok &= parseCondition(*e->value, "'when' of " + what, global.when);
                  ok &= readDType(reader, what, global.dtype, &global.dtypeChoice);
                  if (const yaml::Entry *e = reader.get("dims"))
                    ok &= parseExtents(*e->value, "'dims' of " + what, global.dims);
                  if (const yaml::Entry *e = reader.get("layout")) {
                    global.layoutLoc = e->value->loc;
                    ok &= parseExtents(*e->value, "'layout' of " + what, global.layout);
                  }
                  if (ok)
                    out.push_back(std::move(global));
                });
  }

  void parseScalars(const yaml::Entry &section, std::vector<spec::ScalarDecl> &out) {
    forEachDecl(
        section, "'scalars'", /*allowEmpty=*/false,
        [&](const Located<std::string> &name, const yaml::Entry &entry) {
          std::string what = "scalar '" + name.value + "'";
          if (!expectKind(*entry.value, Node::Kind::Mapping, what))
            return;
          static const KeySpec keys[] = {{"dtype", true}, {"default", false}, {"check", false}};
          MapReader reader(*entry.value, what, entry.keyLoc, keys, diags);
          spec::ScalarDecl scalar{name, {}, nullptr, nullptr};
          bool ok = reader.get("dtype") != nullptr;
          ok &= readDType(reader, what, scalar.dtype);
          if (const yaml::Entry *e = reader.get("default"))
            ok &= parseCondition(*e->value, "'default' of " + what, scalar.defaultValue);
          if (const yaml::Entry *e = reader.get("check"))
            ok &= parseCondition(*e->value, "'check' of " + what, scalar.check);
          if (ok)
            out.push_back(std::move(scalar));
        });
  }

  void parseTiles(const yaml::Entry &section, std::vector<spec::TileDecl> &out) {
    forEachDecl(section, "'tiles'", /*allowEmpty=*/false,
                [&](const Located<std::string> &name, const yaml::Entry &entry) {
                  std::string what = "tile '" + name.value + "'";
                  if (!expectKind(*entry.value, Node::Kind::Mapping, what))
                    return;
                  static const KeySpec keys[] = {
                      {"space", true}, {"dtype", true}, {"shape", true},  {"stages", false},
                      {"of", false},   {"per", false},  {"count", false}, {"when", false}};
                  MapReader reader(*entry.value, what, entry.keyLoc, keys, diags);
                  spec::TileDecl tile;
                  tile.name = name;
                  bool ok = reader.get("space") && reader.get("dtype") && reader.get("shape");
                  if (const yaml::Entry *e = reader.get("space")) {
                    auto space = parseEnum<spec::MemSpace>(
                        *e->value, "memory space", "'space' of " + what,
                        {{"smem", spec::MemSpace::Shared}, {"reg", spec::MemSpace::Register}});
                    ok &= space.has_value();
                    if (space)
                      tile.space = *space;
                  }
                  ok &= readDType(reader, what, tile.dtype, &tile.dtypeChoice);
                  if (const yaml::Entry *e = reader.get("shape"))
                    ok &= parseExtents(*e->value, "'shape' of " + what, tile.shape);
                  if (const yaml::Entry *e = reader.get("stages")) {
                    const Node &value = *e->value;
                    if (value.isScalar() && !value.quoted && value.value == "auto") {
                      tile.stages = spec::StageCount{true, 0, value.loc};
                    } else if (auto count = parseInteger(value, "'stages' of " + what, 1, 64)) {
                      tile.stages = spec::StageCount{false, count->value, value.loc};
                    } else {
                      ok = false;
                    }
                  }
                  if (const yaml::Entry *e = reader.get("of")) {
                    std::string ofWhat = "'of' of " + what;
                    if (expectKind(*e->value, Node::Kind::Sequence, ofWhat)) {
                      if (e->value->items.empty()) {
                        diags.report(DiagID::err_empty_value, e->value->loc, ofWhat);
                        ok = false;
                      }
                      for (const auto &item : e->value->items) {
                        auto member = parseName(*item, "a name in " + ofWhat);
                        ok &= member.has_value();
                        if (member)
                          tile.of.push_back(*member);
                      }
                    } else {
                      ok = false;
                    }
                  }
                  if (const yaml::Entry *e = reader.get("per")) {
                    tile.per = parseName(*e->value, "'per' of " + what);
                    ok &= tile.per.has_value();
                  }
                  if (const yaml::Entry *e = reader.get("count")) {
                    tile.count = parseInteger(*e->value, "'count' of " + what, 1, 1024);
                    ok &= tile.count.has_value();
                  }
                  if (const yaml::Entry *e = reader.get("when"))
                    ok &= parseCondition(*e->value, "'when' of " + what, tile.when);
                  if (ok)
                    out.push_back(std::move(tile));
                });
  }

  bool parseCondition(const Node &node, const std::string &what, std::unique_ptr<stmt::Expr> &out) {
    auto text = parseScalarText(node, what);
    if (!text)
      return false;
    out = parseExpression(text->value, text->loc, what, diags);
    return out != nullptr;
  }

  void parseIterVars(const yaml::Entry &section, const std::string &what,
                     std::vector<spec::IterVar> &out, const char *noun = "extent") {
    forEachDecl(section, what, /*allowEmpty=*/false,
                [&](const Located<std::string> &name, const yaml::Entry &entry) {
                  std::string extentWhat = std::string("the ") + noun + " of '" + name.value + "'";
                  const Node &value = *entry.value;
                  if (!expectKind(value, Node::Kind::Scalar, extentWhat))
                    return;
                  if (auto extent = parseExpression(value.value, value.loc, extentWhat, diags))
                    out.push_back(spec::IterVar{name, std::move(extent)});
                });
  }

  void parseGrid(const yaml::Entry &section, std::optional<spec::GridDecl> &out) {
    if (!expectKind(*section.value, Node::Kind::Mapping, "'grid'"))
      return;
    static const KeySpec keys[] = {
        {"tasks", true},        {"loop", true},       {"start", false},
        {"tail", false},        {"order", false},     {"loop_order", false},
        {"whole_tiles", false}, {"last_wave", false}, {"sequences", false}};
    MapReader reader(*section.value, "'grid'", section.keyLoc, keys, diags);
    spec::GridDecl grid;
    grid.loc = section.keyLoc;
    if (const yaml::Entry *e = reader.get("tasks"))
      parseIterVars(*e, "'tasks' of 'grid'", grid.tasks);
    if (const yaml::Entry *e = reader.get("loop"))
      parseIterVars(*e, "'loop' of 'grid'", grid.loop);
    if (const yaml::Entry *e = reader.get("start"))
      parseIterVars(*e, "'start' of 'grid'", grid.start, "start");
    if (const yaml::Entry *e = reader.get("tail"))
      parseIterVars(*e, "'tail' of 'grid'", grid.tail, "tail");
    if (const yaml::Entry *e = reader.get("sequences"))
      parseIterVars(*e, "'sequences' of 'grid'", grid.sequences, "offsets");
    if (const yaml::Entry *e = reader.get("whole_tiles"))
      parseCondition(*e->value, "'whole_tiles' of 'grid'", grid.wholeTiles);
    if (const yaml::Entry *e = reader.get("order")) {
      auto order = parseEnum<std::string>(*e->value, "task order", "'order' of 'grid'",
                                          {{"grouped", "grouped"}, {"linear", "linear"}});
      if (order)
        grid.order = *order;
    }
    if (const yaml::Entry *e = reader.get("loop_order")) {
      auto order = parseEnum<std::string>(*e->value, "loop order", "'loop_order' of 'grid'",
                                          {{"forward", "forward"}, {"alternate", "alternate"}});
      if (order)
        grid.loopOrder = *order;
    }
    if (const yaml::Entry *e = reader.get("last_wave")) {
      auto wave = parseEnum<std::string>(*e->value, "last wave", "'last_wave' of 'grid'",
                                         {{"whole", "whole"}, {"stream_k", "stream_k"}});
      // Only 'whole' is left; 'stream_k' is known so that it gets its reason, not a spelling hint.
      if (wave && wave->value == "stream_k")
        diags.report(DiagID::err_stream_k_removed, wave->loc);
      else if (wave)
        grid.lastWave = *wave;
    }
    out = std::move(grid);
  }

  std::optional<Located<int64_t>> parseWarpgroups(const MapReader &reader) {
    if (const yaml::Entry *e = reader.get("warpgroups"))
      return parseInteger(*e->value, "'warpgroups' of " + reader.getContext(), 1, 4);
    return std::nullopt;
  }

  void parseProducer(const yaml::Entry &section, spec::ProducerDecl &producer) {
    producer.loc = section.keyLoc;
    if (!expectKind(*section.value, Node::Kind::Mapping, "'producer'"))
      return;
    static const KeySpec keys[] = {{"warpgroups", false}, {"load", true}};
    MapReader reader(*section.value, "the producer", section.keyLoc, keys, diags);
    producer.warpgroups = parseWarpgroups(reader);
    if (const yaml::Entry *e = reader.get("load"))
      producer.load = parseBody(*e, "'load' of the producer");
  }

  void parseConsumer(const yaml::Entry &section, spec::ConsumerDecl &consumer) {
    consumer.loc = section.keyLoc;
    if (!expectKind(*section.value, Node::Kind::Mapping, "'consumer'"))
      return;
    static const KeySpec keys[] = {{"warpgroups", false},
                                   {"state", false},
                                   {"setup", false},
                                   {"compute", true},
                                   {"finish", true}};
    MapReader reader(*section.value, "the consumer", section.keyLoc, keys, diags);
    // A name (a constant or parameter) is resolved per instantiation.
    if (const yaml::Entry *e = reader.get("warpgroups");
        e && e->value->isScalar() && !e->value->quoted && isIdentifier(e->value->value))
      consumer.warpgroupsName = Located<std::string>{e->value->value, e->value->loc};
    else
      consumer.warpgroups = parseWarpgroups(reader);
    if (const yaml::Entry *e = reader.get("state"))
      forEachDecl(*e, "'state' of the consumer", /*allowEmpty=*/true,
                  [&](const Located<std::string> &name, const yaml::Entry &entry) {
                    if (auto type =
                            parseScalarText(*entry.value, "the type of state '" + name.value + "'"))
                      consumer.state.push_back(spec::StateDecl{name, *type});
                  });
    if (const yaml::Entry *e = reader.get("setup"))
      consumer.setup = parseBody(*e, "'setup' of the consumer");
    if (const yaml::Entry *e = reader.get("compute"))
      consumer.compute = parseBody(*e, "'compute' of the consumer");
    if (const yaml::Entry *e = reader.get("finish"))
      consumer.finish = parseBody(*e, "'finish' of the consumer");
  }

  DiagnosticEngine &diags;
};

} // namespace

std::string suggestSpelling(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> candidates) {
  // Allow about one edit in three characters (a swap counts two), and at
  // least one.
  unsigned maxDistance = std::max<unsigned>(1, (name.size() + 2) / 3);
  std::string best;
  unsigned bestDistance = maxDistance + 1;
  for (llvm::StringRef candidate : candidates) {
    unsigned distance = name.edit_distance(candidate, /*AllowReplacements=*/true, maxDistance);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate.str();
    }
  }
  return best;
}

std::optional<spec::KernelSpec> parseSpec(unsigned bufferId, DiagnosticEngine &diags) {
  std::unique_ptr<Node> root = yaml::parseYaml(bufferId, diags);
  if (!root)
    return std::nullopt;
  return Parser(diags).run(*root, bufferId);
}

} // namespace tkc
