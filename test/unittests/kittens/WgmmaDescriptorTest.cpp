//===- WgmmaDescriptorTest.cpp - wgmma shared-memory descriptor fields ----===//
#include <kittens/types/shared/wgmma_descriptor.cuh>

#include <gtest/gtest.h>

using namespace kittens::wgmma_desc;

TEST(WgmmaDesc, FieldPositions) {
  const uint64_t d = encode(0x12340, 0x100, 0x400, 128);
  EXPECT_EQ(d & 0x3FFF, 0x1234u);
  EXPECT_EQ((d >> 16) & 0x3FFF, 0x10u);
  EXPECT_EQ((d >> 32) & 0x3FFF, 0x40u);
  EXPECT_EQ((d >> 49) & 0x7, 0u) << "base offset must stay 0 (tiles are 1024-aligned)";
  EXPECT_EQ(d >> 62, 1u);
  EXPECT_EQ(encode(0, 0, 0, 64) >> 62, 2u);
  EXPECT_EQ(encode(0, 0, 0, 32) >> 62, 3u);
  EXPECT_EQ(encode(0, 0, 0, 0) >> 62, 0u);
  // Addresses above 256 KiB would not fit 14 bits after >> 4; shared memory never is.
  EXPECT_EQ(encode(0x3FFF0, 0, 0, 128) & 0x3FFF, 0x3FFFu);
}

TEST(WgmmaDesc, KMajorSteps) {
  // bf16, 128 B swizzle, tile of 128 rows x 128 cols (2 chunks of 64, 16 KiB apart).
  const int chunk = 128 * 128;
  for (int k = 0; k < 8; ++k) {
    fields f = step_fields(major::k, k, 128, chunk);
    EXPECT_EQ(f.offset, uint32_t((k / 4) * chunk + (k % 4) * 32)) << k;
    EXPECT_EQ(f.sbo, 1024u);
  }
  // 32 B swizzle: each k16 step is a whole chunk.
  EXPECT_EQ(step_fields(major::k, 3, 32, 4096).offset, 3u * 4096u);
  EXPECT_EQ(step_fields(major::k, 3, 32, 4096).sbo, 256u);
  EXPECT_EQ(step_fields(major::k, 1, 64, 4096).offset, 32u);
  EXPECT_EQ(step_fields(major::k, 2, 64, 4096).offset, 4096u);
}

TEST(WgmmaDesc, MNMajorSteps) {
  // B = st<bf16, 64 (K), 256 (N)>: chunks of 64 N-columns, 64 * 128 = 8 KiB apart.
  for (int k = 0; k < 4; ++k) {
    fields f = step_fields(major::mn, k, 128, 8192);
    EXPECT_EQ(f.offset, uint32_t(2048 * k));
    EXPECT_EQ(f.lbo, 8192u);
    EXPECT_EQ(f.sbo, 1024u);
  }
  EXPECT_EQ(step_fields(major::mn, 2, 64, 2048).offset, 2u * 16u * 64u);
  EXPECT_EQ(step_fields(major::mn, 2, 64, 2048).sbo, 512u);
}

TEST(WgmmaDesc, AdvanceEqualsEncodingTheMovedAddress) {
  // A product encodes each operand once and advances it per k16 step; that must be the same
  // descriptor as encoding the step's address, for every operand shape and placement we use.
  for (major m : {major::k, major::mn})
    for (int swz : {32, 64, 128})
      for (int chunk : {2048, 8192, 16384})
        for (uint32_t base : {0u, 1024u, 0x8000u, 0x36C00u})
          for (int k = 0; k < 16; ++k) {
            const fields f0 = step_fields(m, 0, swz, chunk), f = step_fields(m, k, swz, chunk);
            if (base + f.offset >= 228u * 1024u)
              continue; // past any SM's shared memory
            EXPECT_EQ(advance(encode(base, f0.lbo, f0.sbo, swz), f.offset),
                      encode(base + f.offset, f.lbo, f.sbo, swz))
                << int(m) << " " << swz << " " << chunk << " " << base << " " << k;
          }
}
