"""Answer `import torchmetrics...` with torchtally's drop-in (or leave the real package).

Imported at interpreter start by `_site/sitecustomize.py` (so the processes that
TorchMetrics' DDP tests spawn redirect too) and by the pytest plugin; installs once.
Configured through the environment:

- `TM_SUITE_TARGET`: `torchmetrics` (the real package, nothing redirected) or `torchtally`
  (every `torchmetrics` / `torchmetrics.X` import answered by `torchtally.compat.torchmetrics`).
- `TM_SUITE_MODE` (torchtally only):
  - `strict` (default): `torchmetrics.X` is `torchtally.compat.torchmetrics.X`, the same module
    object; a module or name our drop-in lacks fails the import as it would in a user's script.
    A test file imports its class and functional API at the top, so one missing name fails
    every test of that file at collection.
  - `lenient`: each `torchmetrics.X` is a proxy module that answers a name from ours
    (`torchtally.compat.torchmetrics.X`, or its nearest existing ancestor package when ours
    has no `X`), and a name that real TorchMetrics has at `torchmetrics.X` but ours lacks with
    a stub that raises `MissingFromDropIn` when called or instantiated. Every test then runs
    and fails (or passes) on its own; no number ever comes from real TorchMetrics.
Modules kept from the real TorchMetrics in torchtally mode (test infrastructure, not metric
code; see README): `_INFRA_MODULES`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Any

OURS = "torchtally.compat.torchmetrics"
# Environment flags (`_TORCH_GREATER_EQUAL_2_1`, `_MATPLOTLIB_AVAILABLE`, ...), the tester's list
# flattener (`_flatten`, used by `_helpers/testers.py`) and test_collections' result comparer
# (`_allclose_recursive`): they decide skips and compare results, they compute no metric.
_INFRA_MODULES = (
    "torchmetrics.utilities.imports",
    "torchmetrics.utilities.data",
    "torchmetrics.utilities.checks",
)
_HERE = Path(__file__).resolve().parent
_UPSTREAM = _HERE / "upstream"

TARGET = os.environ.get("TM_SUITE_TARGET", "torchmetrics")
MODE = os.environ.get("TM_SUITE_MODE", "strict")
if TARGET not in ("torchmetrics", "torchtally"):
    raise SystemExit(
        f"TM_SUITE_TARGET must be 'torchmetrics' or 'torchtally'. Received: {TARGET!r}"
    )
if MODE not in ("strict", "lenient"):
    raise SystemExit(f"TM_SUITE_MODE must be 'strict' or 'lenient'. Received: {MODE!r}")

_redirected: dict[str, str] = {}  # alias -> our module that answers it
_stubbed: set[str] = set()  # names answered by a MissingFromDropIn stub (lenient)
_REAL_MODULES: dict[str, types.ModuleType] = {}  # real TorchMetrics, kept out of sys.modules
_REAL_LAYOUT: set[str] = set()


class MissingFromDropIn(Exception):
    """A name that TorchMetrics 1.9 has and torchtally.compat.torchmetrics lacks (lenient mode)."""


class _StubMeta(type):
    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise MissingFromDropIn(f"{cls._tm_path}: not in {OURS}")


def _stub(path: str, real: Any) -> Any:
    if isinstance(real, type):
        return _StubMeta(real.__name__, (), {"_tm_path": path, "__module__": "tm_suite_missing"})

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise MissingFromDropIn(f"{path}: not in {OURS}")

    missing.__name__ = missing.__qualname__ = path.rsplit(".", 1)[-1]
    missing.__module__ = "tm_suite_missing"
    return missing


def _ours_for(fullname: str) -> tuple[types.ModuleType | None, bool]:
    """Our module at the same path (exact=True), else its nearest existing ancestor."""
    parts = (OURS + fullname[len("torchmetrics") :]).split(".")
    for cut in range(len(parts), 2, -1):
        name = ".".join(parts[:cut])
        try:
            return importlib.import_module(name), cut == len(parts)
        except ModuleNotFoundError as err:
            # A missing dependency inside our package is our failure, raised as it is.
            if err.name is None or not (name == err.name or name.startswith(err.name + ".")):
                raise
            if cut == len(parts) and MODE == "strict":
                return None, False
    return None, False


def _lenient_proxy(fullname: str, ours: types.ModuleType) -> types.ModuleType:
    proxy = types.ModuleType(fullname, f"lenient proxy of {ours.__name__}")
    real = _REAL_MODULES.get(fullname)

    def __getattr__(name: str) -> Any:
        if hasattr(ours, name) and not isinstance(getattr(ours, name), types.ModuleType):
            return getattr(ours, name)
        if f"{fullname}.{name}" in _REAL_LAYOUT:
            raise AttributeError(name)  # a submodule: the import system loads it through us
        if real is not None and hasattr(real, name) and not name.startswith("__"):
            _stubbed.add(f"{fullname}.{name}")
            value = _stub(f"{fullname}.{name}", getattr(real, name))
            setattr(proxy, name, value)
            return value
        raise AttributeError(f"module {fullname!r} has no attribute {name!r}")

    proxy.__getattr__ = __getattr__  # type: ignore[method-assign]
    proxy.__path__ = []
    return proxy


class _Redirect(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `torchmetrics[.X]` with our `torchtally.compat.torchmetrics[.X]`."""

    def __init__(self) -> None:
        self._pending: dict[str, types.ModuleType] = {}
        self._specs: dict[int, Any] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "torchmetrics" and not fullname.startswith("torchmetrics."):
            return None
        ours, exact = _ours_for(fullname)
        if MODE == "strict":
            if ours is None or not exact:
                # Raising (not returning None) keeps the path finders from answering with the
                # real package, or with our files under a second name.
                raise ModuleNotFoundError(
                    f"No module named {fullname!r} (the drop-in has no {OURS + fullname[12:]})",
                    name=fullname,
                )
            module = ours
        else:
            if ours is None or fullname not in _REAL_LAYOUT:
                raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
            module = _lenient_proxy(fullname, ours)
        _redirected[fullname] = ours.__name__ if exact else f"{ours.__name__} (ancestor)"
        self._pending[fullname] = module
        return importlib.util.spec_from_loader(fullname, self, origin=ours.__name__)

    def create_module(self, spec: Any) -> types.ModuleType:
        module = self._pending.pop(spec.name)
        self._specs[id(module)] = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system stamps the alias' spec on the module; our package keeps its own.
        original = self._specs.pop(id(module), None)
        if original is not None:
            module.__spec__ = original


def _real_layout(package_dir: Path) -> set[str]:
    """Dotted names of every module and package the real TorchMetrics ships (read from disk)."""
    names = set()
    for path in package_dir.rglob("*.py"):
        rel = path.relative_to(package_dir.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names.add(".".join(parts))
    return names


def _install() -> None:
    if TARGET != "torchtally" or any(isinstance(f, _Redirect) for f in sys.meta_path):
        return
    import torchmetrics  # the real one: the infrastructure modules, and the lenient stubs' names

    _REAL_LAYOUT.update(_real_layout(Path(torchmetrics.__file__).parent))
    for extra in ("torchmetrics.clustering", "torchmetrics.text", "torchmetrics.image"):
        # Not loaded by `import torchmetrics`; an optional dependency missing there only
        # means no lenient stubs for its names.
        with contextlib.suppress(Exception):
            importlib.import_module(extra)
    infra = {name: importlib.import_module(name) for name in _INFRA_MODULES}
    for name in [n for n in sys.modules if n == "torchmetrics" or n.startswith("torchmetrics.")]:
        _REAL_MODULES[name] = sys.modules.pop(name)
    sys.modules.update(infra)
    sys.meta_path.insert(0, _Redirect())


_install()
