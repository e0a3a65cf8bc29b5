"""Exceptions the tkc Python package raises."""


class TkcError(Exception):
    """Base class of every error this package raises on purpose."""


class ToolNotFoundError(TkcError):
    """tkc, nvcc or the kittens/runtime headers could not be found."""


class CompileError(TkcError):
    """tkc or nvcc failed; the message carries their command line and output."""


class ManifestError(TkcError):
    """A `tkc --emit=manifest` document this loader cannot use."""


class LaunchError(TkcError, RuntimeError):
    """A generated launcher refused its arguments (its tkc::runtime::Status)."""


class TkcWarning(UserWarning):
    """Something tkc warned about while compiling a spec (its message, e.g. a feature with a
    known defect); the build went on."""
