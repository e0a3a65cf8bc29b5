"""The loader against the real tkc (and nvcc, when present): the manifest it
writes, the shim compiled against the generated header, and a call through
ctypes that the launcher refuses before touching a GPU.

tkc comes from $TKC_EXECUTABLE or this tree's build/bin/tkc; nvcc as the
loader finds it. Set TKC_REQUIRE_TOOLS=1 (scripts/test.sh does) to make a
missing tool a failure instead of a skip."""
import os
import tempfile
import unittest
from pathlib import Path

from tkc import builder as B
from tkc.errors import LaunchError, ToolNotFoundError
from tkc.manifest import parse_manifest
from tkc.runtime import Module, load_library
from tkc.shim import generate_shim

from .fakes import DATA, FakeBackend, FakeTensor

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "kernels-spec" / "gemm.yaml"
REQUIRE = os.environ.get("TKC_REQUIRE_TOOLS") == "1"


def tool(find):
    try:
        return find()
    except ToolNotFoundError as e:
        if REQUIRE:
            raise
        raise unittest.SkipTest(str(e))


class RealTkc(unittest.TestCase):
    def test_manifest_of_every_gemm_instance(self):
        tkc = tool(B.find_tkc)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "gemm.json"
            B._run([tkc, GEMM, "--emit=manifest", "-o", out], "tkc")
            m = parse_manifest(out.read_text())
        self.assertEqual(len(m.kernels), 40)
        names = {k.name: k for k in m.kernels}
        # The dtypes chosen per instantiation reach the manifest.
        self.assertEqual([a.dtype for a in names["gemm_none_half_f32_out"].arguments],
                         ["f16", "f16", "f32"])
        self.assertEqual([a.dtype for a in names["gemm_none_half"].arguments],
                         ["f16", "f16", "f16"])
        self.assertEqual([a.name for a in names["gemm_transpose_b_residual"].arguments],
                         ["A", "Bt", "C", "R"])
        self.assertEqual(names["gemm_transpose_b_residual"].arguments[1].dims, ("N", "K"))
        for k in m.kernels:
            self.assertEqual([a.name for a in k.outputs], ["C"], k.name)
            self.assertEqual(k.sizes, ("M", "N", "K"), k.name)
            self.assertEqual(k.scalars, (), k.name)


class RealBuild(unittest.TestCase):
    def test_build_load_and_refuse_without_a_gpu(self):
        toolchain = tool(B.find_toolchain)
        with tempfile.TemporaryDirectory() as cache:
            built = B.build(GEMM, {"transpose_b": False, "epilogue": "bias", "half": False,
                                   "f32_out": False}, toolchain=toolchain, cache_dir=cache,
                            verbose=False)
            self.assertFalse(built.from_cache)
            self.assertEqual([k.name for k in built.manifest.kernels], ["gemm_bias"])
            module = load_library(built, backend_factory=None)
            self.assertEqual(list(module.kernels), ["gemm_bias"])
            with self.assertRaisesRegex(AttributeError, "no kernel 'gemm_gelu' in gemm.yaml; "
                                        "kernels: gemm_bias"):
                module.gemm_gelu
            # The launcher checks sizes, pointers and overlaps before it touches the
            # device, so its answers come back through ctypes on a machine without a GPU.
            # A, B, C, bias apart: 1 MiB each.
            apart = [0x100000, 0x200000, 0x300000, 0x400000]
            k = module.gemm_bias
            k_is_0 = ("^gemm_bias: K is 0: the loop over K has no stage, and this kernel writes "
                      "its output only from stages; use a size of at least 1$")
            with self.assertRaisesRegex(LaunchError, k_is_0):
                k.launch(apart, [128, 256, 0])
            with self.assertRaisesRegex(LaunchError, k_is_0):
                k.launch(apart, [128, 256, 0], 0, ())
            with self.assertRaisesRegex(LaunchError, "^gemm_bias: M must be between 0 and "
                                        "2147483647, got -1$"):
                k.launch(apart, [-1, 256, 64])
            with self.assertRaisesRegex(LaunchError, "^gemm_bias: output C overlaps input bias$"):
                k.launch([0x100000, 0x200000, 0x300000, 0x300100], [128, 256, 64])
            # An empty C: success without a launch and without a CUDA call (which would fail
            # here). Globals without elements may be null: A and C at M = 0; B, C and bias at
            # N = 0; every one at M = N = 0.
            k.launch([0, 0x200000, 0, 0x400000], [0, 256, 64])
            k.launch([0x100000, 0, 0, 0], [128, 0, 64])
            k.launch([0, 0, 0, 0], [0, 0, 0])
            # A global with elements is checked still.
            with self.assertRaisesRegex(LaunchError, "^gemm_bias: B must not be null$"):
                k.launch([0, 0, 0, 0x400000], [0, 256, 64])
            # Arguments it cannot fault: it asks CUDA, which refuses these host addresses on
            # a GPU machine, or cannot start at all without a driver. Never a launch.
            with self.assertRaisesRegex(LaunchError, "^gemm_bias: (A is host memory; pass a "
                                        "device pointer|CUDA cannot launch in this process: "
                                        "cuda|an earlier CUDA error is pending)"):
                k.launch(apart, [128, 256, 64])
            again = B.build(GEMM, {"f32_out": False, "epilogue": "bias", "half": False,
                                   "transpose_b": False},
                            toolchain=toolchain, cache_dir=cache, verbose=False)
            self.assertTrue(again.from_cache)
            self.assertEqual(again.library, built.library)


# Launchers with the attention signature whose refusal message echoes every
# argument they received, so the test sees what crossed ctypes and the shim.
STUB_HEADER = """\
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <tkc/runtime/Check.h>
#define TKC_STUB_ARGS \\
  const __nv_bfloat16 *Q, const __nv_bfloat16 *K, const __nv_bfloat16 *V, __nv_bfloat16 *O, \\
      float *L, long long B, long long H, long long N, long long H_kv, float scale
namespace tkc::kernels {
tkc::runtime::Status attention_fwd_D64(TKC_STUB_ARGS, cudaStream_t stream = 0);
tkc::runtime::Status attention_fwd_D128_causal(TKC_STUB_ARGS, cudaStream_t stream = 0);
}
"""
STUB_SOURCE = """\
#include "attention_fwd.h"
#include <cstdio>
namespace tkc::kernels {
static tkc::runtime::Status echo(const char *name, const void *Q, const void *K, const void *V,
                                 const void *O, const void *L, long long B, long long H,
                                 long long N, long long H_kv, float scale, cudaStream_t stream) {
  char text[512];
  std::snprintf(text, sizeof text,
                "%s: Q=%p K=%p V=%p O=%p L=%p B=%lld H=%lld N=%lld H_kv=%lld scale=%.9g "
                "stream=%p", name, Q, K, V, O, L, B, H, N, H_kv, scale, (void *)stream);
  return tkc::runtime::Status::error(text);
}
tkc::runtime::Status attention_fwd_D64(TKC_STUB_ARGS, cudaStream_t stream) {
  return echo("attention_fwd_D64", Q, K, V, O, L, B, H, N, H_kv, scale, stream);
}
tkc::runtime::Status attention_fwd_D128_causal(TKC_STUB_ARGS, cudaStream_t stream) {
  return echo("attention_fwd_D128_causal", Q, K, V, O, L, B, H, N, H_kv, scale, stream);
}
}
"""


class ShimWithScalars(unittest.TestCase):
    """The shim of a manifest with a scalar and two outputs, compiled with
    nvcc against launchers of that signature: pointers, sizes, the scalar
    (converted to float) and the stream arrive in order. No GPU needed."""

    def test_arguments_cross_the_shim_in_order(self):
        nvcc = tool(B.find_nvcc)
        manifest = parse_manifest((DATA / "attention_fwd.json").read_text())
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "attention_fwd.h").write_text(STUB_HEADER)
            (tmp / "stub.cu").write_text(STUB_SOURCE)
            (tmp / "shim.cu").write_text(generate_shim(manifest, "attention_fwd.h"))
            library = tmp / "libstub.so"
            B._run([nvcc, manifest.nvcc_gencode, *B.BASE_NVCC_FLAGS, "-I" + str(tmp),
                    "-I" + str(ROOT / "runtime" / "include"), tmp / "stub.cu", tmp / "shim.cu",
                    "-o", library], "nvcc")
            backend = FakeBackend()
            module = Module(manifest, library, tmp, False, lambda: backend)
            k = module.attention_fwd_D64
            with self.assertRaises(LaunchError) as cm:
                k.launch([0x1000, 0x2000, 0x3000, 0x4000, 0x5000], [2, 8, 100, 2], 0x77, [0.3])
            self.assertEqual(str(cm.exception),
                             "attention_fwd_D64: Q=0x1000 K=0x2000 V=0x3000 O=0x4000 L=0x5000 "
                             "B=2 H=8 N=100 H_kv=2 scale=0.300000012 stream=0x77")
            # Through a call: the default scale, then one given by name.
            Q = FakeTensor((1, 4, 17, 128), ptr=0x1000)
            K = FakeTensor((1, 2, 17, 128), ptr=0x2000)
            with self.assertRaisesRegex(LaunchError, r"^attention_fwd_D128_causal: .* B=1 H=4 "
                                        r"N=17 H_kv=2 scale=0.0883883461 stream=\(nil\)$"):
                module.attention_fwd_D128_causal(Q, K, K)
            with self.assertRaisesRegex(LaunchError, r" scale=-2.5 stream="):
                module.attention_fwd_D128_causal(Q, K, K, scale=-2.5)
            O, L = backend.allocated[-2:]
            self.assertEqual((O.shape, O.dtype, L.shape, L.dtype),
                             ((1, 4, 17, 128), "bf16", (1, 4, 17), "f32"))


if __name__ == "__main__":
    unittest.main()
