//===- Check.h - Argument checks for generated launchers --------*- C++ -*-===//
//
// Part of tkc. See runtime/README.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a generated host launcher checks before it launches a kernel:
/// pointers (non-null, aligned), extents (within range, divisible), row
/// pitches that TMA can address, outputs that share no byte with another
/// global, and where memory lives (the launcher asks CUDA, this header judges
/// the answer). Each check returns a Status instead of throwing or aborting,
/// so the launcher can hand the message to its caller.
///
/// Messages name the argument, say what was expected and what was found, and
/// have no final period, e.g. "K must be a multiple of 8 (16-byte rows for
/// TMA), got 100". A check misused by the generated code (an alignment that
/// is not a power of two, an empty range) fails with a message that starts
/// with "internal error: ", which is a bug in tkc, not in the caller's data.
///
/// Header-only, plain C++17, no CUDA headers: it compiles with g++, clang++
/// and nvcc alike. What needs the CUDA runtime (cudaPointerGetAttributes,
/// cudaPeekAtLastError) is in the generated code, which passes its results
/// here.
///
//===----------------------------------------------------------------------===//
#pragma once

#include <climits>
#include <cstdint>
#include <initializer_list>
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
///   "M must be between 0 and 2147483647, got -1"
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

/// The elements of a contiguous tensor of these extents: 0 when one of them is
/// 0 or less, LLONG_MAX when the product does not fit in a long long.
inline long long elementCount(std::initializer_list<long long> extents) {
  long long count = 1;
  bool saturated = false;
  for (long long extent : extents) {
    if (extent <= 0)
      return 0;
    if (count > LLONG_MAX / extent)
      saturated = true;
    else
      count *= extent;
  }
  return saturated ? LLONG_MAX : count;
}

/// The bytes of one of a launcher's globals: `elements` contiguous elements of
/// `elementBytes` bytes from `data`; `written` when the kernel stores to them.
/// A span without elements has no bytes, wherever `data` points (null too).
struct Span {
  const char *name;
  const void *data;
  long long elements;
  unsigned elementBytes;
  bool written;
};

namespace detail {

/// One past a span's last byte, or the end of the address space when that is
/// further than the address space reaches.
inline std::uintptr_t endOf(const Span &span) {
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(span.data);
  const std::uintptr_t room = UINTPTR_MAX - begin;
  const auto elements = static_cast<unsigned long long>(span.elements);
  if (elements > room / span.elementBytes)
    return UINTPTR_MAX;
  return begin + static_cast<std::uintptr_t>(elements * span.elementBytes);
}

} // namespace detail

/// No span the kernel writes shares a byte with another span (read, written or
/// unused): a kernel that wrote memory it also reads, or two outputs in the
/// same bytes, would compute from partly written data. Spans without elements
/// share nothing; two spans that are only read may overlap. The first overlap
/// in the order given, by a written span, is reported:
///   "output C overlaps input A"
///   "output O overlaps output L"
inline Status checkDisjoint(std::initializer_list<Span> spans) {
  for (const Span &span : spans)
    if (span.elementBytes == 0)
      return Status::error(std::string("internal error: the element size of ") + span.name +
                           " must be positive, got 0");
  for (const Span &out : spans) {
    if (!out.written || out.elements <= 0)
      continue;
    const auto outBegin = reinterpret_cast<std::uintptr_t>(out.data);
    const std::uintptr_t outEnd = detail::endOf(out);
    for (const Span &other : spans) {
      if (&other == &out || other.elements <= 0)
        continue;
      const auto otherBegin = reinterpret_cast<std::uintptr_t>(other.data);
      if (outBegin < detail::endOf(other) && otherBegin < outEnd)
        return Status::error(std::string("output ") + out.name + " overlaps " +
                             (other.written ? "output " : "input ") + other.name);
    }
  }
  return Status::success();
}

/// Where memory lives, as cudaPointerGetAttributes tells it (the values of
/// cudaMemoryType, without CUDA's headers).
enum class MemoryType : int { Unregistered = 0, Host = 1, Device = 2, Managed = 3 };

/// Memory a kernel reads or writes must be device memory of the device the
/// launch runs on (`launchDevice`), or managed memory, which migrates to
/// whichever device touches it. `memoryDevice` is the device CUDA reports for
/// the memory (read for device memory only).
///   "A is host memory; pass a device pointer"
///   "A is page-locked host memory; pass a device pointer"
///   "A lives on device 1, the launch runs on device 0"
inline Status checkMemory(const char *name, MemoryType type, int memoryDevice, int launchDevice) {
  switch (type) {
  case MemoryType::Managed:
    return Status::success();
  case MemoryType::Device:
    if (memoryDevice == launchDevice)
      return Status::success();
    return Status::error(std::string(name) + " lives on device " + std::to_string(memoryDevice) +
                         ", the launch runs on device " + std::to_string(launchDevice));
  case MemoryType::Host:
    return Status::error(std::string(name) + " is page-locked host memory; pass a device pointer");
  case MemoryType::Unregistered:
    return Status::error(std::string(name) + " is host memory; pass a device pointer");
  }
  return Status::error(std::string(name) + " is memory of a kind tkc does not know (type " +
                       std::to_string(static_cast<int>(type)) + "); pass a device pointer");
}

/// The refusal of a launch that found a CUDA error already recorded before it
/// did anything (`errorName`, `errorText`: cudaGetErrorName and
/// cudaGetErrorString of cudaPeekAtLastError). The launcher then calls
/// cudaGetLastError, which clears an error left by an earlier asynchronous
/// launch or call; `persists`: the error was still there after that (a sticky
/// error of the context, or CUDA that cannot start, as without a driver).
///   "an earlier CUDA error is pending: cudaErrorInvalidConfiguration (invalid
///    configuration argument); it was not caused by this launch, which cleared
///    it and launched nothing"
///   "CUDA cannot launch in this process: cudaErrorIllegalAddress (an illegal
///    memory access was encountered) persists after cudaGetLastError; it was
///    not caused by this launch, which launched nothing"
inline Status pendingCudaError(const char *errorName, const char *errorText, bool persists) {
  std::string error = std::string(errorName) + " (" + errorText + ")";
  if (persists)
    return Status::error("CUDA cannot launch in this process: " + error +
                         " persists after cudaGetLastError; it was not caused by this launch, "
                         "which launched nothing");
  return Status::error("an earlier CUDA error is pending: " + error +
                       "; it was not caused by this launch, which cleared it and launched nothing");
}

} // namespace tkc::runtime
