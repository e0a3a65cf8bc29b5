//===- SwizzleTest.cpp - shared-tile layout and swizzle arithmetic --------===//
//
// Pins the column-chunk layout and the XOR swizzle that TMA and wgmma assume.
// The reference here is written independently: it places 16-byte units the way
// the hardware's SWIZZLE_<S>B mode is documented (unit index XOR row mod (S/16)).
//
//===----------------------------------------------------------------------===//
#include <kittens/common/swizzle.cuh>

#include <gtest/gtest.h>

#include <set>

using namespace kittens::layout;

TEST(Swizzle, DefaultWidthFollowsColumns) {
  EXPECT_EQ(default_swizzle_bytes(2, 64), 128);
  EXPECT_EQ(default_swizzle_bytes(2, 256), 128);
  EXPECT_EQ(default_swizzle_bytes(2, 32), 64);
  EXPECT_EQ(default_swizzle_bytes(2, 96), 64);
  EXPECT_EQ(default_swizzle_bytes(2, 16), 32);
  EXPECT_EQ(default_swizzle_bytes(2, 8), 0);
  EXPECT_EQ(default_swizzle_bytes(4, 32), 128);
  EXPECT_EQ(default_swizzle_bytes(4, 16), 64);
  EXPECT_EQ(default_swizzle_bytes(4, 8), 32);
}

// Independent model: within each S-byte line, 16-byte unit u of line L lands at unit
// u ^ (L mod (S/16)), where L counts lines of S bytes... but the pattern repeats every
// 8 lines of 128 bytes (1024 bytes) for every S, so L is (offset / 128) mod 8 restricted
// to the unit bits that exist.
static uint32_t model_swizzle(uint32_t off, int s) {
  const uint32_t units_per_line = s / 16; // 8, 4 or 2
  const uint32_t unit = (off / 16) % units_per_line;
  const uint32_t row_bits = (off / 128) % units_per_line;
  const uint32_t line_base = off - (off % s);
  return line_base + ((unit ^ row_bits) * 16) + (off % 16);
}

TEST(Swizzle, MatchesModelAndIsBijective) {
  for (int s : {32, 64, 128}) {
    std::set<uint32_t> seen;
    for (uint32_t off = 0; off < 8192; off += 2) {
      const uint32_t z = swizzle(off, s);
      EXPECT_EQ(z, model_swizzle(off, s)) << "s=" << s << " off=" << off;
      EXPECT_TRUE(seen.insert(z).second) << "s=" << s << " collision at " << off;
      EXPECT_EQ(z / (8 * s), off / (8 * s)) << "swizzle left its repeat";
      EXPECT_EQ(z % 16, off % 16) << "swizzle must keep 16-byte units whole";
    }
  }
  EXPECT_EQ(swizzle(1234, 0), 1234u);
}

TEST(Swizzle, Row0IsIdentityAndRow1FlipsUnit0) {
  // 128 B swizzle: row 0 unchanged; row 1 (bytes 128..255) swaps units 0 and 1.
  EXPECT_EQ(swizzle(0, 128), 0u);
  EXPECT_EQ(swizzle(112, 128), 112u);
  EXPECT_EQ(swizzle(128, 128), 144u);
  EXPECT_EQ(swizzle(144, 128), 128u);
  EXPECT_EQ(swizzle(7 * 128, 128), 7 * 128 + 7 * 16u);
}

TEST(Swizzle, ChunkOrderMakesWideTilesOfNarrowOnes) {
  // st<bf16, 64, 256> (128 B swizzle, 64-column chunks) == four st<bf16, 64, 64> back to back.
  const int R = 64;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 256; ++c) {
      const uint32_t wide = tile_offset(r, c, R, 256, 2, 128);
      const uint32_t narrow = (c / 64) * (R * 128) + tile_offset(r, c % 64, R, 64, 2, 128);
      ASSERT_EQ(wide, narrow) << r << "," << c;
    }
  // ... and two st<bf16, 64, 64> stacked are one st<bf16, 128, 64>.
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < 64; ++c)
      ASSERT_EQ(tile_offset(r, c, 128, 64, 2, 128), (r / 64) * 8192 + tile_offset(r % 64, c, 64, 64, 2, 128));
}

TEST(Swizzle, TileIsABijectionOntoItsBytes) {
  struct Case { int rows, cols, eb, s; };
  for (Case k : {Case{64, 64, 2, 128}, Case{16, 96, 2, 64}, Case{32, 16, 2, 32}, Case{16, 32, 4, 128},
                 Case{24, 40, 2, 0}}) {
    std::set<uint32_t> seen;
    for (int r = 0; r < k.rows; ++r)
      for (int c = 0; c < k.cols; ++c) {
        uint32_t o = tile_offset(r, c, k.rows, k.cols, k.eb, k.s);
        ASSERT_LT(o, uint32_t(k.rows * k.cols * k.eb));
        ASSERT_EQ(o % k.eb, 0u);
        ASSERT_TRUE(seen.insert(o).second);
      }
  }
}

TEST(Swizzle, UnswizzledIsRowMajor) {
  EXPECT_EQ(tile_offset(3, 5, 16, 40, 2, 0), uint32_t((3 * 40 + 5) * 2));
  EXPECT_EQ(chunk_cols(2, 0, 40), 40);
  EXPECT_EQ(chunk_cols(2, 128, 256), 64);
  EXPECT_EQ(chunk_cols(4, 64, 32), 16);
}
