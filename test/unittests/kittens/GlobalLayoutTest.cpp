//===- GlobalLayoutTest.cpp - 4-D global layouts and coordinates ---------===//
#include <kittens/types/global/coord.cuh>
#if defined(KITTENS_HAVE_CUDA_HEADERS)
#include <kittens/types/global/gl.cuh>
#endif

#include <gtest/gtest.h>

using kittens::coord;

TEST(GlobalLayout, TileCoordinatesScaleRowsAndCols) {
  coord e = kittens::tile_to_element({1, 2, 3, 4}, 64, 128);
  EXPECT_EQ(e.b, 1); EXPECT_EQ(e.d, 2); EXPECT_EQ(e.r, 192); EXPECT_EQ(e.c, 512);
}

TEST(GlobalLayout, LinearIndexIsRowMajor) {
  EXPECT_EQ(kittens::linear_index({0, 0, 0, 5}, 3, 7, 11), 5);
  EXPECT_EQ(kittens::linear_index({0, 0, 2, 5}, 3, 7, 11), 27);
  EXPECT_EQ(kittens::linear_index({0, 1, 0, 0}, 3, 7, 11), 77);
  EXPECT_EQ(kittens::linear_index({1, 0, 0, 0}, 3, 7, 11), 231);
  // No 32-bit overflow for large tensors.
  EXPECT_EQ(kittens::linear_index({0, 0, 65536, 0}, 1, 65537, 65536), int64_t(65536) * 65536);
}

#if defined(KITTENS_HAVE_CUDA_HEADERS)
TEST(GlobalLayout, CompileTimeAndRuntimeDims) {
  float buf[2 * 3 * 4 * 5];
  kittens::gl<float, -1, 3, -1, 5> g(buf, 2, 3, 4, 5);
  EXPECT_EQ(g.batch(), 2); EXPECT_EQ(g.depth(), 3); EXPECT_EQ(g.rows(), 4); EXPECT_EQ(g.cols(), 5);
  EXPECT_EQ(g.row_stride(), 5); EXPECT_EQ(g.depth_stride(), 20); EXPECT_EQ(g.batch_stride(), 60);
  EXPECT_EQ(g.ptr(coord{1, 2, 3, 4}), &buf[119]);
}

TEST(GlobalLayout, GivenStridesPermuteTheLayout) {
  // [B=2, N=4, H=3, D=5] memory indexed as [B, H, N, D].
  float buf[2 * 4 * 3 * 5];
  kittens::gl<float> g(buf, 2, 3, 4, 5, 3 * 5, 5, 4 * 3 * 5);
  EXPECT_EQ(g.row_stride(), 15); EXPECT_EQ(g.depth_stride(), 5); EXPECT_EQ(g.batch_stride(), 60);
  // Batch 1, head 2, row 3, column 4: element ((1 * 4 + 3) * 3 + 2) * 5 + 4.
  EXPECT_EQ(g.ptr(coord{1, 2, 3, 4}), &buf[119]);
  EXPECT_EQ(g.ptr(coord{0, 1, 2, 0}), &buf[(2 * 3 + 1) * 5]);
}

TEST(GlobalLayout, RowWindowKeepsTheStrides) {
  float buf[2 * 10 * 4];
  kittens::gl<float, 1, -1, -1, -1> g(buf, 1, 2, 10, 4);
  const auto w = g.row_window(3, 5);
  EXPECT_EQ(w.rows(), 5); EXPECT_EQ(w.row_stride(), 4); EXPECT_EQ(w.depth_stride(), 40);
  EXPECT_EQ(w.ptr(coord{0, 1, 2, 1}), &buf[40 + (3 + 2) * 4 + 1]);
}

TEST(GlobalLayout, WrongCompileTimeDimThrows) {
  float buf[16];
  try {
    kittens::gl<float, 1, 1, 4, 4> g(buf, 1, 1, 2, 8);
    FAIL() << "a contradicting run-time dim must throw";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "kittens::gl: rows is 2 but the layout fixes it at compile time to 4");
  }
  EXPECT_THROW((kittens::gl<float>(buf, 1, 0, 4, 4)), std::invalid_argument);
}
#endif
