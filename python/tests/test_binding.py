"""tkc.binding and tkc.runtime.Kernel over fake tensors: which tensor is
which argument, and every check with its message."""
import json
import unittest

from tkc.binding import bind
from tkc.errors import LaunchError
from tkc.manifest import parse_manifest
from tkc.runtime import Kernel

from .fakes import DATA, FakeBackend, FakeStream, FakeTensor

MANIFEST = parse_manifest((DATA / "gemm_bias_residual.json").read_text())
BIAS = MANIFEST.by_name()["gemm_bias"]
RESIDUAL = MANIFEST.by_name()["gemm_residual"]
ATTENTION = parse_manifest((DATA / "attention_fwd.json").read_text())
ATT64 = ATTENTION.by_name()["attention_fwd_D64"]


def attention_without_default():
    """attention_fwd_D64 whose scale has no default."""
    obj = json.loads((DATA / "attention_fwd.json").read_text())
    del obj["kernels"][0]["scalars"][0]["default"]
    return parse_manifest(json.dumps(obj)).kernels[0]


def attention_inputs(B=2, H=8, N=100, H_kv=2, D=64):
    return (FakeTensor((B, H, N, D), ptr=0x1000), FakeTensor((B, H_kv, N, D), ptr=0x2000),
            FakeTensor((B, H_kv, N, D), ptr=0x3000))


def gemm_inputs(M=128, N=256, K=64, **over):
    t = {"A": FakeTensor((M, K), ptr=0x1000), "B": FakeTensor((K, N), ptr=0x2000),
         "bias": FakeTensor((N,), ptr=0x3000)}
    t.update(over)
    return t


class Bind(unittest.TestCase):
    def setUp(self):
        self.backend = FakeBackend()

    def bind(self, *args, kernel=BIAS, out=None, **kwargs):
        return bind(kernel, self.backend, args, kwargs, out)

    def test_positional_inputs_and_allocated_output(self):
        t = gemm_inputs()
        call = self.bind(t["A"], t["B"], t["bias"])
        self.assertEqual(call.sizes, [128, 256, 64])
        self.assertEqual(len(self.backend.allocated), 1)
        C = self.backend.allocated[0]
        self.assertEqual((C.shape, C.dtype, C.device), ((128, 256), "bf16", ("cuda", 0)))
        self.assertEqual(call.tensors, [t["A"], t["B"], C, t["bias"]])
        self.assertEqual(call.outputs, [C])

    def test_accumulated_output_is_never_allocated(self):
        obj = json.loads((DATA / "gemm_bias_residual.json").read_text())
        obj["kernels"][0]["arguments"][2]["role"] = "accumulated"
        kernel = parse_manifest(json.dumps(obj)).by_name()["gemm_bias"]
        t = gemm_inputs()
        self.assertRefused(ValueError, "gemm_bias: output 'C' is added into (its contents are "
                           "read): pass it with out=", t["A"], t["B"], t["bias"], kernel=kernel)
        C = FakeTensor((128, 256), ptr=0x4000)
        call = self.bind(t["A"], t["B"], t["bias"], kernel=kernel, out=C)
        self.assertEqual(call.outputs, [C])
        self.assertEqual(self.backend.allocated, [])

    def test_keywords_and_out(self):
        t = gemm_inputs()
        C = FakeTensor((128, 256), ptr=0x4000)
        call = self.bind(B=t["B"], A=t["A"], bias=t["bias"], out=C)
        self.assertEqual(call.tensors, [t["A"], t["B"], C, t["bias"]])
        self.assertEqual(self.backend.allocated, [])
        call = self.bind(t["A"], t["B"], t["bias"], C=C)
        self.assertEqual(call.outputs, [C])
        call = self.bind(t["A"], t["B"], t["bias"], out={"C": C})
        self.assertEqual(call.outputs, [C])

    def assertRefused(self, exc, message, *args, kernel=BIAS, out=None, **kwargs):
        with self.assertRaises(exc) as cm:
            self.bind(*args, kernel=kernel, out=out, **kwargs)
        self.assertEqual(str(cm.exception), message)

    def test_argument_list_errors(self):
        t = gemm_inputs()
        self.assertRefused(TypeError, "gemm_bias() is missing input 'bias'; signature: "
                           "gemm_bias(A[M, K], B[K, N], bias[N]) -> C[M, N]", t["A"], t["B"])
        self.assertRefused(TypeError, "gemm_bias() takes 3 positional inputs (A, B, bias), 4 "
                           "were given; outputs go in out= or by name",
                           t["A"], t["B"], t["bias"], t["A"])
        self.assertRefused(TypeError, "gemm_bias() got an unexpected keyword argument 'R'; its "
                           "arguments are A, B, C, bias", t["A"], t["B"], t["bias"], R=t["A"])
        self.assertRefused(TypeError, "gemm_bias() got two values for 'A'", t["A"], t["B"],
                           t["bias"], A=t["A"])
        self.assertRefused(TypeError, "gemm_bias(): out= has 2 tensors; the kernel has 1 outputs "
                           "(C)", t["A"], t["B"], t["bias"], out=(t["A"], t["A"]))
        self.assertRefused(TypeError, "gemm_bias(): out= names ['D'], which are not outputs; "
                           "outputs are ['C']", t["A"], t["B"], t["bias"], out={"D": t["A"]})
        self.assertRefused(TypeError, "gemm_bias: input 'A' must be a tensor, found list",
                           [[1.0]], t["B"], t["bias"])

    def test_device_dtype_rank(self):
        t = gemm_inputs()
        cpu = FakeTensor((128, 64), device=("cpu", 0))
        self.assertRefused(ValueError, "gemm_bias: input 'A' is on cpu; tkc kernels take CUDA "
                           "tensors", cpu, t["B"], t["bias"])
        other = FakeTensor((64, 256), device=("cuda", 1))
        self.assertRefused(ValueError, "gemm_bias: 'B' is on cuda:1 but 'A' is on cuda:0; all "
                           "tensors must be on one device", t["A"], other, t["bias"])
        f32 = FakeTensor((128, 64), dtype="f32")
        self.assertRefused(TypeError, "gemm_bias: input 'A' has dtype fake.f32; expected "
                           "fake.bf16", f32, t["B"], t["bias"])
        rank3 = FakeTensor((1, 128, 64))
        self.assertRefused(ValueError, "gemm_bias: input 'A' has 3 dimensions [1, 128, 64]; "
                           "expected 2 [M, K]", rank3, t["B"], t["bias"])

    def test_size_symbols_must_agree(self):
        t = gemm_inputs()
        B = FakeTensor((128, 256))
        self.assertRefused(ValueError, "gemm_bias: input 'B' has K=128 (dimension 0 of [K, N]) "
                           "but 'A' has K=64 (dimension 1 of [M, K])", t["A"], B, t["bias"])
        bias = FakeTensor((512,))
        self.assertRefused(ValueError, "gemm_bias: input 'bias' has N=512 (dimension 0 of [N]) "
                           "but 'B' has N=256 (dimension 1 of [K, N])", t["A"], t["B"], bias)
        C = FakeTensor((128, 512))
        self.assertRefused(ValueError, "gemm_bias: output 'C' has N=512 (dimension 1 of [M, N]) "
                           "but 'B' has N=256 (dimension 1 of [K, N])", t["A"], t["B"],
                           t["bias"], out=C)
        C16 = FakeTensor((128, 256), dtype="f16")
        self.assertRefused(TypeError, "gemm_bias: output 'C' has dtype fake.f16; expected "
                           "fake.bf16", t["A"], t["B"], t["bias"], out=C16)

    def test_contiguity(self):
        t = gemm_inputs()
        At = FakeTensor((128, 64), contiguous=False)
        self.assertRefused(ValueError, "gemm_bias: input 'A' is not contiguous (shape [128, 64], "
                           "strides [1, 64]); tkc kernels take row-major contiguous tensors: "
                           "pass .contiguous()", At, t["B"], t["bias"])

    def test_requires_grad_is_refused_while_autograd_records(self):
        t = gemm_inputs(A=FakeTensor((128, 64), ptr=0x1000, requires_grad=True))
        self.assertRefused(RuntimeError, "gemm_bias: input 'A' requires grad, and tkc.load kernels "
                           "have no backward yet; call them under torch.no_grad() or pass tensors "
                           "that do not require grad", t["A"], t["B"], t["bias"])
        C = FakeTensor((128, 256), ptr=0x4000, requires_grad=True)
        t = gemm_inputs()
        self.assertRefused(RuntimeError, "gemm_bias: output 'C' requires grad, and tkc.load "
                           "kernels have no backward yet; call them under torch.no_grad() or pass "
                           "tensors that do not require grad", t["A"], t["B"], t["bias"], out=C)
        self.assertEqual(self.backend.allocated, [])
        # Under torch.no_grad() (or inference mode) nothing is recorded: accepted.
        self.backend.grad_enabled = False
        t = gemm_inputs(A=FakeTensor((128, 64), ptr=0x1000, requires_grad=True))
        call = self.bind(t["A"], t["B"], t["bias"], out=C)
        self.assertEqual(call.outputs, [C])

    def test_empty_sizes_bind_and_allocate_empty_outputs(self):
        # Sizes of 0 are the launcher's to judge (an empty C: success without a launch; K = 0:
        # refused); binding passes them on and allocates the empty output.
        t = gemm_inputs(M=0)
        call = self.bind(t["A"], t["B"], t["bias"])
        self.assertEqual(call.sizes, [0, 256, 64])
        self.assertEqual(self.backend.allocated[0].shape, (0, 256))
        self.assertEqual(call.allocated, self.backend.allocated)
        t = gemm_inputs(K=0)
        self.assertEqual(self.bind(t["A"], t["B"], t["bias"]).sizes, [128, 256, 0])

    def test_residual_takes_R(self):
        t = gemm_inputs()
        R = FakeTensor((128, 256), ptr=0x5000)
        call = self.bind(t["A"], t["B"], R, kernel=RESIDUAL)
        self.assertEqual([a.name for a in RESIDUAL.arguments], ["A", "B", "C", "R"])
        self.assertEqual(call.tensors[3], R)


class BindAttention(unittest.TestCase):
    """Two outputs of different dtypes, size symbols only some tensors have
    (H_kv), and a runtime scalar."""

    def setUp(self):
        self.backend = FakeBackend()

    def bind(self, *args, kernel=ATT64, out=None, **kwargs):
        return bind(kernel, self.backend, args, kwargs, out)

    def assertRefused(self, exc, message, *args, kernel=ATT64, out=None, **kwargs):
        with self.assertRaises(exc) as cm:
            self.bind(*args, kernel=kernel, out=out, **kwargs)
        self.assertEqual(str(cm.exception), message)

    def test_allocates_both_outputs_with_their_dtypes(self):
        Q, K, V = attention_inputs()
        call = self.bind(Q, K, V)
        O, L = self.backend.allocated
        self.assertEqual((O.shape, O.dtype), ((2, 8, 100, 64), "bf16"))
        self.assertEqual((L.shape, L.dtype), ((2, 8, 100), "f32"))
        self.assertEqual(call.tensors, [Q, K, V, O, L])
        self.assertEqual(call.outputs, [O, L])
        self.assertEqual(call.sizes, [2, 8, 100, 2])  # B, H, N, H_kv
        self.assertEqual(call.scalars, [0.125])       # the default

    def test_scalar_by_keyword(self):
        Q, K, V = attention_inputs()
        self.assertEqual(self.bind(Q, K, V, scale=0.1).scalars, [0.1])
        self.assertEqual(self.bind(Q, K, V, scale=3).scalars, [3.0])
        self.assertEqual(self.bind(Q=Q, K=K, V=V, scale=-0.5).scalars, [-0.5])
        self.assertEqual(self.bind(Q, K, V, scale=float("inf")).scalars, [float("inf")])

    def test_scalar_errors(self):
        Q, K, V = attention_inputs()
        self.assertRefused(TypeError, "attention_fwd_D64: scalar 'scale' must be a real number, "
                           "found str", Q, K, V, scale="0.1")
        self.assertRefused(TypeError, "attention_fwd_D64: scalar 'scale' must be a real number, "
                           "found bool", Q, K, V, scale=True)
        self.assertRefused(TypeError, "attention_fwd_D64: scalar 'scale' must be a real number, "
                           "found FakeTensor", Q, K, V, scale=Q)
        self.assertRefused(ValueError, "attention_fwd_D64: scalar 'scale' = 1e+39 does not fit "
                           "in f32", Q, K, V, scale=1e39)
        self.assertRefused(TypeError, "attention_fwd_D64() got an unexpected keyword argument "
                           "'sclae'; its arguments are Q, K, V, O, L, scale", Q, K, V, sclae=0.1)
        self.assertRefused(TypeError, "attention_fwd_D64() is missing scalar 'scale' (it has no "
                           "default); signature: attention_fwd_D64(Q[B, H, N, 64], "
                           "K[B, H_kv, N, 64], V[B, H_kv, N, 64], scale) -> O[B, H, N, 64], "
                           "L[B, H, N]", Q, K, V, kernel=attention_without_default())
        self.assertEqual(self.bind(Q, K, V, scale=0.5, kernel=attention_without_default()).scalars,
                         [0.5])

    def test_out_as_tuple_dict_and_names(self):
        Q, K, V = attention_inputs()
        O = FakeTensor((2, 8, 100, 64), ptr=0x4000)
        L = FakeTensor((2, 8, 100), dtype="f32", ptr=0x5000)
        call = self.bind(Q, K, V, out=(O, L))
        self.assertEqual((call.outputs, self.backend.allocated), ([O, L], []))
        call = self.bind(Q, K, V, out={"L": L, "O": O})
        self.assertEqual(call.outputs, [O, L])
        # One given, the other allocated.
        call = self.bind(Q, K, V, out={"O": O})
        self.assertEqual(call.outputs[0], O)
        self.assertEqual((call.outputs[1].shape, call.outputs[1].dtype), ((2, 8, 100), "f32"))
        call = self.bind(Q, K, V, L=L)
        self.assertEqual(call.outputs[1], L)
        self.assertEqual(call.outputs[0].shape, (2, 8, 100, 64))

    def test_output_errors(self):
        Q, K, V = attention_inputs()
        O = FakeTensor((2, 8, 100, 64), ptr=0x4000)
        L = FakeTensor((2, 8, 100), dtype="f32", ptr=0x5000)
        self.assertRefused(TypeError, "attention_fwd_D64(): out= has 1 tensors; the kernel has 2 "
                           "outputs (O, L)", Q, K, V, out=(O,))
        self.assertRefused(TypeError, "attention_fwd_D64: output 'L' has dtype fake.bf16; "
                           "expected fake.f32", Q, K, V, out=(O, FakeTensor((2, 8, 100))))
        self.assertRefused(ValueError, "attention_fwd_D64: output 'L' has N=99 (dimension 2 of "
                           "[B, H, N]) but 'Q' has N=100 (dimension 2 of [B, H, N, 64])",
                           Q, K, V, out=(O, FakeTensor((2, 8, 99), dtype="f32")))
        self.assertRefused(ValueError, "attention_fwd_D64: input 'K' has size 128 in dimension 3; "
                           "expected 64", Q, FakeTensor((2, 2, 100, 128)), V)
        self.assertRefused(ValueError, "attention_fwd_D64: input 'V' has H_kv=4 (dimension 1 of "
                           "[B, H_kv, N, 64]) but 'K' has H_kv=2 (dimension 1 of "
                           "[B, H_kv, N, 64])", Q, K, FakeTensor((2, 4, 100, 64)))
        self.assertRefused(TypeError, "attention_fwd_D64() got two values for output 'O'",
                           Q, K, V, O=O, out={"O": O})


class FakeFunction:
    """Stands in for a ctypes shim entry point."""

    def __init__(self, rc=0, message=b""):
        self.rc, self.message, self.calls = rc, message, []

    def __call__(self, ptrs, sizes, scalars, stream, message, capacity):
        self.calls.append((list(ptrs), list(sizes), list(scalars), stream.value, capacity))
        message.value = self.message
        return self.rc


class KernelCall(unittest.TestCase):
    def test_launch_passes_pointers_sizes_and_stream(self):
        backend = FakeBackend()
        fn = FakeFunction()
        kernel = Kernel(BIAS, fn, "sm_90a", lambda: backend)
        t = gemm_inputs()
        C = kernel(t["A"], t["B"], t["bias"], stream=0x77)
        self.assertIs(C, backend.allocated[0])
        ptrs, sizes, scalars, stream, capacity = fn.calls[0]
        self.assertEqual(ptrs, [0x1000, 0x2000, C.ptr, 0x3000])
        self.assertEqual(sizes, [128, 256, 64])
        self.assertEqual(scalars, [0.0])  # no scalars: a one-element placeholder array
        self.assertEqual(stream, 0x77)
        self.assertGreater(capacity, 100)

    def test_launch_passes_scalars_and_returns_every_output(self):
        backend = FakeBackend()
        fn = FakeFunction()
        kernel = Kernel(ATT64, fn, "sm_90a", lambda: backend)
        Q, K, V = attention_inputs(B=1, H=4, N=17, H_kv=4)
        O, L = kernel(Q, K, V)
        self.assertEqual(backend.allocated, [O, L])
        ptrs, sizes, scalars, _, _ = fn.calls[0]
        self.assertEqual(ptrs, [0x1000, 0x2000, 0x3000, O.ptr, L.ptr])
        self.assertEqual(sizes, [1, 4, 17, 4])
        self.assertEqual(scalars, [0.125])
        kernel(Q, K, V, scale=0.3)
        self.assertEqual(fn.calls[1][2], [0.3])
        # Raw launch: every scalar given, no defaults.
        kernel.launch([1, 2, 3, 4, 5], [1, 4, 17, 4], 0, [0.25])
        self.assertEqual(fn.calls[2][2], [0.25])
        with self.assertRaisesRegex(TypeError, "expected 5 pointers, 4 sizes and 1 scalars, "
                                    "found 5, 4 and 0"):
            kernel.launch([1, 2, 3, 4, 5], [1, 4, 17, 4])

    def test_stream_of_the_tensors_device(self):
        backend = FakeBackend(current=0x10)
        fn = FakeFunction()
        kernel = Kernel(BIAS, fn, "sm_90a", lambda: backend)
        t = gemm_inputs()
        # None: the current stream, on which the output was allocated; nothing to record.
        C = kernel(t["A"], t["B"], t["bias"])
        self.assertEqual(fn.calls[-1][3], 0x10)
        self.assertEqual(backend.recorded, [])
        # A stream object of the tensors' device: launched on it. Another device: refused,
        # nothing launched.
        side = FakeStream(0x20, ("cuda", 0))
        C = kernel(t["A"], t["B"], t["bias"], stream=side)
        self.assertEqual(fn.calls[-1][3], 0x20)
        calls = len(fn.calls)
        with self.assertRaises(ValueError) as cm:
            kernel(t["A"], t["B"], t["bias"], stream=FakeStream(0x30, ("cuda", 1)))
        self.assertEqual(str(cm.exception), "gemm_bias: stream= is a stream of cuda:1 but the "
                         "tensors are on cuda:0; pass a stream of cuda:0, or none for its current "
                         "stream")
        self.assertEqual(len(fn.calls), calls)
        for bad in ("stream", 1.5, True):
            with self.assertRaisesRegex(TypeError, "^gemm_bias: stream= must be a CUDA stream or a "
                                        "cudaStream_t handle \\(int\\), found %s$"
                                        % type(bad).__name__):
                kernel(t["A"], t["B"], t["bias"], stream=bad)
        self.assertEqual(len(fn.calls), calls)
        del C

    def test_output_allocated_for_a_side_stream_is_recorded_on_it(self):
        backend = FakeBackend(current=0x10)
        kernel = Kernel(BIAS, FakeFunction(), "sm_90a", lambda: backend)
        t = gemm_inputs()
        side = FakeStream(0x20)
        C = kernel(t["A"], t["B"], t["bias"], stream=side)
        self.assertEqual(backend.recorded, [(C, side)])
        # A raw handle other than the current stream's: recorded too.
        C2 = kernel(t["A"], t["B"], t["bias"], stream=0x40)
        self.assertEqual(backend.recorded[1:], [(C2, 0x40)])
        # The current stream, as an object or a handle: nothing to record.
        kernel(t["A"], t["B"], t["bias"], stream=FakeStream(0x10))
        kernel(t["A"], t["B"], t["bias"], stream=0x10)
        self.assertEqual(len(backend.recorded), 2)
        # An output the caller gave was not allocated here: the caller owns its streams.
        kernel(t["A"], t["B"], t["bias"], out=FakeTensor((128, 256), ptr=0x4000), stream=side)
        self.assertEqual(len(backend.recorded), 2)
        # Of two outputs, only the allocated one is recorded.
        kernel = Kernel(ATT64, FakeFunction(), "sm_90a", lambda: backend)
        Q, K, V = attention_inputs(B=1, H=4, N=17, H_kv=4)
        L = FakeTensor((1, 4, 17), dtype="f32", ptr=0x5000)
        O, _ = kernel(Q, K, V, L=L, stream=side)
        self.assertEqual(backend.recorded[2:], [(O, side)])

    def test_requires_grad_launches_nothing(self):
        fn = FakeFunction()
        kernel = Kernel(BIAS, fn, "sm_90a", FakeBackend)
        t = gemm_inputs(bias=FakeTensor((256,), ptr=0x3000, requires_grad=True))
        with self.assertRaisesRegex(RuntimeError, "^gemm_bias: input 'bias' requires grad, and "
                                    "tkc.load kernels have no backward yet"):
            kernel(t["A"], t["B"], t["bias"])
        self.assertEqual(fn.calls, [])

    def test_refusal_is_a_launch_error(self):
        fn = FakeFunction(rc=1, message=b"gemm_bias: K must be a multiple of 64, got 65")
        kernel = Kernel(BIAS, fn, "sm_90a", FakeBackend)
        t = gemm_inputs(K=65)
        with self.assertRaisesRegex(LaunchError, "K must be a multiple of 64, got 65"):
            kernel(t["A"], t["B"], t["bias"])

    def test_raw_launch_checks_counts(self):
        kernel = Kernel(BIAS, FakeFunction(), "sm_90a", FakeBackend)
        with self.assertRaisesRegex(TypeError, "expected 4 pointers, 3 sizes and 0 scalars, "
                                    "found 3, 3 and 0"):
            kernel.launch([1, 2, 3], [1, 2, 3])
        with self.assertRaisesRegex(TypeError, "expected 4 pointers, 3 sizes and 0 scalars, "
                                    "found 4, 3 and 1"):
            kernel.launch([1, 2, 3, 4], [1, 2, 3], 0, [1.0])


if __name__ == "__main__":
    unittest.main()
