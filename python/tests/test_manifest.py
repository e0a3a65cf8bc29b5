"""tkc.manifest and tkc.shim: parsing, validation, shim text."""
import copy
import json
import math
import unittest

from tkc.errors import ManifestError
from tkc.manifest import parse_manifest
from tkc.shim import generate_shim, shim_symbol

from .fakes import DATA

TEXT = (DATA / "gemm_bias_residual.json").read_text()
ATTENTION = (DATA / "attention_fwd.json").read_text()


def edited(edit, text=TEXT):
    obj = json.loads(text)
    edit(obj)
    return json.dumps(obj)


class ParseManifest(unittest.TestCase):
    def test_reads_the_launchers(self):
        m = parse_manifest(TEXT)
        self.assertEqual((m.spec, m.kernel, m.arch), ("gemm.yaml", "gemm", "sm_90a"))
        self.assertEqual(m.nvcc_gencode, "-gencode=arch=compute_90a,code=sm_90a")
        self.assertEqual([k.name for k in m.kernels], ["gemm_bias", "gemm_residual"])
        bias = m.by_name()["gemm_bias"]
        self.assertEqual(dict(bias.params), {"transpose_b": "false", "epilogue": "bias"})
        self.assertEqual([a.name for a in bias.arguments], ["A", "B", "C", "bias"])
        self.assertEqual([a.name for a in bias.inputs], ["A", "B", "bias"])
        self.assertEqual([a.name for a in bias.outputs], ["C"])
        self.assertEqual(bias.arguments[3].dims, ("N",))
        self.assertEqual(bias.sizes, ("M", "N", "K"))
        self.assertEqual(bias.scalars, ())
        self.assertEqual(bias.signature(), "gemm_bias(A[M, K], B[K, N], bias[N]) -> C[M, N]")

    def test_reads_scalars_and_several_outputs(self):
        m = parse_manifest(ATTENTION)
        self.assertEqual([k.name for k in m.kernels],
                         ["attention_fwd_D64", "attention_fwd_D128_causal"])
        d64, d128 = m.kernels
        self.assertEqual([a.name for a in d64.inputs], ["Q", "K", "V"])
        self.assertEqual([(a.name, a.dtype, a.dims) for a in d64.outputs],
                         [("O", "bf16", ("B", "H", "N", 64)), ("L", "f32", ("B", "H", "N"))])
        self.assertEqual(d64.sizes, ("B", "H", "N", "H_kv"))
        self.assertEqual([(s.name, s.dtype, s.c_type) for s in d64.scalars],
                         [("scale", "f32", "float")])
        self.assertEqual(d64.scalars[0].default, 0.125)
        # The default reads back as exactly the double tkc printed: 1/sqrt(128).
        self.assertEqual(d128.scalars[0].default, 1 / math.sqrt(128))
        self.assertEqual(d64.signature(), "attention_fwd_D64(Q[B, H, N, 64], K[B, H_kv, N, 64], "
                         "V[B, H_kv, N, 64], scale=0.125) -> O[B, H, N, 64], L[B, H, N]")

    def test_scalar_without_default(self):
        def drop(o):
            del o["kernels"][0]["scalars"][0]["default"]
        k = parse_manifest(edited(drop, ATTENTION)).kernels[0]
        self.assertIsNone(k.scalars[0].default)
        self.assertIn("V[B, H_kv, N, 64], scale) -> O", k.signature())
        # An integer default (tkc prints 2.0 as 2) is a number like any other.

        def integer(o):
            o["kernels"][0]["scalars"][0]["default"] = 2
        k = parse_manifest(edited(integer, ATTENTION)).kernels[0]
        self.assertEqual((k.scalars[0].default, type(k.scalars[0].default)), (2.0, float))

    def check_refused(self, edit, message, text=TEXT):
        with self.assertRaises(ManifestError) as cm:
            parse_manifest(edited(edit, text))
        self.assertIn(message, str(cm.exception))

    def test_scalars_are_checked(self):
        def scalar(**values):
            def edit(o):
                o["kernels"][0]["scalars"][0].update(values)
            return edit
        self.check_refused(lambda o: o["kernels"][0].pop("scalars"),
                           "kernel 'gemm_bias': missing key 'scalars'")
        self.check_refused(scalar(name="scale; abort()"), "is not a C identifier", ATTENTION)
        self.check_refused(scalar(dtype="bf16"), "scalar 'scale': unknown scalar dtype 'bf16'; "
                           "this loader knows f32", ATTENTION)
        self.check_refused(scalar(c_type="double"), "scalar 'scale': c_type 'double' does not "
                           "match dtype f32", ATTENTION)
        for bad in ("0.125", True, None, [1]):
            self.check_refused(scalar(default=bad), "scalar 'scale': default should be a finite "
                               "number, found %r" % (bad,), ATTENTION)
        # JSON has no infinity, but Python's json reads one: still refused.
        self.check_refused(scalar(default=float("inf")), "default should be a finite number",
                           ATTENTION)
        self.check_refused(lambda o: o["kernels"][0]["scalars"].append(
            dict(o["kernels"][0]["scalars"][0])), "scalar names repeat: ['scale', 'scale']",
            ATTENTION)
        self.check_refused(scalar(name="L"), "scalar 'L' has the name of an argument", ATTENTION)
        self.check_refused(scalar(name="stream"), "scalar 'stream' would be taken for the "
                           "stream= keyword of a kernel call", ATTENTION)
        self.check_refused(scalar(name="out"), "scalar 'out' would be taken for the out= "
                           "keyword", ATTENTION)

    def test_not_json(self):
        with self.assertRaisesRegex(ManifestError, "not JSON"):
            parse_manifest("{")

    def test_format_and_version(self):
        self.check_refused(lambda o: o.update(format="other"), "format is 'other'")
        # Version 1 had no scalars: its launchers took the stream after the sizes.
        self.check_refused(lambda o: o.update(format_version=1),
                           "format_version 1; this loader reads version 2")
        self.check_refused(lambda o: o.pop("kernels"), "missing key 'kernels'")

    def test_names_must_be_identifiers(self):
        # The shim pastes names into C++: anything else is refused.
        def inject(o):
            o["kernels"][0]["name"] = "gemm_bias(); system(\"rm\")"
        self.check_refused(inject, "is not a C identifier")

        def arg(o):
            o["kernels"][0]["arguments"][0]["name"] = "A B"
        self.check_refused(arg, "is not a C identifier")

    def test_dtypes_and_roles(self):
        def dtype(o):
            o["kernels"][0]["arguments"][0]["dtype"] = "fp8"
        self.check_refused(dtype, "unknown dtype 'fp8'")

        def ctype(o):
            o["kernels"][0]["arguments"][0]["c_type"] = "float"
        self.check_refused(ctype, "c_type 'float' does not match dtype bf16")

        def role(o):
            o["kernels"][0]["arguments"][0]["role"] = "inout"
        self.check_refused(role, "role should be input, output or accumulated, found 'inout'")

    def test_accumulated_is_an_output(self):
        def accumulated(o):
            o["kernels"][0]["arguments"][2]["role"] = "accumulated"
        bias = parse_manifest(edited(accumulated)).by_name()["gemm_bias"]
        self.assertEqual([a.name for a in bias.outputs], ["C"])
        self.assertEqual(bias.arguments[2].role, "accumulated")

    def test_dims_rank_and_sizes(self):
        def rank(o):
            o["kernels"][0]["arguments"][0]["rank"] = 3
        self.check_refused(rank, "rank 3 but 2 dims")

        def sizes(o):
            o["kernels"][0]["sizes"] = ["M", "N"]
        self.check_refused(sizes, "sizes ['M', 'N'] do not match the symbols")

        def repeat(o):
            o["kernels"].append(copy.deepcopy(o["kernels"][0]))
        self.check_refused(repeat, "kernel names repeat")

        def zero(o):
            o["kernels"][0]["arguments"][3]["dims"] = [0]
        self.check_refused(zero, "dimension 0 is not positive")


class Shim(unittest.TestCase):
    def test_one_entry_point_per_launcher(self):
        text = generate_shim(parse_manifest(TEXT), "gemm.h")
        self.assertIn('#include "gemm.h"', text)
        self.assertIn('extern "C" int tkc_shim_abi_version() { return 2; }', text)
        self.assertEqual(shim_symbol("gemm_bias"), "tkc_shim_gemm_bias")
        self.assertIn('extern "C" int tkc_shim_gemm_bias(void *const *pointers, '
                      'const long long *sizes,\n'
                      '    const double *scalars, void *stream, char *message, '
                      'unsigned long long capacity) {', text)
        self.assertNotIn("scalars[", text)
        # Pointers keep the launcher's constness; sizes follow in order.
        self.assertIn("tkc::kernels::gemm_bias(\n"
                      "        static_cast<const __nv_bfloat16 *>(pointers[0]),\n"
                      "        static_cast<const __nv_bfloat16 *>(pointers[1]),\n"
                      "        static_cast<__nv_bfloat16 *>(pointers[2]),\n"
                      "        static_cast<const __nv_bfloat16 *>(pointers[3]),\n"
                      "        sizes[0] /* M */,\n"
                      "        sizes[1] /* N */,\n"
                      "        sizes[2] /* K */,\n"
                      "        static_cast<cudaStream_t>(stream));", text)
        self.assertIn("tkc::kernels::gemm_residual(", text)

    def test_scalars_follow_the_sizes(self):
        text = generate_shim(parse_manifest(ATTENTION), "attention_fwd.h")
        self.assertIn("tkc::kernels::attention_fwd_D128_causal(\n"
                      "        static_cast<const __nv_bfloat16 *>(pointers[0]),\n"
                      "        static_cast<const __nv_bfloat16 *>(pointers[1]),\n"
                      "        static_cast<const __nv_bfloat16 *>(pointers[2]),\n"
                      "        static_cast<__nv_bfloat16 *>(pointers[3]),\n"
                      "        static_cast<float *>(pointers[4]),\n"
                      "        sizes[0] /* B */,\n"
                      "        sizes[1] /* H */,\n"
                      "        sizes[2] /* N */,\n"
                      "        sizes[3] /* H_kv */,\n"
                      "        static_cast<float>(scalars[0]) /* scale */,\n"
                      "        static_cast<cudaStream_t>(stream));", text)

    def test_deterministic(self):
        m = parse_manifest(TEXT)
        self.assertEqual(generate_shim(m, "gemm.h"), generate_shim(m, "gemm.h"))


if __name__ == "__main__":
    unittest.main()
