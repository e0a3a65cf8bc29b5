"""Binds Python arguments to one launcher: which tensor is which argument,
whether device, dtype, rank, shape and contiguity are right, what the size
symbols are, which outputs must be allocated, and the value of each runtime
scalar (given by name, else its default).

Pure Python: tensors are reached only through a *backend* (the torch one is
in torch_backend.py), so every check here runs without torch or a GPU.
A backend provides:

    is_tensor(x) -> bool
    dtype_name(t) -> str | None          # "bf16", "f16", "f32", "i32" or None
    describe_dtype(t) -> str             # e.g. "torch.float32"
    expected_dtype(name) -> str          # e.g. "torch.bfloat16"
    device(t) -> (type: str, index: int)
    shape(t) -> tuple[int, ...]
    strides(t) -> tuple[int, ...]
    is_contiguous(t) -> bool
    requires_grad(t) -> bool             # True only while autograd would record the call
    empty(shape, dtype_name, device) -> tensor

and, for launch_stream:

    current_stream(device) -> int        # the cudaStream_t calls launch on by default
    stream_info(stream) -> (int, (type, index) | None) | None   # None: not a stream
"""
import math
import numbers
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from .manifest import Argument, KernelInfo


@dataclass
class BoundCall:
    tensors: List[object]        # in launcher order (inputs and outputs)
    sizes: List[int]             # in the launcher's size order
    outputs: List[object]        # the output tensors, in launcher order
    device: Tuple[str, int]
    scalars: List[float] = field(default_factory=list)  # in the launcher's scalar order
    allocated: List[object] = field(default_factory=list)  # the outputs bind allocated


NO_BACKWARD = ("tkc.load kernels have no backward yet; call them under torch.no_grad() or pass "
               "tensors that do not require grad")


def _dims_text(arg: Argument) -> str:
    return "[%s]" % ", ".join(str(d) for d in arg.dims)


_F32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]


def scalar_values(kernel: KernelInfo, given: Dict[str, object]) -> List[float]:
    """The value of each of `kernel`'s scalars in order: from `given` (by
    name) or the default. Raises TypeError for a missing scalar without a
    default or a value that is not a real number, ValueError for a finite
    value the scalar's dtype cannot hold."""
    values = []
    for s in kernel.scalars:
        if s.name not in given:
            if s.default is None:
                raise TypeError("%s() is missing scalar '%s' (it has no default); signature: %s"
                                % (kernel.name, s.name, kernel.signature()))
            values.append(s.default)
            continue
        v = given[s.name]
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError("%s: scalar '%s' must be a real number, found %s"
                            % (kernel.name, s.name, type(v).__name__))
        v = float(v)
        if s.dtype == "f32" and math.isfinite(v) and abs(v) > _F32_MAX:
            raise ValueError("%s: scalar '%s' = %r does not fit in f32" % (kernel.name, s.name, v))
        values.append(v)
    return values


def _collect(kernel: KernelInfo, args, kwargs, out) -> Dict[str, object]:
    """Maps argument names to what the caller passed (None: not given).
    Scalars given by name stay in `kwargs`' place: see `bind`."""
    inputs, outputs = kernel.inputs, kernel.outputs
    given: Dict[str, object] = {}
    if len(args) > len(inputs):
        raise TypeError("%s() takes %d positional inputs (%s), %d were given; outputs go in "
                        "out= or by name" % (kernel.name, len(inputs),
                                             ", ".join(a.name for a in inputs), len(args)))
    for arg, value in zip(inputs, args):
        given[arg.name] = value
    names = {a.name for a in kernel.arguments}
    for key, value in kwargs.items():
        if key not in names:
            known = [a.name for a in kernel.arguments] + [s.name for s in kernel.scalars]
            raise TypeError("%s() got an unexpected keyword argument '%s'; its arguments are %s"
                            % (kernel.name, key, ", ".join(known)))
        if key in given:
            raise TypeError("%s() got two values for '%s'" % (kernel.name, key))
        given[key] = value
    if out is not None:
        if len(outputs) == 1 and not isinstance(out, (tuple, list, dict)):
            out = (out,)
        if isinstance(out, dict):
            unknown = set(out) - {a.name for a in outputs}
            if unknown:
                raise TypeError("%s(): out= names %s, which are not outputs; outputs are %s"
                                % (kernel.name, sorted(unknown), [a.name for a in outputs]))
            items = list(out.items())
        else:
            if len(out) != len(outputs):
                raise TypeError("%s(): out= has %d tensors; the kernel has %d outputs (%s)"
                                % (kernel.name, len(out), len(outputs),
                                   ", ".join(a.name for a in outputs)))
            items = [(a.name, t) for a, t in zip(outputs, out)]
        for name, value in items:
            if name in given:
                raise TypeError("%s() got two values for output '%s'" % (kernel.name, name))
            given[name] = value
    missing = [a.name for a in inputs if given.get(a.name) is None]
    if missing:
        raise TypeError("%s() is missing input%s %s; signature: %s"
                        % (kernel.name, "s" if len(missing) > 1 else "",
                           ", ".join("'%s'" % m for m in missing), kernel.signature()))
    return given


def bind(kernel: KernelInfo, backend, args, kwargs, out=None) -> BoundCall:
    """Checks the caller's tensors against `kernel` and allocates missing
    outputs. Keywords that name one of the kernel's scalars give its value.
    Raises TypeError (wrong kind or dtype, bad argument list, a missing
    scalar), ValueError (device, shape, contiguity, a scalar out of range) or
    RuntimeError (a tensor that requires grad while autograd records: the
    kernels have no backward) saying which tensor or scalar and why."""
    scalar_names = {s.name for s in kernel.scalars}
    given_scalars = {k: v for k, v in kwargs.items() if k in scalar_names}
    kwargs = {k: v for k, v in kwargs.items() if k not in scalar_names}
    given = _collect(kernel, args, kwargs, out)
    scalars = scalar_values(kernel, given_scalars)
    name = kernel.name
    device = None
    device_owner = None
    symbols: Dict[str, Tuple[int, str, int]] = {}  # symbol -> (value, tensor, dimension)

    for arg in kernel.arguments:
        t = given.get(arg.name)
        if t is None:
            continue
        what = "output" if arg.is_output else "input"
        if not backend.is_tensor(t):
            raise TypeError("%s: %s '%s' must be a tensor, found %s"
                            % (name, what, arg.name, type(t).__name__))
        if backend.requires_grad(t):
            raise RuntimeError("%s: %s '%s' requires grad, and %s"
                               % (name, what, arg.name, NO_BACKWARD))
        dev = backend.device(t)
        if dev[0] != "cuda":
            raise ValueError("%s: %s '%s' is on %s; tkc kernels take CUDA tensors"
                             % (name, what, arg.name, dev[0]))
        if device is None:
            device, device_owner = dev, arg.name
        elif dev != device:
            raise ValueError("%s: '%s' is on cuda:%d but '%s' is on cuda:%d; all tensors must "
                             "be on one device" % (name, arg.name, dev[1], device_owner, device[1]))
        if backend.dtype_name(t) != arg.dtype:
            raise TypeError("%s: %s '%s' has dtype %s; expected %s"
                            % (name, what, arg.name, backend.describe_dtype(t),
                               backend.expected_dtype(arg.dtype)))
        shape = tuple(backend.shape(t))
        if len(shape) != arg.rank:
            raise ValueError("%s: %s '%s' has %d dimension%s %s; expected %d %s"
                             % (name, what, arg.name, len(shape), "" if len(shape) == 1 else "s",
                                list(shape), arg.rank, _dims_text(arg)))
        for i, (dim, extent) in enumerate(zip(arg.dims, shape)):
            if isinstance(dim, int):
                if extent != dim:
                    raise ValueError("%s: %s '%s' has size %d in dimension %d; expected %d"
                                     % (name, what, arg.name, extent, i, dim))
                continue
            if dim in symbols and symbols[dim][0] != extent:
                value, owner, owner_dim = symbols[dim]
                raise ValueError("%s: %s '%s' has %s=%d (dimension %d of %s) but '%s' has %s=%d "
                                 "(dimension %d of %s)"
                                 % (name, what, arg.name, dim, extent, i, _dims_text(arg), owner,
                                    dim, value, owner_dim,
                                    _dims_text(kernel_arg(kernel, owner))))
            symbols.setdefault(dim, (extent, arg.name, i))
        if not backend.is_contiguous(t):
            raise ValueError("%s: %s '%s' is not contiguous (shape %s, strides %s); tkc kernels "
                             "take row-major contiguous tensors: pass .contiguous()"
                             % (name, what, arg.name, list(shape), list(backend.strides(t))))

    if device is None:
        raise ValueError("%s: no tensor was given to take the device from" % name)
    outputs = []
    tensors = []
    allocated = []
    for arg in kernel.arguments:
        t = given.get(arg.name)
        if t is None:  # an output to allocate
            if arg.role == "accumulated":
                raise ValueError("%s: output '%s' is added into (its contents are read): pass it "
                                 "with out=" % (name, arg.name))
            unknown = [d for d in arg.dims if isinstance(d, str) and d not in symbols]
            if unknown:
                raise ValueError("%s: cannot size output '%s' %s: no input gives %s; pass it "
                                 "with out=" % (name, arg.name, _dims_text(arg), ", ".join(unknown)))
            shape = tuple(d if isinstance(d, int) else symbols[d][0] for d in arg.dims)
            t = backend.empty(shape, arg.dtype, device)
            allocated.append(t)
        if arg.is_output:
            outputs.append(t)
        tensors.append(t)
    sizes = [symbols[s][0] for s in kernel.sizes]
    return BoundCall(tensors, sizes, outputs, device, scalars, allocated)


def launch_stream(kernel_name: str, backend, stream, device):
    """The stream a call launches on, as (handle, side): `stream` (a stream
    object of the backend, or a raw cudaStream_t as an int), or the current
    stream of `device` when it is None; `side` says whether it differs from
    that current stream, on which missing outputs were allocated. Raises
    ValueError for a stream of another device than the tensors', TypeError
    for something that is not a stream."""
    current = backend.current_stream(device)
    if stream is None:
        return current, False
    info = None if isinstance(stream, bool) else backend.stream_info(stream)
    if info is None:
        raise TypeError("%s: stream= must be a CUDA stream or a cudaStream_t handle (int), "
                        "found %s" % (kernel_name, type(stream).__name__))
    handle, stream_device = info
    if stream_device is not None and tuple(stream_device) != tuple(device):
        raise ValueError("%s: stream= is a stream of %s:%d but the tensors are on %s:%d; pass a "
                         "stream of %s:%d, or none for its current stream"
                         % (kernel_name, stream_device[0], stream_device[1], device[0], device[1],
                            device[0], device[1]))
    return handle, handle != current


def kernel_arg(kernel: KernelInfo, name: str) -> Argument:
    for a in kernel.arguments:
        if a.name == name:
            return a
    raise KeyError(name)
