"""The import contract: which part of torchtally may import which, read from the source with `ast`.

Every module under src/torchtally is parsed (nothing is imported), and every `import` and
`from ... import` naming torchtally is checked, wherever it is written: at module level, inside
a function (a lazy import) or under `if TYPE_CHECKING:`. The layers, bottom up:

- **Neutral** private modules at the root, `torchtally._errors` (argument checks, error types),
  `torchtally._records` (the record/event types `metrics.system` emits and `learn`
  consumes) and `torchtally._optional` (imports of optional packages that name their extra),
  import no other torchtally module, and every package may import them.
- **Metric core**: `functional` imports only itself and the neutral modules; `metrics` imports
  only `functional` and the neutral modules (the state sync lives in `metrics._sync`, next to
  the states it swaps); `distributed` imports only `metrics`, `functional` and the neutral
  modules (it re-exports the sync and adds the launcher). The core never imports the cstorch layer, the
  periphery or `testing`.
- **cstorch layer**: `runtime`, `optim`, `amp` and `utils` import only each other and the
  neutral modules (not the metric core, not the periphery).
- **Periphery** (leaves): `compat`, `learn` and `bench` may import the core and the cstorch
  layer, never each other, and nothing outside them imports them except the application
  modules: the package root (lazily or under TYPE_CHECKING only, so `import torchtally` stays
  light), `cli` and `_demo`. `testing` imports only the metric core.
- **Private modules stay home**: a module may import a private module (a dotted path with a
  component starting with "_") of another top-level package only within one layer (metric core;
  cstorch layer) or when the pair is in `PRIVATE_EXCEPTIONS` below, each with its reason.
- Inside the periphery the families are layered too: in `learn`, the training loop
  (`learn._learner`) and its observers (`learn._dashboard`, `learn._logs`, `learn._plots`)
  never import each other; in `bench`, operation counting (`bench._ops`) and the processors
  (`bench._processing`) import no other part of bench.
- Every import is absolute (no `from . import`), and at import time the core (metric core,
  cstorch layer, root) needs only torch: other third-party packages are imported lazily,
  except the entries of `EAGER_THIRD_PARTY`.

The same rules are stated in the README's "Layout" section.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "torchtally"

NEUTRAL = frozenset({"_errors", "_records", "_optional"})
METRIC_CORE = frozenset({"functional", "metrics", "distributed"})
CSTORCH = frozenset({"runtime", "optim", "amp", "utils"})
PERIPHERY = frozenset({"compat", "learn", "bench"})
APPLICATION = frozenset({"<root>", "cli", "_demo", "__main__"})

# What each part may import (top-level names under torchtally; "<root>" is the package itself).
ALLOWED: dict[str, frozenset[str]] = {
    "_errors": frozenset({"_errors"}),
    "_records": frozenset({"_records"}),
    "_optional": frozenset({"_optional"}),
    "functional": frozenset({"functional"}) | NEUTRAL,
    "metrics": frozenset({"metrics", "functional"}) | NEUTRAL,
    "distributed": frozenset({"distributed", "metrics", "functional"}) | NEUTRAL,
    **{name: CSTORCH | NEUTRAL for name in CSTORCH},
    **{name: frozenset({name}) | METRIC_CORE | CSTORCH | NEUTRAL for name in PERIPHERY},
    "testing": frozenset({"testing"}) | METRIC_CORE | NEUTRAL,
}

# (importing part, imported private module prefix): why the private import is allowed.
PRIVATE_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("learn", "torchtally.amp._conditional"): (
        "the learner's optimizer wrapper takes its conditional step from amp's GradScaler "
        "machinery (`step_where`), which is not cstorch API and so not public in amp"
    ),
    ("cli", "torchtally._demo"): "the demo is the CLI's `demo` command",
}

# Third-party packages other than torch that a core module imports at import time.
EAGER_THIRD_PARTY: dict[tuple[str, str], str] = {
    ("runtime", "numpy"): (
        "the HDF5 checkpoint format modules (runtime/_checkpoint/: format, encode, decode, "
        "hdf5, cstorch) build numpy arrays at module level; `save` and `load` import them "
        "only after h5py (which needs numpy), so `import torchtally` needs torch alone "
        "(`make bare-install-check`)"
    ),
    ("utils", "tensorboard"): (
        "utils.tensorboard is the tensorboard extra itself; `torchtally.utils` imports it only "
        "on first attribute access"
    ),
}

# The stdlib plus the packages torchtally is built on.
_BASE_MODULES = frozenset(sys.stdlib_module_names) | {"__future__", "torch", PACKAGE}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported module, dotted (for `from m import x`, also `m.x`)
    line: int
    lazy: bool  # inside a function body
    type_checking: bool  # under `if TYPE_CHECKING:`
    relative: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_in(body: list[ast.stmt], module: str, lazy: bool, tc: bool) -> Iterator[Import]:
    for node in body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno, lazy, tc, False)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            relative = node.level > 0
            yield Import(module, base, node.lineno, lazy, tc, relative)
            for alias in node.names:
                yield Import(module, f"{base}.{alias.name}", node.lineno, lazy, tc, relative)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _imports_in(node.body, module, True, tc)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _imports_in(node.body, module, lazy, True)
            yield from _imports_in(node.orelse, module, lazy, tc)
        else:
            # try/with/for/while/match bodies run at the level they are written at
            for field in ("body", "orelse", "finalbody"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    yield from _imports_in(children, module, lazy, tc)
            for handler in getattr(node, "handlers", []):
                yield from _imports_in(handler.body, module, lazy, tc)
            for case in getattr(node, "cases", []):
                yield from _imports_in(case.body, module, lazy, tc)


def _all_imports() -> list[Import]:
    found = []
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend(_imports_in(tree.body, _module_name(path), False, False))
    return found


IMPORTS = _all_imports()


def _part(module: str) -> str:
    """The top-level part of torchtally a dotted module path belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def _internal(imports: list[Import]) -> list[Import]:
    return [imp for imp in imports if imp.target == PACKAGE or imp.target.startswith(PACKAGE + ".")]


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def _where(imp: Import) -> str:
    return f"{imp.module}:{imp.line} imports {imp.target}"


def test_the_parser_sees_the_package() -> None:
    modules = {imp.module for imp in IMPORTS}
    # A sample of known edges, so a parser that finds nothing cannot pass the rules below.
    assert "torchtally.metrics._base" in modules
    assert "torchtally.learn._learner.learner" in modules
    edges = {(imp.module, imp.target) for imp in _internal(IMPORTS)}
    assert ("torchtally.metrics.system._monitor", "torchtally._records") in edges
    assert ("torchtally.learn._learner.loop", "torchtally.amp._conditional") in edges
    assert any(
        imp.lazy and imp.module == "torchtally.learn._dashboard.dashboard"
        for imp in _internal(IMPORTS)
    )


def test_every_import_is_absolute() -> None:
    relative = [_where(imp) for imp in IMPORTS if imp.relative]
    assert relative == []


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_each_part_imports_only_its_allowed_layers(part: str) -> None:
    violations = [
        _where(imp)
        for imp in _internal(IMPORTS)
        if _part(imp.module) == part and _part(imp.target) not in ALLOWED[part]
    ]
    assert violations == [], f"{part} may import only {sorted(ALLOWED[part])}"


def test_the_periphery_is_imported_only_by_the_application() -> None:
    violations = [
        _where(imp)
        for imp in _internal(IMPORTS)
        if _part(imp.target) in PERIPHERY
        and _part(imp.module) != _part(imp.target)
        and _part(imp.module) not in APPLICATION
    ]
    assert violations == []


def test_the_package_root_imports_the_periphery_lazily() -> None:
    # `import torchtally` must not load learn/bench/compat/testing (rich, matplotlib, dynamo).
    eager = [
        _where(imp)
        for imp in _internal(IMPORTS)
        if imp.module == PACKAGE
        and _part(imp.target) in PERIPHERY | {"testing"}
        and not (imp.lazy or imp.type_checking)
    ]
    assert eager == []


def test_private_modules_are_imported_only_within_their_layer() -> None:
    layers = [METRIC_CORE, CSTORCH]
    used: set[tuple[str, str]] = set()
    violations = []
    for imp in _internal(IMPORTS):
        source, target = _part(imp.module), _part(imp.target)
        if source == target or target in NEUTRAL or not _is_private(imp.target):
            continue
        if any(source in layer and target in layer for layer in layers):
            continue
        exception = next(
            (
                key
                for key in PRIVATE_EXCEPTIONS
                if key[0] == source
                and (imp.target == key[1] or imp.target.startswith(key[1] + "."))
            ),
            None,
        )
        if exception is not None:
            used.add(exception)
            continue
        violations.append(_where(imp))
    assert violations == []
    # An exception that no longer matches anything is stale: drop it.
    assert set(PRIVATE_EXCEPTIONS) == used


def test_learn_loop_and_its_observers_do_not_import_each_other() -> None:
    loop = "torchtally.learn._learner"
    observers = ("torchtally.learn._dashboard", "torchtally.learn._logs", "torchtally.learn._plots")

    def under(module: str, prefixes: tuple[str, ...]) -> bool:
        return any(module == p or module.startswith(p + ".") for p in prefixes)

    violations = [
        _where(imp)
        for imp in _internal(IMPORTS)
        if (under(imp.module, (loop,)) and under(imp.target, observers))
        or (under(imp.module, observers) and under(imp.target, (loop,)))
    ]
    assert violations == []


@pytest.mark.parametrize("leaf", ["torchtally.bench._ops", "torchtally.bench._processing"])
def test_bench_leaf_families_import_no_other_part_of_bench(leaf: str) -> None:
    violations = [
        _where(imp)
        for imp in _internal(IMPORTS)
        if (imp.module == leaf or imp.module.startswith(leaf + "."))
        and imp.target.startswith("torchtally.bench")
        and not (imp.target == leaf or imp.target.startswith(leaf + "."))
    ]
    assert violations == []


def test_the_core_needs_only_torch_at_import_time() -> None:
    core = METRIC_CORE | CSTORCH | NEUTRAL | {"<root>"}
    used: set[tuple[str, str]] = set()
    violations = []
    for imp in IMPORTS:
        if imp.lazy or imp.type_checking or imp.relative or _part(imp.module) not in core:
            continue
        root = imp.target.split(".")[0]
        if root in _BASE_MODULES:
            continue
        key = (_part(imp.module), root)
        if key in EAGER_THIRD_PARTY:
            used.add(key)
            continue
        violations.append(_where(imp))
    assert violations == []
    assert set(EAGER_THIRD_PARTY) == used


def test_the_neutral_modules_do_not_reach_other_layers_through_sys_modules() -> None:
    # `sys.modules.get("torchtally.runtime._guard")` is an import the rules above cannot see.
    # Layers that the neutral modules must know about register with them instead
    # (`_errors.register_read_guard`).
    for name in sorted(NEUTRAL):
        text = (SRC / PACKAGE / f"{name}.py").read_text(encoding="utf-8")
        assert "sys.modules" not in text, name
    errors = (SRC / PACKAGE / "_errors.py").read_text(encoding="utf-8")
    assert "torchtally.runtime" not in errors


def test_the_runtime_registers_its_read_guard_with_the_neutral_module() -> None:
    # The inverted dependency still works: inside a traced step's guard, `tracing` is true, so
    # metric updates defer their value checks instead of reading a tensor.
    import torch

    from torchtally._errors import tracing
    from torchtally.runtime._guard import NoTensorReads

    t = torch.ones(2)
    assert not tracing(t)
    with NoTensorReads("step"):
        assert tracing(t)
    assert not tracing(t)
