//===- CheckTest.cpp - runtime argument checks (compiled as C++17) --------===//
#include "tkc/runtime/Check.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using namespace tkc::runtime;

const void *address(std::uintptr_t value) { return reinterpret_cast<const void *>(value); }

#define EXPECT_OK(expr)                                                                            \
  do {                                                                                             \
    Status s = (expr);                                                                             \
    EXPECT_TRUE(s.ok) << s.message;                                                                \
    EXPECT_TRUE(static_cast<bool>(s));                                                             \
    EXPECT_EQ(s.message, "");                                                                      \
  } while (false)

#define EXPECT_ERROR(expr, text)                                                                   \
  do {                                                                                             \
    Status s = (expr);                                                                             \
    EXPECT_FALSE(s.ok);                                                                            \
    EXPECT_FALSE(static_cast<bool>(s));                                                            \
    EXPECT_EQ(s.message, text);                                                                    \
  } while (false)

TEST(RuntimeStatus, SuccessAndError) {
  EXPECT_OK(Status::success());
  EXPECT_ERROR(Status::error("x must be 1, got 2"), "x must be 1, got 2");
}

TEST(RuntimeCheck, Pointer) {
  alignas(16) static const char buffer[32] = {};
  EXPECT_OK(checkPointer(buffer, "A", 16));
  EXPECT_OK(checkPointer(buffer + 8, "A", 8));
  EXPECT_OK(checkPointer(buffer + 1, "A", 1));
  EXPECT_OK(checkPointer(address(0x7f0000000100), "A", 256));
  EXPECT_ERROR(checkPointer(nullptr, "A", 16), "A must not be null");
  EXPECT_ERROR(checkPointer(nullptr, "bias", 1), "bias must not be null");
  EXPECT_ERROR(checkPointer(address(0x7f0000000008), "A", 16),
               "A must be 16-byte aligned, got address 0x7f0000000008");
  EXPECT_ERROR(checkPointer(address(0x7f00000000f0), "B", 128),
               "B must be 128-byte aligned, got address 0x7f00000000f0");
  EXPECT_ERROR(checkPointer(address(0x1), "C", 2), "C must be 2-byte aligned, got address 0x1");
  EXPECT_ERROR(checkPointer(buffer, "A", 12),
               "internal error: the alignment checked for A must be a power of two, got 12");
  EXPECT_ERROR(checkPointer(buffer, "A", 0),
               "internal error: the alignment checked for A must be a power of two, got 0");
}

TEST(RuntimeCheck, Extent) {
  EXPECT_OK(checkExtent(1, "M", 1, 2147483647));
  EXPECT_OK(checkExtent(2147483647, "M", 1, 2147483647));
  EXPECT_OK(checkExtent(-5, "offset", -5, -5));
  EXPECT_ERROR(checkExtent(0, "M", 1, 2147483647), "M must be between 1 and 2147483647, got 0");
  EXPECT_ERROR(checkExtent(2147483648LL, "N", 1, 2147483647),
               "N must be between 1 and 2147483647, got 2147483648");
  EXPECT_ERROR(checkExtent(-1, "K", 0, 10), "K must be between 0 and 10, got -1");
  EXPECT_ERROR(checkExtent(3, "K", 4, 2),
               "internal error: the range checked for K is empty (4 > 2)");
}

TEST(RuntimeCheck, Multiple) {
  EXPECT_OK(checkMultiple(96, "K", 8, "16-byte rows for TMA"));
  EXPECT_OK(checkMultiple(0, "K", 8, nullptr));
  EXPECT_OK(checkMultiple(-16, "K", 8, nullptr));
  EXPECT_OK(checkMultiple(7, "K", 1, nullptr));
  EXPECT_ERROR(checkMultiple(100, "K", 8, "16-byte rows for TMA"),
               "K must be a multiple of 8 (16-byte rows for TMA), got 100");
  EXPECT_ERROR(checkMultiple(130, "M", 128, nullptr), "M must be a multiple of 128, got 130");
  EXPECT_ERROR(checkMultiple(-3, "M", 64, ""), "M must be a multiple of 64, got -3");
  EXPECT_ERROR(checkMultiple(8, "K", 0, nullptr),
               "internal error: the divisor checked for K must be positive, got 0");
  EXPECT_ERROR(checkMultiple(8, "K", -8, nullptr),
               "internal error: the divisor checked for K must be positive, got -8");
}

TEST(RuntimeCheck, RowBytes) {
  EXPECT_OK(checkRowBytes(8, 2, "A"));
  EXPECT_OK(checkRowBytes(4, 4, "A"));
  EXPECT_OK(checkRowBytes(16, 1, "A"));
  EXPECT_OK(checkRowBytes(4096, 2, "B"));
  // The largest stride below 2^40 bytes.
  EXPECT_OK(checkRowBytes((1LL << 39) - 8, 2, "A"));
  EXPECT_ERROR(checkRowBytes(100, 2, "A"),
               "rows of A must be a multiple of 16 bytes for TMA, got 100 elements of 2 bytes "
               "(200 bytes)");
  EXPECT_ERROR(checkRowBytes(15, 1, "x"),
               "rows of x must be a multiple of 16 bytes for TMA, got 15 elements of 1 byte "
               "(15 bytes)");
  EXPECT_ERROR(checkRowBytes(0, 2, "A"),
               "rows of A must hold at least one element, got 0 elements of 2 bytes");
  EXPECT_ERROR(checkRowBytes(-8, 2, "A"),
               "rows of A must hold at least one element, got -8 elements of 2 bytes");
  EXPECT_ERROR(checkRowBytes(1LL << 39, 2, "A"),
               "rows of A must be shorter than 2^40 bytes for TMA, got 549755813888 elements of "
               "2 bytes");
  // Large enough that elements * bytes would overflow a long long.
  EXPECT_ERROR(checkRowBytes(1LL << 62, 4, "A"),
               "rows of A must be shorter than 2^40 bytes for TMA, got 4611686018427387904 "
               "elements of 4 bytes");
  EXPECT_ERROR(checkRowBytes(8, 0, "A"),
               "internal error: the element size of A must be positive, got 0");
}

} // namespace
