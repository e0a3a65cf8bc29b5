//===- CudaWriter.h - Indenting writer for generated CUDA -------*- C++ -*-===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The one way the emitter writes code: lines at an indentation level that
/// only scopes change, so no emitter code counts spaces. A scope writes its
/// opening line with "{", indents what follows, and writes the matching "}"
/// (with an optional suffix such as ";" and a trailer comment) when it ends.
///
/// The output depends only on the calls made: no trailing whitespace, at most
/// one empty line in a row from blank(), and "\n" line endings.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace tkc {

class CudaWriter {
public:
  /// Writes to `os`, indenting each level by `indentWidth` spaces.
  explicit CudaWriter(llvm::raw_ostream &os, unsigned indentWidth = 2);

  CudaWriter(const CudaWriter &) = delete;
  CudaWriter &operator=(const CudaWriter &) = delete;

  /// Writes `text` as one line at the current indentation. `text` must not
  /// contain a newline (use raw() for several lines); trailing spaces and
  /// tabs are dropped, and an empty `text` writes an empty line.
  CudaWriter &line(llvm::StringRef text);

  /// Formats with fmt and writes the result as one line.
  template <typename... Args> CudaWriter &linef(fmt::format_string<Args...> f, Args &&...args) {
    return line(fmt::format(f, std::forward<Args>(args)...));
  }

  /// Asks for one empty line before the next line written. Requests in a row
  /// collapse into one, and a request is dropped at the start of the output,
  /// right after a scope opens, right before a scope closes, and after an
  /// empty line, so blank() never makes two empty lines in a row.
  CudaWriter &blank();

  /// Writes `text` as "// " comment lines: each line of `text` is wrapped at
  /// word boundaries to fit the comment column limit (a word longer than the
  /// limit gets a line of its own), an empty line of `text` becomes "//",
  /// and an empty `text` writes nothing.
  CudaWriter &comment(llvm::StringRef text);

  /// An open "{ ... }" block; see scope(). Closes when destroyed or on
  /// close(). Scopes of one writer must close in the reverse order of opening
  /// (an internal error otherwise), and the writer must outlive them.
  class Scope {
  public:
    Scope(Scope &&other) noexcept;
    Scope &operator=(Scope &&) = delete;
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
    /// Closes the scope unless close() did. Not noexcept: closing out of
    /// order is an internal error, which throws. While an exception unwinds
    /// the stack, the scope closes without checking the order.
    ~Scope() noexcept(false);

    /// Writes the closing line now. Closing twice is an internal error.
    void close();

  private:
    friend class CudaWriter;
    Scope(CudaWriter &writer, unsigned id, std::string closeLine);

    CudaWriter *writer;
    unsigned id;
    std::string closeLine;
    int uncaughtAtOpen;
  };

  /// Writes "`head` {" (just "{" when `head` is empty) and indents until the
  /// returned scope closes with "}`closeSuffix`", followed by
  /// " // `trailerComment`" when that is not empty:
  ///   scope("struct gemm", ";")                    ... "};"
  ///   scope("for (int i = 0; i < n; ++i)", "", "for i") ... "} // for i"
  [[nodiscard]] Scope scope(llvm::StringRef head, llvm::StringRef closeSuffix = "",
                            llvm::StringRef trailerComment = "");

  /// Writes multi-line `text` at the current indentation, keeping the
  /// relative indentation of its lines: the leading whitespace common to its
  /// non-blank lines is replaced by the current indentation. Blank lines
  /// stay (as empty lines); a final newline does not make an extra line.
  CudaWriter &raw(llvm::StringRef text);

  /// Writes `#line N "file"` at column 0, so that the next line written
  /// counts as line `line` of `file` in compiler messages. Quotes,
  /// backslashes and newlines in `file` are escaped.
  CudaWriter &lineDirective(unsigned line, llvm::StringRef file);

  /// The number of indentation levels open (not columns).
  unsigned getIndent() const { return indent; }

  /// The column at which comment() wraps, indentation included (default 100,
  /// the column limit of the formatted output).
  void setCommentColumnLimit(unsigned columns) { commentColumnLimit = columns; }

private:
  void writeLine(llvm::StringRef text, bool atColumnZero = false);
  void closeScope(Scope &scope, bool checkOrder);

  llvm::raw_ostream &os;
  unsigned indentWidth;
  unsigned indent = 0;
  unsigned commentColumnLimit = 100;
  /// What the last thing written was; decides whether blank() writes.
  enum class Last { Nothing, Text, EmptyLine, ScopeOpen } last = Last::Nothing;
  bool blankPending = false;
  unsigned nextScopeId = 0;
  llvm::SmallVector<unsigned, 8> openScopes;
};

} // namespace tkc
