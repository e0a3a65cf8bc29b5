//===- ArchTest.cpp -------------------------------------------------------===//
#include "tkc/Target/Arch.h"

#include <gtest/gtest.h>

namespace {

TEST(Arch, Sm90aIsTheSupportedHopperTarget) {
  const tkc::ArchInfo *arch = tkc::lookupArch("sm_90a");
  ASSERT_NE(arch, nullptr);
  EXPECT_TRUE(arch->hasWgmma && arch->hasTma && arch->hasSetmaxnreg);
  // 227 KB: the per-block opt-in limit of compute capability 9.0.
  EXPECT_EQ(arch->maxSharedBytesPerBlock, 227u * 1024u);
  EXPECT_EQ(arch->nvccGencode, "-gencode=arch=compute_90a,code=sm_90a");
  EXPECT_EQ(tkc::knownArchList(), "sm_90a, sm_90, sm_80");
  EXPECT_EQ(tkc::archListWith([](const tkc::ArchInfo &a) { return a.hasWgmma; }), "sm_90a");
}

TEST(Arch, PlainSm90LacksTheArchSpecificFeatures) {
  const tkc::ArchInfo *arch = tkc::lookupArch("sm_90");
  ASSERT_NE(arch, nullptr);
  EXPECT_FALSE(arch->hasWgmma);
  EXPECT_FALSE(arch->hasSetmaxnreg);
  EXPECT_EQ(tkc::lookupArch("sm_91"), nullptr);
}

} // namespace
