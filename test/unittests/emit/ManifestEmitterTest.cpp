//===- ManifestEmitterTest.cpp --------------------------------------------===//
//
// The manifest of hand-built kernels: the `scalars` array (present and empty
// without scalars, a `default` only where one is given and printed so that it
// reads back as the same double), and the roles of program stores.
//
//===----------------------------------------------------------------------===//
#include "tkc/Emit/ManifestEmitter.h"

#include "tkc/Target/Arch.h"
#include "tkc/dsl/InternalError.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace {

using namespace tkc;

ir::Size sym(const char *name) { return ir::Size{std::nullopt, name}; }
ir::Size num(int64_t value) { return ir::Size{value, ""}; }

/// A kernel shaped like attention's launcher: Q, O, L over B, H, N with D a
/// constant, the scalars given.
ir::Kernel attentionLike(std::vector<ir::Scalar> scalars) {
  ir::Kernel k;
  k.specName = "attention_fwd";
  k.name = "attention_fwd_D64";
  k.arch = lookupArch("sm_90a");
  k.params = {{"D", "64"}};
  k.globals = {{"Q", spec::DType::BF16, {sym("B"), sym("H"), sym("N"), num(64)}, {}},
               {"O", spec::DType::BF16, {sym("B"), sym("H"), sym("N"), num(64)}, {}},
               {"L", spec::DType::F32, {sym("B"), sym("H"), sym("N")}, {}}};
  k.tasks = {{"b", sym("B"), 1, {}}, {"h", sym("H"), 1, {}}, {"i", sym("N"), 128, {}}};
  k.loop = {"j", sym("N"), 128, {}};
  k.scalars = std::move(scalars);
  ir::Program program;
  ir::ProgramOp storeO;
  storeO.kind = ir::ProgramOp::Kind::StoreTile;
  storeO.global = 1;
  ir::ProgramOp storeL;
  storeL.kind = ir::ProgramOp::Kind::StoreRows;
  storeL.global = 2;
  program.finish = {storeO, storeL};
  k.program = program;
  return k;
}

std::string manifestOf(const std::vector<ir::Kernel> &kernels) {
  std::string text;
  llvm::raw_string_ostream os(text);
  emitManifest(kernels, {"attention_fwd.yaml", "0.1.0"}, os);
  return os.str();
}

/// The text after `"key": ` up to the end of its line (without a comma).
std::string valueOf(const std::string &text, const std::string &key, size_t from = 0) {
  size_t at = text.find("\"" + key + "\": ", from);
  if (at == std::string::npos)
    return "<missing>";
  at += key.size() + 4;
  size_t end = text.find('\n', at);
  std::string value = text.substr(at, end - at);
  if (!value.empty() && value.back() == ',')
    value.pop_back();
  return value;
}

TEST(ManifestEmitter, ScalarWithDefault) {
  std::string text = manifestOf({attentionLike({{"scale", spec::DType::F32, 0.125, {}}})});
  EXPECT_EQ(valueOf(text, "format_version"), "2");
  EXPECT_NE(text.find("      \"sizes\": [\n"
                      "        \"B\",\n"
                      "        \"H\",\n"
                      "        \"N\"\n"
                      "      ],\n"
                      "      \"scalars\": [\n"
                      "        {\n"
                      "          \"name\": \"scale\",\n"
                      "          \"dtype\": \"f32\",\n"
                      "          \"c_type\": \"float\",\n"
                      "          \"default\": 0.125\n"
                      "        }\n"
                      "      ]\n"
                      "    }\n"),
            std::string::npos)
      << text;
}

TEST(ManifestEmitter, ScalarsKeepTheirOrderAndADefaultOnlyWhereGiven) {
  std::string text = manifestOf({attentionLike(
      {{"scale", spec::DType::F32, std::nullopt, {}}, {"cap", spec::DType::F32, 30.0, {}}})});
  size_t scalars = text.find("\"scalars\": [");
  ASSERT_NE(scalars, std::string::npos) << text;
  size_t scale = text.find("\"name\": \"scale\"", scalars);
  size_t cap = text.find("\"name\": \"cap\"", scalars);
  ASSERT_NE(scale, std::string::npos) << text;
  ASSERT_NE(cap, std::string::npos) << text;
  EXPECT_LT(scale, cap);
  // scale has no default: its object ends after c_type.
  EXPECT_EQ(valueOf(text, "c_type", scale), "\"float\"");
  EXPECT_EQ(text.find("\"default\"", scale), text.find("\"default\"", cap));
  EXPECT_EQ(valueOf(text, "default", cap), "30");
}

TEST(ManifestEmitter, DefaultsReadBackAsTheSameDouble) {
  for (double value : {1 / std::sqrt(64.0), 1 / std::sqrt(128.0), 0.1, 1e-6, -2.5e30, 1.0, 0.0,
                       std::nextafter(1.0, 2.0)}) {
    std::string text = manifestOf({attentionLike({{"s", spec::DType::F32, value, {}}})});
    std::string printed = valueOf(text, "default");
    char *end = nullptr;
    double back = std::strtod(printed.c_str(), &end);
    EXPECT_EQ(*end, '\0') << printed;
    EXPECT_EQ(back, value) << printed;
  }
  EXPECT_EQ(
      valueOf(manifestOf({attentionLike({{"s", spec::DType::F32, 1 / std::sqrt(128.0), {}}})}),
              "default"),
      "0.08838834764831843");
}

TEST(ManifestEmitter, NoScalarsIsAnEmptyArray) {
  ir::Kernel k = attentionLike({});
  std::string text = manifestOf({k});
  EXPECT_NE(text.find("      \"scalars\": []\n    }\n"), std::string::npos) << text;
}

TEST(ManifestEmitter, NonFiniteDefaultIsAnInternalError) {
  // JSON cannot spell it; lowering must have refused such a default.
  EXPECT_THROW(manifestOf({attentionLike({{"s", spec::DType::F32, INFINITY, {}}})}), InternalError);
}

TEST(ManifestEmitter, EveryProgramStoreIsAnOutput) {
  std::string text = manifestOf({attentionLike({})});
  // Q is only read; O (a tile store) and L (a row store) are written.
  EXPECT_EQ(valueOf(text, "role", text.find("\"name\": \"Q\"")), "\"input\"");
  EXPECT_EQ(valueOf(text, "role", text.find("\"name\": \"O\"")), "\"output\"");
  EXPECT_EQ(valueOf(text, "role", text.find("\"name\": \"L\"")), "\"output\"");
  EXPECT_EQ(valueOf(text, "c_type", text.find("\"name\": \"L\"")), "\"float\"");
}

} // namespace
