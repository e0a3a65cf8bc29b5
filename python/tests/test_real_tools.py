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
from tkc.runtime import load_library

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
        self.assertEqual(len(m.kernels), 10)
        names = {k.name: k for k in m.kernels}
        self.assertEqual([a.name for a in names["gemm_transpose_b_residual"].arguments],
                         ["A", "Bt", "C", "R"])
        self.assertEqual(names["gemm_transpose_b_residual"].arguments[1].dims, ("N", "K"))
        for k in m.kernels:
            self.assertEqual([a.name for a in k.outputs], ["C"], k.name)
            self.assertEqual(k.sizes, ("M", "N", "K"), k.name)


class RealBuild(unittest.TestCase):
    def test_build_load_and_refuse_without_a_gpu(self):
        toolchain = tool(B.find_toolchain)
        with tempfile.TemporaryDirectory() as cache:
            built = B.build(GEMM, {"transpose_b": False, "epilogue": "bias"}, toolchain=toolchain,
                            cache_dir=cache, verbose=False)
            self.assertFalse(built.from_cache)
            self.assertEqual([k.name for k in built.manifest.kernels], ["gemm_bias"])
            module = load_library(built, backend_factory=None)
            self.assertEqual(list(module.kernels), ["gemm_bias"])
            with self.assertRaisesRegex(AttributeError, "no kernel 'gemm_gelu' in gemm.yaml; "
                                        "kernels: gemm_bias"):
                module.gemm_gelu
            # The launcher checks sizes before it touches the device, so its
            # refusal comes back through ctypes on a machine without a GPU.
            with self.assertRaisesRegex(LaunchError, "^gemm_bias: .*K"):
                module.gemm_bias.launch([0x1000] * 4, [128, 256, 0])
            again = B.build(GEMM, {"epilogue": "bias", "transpose_b": False},
                            toolchain=toolchain, cache_dir=cache, verbose=False)
            self.assertTrue(again.from_cache)
            self.assertEqual(again.library, built.library)


if __name__ == "__main__":
    unittest.main()
