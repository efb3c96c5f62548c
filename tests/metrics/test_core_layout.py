"""The metric core's layout, read from the source with `ast` (nothing is imported):

- the `Metric` contract stays small (`metrics/_base.py` at most 650 lines);
- each mechanism module (`metrics/_*.py` but `_base`) never imports `_base` or the `metrics`
  package back, and the core's private modules form no import circle (`TYPE_CHECKING` and
  lazy imports included);
- no module keeps bookkeeping in an object's `__dict__` by key except the state module
  (`metrics/_runtime.py`);
- the catalog (`metrics/<family>/`) and compat use only the public subclass API: none of the
  base's private helpers or runtime fields;
- a `MetricCollection` has no compiled path of its own (the engine's is the only one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "torchtally"
METRICS = SRC / "metrics"
CORE = sorted(p for p in METRICS.glob("_*.py") if p.name != "__init__.py")
MECHANISMS = [p for p in CORE if p.name != "_base.py"]
CATALOG = sorted(p for p in METRICS.glob("*/*.py"))
COMPAT = sorted((SRC / "compat").rglob("*.py"))

#: The base's private names a subclass must not reach (its public API replaces each).
PRIVATE_BASE = frozenset(
    {
        "_runtime",
        "_record_errors",
        "_cat_append",
        "_cat_values",
        "_cat_rows",
        "_filled_rows",
        "_cat_overflow",
        "_known_cat_fill",
        "_note_cat_fill",
        "_register",
        "_reductions",
        "_defaults",
        "_num_updates",
        "_cached",
        "_stage",
        "_update_prologue",
        "_update_body_function",
        "_build_compiled_update",
        "_save_local_states",
        "_restore_local_states",
        "_install_synced_cat",
    }
)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _module(path: Path) -> str:
    return "torchtally.metrics." + path.stem


def test_the_base_class_is_at_most_650_lines() -> None:
    lines = len((METRICS / "_base.py").read_text().splitlines())
    assert lines <= 650, lines


@pytest.mark.parametrize("path", MECHANISMS, ids=lambda p: p.name)
def test_no_mechanism_imports_the_base_back(path: Path) -> None:
    imports = _imports(path)
    assert "torchtally.metrics._base" not in imports
    assert not {i for i in imports if i == "torchtally.metrics"}, imports


def test_the_core_modules_form_no_import_circle() -> None:
    names = {_module(p): p for p in CORE}
    graph = {
        name: {
            other
            for other in names
            if other != name and any(i == other or i.startswith(other + ".") for i in _imports(p))
        }
        for name, p in names.items()
    }
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            assert state.get(nxt) != 1, " -> ".join([*trail, node, nxt])
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for name in graph:
        if name not in state:
            visit(name, [])


@pytest.mark.parametrize(
    "path",
    [p for p in [*CORE, *CATALOG, *COMPAT] if p.name != "_runtime.py"],
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_no_bookkeeping_in_an_instance_dict_outside_the_state_module(path: Path) -> None:
    if path.name == "_lightning.py":
        # It gives Lightning's own LightningModule an attribute (DDP's ignore list), kept in
        # that module's instance dict: no metric's bookkeeping.
        return
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            # `cls.__dict__` (a class's own methods) is fine; an instance's is the state module's
            owner = node.value
            assert isinstance(owner, ast.Name) and owner.id in {"cls", "klass", "type"}, (
                f"{path.name}:{node.lineno}"
            )


@pytest.mark.parametrize("path", [*CATALOG, *COMPAT], ids=lambda p: str(p.relative_to(SRC)))
def test_catalog_and_compat_use_only_the_public_subclass_api(path: Path) -> None:
    tree = ast.parse(path.read_text())
    reached = sorted(
        {
            f"{node.attr}@{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in PRIVATE_BASE
        }
    )
    assert not reached, reached
    if path.parent.name == "collection":
        return  # the collection is core machinery: it drives the engine and the sharing
    private_modules = {
        i
        for i in _imports(path)
        if i.startswith("torchtally.metrics._")
        and i.split(".")[2] not in {"_base", "_metadata"}
        and not i.startswith("torchtally.metrics._base")
    }
    assert not private_modules, private_modules


def test_a_collection_has_no_compiled_path_of_its_own() -> None:
    source = (METRICS / "collection" / "_collection.py").read_text()
    calls = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "compile"
    ]
    assert not calls
