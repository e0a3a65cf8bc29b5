//===- DiagnosticsTest.cpp ------------------------------------------------===//
#include "tkc/dsl/Diagnostics.h"

#include <gtest/gtest.h>

#include <set>

namespace {

struct Fixture {
  tkc::SourceManager sm;
  std::string out;
  llvm::raw_string_ostream os{out};
  unsigned id = sm.addBuffer("kernel: gemm\ntiles: 3\n", "spec.yaml");
};

TEST(Diagnostics, PrintsLocationMessageSourceLineAndCaret) {
  Fixture f;
  tkc::DiagnosticEngine diags(f.sm, f.os);
  diags.report(tkc::DiagID::err_unknown_key, {f.id, 2, 1}, "tiles", "the spec");
  EXPECT_EQ(f.os.str(), "spec.yaml:2:1: error: unknown key 'tiles' in the spec\n"
                        "tiles: 3\n"
                        "^\n");
  EXPECT_EQ(diags.getNumErrors(), 1u);
}

TEST(Diagnostics, UnlocatedMessagesNameTheTool) {
  Fixture f;
  tkc::DiagnosticEngine diags(f.sm, f.os);
  diags.report(tkc::DiagID::err_cannot_open_file, tkc::SourceLoc(), "x.yaml", "denied");
  EXPECT_EQ(f.os.str(), "tkc: error: cannot open 'x.yaml': denied\n");
}

TEST(Diagnostics, ErrorLimitStopsAndDropsNotesOfDroppedErrors) {
  Fixture f;
  tkc::DiagnosticEngine diags(f.sm, f.os, /*errorLimit=*/2);
  for (int i = 0; i < 4; ++i) {
    diags.report(tkc::DiagID::err_duplicate_key, {f.id, 1, 1}, "k", "the spec");
    diags.report(tkc::DiagID::note_first_given_here, {f.id, 2, 1}, "k");
  }
  const std::string &text = f.os.str();
  size_t errors = 0, notes = 0;
  for (size_t pos = 0; (pos = text.find(": error: duplicate", pos)) != std::string::npos; ++pos)
    ++errors;
  for (size_t pos = 0; (pos = text.find(": note: ", pos)) != std::string::npos; ++pos)
    ++notes;
  EXPECT_EQ(errors, 2u);
  EXPECT_EQ(notes, 2u);
  EXPECT_NE(text.find("tkc: error: too many errors emitted, stopping now (--error-limit=2)"),
            std::string::npos);
  EXPECT_TRUE(diags.shouldStop());
  EXPECT_EQ(diags.getNumErrors(), 2u);
}

TEST(Diagnostics, TableIdsAreUniqueAndTextsFollowTheStyle) {
  std::set<std::string> names;
  for (const tkc::DiagInfo &info : tkc::getAllDiagInfos()) {
    EXPECT_TRUE(names.insert(info.name.str()).second) << info.name.str();
    ASSERT_FALSE(info.text.empty()) << info.name.str();
    EXPECT_FALSE(info.text.endswith(".")) << info.name.str() << " ends with a period";
    char first = info.text.front();
    // Messages start lowercase (or with a quoted name, an option or "YAML").
    EXPECT_TRUE(std::islower(static_cast<unsigned char>(first)) || first == '\'' || first == '-' ||
                first == '{' || info.text.startswith("YAML"))
        << info.name.str();
  }
}

} // namespace
