/**
 * @file
 * @brief Compilation configuration: host/device qualifiers, unroll macros, arch detection.
 *
 * Everything in kittens that must also compile as plain host C++ (layout arithmetic,
 * swizzle maths, descriptor fields, TMA validation) uses these macros instead of raw
 * CUDA qualifiers, so that `g++` can build the host unit tests without nvcc.
 */
#pragma once

#if defined(__CUDACC__)
#define KITTENS_HOST_DEVICE __host__ __device__ __forceinline__
#define KITTENS_DEVICE __device__ __forceinline__
#define KITTENS_HOST __host__
#define KITTENS_UNROLL _Pragma("unroll")
#define KITTENS_NO_UNROLL _Pragma("unroll 1")
#else
#define KITTENS_HOST_DEVICE inline
#define KITTENS_DEVICE inline
#define KITTENS_HOST
#define KITTENS_UNROLL
#define KITTENS_NO_UNROLL
#endif

/// True while nvcc compiles device code for a Hopper arch-specific target (sm_90a).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KITTENS_SM90A 1
#else
#define KITTENS_SM90A 0
#endif

/// Hopper instructions (wgmma, setmaxnreg) are only legal on sm_90a. Device code built for
/// another target gets a clear error instead of an assembler failure deep in a header.
#if defined(__CUDA_ARCH__) && !KITTENS_SM90A && !defined(KITTENS_ALLOW_NON_SM90A)
#error "kittens: device code must be compiled for sm_90a: use -gencode=arch=compute_90a,code=sm_90a (define KITTENS_ALLOW_NON_SM90A to build the portable subset elsewhere)"
#endif

namespace kittens {

/// Threads in a warp.
inline constexpr int WARP_THREADS = 32;
/// Warps in a warpgroup (the unit that issues wgmma).
inline constexpr int WARPGROUP_WARPS = 4;
/// Threads in a warpgroup.
inline constexpr int WARPGROUP_THREADS = WARP_THREADS * WARPGROUP_WARPS;
/// Largest dynamic shared memory one block may use on H100 (227 KiB).
inline constexpr int MAX_SHARED_MEMORY_SM90 = 227 * 1024;
/// Number of hardware named barriers per block.
inline constexpr int NUM_NAMED_BARRIERS = 16;
/// 32-bit registers per SM on Hopper.
inline constexpr int REGISTERS_PER_SM = 65536;
/// Registers a block of `threads` threads holds from launch to exit, and so all that its
/// warpgroups' setmaxnreg can share out: ptxas gives a kernel that uses setmaxnreg the most
/// registers its launch bounds allow (a multiple of 8 a thread: 128 at 512 threads, 168 at 384),
/// and setmaxnreg.inc only takes registers that a setmaxnreg.dec of the same block gave back. A
/// split asking for more than this waits forever.
constexpr int block_register_pool(int threads) {
  int per_thread = REGISTERS_PER_SM / threads / 8 * 8;
  return (per_thread > 256 ? 256 : per_thread) * threads;
}

} // namespace kittens
