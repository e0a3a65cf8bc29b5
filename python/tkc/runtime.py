"""Loads a built library with ctypes and wraps each launcher as a Python
callable taking tensors."""
import ctypes
from pathlib import Path
from typing import Dict

from .binding import bind, launch_stream
from .errors import LaunchError, TkcError
from .manifest import KernelInfo, Manifest
from .shim import SHIM_ABI_VERSION, shim_symbol

_MESSAGE_BYTES = 4096


class Kernel:
    """One launcher. Call it with the inputs (positionally in the spec's
    order, or by name) and its runtime scalars by name (`scale=0.1`; a scalar
    left out takes its default); outputs are allocated unless given by name
    or with out=. It launches on `stream=` (a stream of the tensors' device,
    or a raw cudaStream_t as an int), else on the device's current stream;
    outputs it allocated for another stream are recorded on that stream
    (record_stream). Returns the output tensor (a tuple when there are
    several)."""

    def __init__(self, info: KernelInfo, function, arch: str, backend_factory):
        self.info = info
        self._function = function
        self._arch = arch
        self._backend_factory = backend_factory

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def params(self) -> Dict[str, str]:
        return dict(self.info.params)

    def __repr__(self):
        return "<tkc kernel %s>" % self.info.signature()

    def __call__(self, *args, out=None, stream=None, **kwargs):
        backend = self._backend_factory()
        call = bind(self.info, backend, args, kwargs, out)
        if hasattr(backend, "check_arch"):
            backend.check_arch(call.device, self._arch)
        with backend.device_guard(call.device):
            handle, side = launch_stream(self.name, backend, stream, call.device)
            self.launch([backend.data_ptr(t) for t in call.tensors], call.sizes, handle,
                        call.scalars)
            # Outputs allocated on the current stream but written on another: the caching
            # allocator must not hand their memory out again before that stream is done.
            if side:
                for t in call.allocated:
                    backend.record_stream(t, stream, call.device)
        return call.outputs[0] if len(call.outputs) == 1 else tuple(call.outputs)

    def launch(self, pointers, sizes, stream: int = 0, scalars=()):
        """The raw launcher: device addresses, sizes and scalar values in the
        launcher's order (`info.arguments`, `info.sizes`, `info.scalars`), a
        cudaStream_t as an integer. No defaults are filled in here: every
        scalar must be given. Raises LaunchError on refusal."""
        info = self.info
        if (len(pointers), len(sizes), len(scalars)) != \
                (len(info.arguments), len(info.sizes), len(info.scalars)):
            raise TypeError("%s.launch: expected %d pointers, %d sizes and %d scalars, found %d, "
                            "%d and %d" % (self.name, len(info.arguments), len(info.sizes),
                                           len(info.scalars), len(pointers), len(sizes),
                                           len(scalars)))
        ptrs = (ctypes.c_void_p * max(1, len(pointers)))(*pointers)
        szs = (ctypes.c_longlong * max(1, len(sizes)))(*sizes)
        vals = (ctypes.c_double * max(1, len(scalars)))(*scalars)
        message = ctypes.create_string_buffer(_MESSAGE_BYTES)
        rc = self._function(ptrs, szs, vals, ctypes.c_void_p(stream or None), message,
                            _MESSAGE_BYTES)
        if rc != 0:
            raise LaunchError(message.value.decode("utf-8", "replace"))


class Module:
    """The kernels of one build, as attributes (`module.gemm_bias`) and in
    `module.kernels`. Callable itself when it holds exactly one kernel."""

    def __init__(self, manifest: Manifest, library: Path, directory: Path, from_cache: bool,
                 backend_factory):
        self.manifest = manifest
        self.library_path = library
        self.cache_dir = directory
        self.from_cache = from_cache
        self._cdll = ctypes.CDLL(str(library))
        abi = self._cdll.tkc_shim_abi_version
        abi.restype = ctypes.c_int
        if abi() != SHIM_ABI_VERSION:
            raise TkcError("%s has shim ABI %d; this loader needs %d (clear the cache)"
                           % (library, abi(), SHIM_ABI_VERSION))
        self.kernels: Dict[str, Kernel] = {}
        for info in manifest.kernels:
            fn = getattr(self._cdll, shim_symbol(info.name))
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_longlong),
                           ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_char_p,
                           ctypes.c_ulonglong]
            self.kernels[info.name] = Kernel(info, fn, manifest.arch, backend_factory)

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError("no kernel '%s' in %s; kernels: %s"
                             % (name, self.manifest.spec, ", ".join(kernels)))

    def __dir__(self):
        return list(super().__dir__()) + list(self.kernels)

    def kernel(self, **params) -> Kernel:
        """The one kernel whose parameters have these values (bools as true/false)."""
        from .builder import param_value_text
        want = {k: param_value_text(v) for k, v in params.items()}
        found = [k for k in self.kernels.values()
                 if all(k.params.get(n) == v for n, v in want.items())]
        if len(found) != 1:
            raise LookupError("%d kernels of %s have %s; kernels: %s"
                              % (len(found), self.manifest.spec, want,
                                 ", ".join("%s %s" % (k.name, k.params)
                                           for k in self.kernels.values())))
        return found[0]

    def __call__(self, *args, **kwargs):
        if len(self.kernels) != 1:
            raise TypeError("%s holds %d kernels (%s); call one of them, or load with parameters "
                            "that select one" % (self.manifest.spec, len(self.kernels),
                                                 ", ".join(self.kernels)))
        return next(iter(self.kernels.values()))(*args, **kwargs)

    def __repr__(self):
        return "<tkc module %s: %s>" % (self.manifest.spec, ", ".join(self.kernels))


def load_library(built, backend_factory) -> Module:
    return Module(built.manifest, built.library, built.directory, built.from_cache,
                  backend_factory)


