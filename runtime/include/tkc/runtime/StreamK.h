//===- StreamK.h - What generated stream-K launchers report -----*- C++ -*-===//
//
// Part of tkc. See runtime/README.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A generated launcher whose kernel shares a last partial wave out by loop steps
/// (`last_wave: stream_k`) runs its stream-K kernel only where that pays and can run, and its
/// whole-tile kernel otherwise. This counts, for the process, the launches that ran a
/// stream-K kernel, so that a caller (a test, a benchmark) can tell which one ran.
///
/// Header-only, plain C++17, no CUDA headers.
///
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>

namespace tkc::runtime {

/// The process's count of launches that ran a stream-K kernel (launchers add to it).
inline std::atomic<long long> &streamKLaunchCounter() {
  static std::atomic<long long> count{0};
  return count;
}

/// Launches that ran a stream-K kernel so far in this process.
inline long long streamKLaunches() { return streamKLaunchCounter().load(); }

} // namespace tkc::runtime
