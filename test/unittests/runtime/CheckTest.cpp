//===- CheckTest.cpp - runtime argument checks (compiled as C++17) --------===//
#include "tkc/runtime/Check.h"

#include <gtest/gtest.h>

#include <climits>
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
  // Launchers take sizes from 0 (an empty problem) and refuse negative ones.
  EXPECT_OK(checkExtent(0, "M", 0, 2147483647));
  EXPECT_ERROR(checkExtent(-1, "M", 0, 2147483647), "M must be between 0 and 2147483647, got -1");
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

TEST(RuntimeCheck, ElementCount) {
  EXPECT_EQ(elementCount({128, 64}), 8192);
  EXPECT_EQ(elementCount({2, 8, 1024, 64}), 1048576);
  EXPECT_EQ(elementCount({7}), 7);
  EXPECT_EQ(elementCount({}), 1);
  // A size of 0 empties the tensor, whatever the others are (even past overflow).
  EXPECT_EQ(elementCount({0, 64}), 0);
  EXPECT_EQ(elementCount({2147483647, 2147483647, 2147483647, 0}), 0);
  EXPECT_EQ(elementCount({64, -1}), 0);
  // Products past a long long saturate instead of wrapping.
  EXPECT_EQ(elementCount({2147483647, 2147483647}), 4611686014132420609LL);
  EXPECT_EQ(elementCount({2147483647, 2147483647, 2147483647}), LLONG_MAX);
  EXPECT_EQ(elementCount({2147483647, 2147483647, 2147483647, 2}), LLONG_MAX);
}

Span span(const char *name, std::uintptr_t begin, long long elements, unsigned bytes,
          bool written) {
  return Span{name, address(begin), elements, bytes, written};
}

TEST(RuntimeCheck, DisjointSpans) {
  // The GEMM: A [128, 64], B [64, 256], C [128, 256] bf16, back to back.
  const Span A = span("A", 0x100000, 128 * 64, 2, false);
  const Span B = span("B", 0x100000 + 128 * 64 * 2, 64 * 256, 2, false);
  const Span C = span("C", 0x100000 + 128 * 64 * 2 + 64 * 256 * 2, 128 * 256, 2, true);
  EXPECT_OK(checkDisjoint({A, B, C}));
  EXPECT_OK(checkDisjoint({}));
  EXPECT_OK(checkDisjoint({C}));
  // C in A's bytes, entirely or by one byte at either end.
  EXPECT_ERROR(checkDisjoint({A, B, span("C", 0x100000, 128 * 256, 2, true)}),
               "output C overlaps input A");
  EXPECT_ERROR(checkDisjoint({A, B, span("C", 0x100000 + 128 * 64 * 2 - 1, 1, 1, true)}),
               "output C overlaps input A");
  EXPECT_ERROR(checkDisjoint({A, span("C", 0x100000 - 15, 8, 2, true)}),
               "output C overlaps input A");
  // Touching is not overlapping: C ends where A begins.
  EXPECT_OK(checkDisjoint({A, span("C", 0x100000 - 16, 8, 2, true)}));
  // An output listed before the input it overlaps is still named first.
  EXPECT_ERROR(checkDisjoint({span("C", 0x100010, 4, 2, true), A}), "output C overlaps input A");
  // Two outputs (attention's O and L) in the same bytes.
  EXPECT_ERROR(checkDisjoint({span("O", 0x200000, 64, 2, true), span("L", 0x200040, 8, 4, true)}),
               "output O overlaps output L");
  // Inputs may share bytes (A and B the same tensor); an input inside a big output is caught.
  EXPECT_OK(checkDisjoint({A, span("B", 0x100000, 128 * 64, 2, false), C}));
  EXPECT_ERROR(
      checkDisjoint({span("bias", 0x300100, 256, 2, false), span("C", 0x300000, 65536, 2, true)}),
      "output C overlaps input bias");
  // A span without elements has no bytes, wherever it points: null, or inside another.
  EXPECT_OK(checkDisjoint({span("A", 0, 0, 2, false), span("C", 0, 0, 2, true)}));
  EXPECT_OK(checkDisjoint({A, span("C", 0x100000, 0, 2, true)}));
  EXPECT_OK(checkDisjoint({span("A", 0x100000, 0, 2, false), span("C", 0x100000, 8, 2, true)}));
  // Ranges that would run past the end of the address space end there.
  EXPECT_ERROR(checkDisjoint({span("C", UINTPTR_MAX - 7, LLONG_MAX, 4, true),
                              span("A", UINTPTR_MAX - 1, 1, 1, false)}),
               "output C overlaps input A");
  EXPECT_OK(checkDisjoint(
      {span("C", 0x1000, 0x100, 1, true), span("A", UINTPTR_MAX - 16, LLONG_MAX, 4, false)}));
  EXPECT_ERROR(checkDisjoint({A, span("C", 0x2000, 8, 0, true)}),
               "internal error: the element size of C must be positive, got 0");
}

TEST(RuntimeCheck, Memory) {
  EXPECT_OK(checkMemory("A", MemoryType::Device, 0, 0));
  EXPECT_OK(checkMemory("A", MemoryType::Device, 3, 3));
  // Managed memory migrates to the device that touches it.
  EXPECT_OK(checkMemory("A", MemoryType::Managed, 1, 0));
  EXPECT_OK(checkMemory("A", MemoryType::Managed, -1, 0));
  EXPECT_ERROR(checkMemory("A", MemoryType::Device, 1, 0),
               "A lives on device 1, the launch runs on device 0");
  EXPECT_ERROR(checkMemory("C", MemoryType::Device, 0, 2),
               "C lives on device 0, the launch runs on device 2");
  EXPECT_ERROR(checkMemory("A", MemoryType::Unregistered, -2, 0),
               "A is host memory; pass a device pointer");
  EXPECT_ERROR(checkMemory("bias", MemoryType::Host, 0, 0),
               "bias is page-locked host memory; pass a device pointer");
  EXPECT_ERROR(checkMemory("A", static_cast<MemoryType>(7), 0, 0),
               "A is memory of a kind tkc does not know (type 7); pass a device pointer");
}

TEST(RuntimeCheck, PendingCudaError) {
  EXPECT_ERROR(
      pendingCudaError("cudaErrorInvalidConfiguration", "invalid configuration argument", false),
      "an earlier CUDA error is pending: cudaErrorInvalidConfiguration (invalid "
      "configuration argument); it was not caused by this launch, which cleared it and "
      "launched nothing");
  EXPECT_ERROR(
      pendingCudaError("cudaErrorIllegalAddress", "an illegal memory access was encountered", true),
      "CUDA cannot launch in this process: cudaErrorIllegalAddress (an illegal memory "
      "access was encountered) persists after cudaGetLastError; it was not caused by "
      "this launch, which launched nothing");
}

} // namespace
