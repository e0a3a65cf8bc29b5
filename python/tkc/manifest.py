"""Reads the JSON that `tkc --emit=manifest` writes (docs/SpecReference.md,
"What --emit=manifest writes") into checked, immutable objects.

Every name that the shim generator pastes into C++ is checked to be an
identifier here, so a malformed manifest cannot inject code.
"""
import json
import math
import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple, Union

from .errors import ManifestError

FORMAT = "tkc-manifest"
FORMAT_VERSION = 2

#: The dtypes a manifest may name, with the C type the launchers take.
C_TYPES = {"bf16": "__nv_bfloat16", "f16": "__half", "f32": "float", "i32": "int",
           "f8e4m3": "__nv_fp8_e4m3", "f8e5m2": "__nv_fp8_e5m2"}

#: The dtypes a runtime scalar may have, with the C type the launchers take
#: it by value as (the shim converts a double to it).
SCALAR_C_TYPES = {"f32": "float"}

#: Keywords of Kernel.__call__ itself: a scalar may not take these names.
RESERVED_KEYWORDS = ("out", "stream")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Dim = Union[int, str]


@dataclass(frozen=True)
class Argument:
    """One pointer argument of a launcher."""
    name: str
    dtype: str
    c_type: str
    dims: Tuple[Dim, ...]
    role: str  # "input", "output" or "accumulated" (added into: read and written)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_output(self) -> bool:
        return self.role in ("output", "accumulated")


@dataclass(frozen=True)
class Scalar:
    """One runtime scalar a launcher takes by value after the sizes."""
    name: str
    dtype: str
    c_type: str
    default: Optional[float]  # None: the caller must give it


@dataclass(frozen=True)
class KernelInfo:
    """One instantiation and its launcher `tkc::kernels::<name>`."""
    name: str
    params: Tuple[Tuple[str, str], ...]
    arguments: Tuple[Argument, ...]
    sizes: Tuple[str, ...]
    scalars: Tuple[Scalar, ...] = ()
    # The spec's launch-time selections (`select:`) when this launcher chooses
    # between kernels at each call, e.g. "wide: D == 64 and N >= 2048"; None if not.
    chooses: Optional[str] = None

    @property
    def inputs(self) -> Tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.is_output)

    @property
    def outputs(self) -> Tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.is_output)

    def signature(self) -> str:
        """A readable signature, e.g. `gemm_bias(A[M, K], B[K, N], bias[N]) -> C[M, N]`;
        scalars follow the inputs as `scale=0.125` (or `scale` without a default)."""
        def show(a):
            return "%s[%s]" % (a.name, ", ".join(str(d) for d in a.dims))
        outs = ", ".join(show(a) for a in self.outputs)
        ins = [show(a) for a in self.inputs]
        ins += [s.name if s.default is None else "%s=%r" % (s.name, s.default)
                for s in self.scalars]
        return "%s(%s) -> %s" % (self.name, ", ".join(ins), outs)


@dataclass(frozen=True)
class Manifest:
    tkc_version: str
    spec: str
    kernel: str
    arch: str
    nvcc_gencode: str
    kernels: Tuple[KernelInfo, ...]

    def by_name(self) -> Dict[str, KernelInfo]:
        return {k.name: k for k in self.kernels}


def _need(obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        raise ManifestError("%s: missing key '%s'" % (where, key))
    value = obj[key]
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ManifestError("%s: '%s' should be %s, found %r" % (where, key, kind.__name__, value))
    return value


def _ident(value, where):
    if not isinstance(value, str) or not _IDENT.match(value):
        raise ManifestError("%s: %r is not a C identifier" % (where, value))
    return value


def _types(obj, where, known, what):
    """(dtype, c_type) of an argument or scalar, each checked against `known`."""
    dtype = _need(obj, "dtype", str, where)
    if dtype not in known:
        raise ManifestError("%s: unknown %s '%s'; this loader knows %s"
                            % (where, what, dtype, ", ".join(known)))
    c_type = _need(obj, "c_type", str, where)
    if c_type != known[dtype]:
        raise ManifestError("%s: c_type '%s' does not match dtype %s" % (where, c_type, dtype))
    return dtype, c_type


def _argument(obj, where) -> Argument:
    name = _ident(_need(obj, "name", str, where), where + ": name")
    where = "%s argument '%s'" % (where, name)
    dtype, c_type = _types(obj, where, C_TYPES, "dtype")
    dims = []
    for d in _need(obj, "dims", list, where):
        if isinstance(d, int) and not isinstance(d, bool):
            if d <= 0:
                raise ManifestError("%s: dimension %d is not positive" % (where, d))
            dims.append(d)
        else:
            dims.append(_ident(d, where + ": dims"))
    if _need(obj, "rank", int, where) != len(dims):
        raise ManifestError("%s: rank %d but %d dims" % (where, obj["rank"], len(dims)))
    role = _need(obj, "role", str, where)
    if role not in ("input", "output", "accumulated"):
        raise ManifestError("%s: role should be input, output or accumulated, found '%s'"
                            % (where, role))
    return Argument(name, dtype, c_type, tuple(dims), role)


def _scalar(obj, where) -> Scalar:
    name = _ident(_need(obj, "name", str, where), where + ": scalar name")
    where = "%s scalar '%s'" % (where, name)
    dtype, c_type = _types(obj, where, SCALAR_C_TYPES, "scalar dtype")
    default = None
    if "default" in obj:
        default = obj["default"]
        if isinstance(default, bool) or not isinstance(default, (int, float)) or \
                not math.isfinite(default):
            raise ManifestError("%s: default should be a finite number, found %r"
                                % (where, default))
        default = float(default)
    return Scalar(name, dtype, c_type, default)


def _kernel(obj, where) -> KernelInfo:
    name = _ident(_need(obj, "name", str, where), where + ": name")
    where = "kernel '%s'" % name
    params = _need(obj, "params", dict, where)
    for key, value in params.items():
        _ident(key, where + ": params")
        if not isinstance(value, str):
            raise ManifestError("%s: parameter '%s' should be a string, found %r"
                                % (where, key, value))
    args = tuple(_argument(a, where) for a in _need(obj, "arguments", list, where))
    names = [a.name for a in args]
    if len(set(names)) != len(names):
        raise ManifestError("%s: argument names repeat: %s" % (where, names))
    sizes = tuple(_ident(s, where + ": sizes") for s in _need(obj, "sizes", list, where))
    used = {d for a in args for d in a.dims if isinstance(d, str)}
    if set(sizes) != used or len(set(sizes)) != len(sizes):
        raise ManifestError("%s: sizes %s do not match the symbols the arguments use %s"
                            % (where, list(sizes), sorted(used)))
    scalars = tuple(_scalar(s, where) for s in _need(obj, "scalars", list, where))
    scalar_names = [s.name for s in scalars]
    if len(set(scalar_names)) != len(scalar_names):
        raise ManifestError("%s: scalar names repeat: %s" % (where, scalar_names))
    for s in scalar_names:
        if s in names:
            raise ManifestError("%s: scalar '%s' has the name of an argument" % (where, s))
        if s in RESERVED_KEYWORDS:
            raise ManifestError("%s: scalar '%s' would be taken for the %s= keyword of a "
                                "kernel call; rename it in the spec" % (where, s, s))
    chooses = obj.get("chooses")
    if chooses is not None and not isinstance(chooses, str):
        raise ManifestError("%s: 'chooses' should be a string, found %r" % (where, chooses))
    return KernelInfo(name, tuple(params.items()), args, sizes, scalars, chooses)


def parse_manifest(text: str) -> Manifest:
    """Parses and checks a manifest; raises ManifestError saying what is wrong."""
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise ManifestError("the manifest is not JSON: %s" % e) from None
    where = "manifest"
    if _need(obj, "format", str, where) != FORMAT:
        raise ManifestError("manifest: format is '%s', expected '%s'" % (obj["format"], FORMAT))
    version = _need(obj, "format_version", int, where)
    if version != FORMAT_VERSION:
        raise ManifestError("manifest: format_version %d; this loader reads version %d "
                            "(use a matching tkc)" % (version, FORMAT_VERSION))
    kernels = tuple(_kernel(k, where) for k in _need(obj, "kernels", list, where))
    names = [k.name for k in kernels]
    if len(set(names)) != len(names):
        raise ManifestError("manifest: kernel names repeat: %s" % names)
    return Manifest(
        tkc_version=_need(obj, "tkc_version", str, where),
        spec=_need(obj, "spec", str, where),
        kernel=_need(obj, "kernel", str, where),
        arch=_need(obj, "arch", str, where),
        nvcc_gencode=_need(obj, "nvcc_gencode", str, where),
        kernels=kernels)
