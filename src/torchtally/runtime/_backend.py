"""`backend(...)`: where a cstorch program runs (CPU or a CUDA GPU) and how.

cstorch's backends are "CSX" (a Cerebras Wafer-Scale Cluster), "CPU" and "GPU". torchtally runs
the same programs on stock PyTorch, so it offers "CPU" and "GPU"; asking for "CSX" is an error
that says a Cerebras system is required. Creating a backend makes it the current one, which
`compile`, traced steps and checkpointing consult.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any, final, overload

import torch

from torchtally._errors import check_int
from torchtally.runtime._distributed import init_process_group_from_env, local_rank

__all__ = [
    "BACKEND_TYPES",
    "Backend",
    "BackendType",
    "backend",
    "current_backend",
    "set_current_backend",
]


class BackendType(str, enum.Enum):
    """Which kind of backend runs the program, as cstorch's `BackendType` enum.

    Members compare equal to their names ("CPU" == BackendType.CPU), so code written against
    the earlier string form keeps working. CSX exists so that model-zoo checks such as
    `backend.backend_type.is_csx` read False; a CSX backend cannot be created here.

    Example:
        >>> b = backend("CPU")
        >>> b.backend_type.name, b.backend_type.is_csx
        ('CPU', False)
    """

    CPU = "CPU"
    GPU = "GPU"
    CSX = "CSX"

    @property
    def is_cpu(self) -> bool:
        """Whether this is the CPU backend type."""
        return self is BackendType.CPU

    @property
    def is_gpu(self) -> bool:
        """Whether this is the GPU backend type."""
        return self is BackendType.GPU

    @property
    def is_csx(self) -> bool:
        """Whether this is the Cerebras cluster backend type (never true for a live backend)."""
        return self is BackendType.CSX

    def __str__(self) -> str:
        return self.value

    @staticmethod
    def from_str(backend_type: str) -> BackendType:
        """The member named `backend_type`, in any case (e.g. "cpu")."""
        if not isinstance(backend_type, str) or backend_type.upper() not in BackendType.__members__:
            raise ValueError(
                "Argument `backend_type` must be one of 'CPU', 'GPU', 'CSX'. "
                f"Received: backend_type={backend_type!r}"
            )
        return BackendType[backend_type.upper()]


BACKEND_TYPES = ("CPU", "GPU")
# The keyword arguments of torch.compile that a backend's `compile` option may carry.
_COMPILE_KEYS = ("fullgraph", "dynamic", "backend", "mode", "options", "disable")

_current: Backend | None = None


@final
class Backend:
    """A configured place to run: its device, checkpoint policy and step compilation.

    Build one with `backend(...)` rather than directly.

    Args:
        backend_type: `BackendType.CPU` or `BackendType.GPU` (equal to "CPU" / "GPU").
        device: The torch device parameters and steps live on.
        artifact_dir: Where backend artifacts go (created when first written to).
        max_checkpoints: Keep only this many newest checkpoints written by `save`, or None.
        compile_options: Keyword arguments for `torch.compile` of traced steps, or None to
            run steps eagerly.
        mixed_precision: Run compiled models' forward passes under autocast.
        distributed: Whether models are wrapped in DistributedDataParallel.

    Example:
        >>> b = backend("CPU", max_checkpoints=3)
        >>> b.device
        device(type='cpu')
    """

    is_csx = False

    def __init__(
        self,
        backend_type: BackendType | str,
        device: torch.device,
        *,
        artifact_dir: Path,
        max_checkpoints: int | None,
        compile_options: dict[str, Any] | None,
        mixed_precision: bool,
        distributed: bool,
    ) -> None:
        self.backend_type = BackendType.from_str(str(backend_type))
        self.device = device
        self.artifact_dir = artifact_dir
        self.max_checkpoints = max_checkpoints
        self.compile_options = compile_options
        self.mixed_precision = mixed_precision
        self.is_distributed = distributed
        self.executor_counter = 0  # numbers the DataExecutors' artifact directories, as cstorch

    @property
    def is_cpu(self) -> bool:
        """Whether this is the CPU backend."""
        return self.backend_type.is_cpu

    @property
    def is_gpu(self) -> bool:
        """Whether this is the GPU backend."""
        return self.backend_type.is_gpu

    def __repr__(self) -> str:
        return (
            f"Backend({self.backend_type.value!r}, device={self.device}, "
            f"compile={self.compile_options}, distributed={self.is_distributed})"
        )


@overload
def backend(backend_type: None = None) -> Backend | None: ...


@overload
def backend(
    backend_type: str | BackendType,
    artifact_dir: str | Path | None = None,
    *,
    max_checkpoints: int | None = None,
    compile: bool | dict[str, Any] | None = None,
    mixed_precision: bool = False,
    device_index: int | None = None,
    enable_distributed: bool = False,
    dist_backend: str | None = None,
) -> Backend: ...


def backend(
    backend_type: str | BackendType | None = None,
    artifact_dir: str | Path | None = None,
    *,
    max_checkpoints: int | None = None,
    compile: bool | dict[str, Any] | None = None,
    mixed_precision: bool = False,
    device_index: int | None = None,
    enable_distributed: bool = False,
    dist_backend: str | None = None,
) -> Backend | None:
    """Create a backend and make it the current one; with no arguments, return the current one.

    Args:
        backend_type: "CPU" or "GPU" (any case, or a `BackendType`). "CSX" needs a Cerebras
            system and raises. None (with no other argument) returns the current backend or
            None, as cstorch's `backend()`.
        artifact_dir: Directory for backend artifacts. Default: `./torchtally_logs`.
        max_checkpoints: If given, `save` keeps only the newest this many checkpoints.
        compile: Compile traced steps with `torch.compile`: True for its defaults, or a dict
            of its keyword arguments, e.g. `{"mode": "reduce-overhead"}` for CUDA graphs (when
            shapes are static). None or False runs steps eagerly. Closures and summaries
            called inside a compiled step are graph breaks, so with `fullgraph=True` call them
            from the loop body instead.
        mixed_precision: Run compiled models' forward passes under autocast, in the half
            dtype chosen with `amp.use_bfloat16`.
        device_index: GPU only: the CUDA device. Default: `LOCAL_RANK` when distributed,
            else the current CUDA device.
        enable_distributed: Join the process group torchrun describes (env vars) and wrap
            compiled models in DistributedDataParallel.
        dist_backend: The process group backend. Default: "nccl" on GPU, "gloo" on CPU.

    Returns:
        The new current `Backend` (the current one, or None, when `backend_type` is None).

    Example:
        >>> # skipped when run as a doctest: it needs a GPU
        >>> b = backend("GPU", compile={"mode": "reduce-overhead"})  # doctest: +SKIP
        >>> with b.device:  # doctest: +SKIP
        ...     model = torch.nn.Linear(4, 2)  # parameters created on the GPU
    """
    if backend_type is None:
        given = (artifact_dir, max_checkpoints, compile, device_index, dist_backend)
        if any(v is not None for v in given) or mixed_precision or enable_distributed:
            raise TypeError(
                "Argument `backend_type` is required to create a backend: pass 'CPU' or 'GPU'. "
                "Call `backend()` with no arguments to get the current backend."
            )
        return _current
    kind = _backend_type(
        backend_type.value if isinstance(backend_type, BackendType) else backend_type
    )
    check_int("max_checkpoints", max_checkpoints, 1, allow_none=True)
    options = _compile_options(compile)
    _check_bool("mixed_precision", mixed_precision)
    _check_bool("enable_distributed", enable_distributed)
    device = (
        _gpu_device(device_index, enable_distributed)
        if kind == "GPU"
        else _cpu_device(device_index)
    )
    if enable_distributed:  # after picking the GPU, so NCCL binds this rank to it
        init_process_group_from_env(dist_backend or ("nccl" if kind == "GPU" else "gloo"))
    result = Backend(
        kind,
        device,
        artifact_dir=Path(artifact_dir) if artifact_dir is not None else Path("torchtally_logs"),
        max_checkpoints=max_checkpoints,
        compile_options=options,
        mixed_precision=mixed_precision,
        distributed=enable_distributed,
    )
    set_current_backend(result)
    return result


def current_backend(raise_exception: bool = False, raise_warning: bool = True) -> Backend | None:
    """The current backend: the one last created by `backend` or used by `compile`.

    Args:
        raise_exception: Raise instead of returning None when there is none.
        raise_warning: Accepted for cstorch compatibility (cstorch warns that this function is
            deprecated in favour of `backend()`); no warning is given here.

    Returns:
        The current `Backend`, or None.

    Example:
        >>> b = backend("CPU")
        >>> current_backend() is b
        True
    """
    if _current is None and raise_exception:
        raise RuntimeError(
            "No backend is current. Create one with `torchtally.backend('CPU')` (or 'GPU') or "
            "compile a model with `torchtally.compile(model, backend)`."
        )
    return _current


def set_current_backend(value: Backend | None) -> None:
    """Make `value` the current backend (None clears it)."""
    global _current
    _current = value


def _backend_type(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"Argument `backend_type` must be a string, one of 'CPU', 'GPU'. "
            f"Received: backend_type={value!r}"
        )
    kind = value.upper()
    if kind == "CSX":
        raise ValueError(
            "Argument `backend_type` 'CSX' requires a Cerebras Wafer-Scale Cluster and the "
            "Cerebras software stack; torchtally runs cstorch programs on stock PyTorch with "
            f"'CPU' or 'GPU'. Received: backend_type={value!r}"
        )
    if kind not in BACKEND_TYPES:
        raise ValueError(
            f"Argument `backend_type` must be one of 'CPU', 'GPU'. Received: backend_type={value!r}"
        )
    return kind


def _compile_options(value: Any) -> dict[str, Any] | None:
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if not isinstance(value, dict):
        raise TypeError(
            "Argument `compile` must be None, a bool or a dict of torch.compile keyword "
            f"arguments. Received: compile={value!r}"
        )
    unknown = sorted(set(value) - set(_COMPILE_KEYS))
    if unknown:
        raise ValueError(
            f"Argument `compile` may only hold the torch.compile keys {', '.join(_COMPILE_KEYS)}. "
            f"Received: compile={value!r}"
        )
    return dict(value)


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"Argument `{name}` must be a bool. Received: {name}={value!r}")


def _cpu_device(device_index: int | None) -> torch.device:
    if device_index is not None:
        raise ValueError(
            "Argument `device_index` applies to the 'GPU' backend only. "
            f"Received: device_index={device_index!r} with backend_type='CPU'"
        )
    return torch.device("cpu")


def _gpu_device(device_index: int | None, distributed: bool) -> torch.device:
    if not torch.cuda.is_available():
        raise RuntimeError(
            "Argument `backend_type` 'GPU' needs CUDA, but torch.cuda.is_available() is False. "
            "Received: backend_type='GPU'"
        )
    if device_index is None:
        device_index = local_rank() if distributed else torch.cuda.current_device()
    count = torch.cuda.device_count()
    check_int("device_index", device_index, 0)
    if device_index >= count:
        raise ValueError(
            f"Argument `device_index` must be < {count} (the number of CUDA devices). "
            f"Received: device_index={device_index}"
        )
    torch.cuda.set_device(device_index)
    return torch.device("cuda", device_index)
