//===- Template.cpp - Boilerplate templates with placeholders -------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Emit/Template.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace tkc {

namespace {

bool isIdentifier(llvm::StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// The 1-based line of byte `offset` in `text`, for error messages.
size_t lineOf(llvm::StringRef text, size_t offset) {
  return text.take_front(offset).count('\n') + 1;
}

} // namespace

std::string expandTemplate(std::string_view tmpl, const llvm::StringMap<std::string> &values) {
  llvm::StringRef text(tmpl.data(), tmpl.size());
  llvm::StringSet<> used;
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t dollar = text.find('$', pos);
    if (dollar == llvm::StringRef::npos) {
      out += text.substr(pos).str();
      break;
    }
    out += text.slice(pos, dollar).str();
    llvm::StringRef after = text.substr(dollar);
    if (after.startswith("$${")) {
      out += "${";
      pos = dollar + 3;
      continue;
    }
    if (!after.startswith("${")) {
      out += '$';
      pos = dollar + 1;
      continue;
    }
    size_t close = text.find('}', dollar + 2);
    llvm::StringRef name =
        close == llvm::StringRef::npos ? llvm::StringRef() : text.slice(dollar + 2, close);
    TKC_INTERNAL_ASSERT(close != llvm::StringRef::npos && isIdentifier(name),
                        "malformed template placeholder at line " +
                            std::to_string(lineOf(text, dollar)) + ": expected '${name}'");
    auto it = values.find(name);
    TKC_INTERNAL_ASSERT(it != values.end(),
                        "template placeholder '${" + name.str() + "}' at line " +
                            std::to_string(lineOf(text, dollar)) + " has no value");
    out += it->second;
    used.insert(name);
    pos = close + 1;
  }
  // A value nothing asked for is most likely a misspelt placeholder name.
  llvm::SmallVector<llvm::StringRef, 4> unused;
  for (const auto &entry : values)
    if (!used.contains(entry.getKey()))
      unused.push_back(entry.getKey());
  llvm::sort(unused);
  TKC_INTERNAL_ASSERT(unused.empty(),
                      "template values without a placeholder: " + llvm::join(unused, ", "));
  return out;
}

} // namespace tkc
