//===- SourceManagerTest.cpp ----------------------------------------------===//
#include "tkc/dsl/SourceManager.h"

#include <gtest/gtest.h>

namespace {

TEST(SourceManager, OffsetsMapToOneBasedLinesAndByteColumns) {
  tkc::SourceManager sm;
  unsigned id = sm.addBuffer("ab\ncdé\nx", "t.yaml");
  EXPECT_EQ(sm.getBufferName(id), "t.yaml");
  EXPECT_EQ(sm.getLocForOffset(id, 0), (tkc::SourceLoc{id, 1, 1}));
  EXPECT_EQ(sm.getLocForOffset(id, 3), (tkc::SourceLoc{id, 2, 1}));
  // 'é' is two bytes: the 'x' on line 3 is at offset 8.
  EXPECT_EQ(sm.getLocForOffset(id, 8), (tkc::SourceLoc{id, 3, 1}));
  EXPECT_EQ(sm.getLineText(id, 2), "cdé");
}

TEST(SourceManager, OffsetOfLocationIsClampedToItsLine) {
  tkc::SourceManager sm;
  unsigned id = sm.addBuffer("abc\ndef\n", "t.yaml");
  EXPECT_EQ(sm.getOffset({id, 2, 2}), 5u);
  // One past the end of line 1 is the newline, never line 2.
  EXPECT_EQ(sm.getOffset({id, 1, 40}), 3u);
  // A line past the end of the buffer means the end of the buffer.
  EXPECT_EQ(sm.getOffset({id, 9, 1}), 8u);
  EXPECT_FALSE(sm.getOffset(tkc::SourceLoc()).has_value());
}

TEST(SourceManager, MissingFileReportsLowercaseReason) {
  tkc::SourceManager sm;
  std::string error;
  EXPECT_FALSE(sm.addFile("/nonexistent/dir/spec.yaml", error).has_value());
  EXPECT_EQ(error, "no such file or directory");
}

} // namespace
