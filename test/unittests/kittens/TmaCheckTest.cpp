//===- TmaCheckTest.cpp - TMA request construction and validation ---------===//
#include <kittens/types/global/tma_check.cuh>

#include <gtest/gtest.h>

using namespace kittens::tma_check;

TEST(TmaCheck, GemmTileRequestIsLegal) {
  // A 4096 x 4096 bf16 matrix, 128 x 64 tiles, 128 B swizzle.
  request q = tile_request(0x10000, 2, 128, 128, 64, 1, 1, 4096, 4096);
  EXPECT_EQ(q.rank, 5);
  EXPECT_EQ(q.dims[0], 64u); EXPECT_EQ(q.dims[1], 4096u); EXPECT_EQ(q.dims[2], 64u);
  EXPECT_EQ(q.strides[0], 8192u); EXPECT_EQ(q.strides[1], 128u); EXPECT_EQ(q.strides[2], 4096u * 8192u);
  EXPECT_EQ(q.box[0], 64u); EXPECT_EQ(q.box[1], 128u); EXPECT_EQ(q.box[2], 1u);
  EXPECT_EQ(validate_tile(q, 4096, 64), "");
  // A 64 x 256 tile is four chunks in one copy.
  request w = tile_request(0x10000, 2, 128, 64, 256, 1, 1, 4096, 4096);
  EXPECT_EQ(w.box[2], 4u);
  EXPECT_EQ(validate_tile(w, 4096, 256), "");
}

TEST(TmaCheck, MisalignedAddressExplainsItself) {
  request q = tile_request(0x10008, 2, 128, 64, 64, 1, 1, 256, 256);
  std::string e = validate(q);
  EXPECT_NE(e.find("not 16-byte aligned"), std::string::npos) << e;
}

TEST(TmaCheck, RowStrideNotMultipleOf16) {
  request q = plain_request(0x1000, 2, 16, 8, 1, 1, 64, 100); // 200-byte rows
  std::string e = validate(q);
  EXPECT_NE(e.find("stride of dim 1 is 200 bytes, not a multiple of 16"), std::string::npos) << e;
}

TEST(TmaCheck, BoxTooLarge) {
  request q = plain_request(0x1000, 2, 512, 64, 1, 1, 1024, 1024);
  std::string e = validate(q);
  EXPECT_NE(e.find("box dim 1 is 512"), std::string::npos) << e;
}

TEST(TmaCheck, InnerBoxWiderThanSwizzle) {
  request q = tile_request(0x1000, 2, 64, 64, 64, 1, 1, 256, 256);
  q.box[0] = 64; // 128 bytes under a 64-byte swizzle
  std::string e = validate(q);
  EXPECT_NE(e.find("allows at most 64"), std::string::npos) << e;
}

TEST(TmaCheck, ColumnsNotWholeChunks) {
  request q = tile_request(0x1000, 2, 128, 64, 64, 1, 1, 256, 96);
  std::string e = validate_tile(q, 96, 64);
  EXPECT_NE(e.find("96 columns, not a multiple of the 64-element swizzle chunk"), std::string::npos) << e;
}

TEST(TmaCheck, VectorRequest) {
  request q = vector_request(0x1000, 4, 128, 1, 2, 3, 512);
  EXPECT_EQ(q.rank, 4);
  EXPECT_EQ(q.box[0], 128u); EXPECT_EQ(q.box[1], 1u);
  EXPECT_EQ(validate(q), "");
  request bad = vector_request(0x1000, 2, 4, 1, 1, 1, 64); // 8-byte inner box
  EXPECT_NE(validate(bad).find("inner box is 8 bytes"), std::string::npos);
}

TEST(TmaCheck, RankAndElementSize) {
  request q;
  q.rank = 6;
  EXPECT_NE(validate(q).find("rank 6"), std::string::npos);
  q.rank = 2;
  q.elem_bytes = 3;
  EXPECT_NE(validate(q).find("element size 3"), std::string::npos);
}

TEST(TmaCheck, RaggedColumnsUseOneCopyPerChunk) {
  // 1000 bf16 columns end inside a 64-element chunk: the 4-D map spans the real
  // columns (2000-byte rows) and moves a 128-row x 64-column box per copy.
  request q = chunk_request(0x10000, 2, 128, 128, 1, 1, 4096, 1000);
  EXPECT_EQ(q.rank, 4);
  EXPECT_EQ(q.swizzle_bytes, 128);
  EXPECT_EQ(q.dims[0], 1000u); EXPECT_EQ(q.dims[1], 4096u);
  EXPECT_EQ(q.strides[0], 2000u);
  EXPECT_EQ(q.box[0], 64u); EXPECT_EQ(q.box[1], 128u);
  EXPECT_EQ(validate(q), "");
  // Rows must still be 16-byte multiples: 1001 columns (2002 bytes) are refused.
  request odd = chunk_request(0x10000, 2, 128, 128, 1, 1, 4096, 1001);
  EXPECT_NE(validate(odd).find("not a multiple of 16"), std::string::npos) << validate(odd);
}

TEST(TmaCheck, StridedTileRequestFollowsTheStrides) {
  // A [B=2, N=1000, H=8, D=128] bf16 tensor indexed as [B, H, N, D]: rows lie H * D
  // elements apart, heads D, batches N * H * D.
  request q = tile_request(0x10000, 2, 128, 64, 128, 2, 8, 1000, 128, strides{8 * 128, 128, 1000 * 8 * 128});
  EXPECT_EQ(q.dims[1], 1000u); EXPECT_EQ(q.dims[3], 8u); EXPECT_EQ(q.dims[4], 2u);
  EXPECT_EQ(q.strides[0], 8u * 128 * 2); EXPECT_EQ(q.strides[2], 128u * 2);
  EXPECT_EQ(q.strides[3], 1000u * 8 * 128 * 2);
  EXPECT_EQ(validate_tile(q, 128, 128), "");
  request p = plain_request(0x1000, 4, 16, 8, 1, 3, 64, 8, strides{24, 8, 0});
  EXPECT_EQ(p.strides[0], 96u); EXPECT_EQ(p.strides[1], 32u);
  // A depth stride off the 16-byte grid is refused with its dim named.
  request bad = plain_request(0x1000, 2, 16, 8, 1, 3, 64, 8, strides{24, 4, 0});
  EXPECT_NE(validate(bad).find("stride of dim 2 is 8 bytes"), std::string::npos) << validate(bad);
}
