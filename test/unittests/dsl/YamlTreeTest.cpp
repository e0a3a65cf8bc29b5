//===- YamlTreeTest.cpp ---------------------------------------------------===//
#include "tkc/dsl/YamlTree.h"

#include <gtest/gtest.h>

namespace {

struct Parsed {
  tkc::SourceManager sm;
  std::string errors;
  llvm::raw_string_ostream os{errors};
  tkc::DiagnosticEngine diags{sm, os};
  std::unique_ptr<tkc::yaml::Node> root;

  explicit Parsed(const std::string &text) {
    unsigned id = sm.addBuffer(text, "t.yaml");
    root = tkc::yaml::parseYaml(id, diags);
    os.flush();
  }
};

TEST(YamlTree, NodesAndKeysCarryLocations) {
  Parsed p("a: 1\nb:\n  - x\n  - 'y'\n");
  ASSERT_TRUE(p.root) << p.errors;
  ASSERT_TRUE(p.root->isMapping());
  ASSERT_EQ(p.root->entries.size(), 2u);
  EXPECT_EQ(p.root->entries[0].key, "a");
  EXPECT_EQ(p.root->entries[0].keyLoc.line, 1u);
  EXPECT_EQ(p.root->entries[0].value->loc.col, 4u);
  const tkc::yaml::Node &list = *p.root->entries[1].value;
  ASSERT_TRUE(list.isSequence());
  ASSERT_EQ(list.items.size(), 2u);
  EXPECT_EQ(list.items[1]->loc.line, 4u);
  EXPECT_EQ(list.items[1]->loc.col, 5u);
  EXPECT_FALSE(list.items[0]->quoted);
  EXPECT_TRUE(list.items[1]->quoted);
}

TEST(YamlTree, DuplicateKeysAreKept) {
  Parsed p("a: 1\na: 2\n");
  ASSERT_TRUE(p.root) << p.errors;
  ASSERT_EQ(p.root->entries.size(), 2u);
  EXPECT_EQ(p.root->entries[1].keyLoc.line, 2u);
}

TEST(YamlTree, EmptyDocumentIsANullRoot) {
  Parsed p("# only a comment\n");
  ASSERT_TRUE(p.root) << p.errors;
  EXPECT_TRUE(p.root->isNull());
}

TEST(YamlTree, NestingPastTheLimitIsAnError) {
  std::string deep = std::string(tkc::yaml::kMaxNestingDepth + 1, '[') +
                     std::string(tkc::yaml::kMaxNestingDepth + 1, ']');
  Parsed p(deep);
  EXPECT_FALSE(p.root);
  EXPECT_NE(p.errors.find("t.yaml:1:65: error: nesting deeper than 64 levels"), std::string::npos)
      << p.errors;
}

TEST(YamlTree, InvalidUtf8IsLocatedAtTheByte) {
  Parsed p("a: 1\nb: \xff\n");
  EXPECT_FALSE(p.root);
  EXPECT_NE(p.errors.find("t.yaml:2:4: error: invalid UTF-8 byte 0xff"), std::string::npos)
      << p.errors;
}

TEST(YamlTree, OverlongUtf8IsRejected) {
  Parsed p("a: \xc0\xaf\n");
  EXPECT_FALSE(p.root);
  EXPECT_NE(p.errors.find("error: invalid UTF-8 byte 0xc0"), std::string::npos) << p.errors;
}

TEST(YamlTree, AliasesAreRejected) {
  Parsed p("a: &x 1\nb: *x\n");
  EXPECT_FALSE(p.root);
  EXPECT_NE(p.errors.find("t.yaml:2:4: error: YAML aliases are not supported"), std::string::npos)
      << p.errors;
}

TEST(YamlTree, SecondDocumentIsRejected) {
  Parsed p("a: 1\n---\nb: 2\n");
  EXPECT_FALSE(p.root);
  EXPECT_NE(p.errors.find("error: a spec holds one YAML document"), std::string::npos) << p.errors;
}

TEST(YamlTree, DescribeShortensAndEscapes) {
  tkc::yaml::Node node;
  node.kind = tkc::yaml::Node::Kind::Scalar;
  node.value = std::string(40, 'x') + "\n";
  EXPECT_EQ(node.describe(), "'" + std::string(32, 'x') + "...'");
  node.value = "a\nb";
  EXPECT_EQ(node.describe(), "'a\\nb'");
}

} // namespace
