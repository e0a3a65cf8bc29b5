"""tkc.build: tool discovery, parameters, cache keys, command lines, and the
cache itself, with fake tkc and nvcc executables."""
import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tkc import builder as B
from tkc.errors import CompileError, TkcWarning, ToolNotFoundError

from .fakes import fake_include, fake_nvcc, fake_tkc, runs

SPEC = b"kernel: gemm\n# a stand-in: the fake tkc does not read it\n"


class Tools(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="tkc-test-"))
        self.addCleanup(lambda: __import__("shutil").rmtree(self.tmp, ignore_errors=True))
        self.tkc = fake_tkc(self.tmp / "tkc")
        self.nvcc = fake_nvcc(self.tmp / "nvcc")
        self.include = fake_include(self.tmp / "include")
        self.spec = self.tmp / "gemm.yaml"
        self.spec.write_bytes(SPEC)
        self.toolchain = B.Toolchain(self.tkc, self.nvcc, (self.include,))

    def key(self, params=None, arch=None, spec=SPEC, toolchain=None, flags=()):
        inputs = B.cache_key_inputs(spec, "gemm.yaml", params or {}, arch,
                                    toolchain or self.toolchain, flags)
        return B.cache_key(inputs)


class Discovery(Tools):
    def test_explicit_and_environment(self):
        self.assertEqual(B.find_tkc(self.tkc), self.tkc.resolve())
        with mock.patch.dict(os.environ, {"TKC_EXECUTABLE": str(self.tkc)}):
            self.assertEqual(B.find_tkc(), self.tkc.resolve())
        with mock.patch.dict(os.environ, {"TKC_EXECUTABLE": str(self.tmp / "nope")}):
            with self.assertRaisesRegex(ToolNotFoundError,
                                        "TKC_EXECUTABLE names '.*nope', which is not an "
                                        "executable file"):
                B.find_tkc()
        with mock.patch.dict(os.environ, {"TKC_NVCC": str(self.tmp / "nonvcc")}):
            with self.assertRaisesRegex(ToolNotFoundError, "TKC_NVCC names"):
                B.find_nvcc()

    def test_include_dirs(self):
        self.assertEqual(B.find_include_dirs(self.tkc, [self.include]), (self.include.resolve(),))
        with mock.patch.dict(os.environ, {"TKC_INCLUDE_DIR": str(self.include)}):
            self.assertEqual(B.find_include_dirs(self.tkc), (self.include.resolve(),))
        with self.assertRaisesRegex(ToolNotFoundError, "cannot find the kittens and runtime "
                                    "headers"):
            B.find_include_dirs(self.tkc, [self.tmp])
        # The install layout: <prefix>/bin/tkc next to <prefix>/include.
        prefix = self.tmp / "prefix"
        fake_include(prefix / "include")
        (prefix / "bin").mkdir()
        tkc = fake_tkc(prefix / "bin" / "tkc")
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("TKC_INCLUDE_DIR", None)
            self.assertEqual(B.find_include_dirs(tkc), ((prefix / "include").resolve(),))

    def test_spec_dir(self):
        specs = self.tmp / "specs"
        specs.mkdir()
        (specs / "attention_bwd.yaml").write_text("kernel: attention_bwd\n")
        with mock.patch.dict(os.environ, {"TKC_SPEC_DIR": str(specs)}):
            self.assertEqual(B.find_spec_dir(self.tkc), specs)
        with mock.patch.dict(os.environ, {"TKC_SPEC_DIR": str(self.tmp)}):
            with self.assertRaisesRegex(ToolNotFoundError, "TKC_SPEC_DIR names '.*', which "
                                        "holds no attention_bwd.yaml"):
                B.find_spec_dir(self.tkc)
        # The install layout, <prefix>/share/tkc/kernels-spec, when the source tree has none.
        prefix = self.tmp / "prefix"
        (prefix / "bin").mkdir(parents=True)
        tkc = fake_tkc(prefix / "bin" / "tkc")
        installed = prefix / "share" / "tkc" / "kernels-spec"
        installed.mkdir(parents=True)
        (installed / "attention_bwd.yaml").write_text("kernel: attention_bwd\n")
        with mock.patch.dict(os.environ, {}, clear=False), \
                mock.patch.object(B, "_SOURCE_ROOT", self.tmp / "no-source-tree"):
            os.environ.pop("TKC_SPEC_DIR", None)
            self.assertEqual(B.find_spec_dir(tkc), installed)
            with self.assertRaisesRegex(ToolNotFoundError, "cannot find the kernel specs"):
                B.find_spec_dir(self.tkc)
        # This source tree's own.
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("TKC_SPEC_DIR", None)
            self.assertEqual(B.find_spec_dir(self.tkc), B._SOURCE_ROOT / "kernels-spec")

    def test_cache_dir(self):
        with mock.patch.dict(os.environ, {"TKC_CACHE_DIR": str(self.tmp / "c")}):
            self.assertEqual(B.default_cache_dir(), self.tmp / "c")
        with mock.patch.dict(os.environ, {"HOME": str(self.tmp)}):
            os.environ.pop("TKC_CACHE_DIR", None)
            self.assertEqual(B.default_cache_dir(), self.tmp / ".cache" / "tkc")


class Params(unittest.TestCase):
    def test_spelling_and_order(self):
        self.assertEqual(B.param_options({"transpose_b": True, "epilogue": "gelu"}),
                         ["--param", "epilogue=gelu", "--param", "transpose_b=true"])
        self.assertEqual(B.param_options({"epilogue": ["none", "bias"], "D": 64}),
                         ["--param", "D=64", "--param", "epilogue=bias",
                          "--param", "epilogue=none"])
        self.assertEqual(B.param_options({}), [])

    def test_bad_values(self):
        with self.assertRaisesRegex(TypeError, "parameter values must be bool, int, float or "
                                    "str, found dict"):
            B.param_options({"epilogue": {"x": 1}})
        with self.assertRaisesRegex(ValueError, "parameter 'epilogue' has an empty list"):
            B.param_options({"epilogue": []})


class CacheKey(Tools):
    def test_stable_and_order_independent(self):
        self.assertEqual(self.key({"a": 1, "b": "x"}), self.key({"b": "x", "a": 1}))
        self.assertEqual(len(self.key()), 24)

    def test_changes_with_every_input(self):
        base = self.key({"epilogue": "bias"})
        self.assertNotEqual(base, self.key({"epilogue": "gelu"}))
        self.assertNotEqual(base, self.key({"epilogue": "bias"}, arch="sm_90a"))
        self.assertNotEqual(base, self.key({"epilogue": "bias"}, spec=SPEC + b"\n"))
        self.assertNotEqual(base, self.key({"epilogue": "bias"}, flags=("-lineinfo",)))
        # Same version string, different binary: a rebuilt tkc invalidates.
        other = fake_tkc(self.tmp / "tkc2")
        other.write_text(other.read_text() + "# rebuilt\n")
        self.assertNotEqual(base, self.key({"epilogue": "bias"},
                                           toolchain=B.Toolchain(other, self.nvcc,
                                                                 (self.include,))))
        # A wrapper script that runs a rebuilt binary: the script's bytes stay the same, but
        # tkc --version names the binary's build, and the key follows it.
        build_id = self.tmp / "build-id"
        build_id.write_text("build 1\n")
        wrapper = self.tmp / "tkc-wrapper"
        wrapper.write_text('#!/bin/sh\necho "tkc version 0.1.0 (fake)"\ncat "%s"\n' % build_id)
        wrapper.chmod(0o755)
        via_wrapper = B.Toolchain(wrapper, self.nvcc, (self.include,))
        before = self.key({"epilogue": "bias"}, toolchain=via_wrapper)
        build_id.write_text("build 2\n")
        self.assertNotEqual(before, self.key({"epilogue": "bias"}, toolchain=via_wrapper))
        # A changed kittens header invalidates.
        (self.include / "kittens" / "kittens.cuh").write_text("#pragma once\n// changed\n")
        self.assertNotEqual(base, self.key({"epilogue": "bias"}))


class Commands(Tools):
    def test_tkc_and_nvcc_command_lines(self):
        out = self.tmp / "out"
        manifest, cuda = B.tkc_commands(self.toolchain, self.spec, {"epilogue": "bias"}, "sm_90a",
                                        out, "gemm")
        self.assertEqual(manifest, [str(self.tkc), str(self.spec), "--arch=sm_90a", "--param",
                                    "epilogue=bias", "--emit=manifest", "-o",
                                    str(out / "gemm.json")])
        self.assertEqual(cuda[-5:], ["--emit=cuda", "-o", str(out / "gemm.cu"), "--header",
                                     str(out / "gemm.h")])
        nvcc = B.nvcc_command(self.toolchain, "-gencode=arch=compute_90a,code=sm_90a", out,
                              "gemm")
        self.assertEqual(nvcc[:8], [str(self.nvcc), "-gencode=arch=compute_90a,code=sm_90a",
                                    "-std=c++20", "-O3", "--expt-relaxed-constexpr",
                                    "-Xcompiler", "-fPIC", "-shared"])
        self.assertIn("-I" + str(self.include), nvcc)
        self.assertEqual(nvcc[-4:], [str(out / "gemm.cu"), str(out / "gemm_shim.cu"), "-o",
                                     str(out / "libgemm.so")])


class Cache(Tools):
    def build(self, **kw):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            built = B.build(self.spec, kw.pop("params", {"epilogue": "bias"}),
                            toolchain=kw.pop("toolchain", self.toolchain),
                            cache_dir=self.tmp / "cache", **kw)
        return built, err.getvalue()

    def test_second_build_is_a_hit_without_compiling(self):
        first, err = self.build()
        self.assertFalse(first.from_cache)
        self.assertRegex(err, r"tkc: building gemm.yaml \(epilogue=bias\) with nvcc; cache: .*gemm-")
        self.assertIn("tkc: built 2 launchers in", err)
        self.assertEqual((runs(self.tkc), runs(self.nvcc)), (2, 1))
        entry = first.directory
        for name in ("gemm.json", "gemm.cu", "gemm.h", "gemm_shim.cu", "libgemm.so", "key.json",
                     "build.sh"):
            self.assertTrue((entry / name).is_file(), name)
        self.assertIn("tkc_shim_gemm_residual", (entry / "gemm_shim.cu").read_text())

        second, err = self.build()
        self.assertTrue(second.from_cache)
        self.assertEqual(err, "")
        self.assertEqual(second.directory, entry)
        self.assertEqual((runs(self.tkc), runs(self.nvcc)), (2, 1))

        third, _ = self.build(params={"epilogue": "gelu"})
        self.assertNotEqual(third.directory, entry)
        self.assertEqual(runs(self.nvcc), 2)

    def test_quiet(self):
        _, err = self.build(verbose=False)
        self.assertEqual(err, "")

    def test_tkc_warnings_reach_the_caller_once(self):
        said = "gemm.yaml:27:14: warning: something the user should know"
        noisy = fake_tkc(self.tmp / "noisytkc", warn_with=said)
        with self.assertWarns(TkcWarning) as cm:
            built, _ = self.build(toolchain=B.Toolchain(noisy, self.nvcc, (self.include,)))
        self.assertFalse(built.from_cache)
        self.assertEqual(runs(noisy), 2)  # the CUDA and the manifest: one warning, not two
        self.assertEqual([str(w.message) for w in cm.warnings], [said])
        self.assertTrue((built.directory / "libgemm.so").is_file())

    def test_tkc_failure_leaves_no_entry(self):
        bad = fake_tkc(self.tmp / "badtkc", fail_with="gemm.yaml:3:1: error: unknown key 'x'")
        with self.assertRaises(CompileError) as cm:
            self.build(toolchain=B.Toolchain(bad, self.nvcc, (self.include,)))
        text = str(cm.exception)
        self.assertIn("tkc failed (exit code 1)", text)
        self.assertIn("gemm.yaml:3:1: error: unknown key 'x'", text)
        self.assertIn("--param epilogue=bias", text)
        leftovers = [p.name for p in (self.tmp / "cache").iterdir() if not p.name.endswith(".lock")]
        self.assertEqual(leftovers, [])
        self.assertEqual(runs(self.nvcc), 0)

    def test_missing_spec(self):
        with self.assertRaisesRegex(FileNotFoundError, "cannot read the spec '.*missing.yaml'"):
            B.build(self.tmp / "missing.yaml", {}, toolchain=self.toolchain,
                    cache_dir=self.tmp / "cache")


if __name__ == "__main__":
    unittest.main()
