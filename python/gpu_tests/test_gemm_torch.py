"""tkc.load on a real H100: every GEMM instantiation (bf16 or f16 inputs, a bf16, f16 or
f32 output) against an fp32 PyTorch reference on fresh random inputs with poisoned outputs, the argument checks on
real tensors, the current stream and stream=, a ragged shape captured in a CUDA
graph and replayed, a second load that hits the cache, and what the launchers
refuse or do without launching: tensors that require grad, empty problems and
K = 0, an output overlapping an input, host memory, memory or a stream of
another GPU (with two), and memory of PyTorch's expandable segments accepted.
Last, a spec whose globals are named `do` and `new` (C++ keywords, renamed in the
CUDA) loaded and called with those names.

Run by scripts/device-python.sh (needs torch, nvcc and an sm_90 GPU)."""
import os
import subprocess
import sys
import time
import unittest
from pathlib import Path
from unittest import mock

import torch

import tkc

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "kernels-spec" / "gemm.yaml"
# bf16 inputs and output, f32 accumulation: the output rounding alone is
# 2^-9 relative; the bounds leave room for summation order, not for bugs.
REL_FROBENIUS = 1e-2
REL_MAX = 2e-2
# An f32 output is the accumulator itself: only the summation order differs from the
# reference (products of bf16 or f16 numbers are exact in f32). An output rounded through
# bf16 on its way would be off by about 2e-3 and fail these.
F32_OUT_REL_FROBENIUS = 1e-4
F32_OUT_REL_MAX = 2e-4
INSTANCES = 40  # transpose_b x 5 epilogues x half x f32_out


def input_dtype(params):
    return torch.float16 if params["half"] == "true" else torch.bfloat16


def output_dtype(params):
    return torch.float32 if params["f32_out"] == "true" else input_dtype(params)


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
    dtype = input_dtype(params)
    A = torch.randn(M, K, generator=gen, device="cuda").to(dtype)
    B = (torch.randn(N, K, generator=gen, device="cuda") if params["transpose_b"] == "true"
         else torch.randn(K, N, generator=gen, device="cuda")).to(dtype)
    bias = torch.randn(N, generator=gen, device="cuda").to(dtype)
    R = torch.randn(M, N, generator=gen, device="cuda").to(dtype)
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
        print("%-36s rel_fro=%.2e rel_max=%.2e" % (name, fro, mx), file=sys.stderr)
        f32 = got.dtype == torch.float32
        self.assertLess(fro, F32_OUT_REL_FROBENIUS if f32 else REL_FROBENIUS, name)
        self.assertLess(mx, F32_OUT_REL_MAX if f32 else REL_MAX, name)

    def test_every_instance_poisoned_out(self):
        self.assertEqual(len(self.module.kernels), INSTANCES)
        gen = torch.Generator(device="cuda").manual_seed(1234)
        for M, N, K in ((320, 512, 256), (1024, 768, 1024)):  # ragged M, N not a multiple of 256
            for kernel in self.module.kernels.values():
                args, ref = inputs(kernel, M, N, K, gen)
                C = torch.full((M, N), float("nan"), dtype=output_dtype(kernel.params),
                               device="cuda")
                got = kernel(out=C, **args)
                self.assertIs(got, C)
                torch.cuda.synchronize()
                self.check_close("%s %dx%dx%d" % (kernel.name, M, N, K), C, ref)

    def test_allocates_output_and_uses_current_stream(self):
        gen = torch.Generator(device="cuda").manual_seed(99)
        kernel = self.module.kernel(transpose_b=False, epilogue="bias_gelu", half=False,
                                    f32_out=False)
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
        kernel = self.module.kernel(transpose_b=False, epilogue="gelu", half=False, f32_out=False)
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

    def test_requires_grad_is_refused_unless_under_no_grad(self):
        gen = torch.Generator(device="cuda").manual_seed(5)
        kernel = self.module.gemm_bias
        args, ref = inputs(kernel, 256, 256, 128, gen)
        A = args["A"].requires_grad_()
        with self.assertRaisesRegex(RuntimeError, r"^gemm_bias: input 'A' requires grad, and "
                                    r"tkc.load kernels have no backward yet; call them under "
                                    r"torch.no_grad\(\) or pass tensors that do not require "
                                    r"grad$"):
            kernel(A, args["B"], args["bias"])
        with torch.no_grad():
            C = kernel(A, args["B"], args["bias"])
        with torch.inference_mode():
            C2 = kernel(A, args["B"], args["bias"])
        torch.cuda.synchronize()
        self.check_close("requires_grad under no_grad", C, ref)
        self.check_close("requires_grad under inference_mode", C2, ref)

    def test_empty_problems_succeed_without_a_launch_and_k_zero_is_refused(self):
        kernel = self.module.gemm_bias
        A = torch.randn(128, 64, device="cuda").bfloat16()
        B = torch.randn(64, 256, device="cuda").bfloat16()
        bias = torch.randn(256, device="cuda").bfloat16()
        # M = 0 into a C that views a poisoned buffer: success, and the buffer untouched.
        poison = torch.full((128 * 256,), float("nan"), dtype=torch.bfloat16, device="cuda")
        C = poison[:0].view(0, 256)
        self.assertIs(kernel(A[:0], B, bias, out=C), C)
        self.assertEqual(tuple(kernel(A[:0], B, bias).shape), (0, 256))
        # N = 0: B, bias and C have no elements.
        self.assertEqual(tuple(kernel(A, B[:, :0], bias[:0]).shape), (128, 0))
        torch.cuda.synchronize()
        self.assertTrue(torch.isnan(poison).all().item(), "an empty problem wrote memory")
        # K = 0 with a non-empty C: C = A·B would be zeros, which the kernel cannot produce.
        with self.assertRaisesRegex(tkc.LaunchError, "^gemm_bias: K is 0: the loop over K has "
                                    "no stage, and this kernel writes its output only from "
                                    "stages; use a size of at least 1$"):
            kernel(A[:, :0], B[:0], bias)

    def test_output_overlapping_an_input_is_refused(self):
        kernel = self.module.gemm_none
        X = torch.randn(256, 256, device="cuda").bfloat16()
        B = torch.randn(256, 256, device="cuda").bfloat16()
        with self.assertRaisesRegex(tkc.LaunchError, "^gemm_none: output C overlaps input A$"):
            kernel(X, B, out=X)
        # C begins in A's last row: two views of one buffer.
        buf = torch.zeros(2 * 256 * 256, dtype=torch.bfloat16, device="cuda")
        A, C = buf[:256 * 256].view(256, 256), buf[256 * 255:256 * 511].view(256, 256)
        with self.assertRaisesRegex(tkc.LaunchError, "^gemm_none: output C overlaps input A$"):
            kernel(A, B, out=C)
        with self.assertRaisesRegex(tkc.LaunchError, "^gemm_none: output C overlaps input B$"):
            kernel(X, B, out=B)
        torch.cuda.synchronize()
        self.assertEqual(buf.abs().sum().item(), 0.0, "a refused launch wrote memory")

    def test_host_memory_is_refused_by_the_launcher(self):
        # The binding refuses CPU tensors itself; the raw launcher asks CUDA where they live.
        kernel = self.module.gemm_none
        A = torch.randn(128, 64).bfloat16()
        B = torch.randn(64, 256, device="cuda").bfloat16()
        C = torch.empty(128, 256, dtype=torch.bfloat16, device="cuda")
        stream = torch.cuda.current_stream().cuda_stream
        with self.assertRaisesRegex(tkc.LaunchError, "^gemm_none: A is host memory; pass a "
                                    "device pointer$"):
            kernel.launch([A.data_ptr(), B.data_ptr(), C.data_ptr()], [128, 256, 64], stream)
        pinned = A.pin_memory()
        with self.assertRaisesRegex(tkc.LaunchError, "^gemm_none: A is page-locked host memory; "
                                    "pass a device pointer$"):
            kernel.launch([pinned.data_ptr(), B.data_ptr(), C.data_ptr()], [128, 256, 64], stream)

    def test_stream_argument_and_side_stream_allocation(self):
        gen = torch.Generator(device="cuda").manual_seed(11)
        kernel = self.module.kernel(transpose_b=False, epilogue="none", half=False, f32_out=False)
        args, ref = inputs(kernel, 512, 512, 256, gen)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        original = torch.Tensor.record_stream
        recorded = []

        def record_stream(tensor, stream):
            recorded.append((tensor, stream))
            return original(tensor, stream)

        with mock.patch.object(torch.Tensor, "record_stream", record_stream):
            # Allocated on the current stream, written on `side`: recorded on it.
            C = kernel(**args, stream=side)
            self.assertEqual(len(recorded), 1)
            self.assertIs(recorded[0][0], C)
            self.assertIs(recorded[0][1], side)
            # A raw handle: recorded on a stream of that handle.
            C2 = kernel(**args, stream=side.cuda_stream)
            self.assertEqual(len(recorded), 2)
            self.assertIs(recorded[1][0], C2)
            self.assertEqual(recorded[1][1].cuda_stream, side.cuda_stream)
            # Under `side` itself, or into an output the caller gave: nothing to record.
            with torch.cuda.stream(side):
                C3 = kernel(**args, stream=side)
            kernel(**args, out=torch.empty_like(C), stream=side)
            self.assertEqual(len(recorded), 2)
        side.synchronize()
        for name, got in (("stream=", C), ("stream= handle", C2), ("stream= current", C3)):
            self.check_close(name, got, ref)
        with self.assertRaisesRegex(TypeError, "^gemm_none: stream= must be a CUDA stream"):
            kernel(**args, stream="side")

    @unittest.skipUnless(torch.cuda.device_count() >= 2, "needs two GPUs")
    def test_another_devices_stream_and_memory_are_refused(self):
        kernel = self.module.gemm_none
        A = torch.randn(128, 64, device="cuda:0").bfloat16()
        B = torch.randn(64, 256, device="cuda:0").bfloat16()
        with self.assertRaisesRegex(ValueError, "^gemm_none: stream= is a stream of cuda:1 but "
                                    "the tensors are on cuda:0"):
            kernel(A, B, stream=torch.cuda.Stream(device=1))
        B1 = B.to("cuda:1")
        C = torch.empty(128, 256, dtype=torch.bfloat16, device="cuda:0")
        with torch.cuda.device(0):
            with self.assertRaisesRegex(tkc.LaunchError, "^gemm_none: B lives on device 1, the "
                                        "launch runs on device 0$"):
                kernel.launch([A.data_ptr(), B1.data_ptr(), C.data_ptr()], [128, 256, 64],
                              torch.cuda.current_stream(0).cuda_stream)

    def test_expandable_segments_memory_is_device_memory(self):
        # PyTorch maps these segments with the driver's virtual memory calls; the launcher must
        # still see them as device memory of this GPU. In a new process, so that the allocator
        # starts with the setting; the library comes from the cache.
        code = ("import torch, tkc; k = tkc.load(%r).gemm_none; "
                "A = torch.randn(384, 256, device='cuda').bfloat16(); "
                "B = torch.randn(256, 512, device='cuda').bfloat16(); C = k(A, B); "
                "ref = A.float() @ B.float(); torch.cuda.synchronize(); "
                "print(((C.float() - ref).norm() / ref.norm()).item())" % str(GEMM))
        env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(float(r.stdout.split()[-1]), REL_FROBENIUS, r.stdout)

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
        self.assertTrue(r.stdout.startswith("True %d " % INSTANCES), r.stdout)


class RenamedNames(unittest.TestCase):
    def test_keywords_as_names_compile_and_keep_their_names(self):
        """gemm_swiglu.yaml with its weights named `do` and `new`, C++ keywords: the CUDA
        renames them (tkc_u_do), the manifest and so tkc.load keep them: `do=` and `new=`."""
        import tempfile
        text = (ROOT / "kernels-spec" / "gemm_swiglu.yaml").read_text()
        for old, new in (("B1", "do"), ("B2", "new")):
            text = text.replace(old + ":", new + ":").replace(old + "[", new + "[")
        with tempfile.TemporaryDirectory() as d:
            spec = Path(d) / "keywords.yaml"
            spec.write_text(text)
            kernel = next(iter(tkc.load(spec).kernels.values()))
        self.assertEqual([a.name for a in kernel.info.arguments], ["A", "do", "new", "C"])
        gen = torch.Generator(device="cuda").manual_seed(5)
        A = torch.randn(200, 136, generator=gen, device="cuda").bfloat16()
        W1 = (torch.randn(136, 264, generator=gen, device="cuda") / 8).bfloat16()
        W2 = (torch.randn(136, 264, generator=gen, device="cuda") / 8).bfloat16()
        C = torch.full((200, 264), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(A, **{"do": W1, "new": W2}, out=C)
        torch.cuda.synchronize()
        ref = torch.nn.functional.silu(A.float() @ W1.float()) * (A.float() @ W2.float())
        err = ((C.float() - ref).norm() / ref.norm()).item()
        print("keywords as names: rel_fro=%.2e" % err, file=sys.stderr)
        self.assertFalse(torch.isnan(C).any().item())
        self.assertLess(err, REL_FROBENIUS)


class Accumulate(unittest.TestCase):
    def test_adds_into_c(self):
        """test/Emit/gemm-accumulate.yaml: C += A B (TMA reduce-add), C bf16 or f32, against
        C0 + A B in fp32, at ragged and whole shapes; C must be passed (it is read), and a
        call on C's result adds again."""
        module = tkc.load(ROOT / "test" / "Emit" / "gemm-accumulate.yaml")
        gen = torch.Generator(device="cuda").manual_seed(11)
        for kernel in module.kernels.values():
            f32 = kernel.params.get("f32_out") == "true"
            dtype = torch.float32 if f32 else torch.bfloat16
            for M, N, K in ((320, 512, 256), (1024, 768, 1024), (130, 264, 64)):
                A = torch.randn(M, K, generator=gen, device="cuda").bfloat16()
                B = (torch.randn(K, N, generator=gen, device="cuda") / 8).bfloat16()
                C0 = torch.randn(M, N, generator=gen, device="cuda").to(dtype)
                C = C0.clone()
                got = kernel(A, B, out=C)
                self.assertIs(got, C)
                torch.cuda.synchronize()
                ref = C0.float() + A.float() @ B.float()
                name = "%s %dx%dx%d C += A B" % (kernel.name, M, N, K)
                err = ((C.float() - ref).norm() / ref.norm()).item()
                print("%-36s rel_fro=%.2e" % (name, err), file=sys.stderr)
                self.assertFalse(torch.isnan(C).any().item(), name)
                self.assertLess(err, F32_OUT_REL_FROBENIUS if f32 else REL_FROBENIUS, name)
                kernel(A, B, out=C)  # again: C0 + 2 A B
                torch.cuda.synchronize()
                ref2 = C0.float() + 2 * (A.float() @ B.float())
                err2 = ((C.float() - ref2).norm() / ref2.norm()).item()
                self.assertLess(err2, F32_OUT_REL_FROBENIUS if f32 else REL_FROBENIUS,
                                name + " twice")
            with self.assertRaisesRegex(ValueError, "is added into"):
                kernel(A, B)


class TransposedA(unittest.TestCase):
    def test_a_stored_k_major(self):
        """test/Emit/gemm-transpose-a.yaml: C = At^T B and At^T Bt^T with At [K, M], against
        fp32 at ragged and whole shapes, C poisoned."""
        module = tkc.load(ROOT / "test" / "Emit" / "gemm-transpose-a.yaml")
        gen = torch.Generator(device="cuda").manual_seed(13)
        for kernel in module.kernels.values():
            tb = kernel.params.get("transpose_b") == "true"
            for M, N, K in ((320, 512, 256), (1024, 768, 1024), (136, 264, 72), (8, 8, 8)):
                At = torch.randn(K, M, generator=gen, device="cuda").bfloat16()
                B = (torch.randn(K, N, generator=gen, device="cuda") / 8).bfloat16()
                C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                second = B.t().contiguous() if tb else B
                got = kernel(At, second, out=C)
                self.assertIs(got, C)
                torch.cuda.synchronize()
                ref = At.float().t() @ B.float()
                name = "%s %dx%dx%d C = At^T B" % (kernel.name, M, N, K)
                err = ((C.float() - ref).norm() / ref.norm()).item()
                print("%-36s rel_fro=%.2e" % (name, err), file=sys.stderr)
                self.assertFalse(torch.isnan(C).any().item(), name)
                self.assertLess(err, REL_FROBENIUS, name)


if __name__ == "__main__":
    unittest.main()
