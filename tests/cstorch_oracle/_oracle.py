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
    return cs


def module(name: str) -> types.ModuleType:
    """Import ``cerebras.pytorch.<name>`` (e.g. ``"metrics"``) from the real sources."""
    cs = load()
    mod = importlib.import_module(f"cerebras.pytorch.{name}")
    head = name.split(".")[0]
    setattr(cs, head, importlib.import_module(f"cerebras.pytorch.{head}"))
    return mod
