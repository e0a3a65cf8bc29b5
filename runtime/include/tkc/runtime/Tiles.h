//===- Tiles.h - How a generated launcher cuts a loop into tiles -*- C++ -*-===//
//
// Part of tkc. See runtime/README.md.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A loop with a tail (`tail: {j: T}` in a spec) covers its extent with tiles
/// of the loop's step followed by tiles of T, fewer elements: coverWithTail
/// picks how many of each. Header-only, plain C++17.
///
//===----------------------------------------------------------------------===//
#pragma once

namespace tkc::runtime {

/// `full` tiles of the step, then `tail` tiles of the tail's width.
struct TailCover {
  long long full = 0, tail = 0;
};

/// The tiles covering `extent` elements with the fewest elements computed past
/// its end, and of those covers the fewest tiles (then the most of full width).
/// Every tail tile is narrower than a full one, so a cover needs at most
/// step / gcd(step, tail) - 1 fewer full tiles than fit in the extent: those
/// candidates are all tried. `step` > `tail` > 0; an `extent` < 1 has no tiles.
inline TailCover coverWithTail(long long extent, long long step, long long tail) {
  TailCover best;
  if (extent < 1 || step < 1 || tail < 1 || tail >= step)
    return best;
  long long a = step, b = tail;
  while (b != 0) {
    long long r = a % b;
    a = b;
    b = r;
  }
  const long long period = tail / a;      // full tiles between repeats of the remainder's residue
  best.full = (extent + step - 1) / step; // full tiles only
  long long bestPast = best.full * step - extent;
  for (long long full = extent / step, n = 0; full >= 0 && n < period; --full, ++n) {
    const long long rest = extent - full * step;
    const long long tails = (rest + tail - 1) / tail;
    const long long past = full * step + tails * tail - extent;
    const long long tiles = full + tails, bestTiles = best.full + best.tail;
    if (past < bestPast || (past == bestPast && tiles < bestTiles)) {
      best = TailCover{full, tails};
      bestPast = past;
    }
  }
  return best;
}

} // namespace tkc::runtime
