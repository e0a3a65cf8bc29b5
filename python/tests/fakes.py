"""Stand-ins for torch tensors and for tools, so the loader's logic is tested
without torch, a GPU, nvcc or tkc."""
import stat
import sys
import textwrap
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


class FakeTensor:
    def __init__(self, shape, dtype="bf16", device=("cuda", 0), contiguous=True, ptr=0x1000,
                 requires_grad=False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        self.contiguous = contiguous
        self.ptr = ptr
        self.requires_grad = requires_grad

    def strides(self):
        out, step = [], 1
        for extent in reversed(self.shape):
            out.insert(0, step)
            step *= extent
        return tuple(out) if self.contiguous else tuple(reversed(out))


class FakeStream:
    """A stream of one device, as torch.cuda.Stream has them."""

    def __init__(self, handle, device=("cuda", 0)):
        self.handle = handle
        self.device = device


class FakeBackend:
    """The backend interface of tkc.binding over FakeTensor. `grad_enabled`
    plays torch.is_grad_enabled(); `current` is the current stream's handle;
    `recorded` logs record_stream calls as (tensor, stream)."""

    def __init__(self, grad_enabled=True, current=0):
        self.allocated = []
        self.grad_enabled = grad_enabled
        self.current = current
        self.recorded = []

    def is_tensor(self, x):
        return isinstance(x, FakeTensor)

    def dtype_name(self, t):
        return t.dtype if t.dtype in ("bf16", "f16", "f32") else None

    def describe_dtype(self, t):
        return "fake.%s" % t.dtype

    def expected_dtype(self, name):
        return "fake.%s" % name

    def device(self, t):
        return t.device

    def shape(self, t):
        return t.shape

    def strides(self, t):
        return t.strides()

    def is_contiguous(self, t):
        return t.contiguous

    def requires_grad(self, t):
        return t.requires_grad and self.grad_enabled

    def empty(self, shape, dtype_name, device):
        t = FakeTensor(shape, dtype_name, device, ptr=0x9000 + 0x100 * len(self.allocated))
        self.allocated.append(t)
        return t

    def data_ptr(self, t):
        return t.ptr

    def current_stream(self, device):
        return self.current

    def stream_info(self, stream):
        if isinstance(stream, FakeStream):
            return stream.handle, stream.device
        if isinstance(stream, int):
            return stream, None
        return None

    def record_stream(self, t, stream, device):
        self.recorded.append((t, stream))

    def device_guard(self, device):
        import contextlib
        return contextlib.nullcontext()


def write_script(path: Path, body: str) -> Path:
    """An executable Python script at `path`."""
    path.write_text("#!%s\n%s" % (sys.executable, textwrap.dedent(body)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_tkc(path: Path, version="tkc version 9.9.9 (fake)", fail_with=None,
             warn_with=None) -> Path:
    """A tkc that answers --version, writes the test manifest for
    --emit=manifest and stub .cu/.h files for --emit=cuda, and logs its
    command lines; or fails with `fail_with` on stderr and exit code 1. With
    `warn_with`, every run that succeeds prints it on stderr first."""
    return write_script(path, """
        import sys, shutil
        args = sys.argv[1:]
        if args == ["--version"]:
            print(%r); sys.exit(0)
        with open(%r, "a") as log:
            log.write(" ".join(args) + "\\n")
        if %r:
            sys.stderr.write(%r + "\\n"); sys.exit(1)
        if %r:
            sys.stderr.write(%r + "\\n")
        out = args[args.index("-o") + 1]
        if "--emit=manifest" in args:
            shutil.copy(%r, out)
        else:
            open(out, "w").write("// fake cu\\n")
            open(args[args.index("--header") + 1], "w").write("// fake h\\n")
        """ % (version, str(path) + ".log", bool(fail_with), fail_with or "", bool(warn_with),
               warn_with or "", str(DATA / "gemm_bias_residual.json")))


def fake_nvcc(path: Path) -> Path:
    """An nvcc that answers --version, writes the -o file and counts its runs."""
    return write_script(path, """
        import sys
        if sys.argv[1:] == ["--version"]:
            print("nvcc fake"); sys.exit(0)
        with open(%r, "a") as log:
            log.write(" ".join(sys.argv[1:]) + "\\n")
        open(sys.argv[sys.argv.index("-o") + 1], "w").write("not really a library")
        """ % (str(path) + ".log",))


def fake_include(root: Path) -> Path:
    (root / "kittens").mkdir(parents=True, exist_ok=True)
    (root / "tkc" / "runtime").mkdir(parents=True, exist_ok=True)
    (root / "kittens" / "kittens.cuh").write_text("#pragma once\n")
    (root / "tkc" / "runtime" / "Check.h").write_text("#pragma once\n")
    return root


def runs(path: Path) -> int:
    log = Path(str(path) + ".log")
    return len(log.read_text().splitlines()) if log.exists() else 0


