/**
 * @file
 * @brief 4-D row-major global tensor layout with compile-time or run-time dims.
 *
 * `gl<T, B, D, R, C>`: each dim is a compile-time constant (> 0) or run-time (-1).
 * The last dim (columns) is contiguous; the rows, depth and batch are packed unless the
 * constructor is given their element strides (a permuted layout, e.g. [B, N, H, D] memory
 * indexed as [B, H, N, D]). A run-time dim that contradicts a compile-time one
 * (or is not positive) throws std::invalid_argument from the host constructor.
 */
#pragma once

#include <stdexcept>
#include <string>

#include "../../common/base_types.cuh"
#include "coord.cuh"

namespace kittens {

template <class T, int B = -1, int D = -1, int R = -1, int C = -1> struct gl {
  static_assert(memory_type<T>, "kittens::gl: dtype must be float, bf16, half or an fp8 type");
  static_assert(B != 0 && D != 0 && R != 0 && C != 0, "kittens::gl: a dim is either > 0 (compile time) or -1 (run time), never 0");
  using identifier = gl;
  using dtype = T;
  T *raw = nullptr;
  int b_ = B > 0 ? B : 1, d_ = D > 0 ? D : 1, r_ = R > 0 ? R : 1, c_ = C > 0 ? C : 1;
  int64_t rs_ = 0, ds_ = 0, bs_ = 0; ///< element strides given at construction; 0: packed

  gl() = default;
  /// Wrap `ptr` with dims (b, d, r, c). A compile-time dim must equal the given value.
  KITTENS_HOST_DEVICE gl(T *ptr, int b, int d, int r, int c) : raw(ptr), b_(b), d_(d), r_(r), c_(c) {
#if !defined(__CUDA_ARCH__)
    check_dim("batch", B, b);
    check_dim("depth", D, d);
    check_dim("rows", R, r);
    check_dim("cols", C, c);
#endif
  }
  /// Wrap `ptr` with dims (b, d, r, c) whose rows, depth and batch lie the given numbers of
  /// elements apart.
  KITTENS_HOST_DEVICE gl(T *ptr, int b, int d, int r, int c, int64_t row_stride, int64_t depth_stride,
                         int64_t batch_stride)
      : gl(ptr, b, d, r, c) {
    rs_ = row_stride;
    ds_ = depth_stride;
    bs_ = batch_stride;
  }

  KITTENS_HOST_DEVICE int batch() const { if constexpr (B > 0) return B; else return b_; }
  KITTENS_HOST_DEVICE int depth() const { if constexpr (D > 0) return D; else return d_; }
  KITTENS_HOST_DEVICE int rows() const { if constexpr (R > 0) return R; else return r_; }
  KITTENS_HOST_DEVICE int cols() const { if constexpr (C > 0) return C; else return c_; }
  /// Element strides of each dim.
  KITTENS_HOST_DEVICE int64_t row_stride() const { return rs_ ? rs_ : cols(); }
  KITTENS_HOST_DEVICE int64_t depth_stride() const { return ds_ ? ds_ : int64_t(rows()) * cols(); }
  KITTENS_HOST_DEVICE int64_t batch_stride() const { return bs_ ? bs_ : int64_t(depth()) * rows() * cols(); }
  /// The view of rows [first, first + count) of every batch and depth: the same strides, its
  /// row 0 at row `first` (a sequence of a packed batch).
  KITTENS_HOST_DEVICE gl row_window(int64_t first, int count) const {
    static_assert(R == -1, "kittens::gl::row_window: the rows must be a run-time dim");
    gl v = *this;
    v.rs_ = row_stride();
    v.ds_ = depth_stride();
    v.bs_ = batch_stride();
    v.raw = raw + first * v.rs_;
    v.r_ = count;
    return v;
  }
  /// Element at an element coordinate.
  KITTENS_HOST_DEVICE T &operator[](coord e) const { return *ptr(e); }
  /// Pointer to an element coordinate.
  KITTENS_HOST_DEVICE T *ptr(coord e) const {
    return raw + int64_t(e.b) * batch_stride() + int64_t(e.d) * depth_stride() + int64_t(e.r) * row_stride() + e.c;
  }

private:
  static void check_dim(const char *name, int want, int got) {
    if (got <= 0 || (want > 0 && want != got))
      throw std::invalid_argument(std::string("kittens::gl: ") + name + " is " + std::to_string(got) + " but the layout " +
                                  (want > 0 ? "fixes it at compile time to " + std::to_string(want) : std::string("needs a positive size")));
  }
};

namespace ducks::gl {
template <class X> concept all = requires { typename X::identifier; typename X::dtype; } && requires(const X &x) {
  x.raw; x.rows(); x.cols(); x.depth(); x.batch();
};
} // namespace ducks::gl

} // namespace kittens
