"""The real ``cerebras_pytorch`` 2.10.0 code, loaded as an oracle under the installed torch.

The wheels pin torch 2.4 and ship a 290 MB native library, so they are never installed. We
download them with ``pip download --no-deps``, unpack only their Python sources, and import the
metric, optimizer, scheduler, AMP and checkpoint modules under a stub ``cerebras.pytorch``
package whose few runtime hooks behave as on a CPU backend: step closures run at once,
``use_cs()`` is False and ``make_constant`` is the identity. The modules then run as written.

``load()`` returns the stub package or raises ``OracleUnavailable`` with the reason, which the
tests turn into a skip: the only acceptable reason to skip is that the wheel cannot be fetched.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib
import os
import subprocess
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

import torch

VERSION = "2.10.0"
WHEELS = (f"cerebras_pytorch=={VERSION}", f"cerebras-appliance=={VERSION}")
# Unpacked sources live outside the repository; CI's clean clone downloads them once.
CACHE = (
    Path(os.environ.get("TORCHTALLY_ORACLE_CACHE", Path.home() / ".cache" / "torchtally-oracles"))
    / f"cerebras-{VERSION}"
)


class OracleUnavailable(RuntimeError):
    """The Cerebras wheels could not be downloaded or unpacked."""


def _fetch() -> Path:
    root = CACHE / "src"
    if (CACHE / ".complete").exists():
        return root
    CACHE.mkdir(parents=True, exist_ok=True)
    # Test workers (pytest -n) may start on a clean cache together: one downloads and
    # unpacks while the others wait, then find it complete.
    with (CACHE / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _fetch_locked(root)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _fetch_locked(root: Path) -> Path:
    done = CACHE / ".complete"
    if done.exists():
        return root
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    if not list(wheels.glob("cerebras_pytorch-*.whl")) or not list(
        wheels.glob("cerebras_appliance-*.whl")
    ):
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-q",
            "-d",
            str(wheels),
            *WHEELS,
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:  # pragma: no cover - network
            raise OracleUnavailable(f"pip download of {WHEELS} failed: {exc}") from exc
        if proc.returncode != 0:  # pragma: no cover - network
            raise OracleUnavailable(
                f"pip download of {WHEELS} failed (exit {proc.returncode}): {proc.stderr[-2000:]}"
            )
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                # Python sources only: the native library is neither loadable nor needed.
                if name.startswith("cerebras/") and name.endswith((".py", ".json", ".yaml")):
                    zf.extract(name, root)
    done.touch()
    return root


def _closure_now(fn: Any) -> Any:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return run


def _package(name: str, path: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]  # submodules import from source; __init__ is not executed
    module.__package__ = name
    sys.modules[name] = module
    return module


@functools.cache
def load() -> types.ModuleType:
    """Return the stub ``cerebras.pytorch`` package with the real submodules importable."""
    if "cerebras" in sys.modules and not hasattr(sys.modules["cerebras"], "_torchtally_oracle"):
        raise OracleUnavailable("another `cerebras` package is already imported")
    root = _fetch()
    cerebras = _package("cerebras", root / "cerebras")
    cerebras._torchtally_oracle = True  # type: ignore[attr-defined]
    # The appliance package's __init__ pulls in grpc clients; its small utility modules do not.
    appliance = _package("cerebras.appliance", root / "cerebras" / "appliance")
    cerebras.appliance = appliance  # type: ignore[attr-defined]
    cs = _package("cerebras.pytorch", root / "cerebras" / "pytorch")
    cerebras.pytorch = cs  # type: ignore[attr-defined]

    # The runtime hooks the metric/optimizer/AMP code calls, as a CPU backend provides them.
    cs.use_cs = lambda: False
    cs.make_constant = lambda t: t
    cs.zeros_like = torch.zeros_like
    cs.ones_like = torch.ones_like
    cs.full_like = torch.full_like
    cs.zeros = torch.zeros
    cs.ones = torch.ones
    cs.full = torch.full
    cs.step_closure = _closure_now
    cs.current_backend = lambda *a, **k: None
    cs.current_backend_impl = lambda *a, **k: None
    cs.name_scope = lambda *a, **k: contextlib.nullcontext()
    cs.backends = types.SimpleNamespace()
    # `optim/optimizer.py` reads this flag at import to swap in doc-only base classes.
    cs._generating_docs = False

    # The real `backend` package imports the lazy-tensor runtime; the optimizer, scheduler and
    # grad-scaler code only needs `current_backend_impl()`/`use_cs()` and the backend object below.
    backend_mod = types.ModuleType("cerebras.pytorch.backend")
    backend_mod.current_backend_impl = lambda *a, **k: _CPU_BACKEND  # type: ignore[attr-defined]
    backend_mod.current_backend = lambda *a, **k: _CPU_BACKEND  # type: ignore[attr-defined]
    backend_mod.use_cs = lambda: False  # type: ignore[attr-defined]
    sys.modules["cerebras.pytorch.backend"] = backend_mod
    cs.backend = backend_mod
    cs.current_backend_impl = backend_mod.current_backend_impl  # type: ignore[attr-defined]
    cs.current_backend = backend_mod.current_backend  # type: ignore[attr-defined]

    # `amp/_amp_state.py` asks whether this process is the master ordinal (the dataloader
    # workers of a CSX run are not); a single CPU process always is.
    dist_mod = types.ModuleType("cerebras.pytorch.distributed")
    dist_mod.is_master_ordinal = lambda: True  # type: ignore[attr-defined]
    sys.modules["cerebras.pytorch.distributed"] = dist_mod
    cs.distributed = dist_mod

    # `utils/__init__` imports the dataloader benchmark, which needs a psutil private type;
    # `amp` only needs `utils.call_once`, importable from the bare package.
    cs.utils = _package("cerebras.pytorch.utils", root / "cerebras" / "pytorch" / "utils")
    return cs


class _BackendType:
    """The CPU backend's type flags (the code branches on `is_csx`/`is_cpu`). The grad
    scaler only scales on a CSX backend: its tests switch `is_csx` on with `as_csx()`."""

    is_csx = False
    is_cpu = True
    is_gpu = False
    name = "CPU"


class _CPUBackend:
    """What `current_backend_impl()` returns on a CPU run, reduced to the hooks the
    optimizer, scheduler and grad-scaler code calls: a device context, an optimizer
    registry, and no-op graph markers (`mark_output`, `name_scope`, `setup_grad_scaler`)."""

    backend_type = _BackendType()

    def __init__(self) -> None:
        self.device = _NullDevice()
        self.optimizer_registry: list[Any] = []

    def register_optimizer(self, optimizer: Any) -> None:
        # Tests build many optimizers: only the newest is "the" optimizer of the run, as when a
        # real script builds one backend and one optimizer.
        self.optimizer_registry[:] = [optimizer]

    torch_device = torch.device("cpu")

    def setup_scheduler(self, scheduler: Any) -> None:
        # As the base backend does: register with the optimizer, keep `last_epoch` a tensor.
        scheduler.optimizer._schedulers_registry[scheduler] = None
        scheduler.device = self.torch_device
        if not isinstance(scheduler.last_epoch, torch.Tensor):
            scheduler.last_epoch = torch.tensor(scheduler.last_epoch, dtype=torch.int64)

    @property
    def is_csx(self) -> bool:
        # The checkpoint writer/reader asks the backend object itself (`backend.is_csx`).
        return bool(self.backend_type.is_csx)

    def to_cpu(self, tensor: Any) -> Any:
        # The checkpoint serializer moves tensors through the backend; on CPU that is `.to`.
        return tensor.to("cpu") if isinstance(tensor, torch.Tensor) else tensor

    def setup_grad_scaler(self, scaler: Any) -> None:
        pass

    def mark_output(self, *args: Any, **kwargs: Any) -> None:
        pass

    def name_scope(self, *args: Any, **kwargs: Any) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


class _NullDevice(contextlib.nullcontext):  # type: ignore[type-arg]
    torch_device = torch.device("cpu")
    type = "cpu"


_CPU_BACKEND = _CPUBackend()


@contextlib.contextmanager
def as_csx() -> Any:
    """Make the stub backend report a CSX device: the grad scaler's scaling, overflow checks
    and dynamic scale then run (on CPU tensors) as on a Cerebras system."""
    _BackendType.is_csx, _BackendType.is_cpu = True, False
    try:
        yield
    finally:
        _BackendType.is_csx, _BackendType.is_cpu = False, True


def module(name: str) -> types.ModuleType:
    """Import ``cerebras.pytorch.<name>`` (e.g. ``"metrics"``) from the real sources."""
    cs = load()
    if name.split(".")[0] == "optim":
        # Schedulers call `cstorch.amp.update_if_finite` on every step.
        module("amp")
    mod = importlib.import_module(f"cerebras.pytorch.{name}")
    head = name.split(".")[0]
    setattr(cs, head, importlib.import_module(f"cerebras.pytorch.{head}"))
    if head == "amp":
        state = importlib.import_module("cerebras.pytorch.amp._amp_state")._amp_state
        if not hasattr(state, "handle"):
            # `amp.init()` installs a handle that patches torch functions to cast; mixed
            # precision is off here, so the no-op handle (what the scaler's step enters).
            handle = importlib.import_module("cerebras.pytorch.amp.handle")
            state.handle = handle.NoOpHandle()
    return mod
