"""Finds the tools, computes the cache key, and builds a shared library from a
spec: `tkc --emit=manifest`, `tkc --emit=cuda`, the shim, then nvcc.

A build happens in a fresh folder next to its final place in the cache and is
renamed into place when it is complete, so a crash or a concurrent build never
leaves a half-written entry behind; a per-entry lock file keeps two processes
from compiling the same thing at once.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .errors import CompileError, TkcWarning, ToolNotFoundError
from .manifest import Manifest, parse_manifest
from .shim import SHIM_ABI_VERSION, generate_shim

#: Bump when what the loader writes or how it compiles changes meaning.
#: 2: runtime scalars (manifest format 2, shim ABI 2).
LOADER_VERSION = 2

#: The nvcc flags every generated kernel needs besides the -gencode
#: (docs/Integration.md).
BASE_NVCC_FLAGS = ("-std=c++20", "-O3", "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC",
                   "-shared")

_SOURCE_ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Toolchain:
    tkc: Path
    nvcc: Path
    include_dirs: Tuple[Path, ...]


def _which(name: str) -> Optional[Path]:
    found = shutil.which(name)
    return Path(found) if found else None


def find_tkc(explicit=None) -> Path:
    """explicit, else $TKC_EXECUTABLE, else `tkc` on PATH, else this source
    tree's build/bin/tkc."""
    for candidate, origin in ((explicit, "the tkc= argument"),
                              (os.environ.get("TKC_EXECUTABLE"), "TKC_EXECUTABLE")):
        if candidate:
            path = Path(candidate)
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise ToolNotFoundError("%s names '%s', which is not an executable file"
                                        % (origin, candidate))
            return path.resolve()
    found = _which("tkc") or next((p for p in [_SOURCE_ROOT / "build" / "bin" / "tkc"]
                                   if p.is_file()), None)
    if not found:
        raise ToolNotFoundError("cannot find the tkc executable: set TKC_EXECUTABLE, pass tkc=, "
                                "or put tkc on PATH")
    return found.resolve()


def find_nvcc(explicit=None) -> Path:
    """explicit, else $TKC_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc."""
    for candidate, origin in ((explicit, "the nvcc= argument"),
                              (os.environ.get("TKC_NVCC"), "TKC_NVCC")):
        if candidate:
            path = Path(candidate)
            if not path.is_file():
                raise ToolNotFoundError("%s names '%s', which does not exist" % (origin, candidate))
            return path
    found = _which("nvcc") or next((p for p in [Path("/usr/local/cuda/bin/nvcc")] if p.is_file()),
                                   None)
    if not found:
        raise ToolNotFoundError("cannot find nvcc (CUDA 13): set TKC_NVCC, pass nvcc=, or put it "
                                "on PATH")
    return found


def find_include_dirs(tkc: Path, explicit: Optional[Sequence] = None) -> Tuple[Path, ...]:
    """Folders holding <kittens/kittens.cuh> and <tkc/runtime/Check.h>:
    explicit, else $TKC_INCLUDE_DIR, else the install prefix of tkc
    (<prefix>/include), else this source tree's kittens/include and
    runtime/include."""
    if explicit:
        candidates = [tuple(Path(p) for p in explicit)]
    elif os.environ.get("TKC_INCLUDE_DIR"):
        candidates = [tuple(Path(p) for p in os.environ["TKC_INCLUDE_DIR"].split(os.pathsep) if p)]
    else:
        candidates = [(tkc.parent.parent / "include",),
                      (_SOURCE_ROOT / "kittens" / "include", _SOURCE_ROOT / "runtime" / "include")]
    for dirs in candidates:
        has = lambda rel: any((d / rel).is_file() for d in dirs)  # noqa: E731
        if has("kittens/kittens.cuh") and has("tkc/runtime/Check.h"):
            return tuple(d.resolve() for d in dirs)
    raise ToolNotFoundError("cannot find the kittens and runtime headers (kittens/kittens.cuh, "
                            "tkc/runtime/Check.h) in %s; set TKC_INCLUDE_DIR"
                            % " or ".join(os.pathsep.join(map(str, c)) for c in candidates))


def find_spec_dir(tkc: Optional[Path] = None) -> Path:
    """The folder of the shipped kernel specs (kernels-spec, which tkc.functional builds
    from): $TKC_SPEC_DIR, else this source tree's kernels-spec, else <tkc's
    prefix>/share/tkc/kernels-spec, where `cmake --install` puts them."""
    env = os.environ.get("TKC_SPEC_DIR")
    if env:
        if not (Path(env) / "attention_bwd.yaml").is_file():
            raise ToolNotFoundError("TKC_SPEC_DIR names '%s', which holds no attention_bwd.yaml"
                                    % env)
        return Path(env)
    candidates = [_SOURCE_ROOT / "kernels-spec"]
    try:
        candidates.append((tkc or find_tkc()).parent.parent / "share" / "tkc" / "kernels-spec")
    except ToolNotFoundError:
        pass
    for c in candidates:
        if (c / "attention_bwd.yaml").is_file():
            return c
    raise ToolNotFoundError("cannot find the kernel specs (attention_bwd.yaml) in %s; set "
                            "TKC_SPEC_DIR" % " or ".join(str(c) for c in candidates))


def find_toolchain(tkc=None, nvcc=None, include_dirs=None) -> Toolchain:
    t = find_tkc(tkc)
    return Toolchain(t, find_nvcc(nvcc), find_include_dirs(t, include_dirs))


def default_cache_dir() -> Path:
    """$TKC_CACHE_DIR, else ~/.cache/tkc."""
    env = os.environ.get("TKC_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "tkc"


def param_value_text(value) -> str:
    """The spelling tkc's --param takes: booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise TypeError("parameter values must be bool, int, float or str, found %s"
                    % type(value).__name__)


def param_options(params: Dict[str, object]) -> List[str]:
    """`--param NAME=VALUE` options for `params` (a list or tuple of values
    keeps each), sorted so equal requests give equal command lines."""
    pairs = set()
    for name, value in params.items():
        values = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
        if not values:
            raise ValueError("parameter '%s' has an empty list of values" % name)
        for v in values:
            pairs.add((str(name), param_value_text(v)))
    out = []
    for name, value in sorted(pairs):
        out += ["--param", "%s=%s" % (name, value)]
    return out


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _sha256_tree(dirs: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for d in dirs:
        for path in sorted(p for p in d.rglob("*") if p.is_file()):
            h.update(str(path.relative_to(d)).encode() + b"\0")
            h.update(_sha256_file(path).encode())
    return h.hexdigest()


def _run(cmd: Sequence[str], what: str, warnings_out: Optional[List[str]] = None) -> str:
    """Runs `cmd`; raises CompileError if it fails. On success, what it printed on stderr goes
    to `warnings_out` when given."""
    try:
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    except OSError as e:
        raise CompileError("%s: cannot run %s: %s" % (what, cmd[0], e)) from None
    if r.returncode != 0:
        raise CompileError("%s failed (exit code %d)\ncommand: %s\n%s"
                           % (what, r.returncode, " ".join(map(str, cmd)),
                              (r.stderr + r.stdout).strip()))
    if warnings_out is not None and r.stderr.strip():
        warnings_out.append(r.stderr.strip())
    return r.stdout


def tool_version(path: Path) -> str:
    return _run([path, "--version"], "%s --version" % path.name).strip()


def cache_key_inputs(spec_text: bytes, spec_name: str, params: Dict[str, object],
                     arch: Optional[str], toolchain: Toolchain,
                     extra_nvcc_flags: Sequence[str] = ()) -> Dict[str, object]:
    """Everything a build depends on, as a JSON-able dict (written next to the
    library as key.json)."""
    return {
        "loader_version": LOADER_VERSION,
        "shim_abi_version": SHIM_ABI_VERSION,
        "spec_name": spec_name,
        "spec_sha256": hashlib.sha256(spec_text).hexdigest(),
        "params": param_options(params),
        "arch": arch or "",
        "tkc_version": tool_version(toolchain.tkc),
        "tkc_sha256": _sha256_file(toolchain.tkc),
        "nvcc_version": tool_version(toolchain.nvcc),
        "headers_sha256": _sha256_tree(toolchain.include_dirs),
        "nvcc_flags": list(BASE_NVCC_FLAGS) + list(extra_nvcc_flags),
    }


def cache_key(inputs: Dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:24]


def tkc_commands(toolchain: Toolchain, spec: Path, params: Dict[str, object], arch: Optional[str],
                 out_dir: Path, stem: str) -> List[List[str]]:
    """The two tkc runs of a build: the manifest, then the CUDA and header."""
    common = [str(toolchain.tkc), str(spec)] + (["--arch=" + arch] if arch else [])
    common += param_options(params)
    return [common + ["--emit=manifest", "-o", str(out_dir / (stem + ".json"))],
            common + ["--emit=cuda", "-o", str(out_dir / (stem + ".cu")),
                      "--header", str(out_dir / (stem + ".h"))]]


def nvcc_command(toolchain: Toolchain, gencode: str, out_dir: Path, stem: str,
                 extra_nvcc_flags: Sequence[str] = ()) -> List[str]:
    cmd = [str(toolchain.nvcc), gencode, *BASE_NVCC_FLAGS]
    cmd += ["-I" + str(d) for d in toolchain.include_dirs] + ["-I" + str(out_dir)]
    cmd += list(extra_nvcc_flags)
    cmd += [str(out_dir / (stem + ".cu")), str(out_dir / (stem + "_shim.cu")),
            "-o", str(out_dir / ("lib%s.so" % stem))]
    return cmd


@dataclass
class Built:
    """A complete cache entry."""
    directory: Path
    library: Path
    manifest: Manifest
    from_cache: bool


def _entry(directory: Path, stem: str, from_cache: bool) -> Optional[Built]:
    library = directory / ("lib%s.so" % stem)
    manifest = directory / (stem + ".json")
    if not (library.is_file() and manifest.is_file()):
        return None
    return Built(directory, library, parse_manifest(manifest.read_text()), from_cache)


def build(spec, params: Optional[Dict[str, object]] = None, arch: Optional[str] = None,
          toolchain: Optional[Toolchain] = None, cache_dir=None,
          extra_nvcc_flags: Sequence[str] = (), verbose: bool = True) -> Built:
    """Builds (or finds in the cache) the shared library for `spec` with
    `params`; no torch or GPU needed."""
    spec = Path(spec)
    try:
        spec_text = spec.read_bytes()
    except OSError as e:
        raise FileNotFoundError("cannot read the spec '%s': %s" % (spec, e.strerror)) from None
    params = dict(params or {})
    toolchain = toolchain or find_toolchain()
    cache_root = Path(cache_dir) if cache_dir else default_cache_dir()
    inputs = cache_key_inputs(spec_text, spec.name, params, arch, toolchain, extra_nvcc_flags)
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in spec.stem) or "spec"
    final = cache_root / ("%s-%s" % (stem, cache_key(inputs)))
    hit = _entry(final, stem, True)
    if hit:
        return hit

    cache_root.mkdir(parents=True, exist_ok=True)
    import fcntl
    with open(str(final) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        hit = _entry(final, stem, True)  # another process built it meanwhile
        if hit:
            return hit
        work = Path(tempfile.mkdtemp(prefix=final.name + ".", dir=cache_root))
        try:
            (work / "key.json").write_text(json.dumps(inputs, indent=2, sort_keys=True) + "\n")
            what = ", ".join(param_options(params)[1::2]) or "all instantiations"
            if verbose:
                print("tkc: building %s (%s) with nvcc; cache: %s" % (spec.name, what, final),
                      file=sys.stderr, flush=True)
            start = time.monotonic()
            said: List[str] = []
            for cmd in tkc_commands(toolchain, spec, params, arch, work, stem):
                _run(cmd, "tkc", said)
            for text in dict.fromkeys(said):  # each command may say the same
                warnings.warn(text, TkcWarning, stacklevel=2)
            manifest = parse_manifest((work / (stem + ".json")).read_text())
            if not manifest.kernels:
                raise CompileError("tkc produced no kernels for %s" % spec.name)
            (work / (stem + "_shim.cu")).write_text(generate_shim(manifest, stem + ".h"))
            cmd = nvcc_command(toolchain, manifest.nvcc_gencode, work, stem, extra_nvcc_flags)
            (work / "build.sh").write_text(" ".join(cmd) + "\n")
            _run(cmd, "nvcc")
            if verbose:
                print("tkc: built %d launcher%s in %.1f s" % (len(manifest.kernels),
                                                           "" if len(manifest.kernels) == 1
                                                           else "s", time.monotonic() - start),
                      file=sys.stderr, flush=True)
            if final.exists():
                shutil.rmtree(final)  # an incomplete entry from an older crash
            os.rename(work, final)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return _entry(final, stem, False)
