# lit configuration for tkc.
#
# Features:
#   tkc    the compiler was built (TKC_BUILD_COMPILER=ON)
#   nvcc   nvcc was found: tests that compile CUDA run
#   gpu    an sm_90 GPU is visible: tests that run kernels run
#   asan   the build is instrumented with ASan+UBSan
# Tests that REQUIRE a missing feature are reported UNSUPPORTED, never failed.
import os
import shutil
import subprocess

import lit.formats

config.name = "tkc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".yaml", ".test", ".cu"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt",
                   "unittests", "fuzz", "utils", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tkc_obj_root, "test")

# Keep the environment small and deterministic.
for var in ("PATH", "HOME", "TMPDIR", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
if config.tkc_sanitizers:
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=1"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    config.available_features.add("asan")

config.substitutions.append(("%src_root", config.tkc_src_root))
config.substitutions.append(("%python", config.python))
config.substitutions.append((
    "%expect_exit",
    config.python + " " + os.path.join(config.tkc_src_root, "test", "utils", "expect_exit.py")))

if config.tkc_build_compiler:
    config.available_features.add("tkc")
    config.substitutions.append(("%tkc", os.path.join(config.tkc_tools_dir, "tkc")))
    # FileCheck and not come from llvm-14-tools; put their folder first.
    llvm_bin = os.path.dirname(config.filecheck)
    config.environment["PATH"] = os.pathsep.join(
        [llvm_bin, config.environment.get("PATH", "")])

kittens_include = os.path.join(config.tkc_src_root, "kittens", "include")
config.substitutions.append(("%kittens_include", kittens_include))

if config.nvcc and os.path.exists(config.nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.nvcc))
    config.substitutions.append((
        "%sm90_flags",
        "-gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 "
        "--expt-relaxed-constexpr -I" + kittens_include))
    config.substitutions.append(("%cublas_libs", "-lcublas"))


def sm90_gpu_present():
    """True when nvidia-smi lists a GPU of compute capability 9.x."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and any(
        line.strip().startswith("9.") for line in out.stdout.splitlines())


if "nvcc" in config.available_features and sm90_gpu_present():
    config.available_features.add("gpu")

if not config.tkc_build_compiler:
    # Only the kittens and GPU tests make sense without the compiler.
    config.excludes += ["Parse", "AST", "Driver", "Sema", "Emit", "Passes", "Diagnostics"]
