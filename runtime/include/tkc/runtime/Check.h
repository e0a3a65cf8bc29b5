//===- Check.h - Argument checks for generated launchers --------*- C++ -*-===//
//
// Part of tkc. See runtime/README.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a generated host launcher checks before it launches a kernel:
/// pointers (non-null, aligned), extents (within range, divisible), and row
/// pitches that TMA can address. Each check returns a Status instead of
/// throwing or aborting, so the launcher can hand the message to its caller.
///
/// Messages name the argument, say what was expected and what was found, and
/// have no final period, e.g. "K must be a multiple of 8 (16-byte rows for
/// TMA), got 100". A check misused by the generated code (an alignment that
/// is not a power of two, an empty range) fails with a message that starts
/// with "internal error: ", which is a bug in tkc, not in the caller's data.
///
/// Header-only, plain C++17, no CUDA headers: it compiles with g++, clang++
/// and nvcc alike.
///
//===----------------------------------------------------------------------===//
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <utility>

namespace tkc::runtime {

/// The result of a check: ok, or an error with its message.
struct Status {
  bool ok = true;
  std::string message;

  static Status success() { return Status{}; }
  static Status error(std::string message) { return Status{false, std::move(message)}; }

  /// True when the check passed.
  explicit operator bool() const { return ok; }
};

namespace detail {

inline std::string toHex(std::uintptr_t value) {
  const char *digits = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), digits[value % 16]);
    value /= 16;
  } while (value != 0);
  return "0x" + text;
}

inline std::string parenthesized(const char *why) {
  return why && *why ? std::string(" (") + why + ")" : std::string();
}

} // namespace detail

/// `p` must be non-null and a multiple of `alignmentBytes` (a power of two;
/// 1 checks only for null).
///   "A must not be null"
///   "A must be 16-byte aligned, got address 0x7f0000000008"
inline Status checkPointer(const void *p, const char *name, unsigned alignmentBytes) {
  if (alignmentBytes == 0 || (alignmentBytes & (alignmentBytes - 1)) != 0)
    return Status::error(std::string("internal error: the alignment checked for ") + name +
                         " must be a power of two, got " + std::to_string(alignmentBytes));
  if (p == nullptr)
    return Status::error(std::string(name) + " must not be null");
  auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address % alignmentBytes != 0)
    return Status::error(std::string(name) + " must be " + std::to_string(alignmentBytes) +
                         "-byte aligned, got address " + detail::toHex(address));
  return Status::success();
}

/// `min <= value <= max`.
///   "M must be between 1 and 2147483647, got 0"
inline Status checkExtent(long long value, const char *name, long long min, long long max) {
  if (min > max)
    return Status::error(std::string("internal error: the range checked for ") + name +
                         " is empty (" + std::to_string(min) + " > " + std::to_string(max) + ")");
  if (value < min || value > max)
    return Status::error(std::string(name) + " must be between " + std::to_string(min) + " and " +
                         std::to_string(max) + ", got " + std::to_string(value));
  return Status::success();
}

/// `value` must be a multiple of `multiple` (positive); `why`, when not null
/// or empty, says why, in parentheses after the expectation.
///   "K must be a multiple of 8 (16-byte rows for TMA), got 100"
inline Status checkMultiple(long long value, const char *name, long long multiple,
                            const char *why) {
  if (multiple <= 0)
    return Status::error(std::string("internal error: the divisor checked for ") + name +
                         " must be positive, got " + std::to_string(multiple));
  if (value % multiple != 0)
    return Status::error(std::string(name) + " must be a multiple of " + std::to_string(multiple) +
                         detail::parenthesized(why) + ", got " + std::to_string(value));
  return Status::success();
}

/// TMA descriptors take global strides below 2^40 bytes.
inline constexpr long long kTmaStrideLimitBytes = 1LL << 40;

/// A row of `elements` elements of `elementBytes` bytes each, as a TMA
/// descriptor's row pitch (global stride): a positive multiple of 16 bytes
/// below 2^40. `name` is the tensor whose rows these are.
///   "rows of A must be a multiple of 16 bytes for TMA, got 100 elements of
///    2 bytes (200 bytes)"
inline Status checkRowBytes(long long elements, unsigned elementBytes, const char *name) {
  if (elementBytes == 0)
    return Status::error(std::string("internal error: the element size of ") + name +
                         " must be positive, got 0");
  std::string found = std::to_string(elements) + " elements of " + std::to_string(elementBytes) +
                      (elementBytes == 1 ? " byte" : " bytes");
  if (elements <= 0)
    return Status::error(std::string("rows of ") + name + " must hold at least one element, got " +
                         found);
  if (elements > (kTmaStrideLimitBytes - 1) / static_cast<long long>(elementBytes))
    return Status::error(std::string("rows of ") + name +
                         " must be shorter than 2^40 bytes for TMA, got " + found);
  long long bytes = elements * static_cast<long long>(elementBytes);
  if (bytes % 16 != 0)
    return Status::error(std::string("rows of ") + name +
                         " must be a multiple of 16 bytes for TMA, got " + found + " (" +
                         std::to_string(bytes) + " bytes)");
  return Status::success();
}

} // namespace tkc::runtime
