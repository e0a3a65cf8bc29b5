"""tkc.load on a real H100: every GEMM instantiation against an fp32 PyTorch
reference on fresh random inputs with poisoned outputs, the argument checks on
real tensors, the current stream, a ragged shape captured in a CUDA graph and
replayed, and a second load that hits the cache.

Run by scripts/device-python.sh (needs torch, nvcc and an sm_90 GPU)."""
import os
import subprocess
import sys
import time
import unittest
from pathlib import Path

import torch

import tkc

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "kernels-spec" / "gemm.yaml"
# bf16 inputs and output, f32 accumulation: the output rounding alone is
# 2^-9 relative; the bounds leave room for summation order, not for bugs.
REL_FROBENIUS = 1e-2
REL_MAX = 2e-2


def reference(params, A, B, bias, R):
    ref = A.float() @ (B.float().t() if params["transpose_b"] == "true" else B.float())
    ep = params["epilogue"]
    if ep in ("bias", "bias_gelu"):
        ref = ref + bias.float()
    if ep in ("gelu", "bias_gelu"):
        ref = torch.nn.functional.gelu(ref, approximate="tanh")
    if ep == "residual":
        ref = ref + R.float()
    return ref


def inputs(kernel, M, N, K, gen):
    params = kernel.params
    A = torch.randn(M, K, generator=gen, device="cuda").bfloat16()
    B = (torch.randn(N, K, generator=gen, device="cuda") if params["transpose_b"] == "true"
         else torch.randn(K, N, generator=gen, device="cuda")).bfloat16()
    bias = torch.randn(N, generator=gen, device="cuda").bfloat16()
    R = torch.randn(M, N, generator=gen, device="cuda").bfloat16()
    args = {"A": A, "Bt" if params["transpose_b"] == "true" else "B": B}
    if params["epilogue"] in ("bias", "bias_gelu"):
        args["bias"] = bias
    if params["epilogue"] == "residual":
        args["R"] = R
    return args, reference(params, A, B, bias, R)


class GemmOnGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start = time.monotonic()
        cls.module = tkc.load(GEMM)
        cls.load_seconds = time.monotonic() - start
        print("\nfirst load: %d kernels, from_cache=%s, %.1f s, %s"
              % (len(cls.module.kernels), cls.module.from_cache, cls.load_seconds,
                 cls.module.cache_dir), file=sys.stderr)

    def check_close(self, name, got, ref):
        self.assertFalse(torch.isnan(got).any().item(), "%s: NaN in the output" % name)
        err = (got.float() - ref)
        fro = (err.norm() / ref.norm()).item()
        mx = (err.abs().max() / ref.abs().max()).item()
        print("%-28s rel_fro=%.2e rel_max=%.2e" % (name, fro, mx), file=sys.stderr)
        self.assertLess(fro, REL_FROBENIUS, name)
        self.assertLess(mx, REL_MAX, name)

    def test_every_instance_poisoned_out(self):
        self.assertEqual(len(self.module.kernels), 10)
        gen = torch.Generator(device="cuda").manual_seed(1234)
        for M, N, K in ((320, 512, 256), (1024, 768, 1024)):  # ragged M, N not a multiple of 256
            for kernel in self.module.kernels.values():
                args, ref = inputs(kernel, M, N, K, gen)
                C = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                got = kernel(out=C, **args)
                self.assertIs(got, C)
                torch.cuda.synchronize()
                self.check_close("%s %dx%dx%d" % (kernel.name, M, N, K), C, ref)

    def test_allocates_output_and_uses_current_stream(self):
        gen = torch.Generator(device="cuda").manual_seed(99)
        kernel = self.module.kernel(transpose_b=False, epilogue="bias_gelu")
        args, ref = inputs(kernel, 512, 1024, 512, gen)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            C = kernel(args["A"], args["B"], args["bias"])
        side.synchronize()
        self.assertEqual((tuple(C.shape), C.dtype), ((512, 1024), torch.bfloat16))
        self.check_close("allocated, side stream", C, ref)

    def test_argument_errors_on_real_tensors(self):
        k = self.module.gemm_bias
        A = torch.randn(128, 64, device="cuda").bfloat16()
        B = torch.randn(64, 256, device="cuda").bfloat16()
        bias = torch.randn(256, device="cuda").bfloat16()
        with self.assertRaisesRegex(TypeError, "input 'A' has dtype torch.float32; expected "
                                    "torch.bfloat16"):
            k(A.float(), B, bias)
        with self.assertRaisesRegex(ValueError, "input 'A' is on cpu"):
            k(A.cpu(), B, bias)
        with self.assertRaisesRegex(ValueError, "input 'B' is not contiguous"):
            k(A, torch.randn(256, 64, device="cuda").bfloat16().t(), bias)
        with self.assertRaisesRegex(ValueError, "input 'B' has K=32"):
            k(A, B[:32], bias)
        # Rows of 36 bf16 (72 bytes) break TMA's 16-byte pitch: the launcher
        # refuses, and the refusal is raised, nothing launched.
        A36 = torch.randn(128, 36, device="cuda").bfloat16()
        B36 = torch.randn(36, 256, device="cuda").bfloat16()
        with self.assertRaisesRegex(tkc.LaunchError, "^gemm_bias: .*16 bytes"):
            k(A36, B36, bias)

    def test_ragged_shape_under_cuda_graph_replay(self):
        # 18 x 11 tiles of 35 steps, ragged in M, N and K: more tiles than an H100's blocks,
        # so a last partial wave. Captured in a CUDA graph and replayed with fresh inputs, every
        # replay must be right.
        gen = torch.Generator(device="cuda").manual_seed(7)
        kernel = self.module.kernel(transpose_b=False, epilogue="gelu")
        M, N, K = 2250, 2760, 2200
        args, ref = inputs(kernel, M, N, K, gen)
        C = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
        kernel(out=C, **args)
        torch.cuda.synchronize()
        self.check_close("ragged shape", C, ref)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            kernel(out=C, **args)
        for r in range(3):
            args["A"].copy_(torch.randn(M, K, generator=gen, device="cuda").bfloat16())
            ref = reference(kernel.params, args["A"], args["B"], None, None)
            C.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            self.check_close("ragged shape, graph replay %d" % r, C, ref)

    def test_second_load_hits_the_cache(self):
        start = time.monotonic()
        again = tkc.load(GEMM)
        seconds = time.monotonic() - start
        self.assertTrue(again.from_cache)
        self.assertEqual(again.library_path, self.module.library_path)
        # A new process finds the library on disk and compiles nothing.
        code = ("import sys, time, tkc; t = time.monotonic(); m = tkc.load(%r); "
                "print(m.from_cache, len(m.kernels), round(time.monotonic() - t, 2))" % str(GEMM))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=os.environ.copy())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("tkc: building", r.stderr)
        print("second load: in-process %.3f s; new process: %s" % (seconds, r.stdout.strip()),
              file=sys.stderr)
        self.assertTrue(r.stdout.startswith("True 10 "), r.stdout)


if __name__ == "__main__":
    unittest.main()
