"""The real cstorch 2.10 H5 checkpoint writer and reader, loaded on top of `_oracle`.

`cerebras.pytorch.storage.save/load` and `cerebras.appliance.storage` run as written; only the
pieces that talk to the appliance or to the native library are stubbed, as a CPU run sees
them: no backend (so tensors are written from host memory), no lazy tensors, and the RtFx
dtype codes from the real protobuf enum. The writer compresses arrays with LZ4 through
`hdf5plugin`, and the fallback object serializer uses `dill`: both are dev dependencies.

`save(obj, path)` and `load(path)` return what the real functions do; `OracleUnavailable`
(from `_oracle`) is raised when the wheel or a dependency is missing, which tests turn into a
skip.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
from pathlib import Path
from typing import Any

import _oracle
import torch

__all__ = ["load", "module", "save"]


def _stub(name: str, **attrs: Any) -> types.ModuleType:
    """A stub module, or the module already loaded under `name` with any missing `attrs` added.

    Other oracle extensions may have loaded the same modules first; theirs are kept.
    """
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        sys.modules[name] = module
    for key, value in attrs.items():
        if not hasattr(module, key):
            setattr(module, key, value)
    parent, _, child = name.rpartition(".")
    if parent in sys.modules and not hasattr(sys.modules[parent], child):
        setattr(sys.modules[parent], child, module)
    return module


def _package(name: str, path: Path) -> types.ModuleType:
    module = _stub(name)
    if not hasattr(module, "__path__"):
        module.__path__ = [str(path)]  # submodules import from source; __init__ is not run
        module.__package__ = name
    return module


class _Performance:
    compress_weights = False
    transfer_processes = 1


@functools.cache
def _storage() -> types.ModuleType:
    for dep in ("hdf5plugin", "dill", "tqdm", "psutil"):
        try:
            importlib.import_module(dep)
        except ImportError as err:
            raise _oracle.OracleUnavailable(
                f"the cstorch checkpoint oracle needs `{dep}` (pip install {dep})"
            ) from err
    cs = _oracle.load()
    root = Path(cs.__path__[0]).parent
    appliance = sys.modules["cerebras.appliance"]
    appliance.logger = __import__("logging").getLogger("cerebras.appliance")  # type: ignore[attr-defined]
    # The utils and data packages' __init__ modules import grpc clients and protobufs.
    _package("cerebras.appliance.utils", root / "appliance" / "utils")
    _package("cerebras.appliance.data", root / "appliance" / "data")
    # The generated protobuf modules load on their own; their package __init__ needs grpc.
    _package("cerebras.appliance.pb", root / "appliance" / "pb")
    _package("cerebras.appliance.pb.ws", root / "appliance" / "pb" / "ws")
    # Logs memory use through a psutil API newer psutil releases renamed.
    _stub(
        "cerebras.appliance.utils.memory",
        with_memory_info_logged=lambda *a, **k: lambda fn: fn,
        get_available_memory=lambda unit="GB": float("inf"),
    )
    # S3 storage needs boto3; it is never chosen for a local path.
    _stub(
        "cerebras.appliance.storage.s3_storage",
        S3Reader=None,
        S3Writer=None,
        S3Deleter=None,
    )

    class _NoLazy:  # no tensor is ever on the lazy device here
        ApplianceDataInfo = type("ApplianceDataInfo", (), {})

        @staticmethod
        def close_tensor_storage(tensor: torch.Tensor) -> None:
            pass  # a deferred tensor's placeholder storage stays as allocated

    _stub("cerebras.pytorch.lib", cerebras_pytorch_lib=_NoLazy)
    _stub(
        "cerebras.pytorch.backend",
        current_backend=lambda *a, **k: None,
        current_backend_impl=lambda *a, **k: None,
        current_torch_device=lambda: torch.device("cpu"),
        use_cs=lambda: False,
    )
    _stub("cerebras.pytorch.core")
    _stub("cerebras.pytorch.core.appliance_utils", rtfx_to_np_array=None)
    _package("cerebras.pytorch.utils", root / "pytorch" / "utils")
    _package("cerebras.pytorch.utils.data", root / "pytorch" / "utils" / "data")
    data_utils = importlib.import_module("cerebras.pytorch.utils.data.utils")
    cs.to_numpy = data_utils.to_numpy
    cs.from_numpy = data_utils.from_numpy
    if not hasattr(cs, "utils"):
        cs.utils = sys.modules["cerebras.pytorch.utils"]
    cs.utils.nest = importlib.import_module("cerebras.pytorch.utils.nest")  # type: ignore[attr-defined]
    cs.__version__ = _oracle.VERSION
    backends = getattr(cs, "backends", None) or types.SimpleNamespace()
    cs.backends = backends
    if not hasattr(backends, "csx"):
        backends.csx = types.SimpleNamespace()
    if not hasattr(backends.csx, "performance"):
        backends.csx.performance = _Performance()
    storage = importlib.import_module("cerebras.pytorch.storage")
    cs.storage = storage
    return storage


def module(name: str) -> types.ModuleType:
    """Import ``cerebras.pytorch.<name>`` with the storage stubs in place (e.g. "utils.tensor")."""
    _storage()
    return importlib.import_module(f"cerebras.pytorch.{name}")


def save(obj: Any, path: str | Path) -> None:
    """Write `obj` with the real `cstorch.save` (2.10 H5 layout)."""
    _storage().save(obj, str(path))


def load(path: str | Path) -> Any:
    """Read `path` with the real `cstorch.load`, materializing its deferred tensors."""
    loaded = _storage().load(str(path))
    return _materialize(loaded)


def _materialize(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        # Deferred tensors read their data on first op; clone returns a plain tensor.
        return value.clone()
    if type(value).__name__ == "DeferredNumpyArray":
        return value.value  # the array, read from the file
    if isinstance(value, dict):
        return type(value)((k, _materialize(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_materialize(v) for v in value)
    return value
