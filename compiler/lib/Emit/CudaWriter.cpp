//===- CudaWriter.cpp - Indenting writer for generated CUDA ---------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/Emit/CudaWriter.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/Twine.h"

#include <exception>
#include <optional>

namespace tkc {

namespace {

constexpr llvm::StringLiteral kHorizontalSpace = " \t";

/// The leading spaces and tabs of `line`.
llvm::StringRef leadingSpace(llvm::StringRef line) {
  return line.take_front(line.find_first_not_of(kHorizontalSpace));
}

/// Splits `text` into lines at "\n" (a "\r" before it goes too); a final
/// newline ends the last line rather than starting an empty one.
llvm::SmallVector<llvm::StringRef, 16> splitLines(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 16> lines;
  while (!text.empty()) {
    auto [first, rest] = text.split('\n');
    lines.push_back(first.rtrim('\r'));
    text = rest;
  }
  return lines;
}

} // namespace

CudaWriter::CudaWriter(llvm::raw_ostream &os, unsigned indentWidth)
    : os(os), indentWidth(indentWidth) {}

void CudaWriter::writeLine(llvm::StringRef text, bool atColumnZero) {
  text = text.rtrim(kHorizontalSpace);
  // A pending blank line is written unless this line is empty itself.
  if (blankPending && !text.empty() && last != Last::EmptyLine)
    os << '\n';
  blankPending = false;
  if (text.empty()) {
    os << '\n';
    last = Last::EmptyLine;
    return;
  }
  if (!atColumnZero)
    os.indent(indent * indentWidth);
  os << text << '\n';
  last = Last::Text;
}

CudaWriter &CudaWriter::line(llvm::StringRef text) {
  TKC_INTERNAL_ASSERT(!text.contains('\n'), "CudaWriter::line takes one line; use raw()");
  writeLine(text);
  return *this;
}

CudaWriter &CudaWriter::blank() {
  if (last == Last::Text)
    blankPending = true;
  return *this;
}

CudaWriter &CudaWriter::comment(llvm::StringRef text) {
  unsigned used = indent * indentWidth + 3; // "// "
  unsigned width = commentColumnLimit > used ? commentColumnLimit - used : 1;
  for (llvm::StringRef paragraph : splitLines(text)) {
    paragraph = paragraph.trim(kHorizontalSpace);
    if (paragraph.empty()) {
      writeLine("//");
      continue;
    }
    std::string current;
    while (!paragraph.empty()) {
      auto [word, rest] = paragraph.split(' ');
      paragraph = rest.ltrim(kHorizontalSpace);
      word = word.trim(kHorizontalSpace);
      if (word.empty())
        continue;
      if (!current.empty() && current.size() + 1 + word.size() > width) {
        writeLine("// " + current);
        current.clear();
      }
      if (!current.empty())
        current += ' ';
      current += word.str();
    }
    writeLine("// " + current);
  }
  return *this;
}

CudaWriter::Scope CudaWriter::scope(llvm::StringRef head, llvm::StringRef closeSuffix,
                                    llvm::StringRef trailerComment) {
  writeLine(head.empty() ? std::string("{")
                         : (llvm::Twine(head.rtrim(kHorizontalSpace)) + " {").str());
  last = Last::ScopeOpen;
  ++indent;
  std::string closeLine = (llvm::Twine("}") + closeSuffix).str();
  if (!trailerComment.empty())
    closeLine += (llvm::Twine(" // ") + trailerComment).str();
  unsigned id = nextScopeId++;
  openScopes.push_back(id);
  return Scope(*this, id, std::move(closeLine));
}

void CudaWriter::closeScope(Scope &scope, bool checkOrder) {
  bool isInnermost = !openScopes.empty() && openScopes.back() == scope.id;
  if (!checkOrder && !isInnermost)
    return;
  TKC_INTERNAL_ASSERT(isInnermost, "CudaWriter scopes must close in the reverse order of opening");
  openScopes.pop_back();
  // A blank line requested at the end of a block is dropped.
  blankPending = false;
  --indent;
  writeLine(scope.closeLine);
}

CudaWriter &CudaWriter::raw(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 16> lines = splitLines(text);
  // The longest leading whitespace all non-blank lines share.
  std::optional<llvm::StringRef> common;
  for (llvm::StringRef l : lines) {
    if (l.trim(kHorizontalSpace).empty())
      continue;
    llvm::StringRef lead = leadingSpace(l);
    if (!common) {
      common = lead;
      continue;
    }
    size_t n = 0;
    while (n < common->size() && n < lead.size() && (*common)[n] == lead[n])
      ++n;
    common = common->take_front(n);
  }
  for (llvm::StringRef l : lines) {
    if (l.trim(kHorizontalSpace).empty())
      writeLine("");
    else
      writeLine(l.drop_front(common ? common->size() : 0));
  }
  return *this;
}

CudaWriter &CudaWriter::lineDirective(unsigned line, llvm::StringRef file) {
  std::string escaped;
  for (char c : file) {
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    if (c == '"' || c == '\\')
      escaped += '\\';
    escaped += c;
  }
  writeLine("#line " + std::to_string(line) + " \"" + escaped + "\"", /*atColumnZero=*/true);
  return *this;
}

//===----------------------------------------------------------------------===//
// CudaWriter::Scope
//===----------------------------------------------------------------------===//

CudaWriter::Scope::Scope(CudaWriter &writer, unsigned id, std::string closeLine)
    : writer(&writer), id(id), closeLine(std::move(closeLine)),
      uncaughtAtOpen(std::uncaught_exceptions()) {}

CudaWriter::Scope::Scope(Scope &&other) noexcept
    : writer(std::exchange(other.writer, nullptr)), id(other.id),
      closeLine(std::move(other.closeLine)), uncaughtAtOpen(other.uncaughtAtOpen) {}

CudaWriter::Scope::~Scope() noexcept(false) {
  if (!writer)
    return;
  CudaWriter *w = std::exchange(writer, nullptr);
  // Throwing while another exception unwinds would terminate the process.
  bool unwinding = std::uncaught_exceptions() > uncaughtAtOpen;
  w->closeScope(*this, /*checkOrder=*/!unwinding);
}

void CudaWriter::Scope::close() {
  TKC_INTERNAL_ASSERT(writer != nullptr, "CudaWriter scope closed twice");
  CudaWriter *w = writer;
  w->closeScope(*this, /*checkOrder=*/true);
  writer = nullptr;
}

} // namespace tkc
