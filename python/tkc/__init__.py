"""tkc from Python: compile a kernel spec and call its launchers on torch
tensors.

    import tkc
    gemm = tkc.load("kernels-spec/gemm.yaml", transpose_b=False, epilogue="bias")
    C = gemm.gemm_bias(A, B, bias)          # C allocated; or out=C

`load` runs tkc, compiles the CUDA and a small extern "C" shim with nvcc into
a shared library, caches it (by a hash of the spec, the parameters, tkc, nvcc,
the headers and the arch) in $TKC_CACHE_DIR or ~/.cache/tkc, and wraps each
launcher with ctypes. See docs/Integration.md.
"""
from .builder import Built, Toolchain, build, default_cache_dir, find_toolchain
from .errors import (CompileError, LaunchError, ManifestError, TkcError, TkcWarning,
                     ToolNotFoundError)
from .manifest import Argument, KernelInfo, Manifest, parse_manifest
from .runtime import Kernel, Module, load_library

__version__ = "0.1.0"

__all__ = ["load", "build", "Module", "Kernel", "Manifest", "KernelInfo", "Argument", "Built",
           "Toolchain", "parse_manifest", "find_toolchain", "default_cache_dir", "TkcError",
           "CompileError", "LaunchError", "ManifestError", "ToolNotFoundError", "TkcWarning"]


def load(spec, *, arch=None, tkc=None, nvcc=None, include_dirs=None, cache_dir=None,
         extra_nvcc_flags=(), verbose=True, params=None, **param_values) -> Module:
    """Compiles `spec` (or finds it in the cache) and returns its kernels.

    Parameters restrict the instantiations like `tkc --param`: `epilogue="gelu"`,
    `transpose_b=True`, or a list to keep several values. `params={...}` takes
    the same as a dict (for parameter names that clash with these keywords).
    `tkc`, `nvcc`, `include_dirs` override $TKC_EXECUTABLE, $TKC_NVCC and
    $TKC_INCLUDE_DIR; `cache_dir` overrides $TKC_CACHE_DIR.
    """
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        raise ImportError("tkc.load needs PyTorch (import torch failed); tkc.build compiles "
                          "without it")
    from .torch_backend import torch_backend
    all_params = dict(params or {})
    all_params.update(param_values)
    built = build(spec, all_params, arch=arch,
                  toolchain=find_toolchain(tkc, nvcc, include_dirs), cache_dir=cache_dir,
                  extra_nvcc_flags=extra_nvcc_flags, verbose=verbose)
    return load_library(built, torch_backend)
