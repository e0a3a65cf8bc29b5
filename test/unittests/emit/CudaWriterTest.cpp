//===- CudaWriterTest.cpp -------------------------------------------------===//
#include "tkc/Emit/CudaWriter.h"

#include "tkc/dsl/InternalError.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace {

using tkc::CudaWriter;

std::string write(const std::function<void(CudaWriter &)> &body, unsigned indentWidth = 2) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    CudaWriter w(os, indentWidth);
    body(w);
  }
  os.flush();
  return text;
}

TEST(CudaWriter, NestedScopesIndentAndCloseWithSuffixAndTrailer) {
  std::string out = write([](CudaWriter &w) {
    auto ns = w.scope("namespace gen", "", "namespace gen");
    auto s = w.scope("struct gemm", ";");
    w.line("int n;");
    {
      auto f = w.scope("__device__ void run()");
      EXPECT_EQ(w.getIndent(), 3u);
      auto loop = w.scope("for (int i = 0; i < n; ++i)", "", "for i");
      w.linef("acc += a[{}] * {};", "i", 2);
    }
    EXPECT_EQ(w.getIndent(), 2u);
    w.line("float acc;");
  });
  EXPECT_EQ(out, "namespace gen {\n"
                 "  struct gemm {\n"
                 "    int n;\n"
                 "    __device__ void run() {\n"
                 "      for (int i = 0; i < n; ++i) {\n"
                 "        acc += a[i] * 2;\n"
                 "      } // for i\n"
                 "    }\n"
                 "    float acc;\n"
                 "  };\n"
                 "} // namespace gen\n");
}

TEST(CudaWriter, IndentWidthAndEmptyHead) {
  std::string out = write(
      [](CudaWriter &w) {
        auto s = w.scope("");
        w.line("x();");
      },
      4);
  EXPECT_EQ(out, "{\n    x();\n}\n");
}

TEST(CudaWriter, LinesHaveNoTrailingWhitespace) {
  std::string out = write([](CudaWriter &w) {
    auto s = w.scope("if (a) \t");
    w.line("b;  ");
    w.line("");
    w.line("   ");
  });
  EXPECT_EQ(out, "if (a) {\n  b;\n\n\n}\n");
}

TEST(CudaWriter, BlankCollapsesAndIsDroppedAtEdges) {
  std::string out = write([](CudaWriter &w) {
    w.blank(); // start of output: dropped
    w.line("#include <a>");
    w.blank().blank().blank();
    w.line("int x;");
    {
      auto s = w.scope("void f()");
      w.blank(); // right after "{": dropped
      w.line("g();");
      w.blank(); // right before "}": dropped
    }
    w.blank();
    w.line("");
    w.blank(); // after an empty line: dropped
    w.line("int y;");
    w.blank(); // end of output: dropped
  });
  EXPECT_EQ(out, "#include <a>\n"
                 "\n"
                 "int x;\n"
                 "void f() {\n"
                 "  g();\n"
                 "}\n"
                 "\n"
                 "int y;\n");
}

TEST(CudaWriter, CommentWrapsAndPrefixesEveryLine) {
  std::string out = write([](CudaWriter &w) {
    w.setCommentColumnLimit(24);
    auto s = w.scope("struct s", ";");
    // Indent 2 + "// " leaves 19 columns of text.
    w.comment("one two three four five six seven\n\nsupercalifragilistic end");
  });
  EXPECT_EQ(out, "struct s {\n"
                 "  // one two three four\n"
                 "  // five six seven\n"
                 "  //\n"
                 "  // supercalifragilistic\n"
                 "  // end\n"
                 "};\n");
}

TEST(CudaWriter, CommentDefaultLimitIsOneHundredColumns) {
  std::string word(10, 'w');
  std::string text;
  for (int i = 0; i < 10; ++i)
    text += (i ? " " : "") + word;
  std::string out = write([&](CudaWriter &w) { w.comment(text); });
  // "// " + 8 words of 10 plus 7 spaces = 90 columns; a ninth would make 101.
  std::string first = "// " + text.substr(0, 8 * 11 - 1) + "\n";
  EXPECT_EQ(out, first + "// " + word + " " + word + "\n");
}

TEST(CudaWriter, RawReindentsKeepingRelativeIndentation) {
  std::string out = write([](CudaWriter &w) {
    auto s = w.scope("void f()");
    w.raw("\n"
          "        if (x) {\n"
          "          y();\n"
          "   \n"
          "        }\n");
  });
  EXPECT_EQ(out, "void f() {\n"
                 "\n"
                 "  if (x) {\n"
                 "    y();\n"
                 "\n"
                 "  }\n"
                 "}\n");
}

TEST(CudaWriter, RawWithoutFinalNewlineAndWithCRLF) {
  std::string out = write([](CudaWriter &w) {
    auto s = w.scope("struct t", ";");
    w.raw("\ta;\r\n\t\tb;");
  });
  EXPECT_EQ(out, "struct t {\n  a;\n  \tb;\n};\n");
}

TEST(CudaWriter, LineDirectiveIsAtColumnZeroAndEscapesTheName) {
  std::string out = write([](CudaWriter &w) {
    auto s = w.scope("void f()");
    w.line("a();");
    w.blank();
    w.lineDirective(12, "specs/my \"odd\"\\gemm.yaml");
    w.line("b();");
    w.lineDirective(1, "two\nlines.yaml");
  });
  EXPECT_EQ(out, "void f() {\n"
                 "  a();\n"
                 "\n"
                 "#line 12 \"specs/my \\\"odd\\\"\\\\gemm.yaml\"\n"
                 "  b();\n"
                 "#line 1 \"two\\nlines.yaml\"\n"
                 "}\n");
}

TEST(CudaWriter, ExplicitCloseWritesOnce) {
  std::string out = write([](CudaWriter &w) {
    auto s = w.scope("a");
    s.close();
    w.line("b;");
    EXPECT_THROW(s.close(), tkc::InternalError);
  });
  EXPECT_EQ(out, "a {\n}\nb;\n");
}

TEST(CudaWriter, ClosingOutOfOrderIsAnInternalError) {
  std::string out = write([](CudaWriter &w) {
    auto outer = w.scope("outer");
    auto inner = w.scope("inner");
    try {
      outer.close();
      ADD_FAILURE() << "closing the outer scope first did not throw";
    } catch (const tkc::InternalError &e) {
      EXPECT_NE(std::string(e.what()).find("reverse order"), std::string::npos) << e.what();
    }
    // Both still close, in order, when they go out of scope.
  });
  EXPECT_EQ(out, "outer {\n  inner {\n  }\n}\n");
}

TEST(CudaWriter, DestroyingOutOfOrderIsAnInternalError) {
  std::string text;
  llvm::raw_string_ostream os(text);
  CudaWriter w(os);
  // Heap scopes, destroyed with delete (the standard containers' reset() is
  // noexcept and would turn the internal error into std::terminate).
  auto *outer = new CudaWriter::Scope(w.scope("outer"));
  auto *inner = new CudaWriter::Scope(w.scope("inner"));
  EXPECT_THROW(delete outer, tkc::InternalError);
  delete inner;
  os.flush();
  EXPECT_EQ(text, "outer {\n  inner {\n  }\n");
}

TEST(CudaWriter, ScopesCloseQuietlyWhileAnExceptionUnwinds) {
  std::string text;
  llvm::raw_string_ostream os(text);
  CudaWriter w(os);
  EXPECT_THROW(
      {
        auto s = w.scope("f()");
        throw std::runtime_error("emitter failed");
      },
      std::runtime_error);
  EXPECT_EQ(w.getIndent(), 0u);
}

TEST(CudaWriter, LineWithANewlineIsAnInternalError) {
  std::string text;
  llvm::raw_string_ostream os(text);
  CudaWriter w(os);
  EXPECT_THROW(w.line("a;\nb;"), tkc::InternalError);
}

TEST(CudaWriter, MovedScopeClosesOnce) {
  std::string out = write([](CudaWriter &w) {
    std::optional<CudaWriter::Scope> held;
    {
      auto s = w.scope("a");
      held.emplace(std::move(s));
    }
    w.line("x;");
    held.reset();
  });
  EXPECT_EQ(out, "a {\n  x;\n}\n");
}

} // namespace
