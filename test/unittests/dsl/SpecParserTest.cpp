//===- SpecParserTest.cpp -------------------------------------------------===//
#include "tkc/dsl/SpecParser.h"

#include <gtest/gtest.h>

namespace {

TEST(SuggestSpelling, FindsCloseKeysOnly) {
  llvm::StringRef keys[] = {"stages", "shape", "space", "dtype"};
  EXPECT_EQ(tkc::suggestSpelling("stges", keys), "stages");
  EXPECT_EQ(tkc::suggestSpelling("dtpye", keys), "dtype");
  EXPECT_EQ(tkc::suggestSpelling("shpe", keys), "shape");
  EXPECT_EQ(tkc::suggestSpelling("banana", keys), "");
  EXPECT_EQ(tkc::suggestSpelling("x", keys), "");
}

TEST(SpecParser, MinimalSpecParses) {
  tkc::SourceManager sm;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  tkc::DiagnosticEngine diags(sm, os);
  unsigned id =
      sm.addBuffer("kernel: k\n"
                   "template: lcf\n"
                   "params: {D: [64, 128], causal: [false, true], s: 0.5}\n"
                   "globals: {A: {dtype: bf16, dims: [M, 64]}}\n"
                   "tiles: {a: {space: smem, dtype: bf16, shape: [64, D], stages: auto}}\n"
                   "producer: {load: 'a = A[m]'}\n"
                   "consumer: {compute: 'x', finish: 'y'}\n",
                   "k.yaml");
  auto spec = tkc::parseSpec(id, diags);
  os.flush();
  ASSERT_TRUE(spec) << errors;
  EXPECT_EQ(spec->name.value, "k");
  ASSERT_EQ(spec->params.size(), 3u);
  EXPECT_EQ(spec->params[0].values[1].intValue, 128);
  EXPECT_EQ(spec->params[1].values[1].kind, tkc::spec::ParamValue::Kind::Bool);
  EXPECT_EQ(spec->params[2].values[0].kind, tkc::spec::ParamValue::Kind::Float);
  ASSERT_EQ(spec->globals.size(), 1u);
  EXPECT_EQ(spec->globals[0].dims[0].name, "M");
  EXPECT_EQ(*spec->globals[0].dims[1].number, 64);
  ASSERT_EQ(spec->tiles.size(), 1u);
  EXPECT_TRUE(spec->tiles[0].stages->isAuto);
  EXPECT_EQ(spec->consumer.compute->text, "x");
}

} // namespace
