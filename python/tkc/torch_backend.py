"""The binding backend for PyTorch tensors (see binding.py). torch is
imported when this backend is first used, not when `tkc` is imported."""


class TorchBackend:
    def __init__(self):
        import torch  # noqa: F401  (raises ImportError with torch's own message)
        self.torch = torch
        self._dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
                        "i32": torch.int32, "f8e4m3": torch.float8_e4m3fn,
                        "f8e5m2": torch.float8_e5m2}
        self._names = {v: k for k, v in self._dtypes.items()}
        self._checked_devices = {}

    def is_tensor(self, x):
        return isinstance(x, self.torch.Tensor)

    def dtype_name(self, t):
        return self._names.get(t.dtype)

    def describe_dtype(self, t):
        return str(t.dtype)

    def expected_dtype(self, name):
        return str(self._dtypes[name])

    def device(self, t):
        d = t.device
        return (d.type, d.index if d.index is not None else 0)

    def shape(self, t):
        return tuple(t.shape)

    def strides(self, t):
        return tuple(t.stride())

    def is_contiguous(self, t):
        return t.is_contiguous()

    def requires_grad(self, t):
        """Whether autograd would record a call with `t`: the kernels have no backward."""
        return bool(t.requires_grad) and self.torch.is_grad_enabled()

    def empty(self, shape, dtype_name, device):
        return self.torch.empty(shape, dtype=self._dtypes[dtype_name],
                                device=self.torch.device(device[0], device[1]))

    def data_ptr(self, t):
        return t.data_ptr()

    def current_stream(self, device):
        return self.torch.cuda.current_stream(device[1]).cuda_stream

    def stream_info(self, stream):
        """(handle, device) of a torch.cuda.Stream (ExternalStream too), (handle, None) of a raw
        cudaStream_t given as an int, whose device cannot be told here; None for anything else."""
        if isinstance(stream, self.torch.cuda.Stream):
            d = stream.device
            return stream.cuda_stream, (d.type, d.index if d.index is not None else 0)
        if isinstance(stream, int):
            return stream, None
        return None

    def record_stream(self, t, stream, device):
        """Marks `t`, allocated on the current stream, as used on `stream` too."""
        if not isinstance(stream, self.torch.cuda.Stream):
            dev = self.torch.device(device[0], device[1])
            stream = (self.torch.cuda.default_stream(dev) if stream == 0 else
                      self.torch.cuda.ExternalStream(stream, device=dev))
        t.record_stream(stream)

    def device_guard(self, device):
        return self.torch.cuda.device(device[1])

    def check_arch(self, device, arch):
        """Refuses a GPU the kernels were not compiled for (sm_90a needs 9.0)."""
        if device in self._checked_devices:
            return
        major, minor = self.torch.cuda.get_device_capability(device[1])
        want = arch[3:].rstrip("a") if arch.startswith("sm_") else ""
        if want and "%d%d" % (major, minor) != want:
            raise RuntimeError("tkc: these kernels are compiled for %s, but cuda:%d (%s) has "
                               "compute capability %d.%d" % (
                                   arch, device[1], self.torch.cuda.get_device_name(device[1]),
                                   major, minor))
        self._checked_devices[device] = True


_backend = None


def torch_backend():
    global _backend
    if _backend is None:
        _backend = TorchBackend()
    return _backend

