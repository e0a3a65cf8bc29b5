"""tkc.manifest and tkc.shim: parsing, validation, shim text."""
import copy
import json
import unittest

from tkc.errors import ManifestError
from tkc.manifest import parse_manifest
from tkc.shim import generate_shim, shim_symbol

from .fakes import DATA

TEXT = (DATA / "gemm_bias_residual.json").read_text()


def edited(edit):
    obj = json.loads(TEXT)
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
        self.assertEqual(bias.signature(), "gemm_bias(A[M, K], B[K, N], bias[N]) -> C[M, N]")

    def check_refused(self, edit, message):
        with self.assertRaises(ManifestError) as cm:
            parse_manifest(edited(edit))
        self.assertIn(message, str(cm.exception))

    def test_not_json(self):
        with self.assertRaisesRegex(ManifestError, "not JSON"):
            parse_manifest("{")

    def test_format_and_version(self):
        self.check_refused(lambda o: o.update(format="other"), "format is 'other'")
        self.check_refused(lambda o: o.update(format_version=2),
                           "format_version 2; this loader reads version 1")
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
        self.check_refused(role, "role should be input or output, found 'inout'")

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
        self.assertIn('extern "C" int tkc_shim_abi_version() { return 1; }', text)
        self.assertEqual(shim_symbol("gemm_bias"), "tkc_shim_gemm_bias")
        self.assertIn('extern "C" int tkc_shim_gemm_bias(void *const *pointers, '
                      'const long long *sizes, void *stream,', text)
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

    def test_deterministic(self):
        m = parse_manifest(TEXT)
        self.assertEqual(generate_shim(m, "gemm.h"), generate_shim(m, "gemm.h"))


if __name__ == "__main__":
    unittest.main()
