"""The docs site's API reference covers every public name, and every public name has a docstring.

Public names are collected at run time from the `__all__` of every public module, so a name
added by any package is checked without editing this file. The reference pages come from the
same MkDocs hook the site build uses (scripts/docs_reference.py).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

griffe = pytest.importorskip("griffe", reason="the docs extra (mkdocstrings) is not installed")

ROOT = Path(__file__).resolve().parents[1]

# Public constants that have no docstring today (a constant's docstring is a string literal
# under its assignment). Each wants one in its own package; until then it is rendered without
# one. Do not add to this list: document the name instead.
KNOWN_UNDOCUMENTED = frozenset(
    {
        "torchtally.__version__",
        "torchtally.metrics.Reduction",
        "torchtally.optim.OPTIMIZERS",
        "torchtally.optim.lr_scheduler.SCHEDULERS",
        "torchtally.utils.data.ACTIVITIES",
        "torchtally.learn.SYSTEM_SPLIT",
        "torchtally.bench.NEURON_RESET_OPERATIONS",
        "torchtally.functional.calibration.NORMS",
        "torchtally.functional.retrieval.AGGREGATIONS",
        "torchtally.functional.retrieval.EMPTY_TARGET_ACTIONS",
        "torchtally.functional.retrieval.KINDS",
        "torchtally.functional.curves.AVERAGES",
        "torchtally.functional.curves.TASKS",
        "torchtally.backends",
        "torchtally.runtime.backends",
    }
)


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


reference = _load("_docs_reference", ROOT / "scripts" / "docs_reference.py")


@pytest.fixture(scope="module")
def pages() -> list[Any]:
    return reference.reference_pages()


@pytest.fixture(scope="module")
def package() -> Any:
    path = ROOT / "scripts" / "griffe_extensions.py"
    extensions = griffe.load_extensions(
        *(f"{path}:{name}" for name in ("ExampleSections", "RuntimeExports", "RuntimeDocstrings"))
    )
    return griffe.load(
        "torchtally",
        search_paths=[str(ROOT / "src")],
        extensions=extensions,
        resolve_aliases=True,
        resolve_external=False,
    )


def _public_names() -> list[tuple[str, str, Any]]:
    names = []
    for module in reference.public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            if not isinstance(obj, types.ModuleType):
                names.append((module.__name__, name, obj))
    return names


def test_public_modules_are_found() -> None:
    found = {module.__name__ for module in reference.public_modules()}
    # The packages the site promises; the walk must see them, or it sees nothing at all.
    for name in ("torchtally.metrics", "torchtally.optim.lr_scheduler", "torchtally.bench"):
        assert name in found


def test_every_canonical_package_has_a_page(pages: list[Any]) -> None:
    on_pages = {page.module for page in pages}
    for name in reference.CANONICAL:
        if importlib.util.find_spec(name.rsplit(".", 1)[0]) is None:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        assert name in on_pages, f"{name} has no API reference page"


def test_every_public_name_is_on_a_reference_page(pages: list[Any]) -> None:
    shown: dict[Any, str] = {}
    for page in pages:
        module = importlib.import_module(page.module)
        for member in (*page.members, *(name for name, _, _ in page.external)):
            shown[reference._key(member, getattr(module, member))] = page.module
    missing = [
        f"{module}.{name}"
        for module, name, obj in _public_names()
        if reference._key(name, obj) not in shown
    ]
    assert not missing, f"public names missing from the API reference: {missing}"


def test_every_page_lists_its_whole_all(pages: list[Any]) -> None:
    for page in pages:
        module = importlib.import_module(page.module)
        expected = [
            n for n in module.__all__ if not isinstance(getattr(module, n), types.ModuleType)
        ]
        external = [name for name, _, _ in page.external]
        assert sorted([*page.members, *external]) == sorted(expected)
        text = reference.page_markdown(page)
        assert f"::: {page.module}\n" in text
        for member in page.members:
            assert f"        - {member}\n" in text
        for member in external:
            assert f"{{#{page.module}.{member}}}" in text


def test_every_public_name_has_a_docstring(pages: list[Any], package: Any) -> None:
    undocumented = []
    for page in pages:
        module = (
            package.get_member(page.module.removeprefix("torchtally."))
            if page.module != "torchtally"
            else package
        )
        for member in page.members:
            qualified = f"{page.module}.{member}"
            obj = module.members.get(member)
            assert obj is not None, f"{qualified} is in __all__ but griffe cannot see it"
            docstring = obj.docstring
            if (
                docstring is None or not docstring.value.strip()
            ) and qualified not in KNOWN_UNDOCUMENTED:
                undocumented.append(qualified)
        # Another package's object re-exported here: its own docstring is what the page shows.
        for member, _origin, doc in page.external:
            if not doc.strip():
                undocumented.append(f"{page.module}.{member}")
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_known_undocumented_names_are_still_public() -> None:
    public = {f"{module}.{name}" for module, name, _ in _public_names()}
    assert public >= KNOWN_UNDOCUMENTED, sorted(KNOWN_UNDOCUMENTED - public)


@pytest.mark.slow
def test_built_site_has_an_anchor_for_every_public_name(tmp_path: Path, pages: list[Any]) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs) is not installed")
    # `make test` runs `make docs` (the same strict build) just before the suite and names its
    # output here, so the suite checks that build instead of making a second one.
    built = os.environ.get("TORCHTALLY_BUILT_SITE")
    if built:
        site = Path(built)
        assert (site / "index.html").is_file(), f"TORCHTALLY_BUILT_SITE={built} has no site"
    else:
        site = tmp_path / "site"
        env = {"NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")}
        result = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert result.returncode == 0, result.stderr[-4000:]
    missing = []
    for page in pages:
        html = (site / "reference" / page.module / "index.html").read_text(encoding="utf-8")
        for member in (*page.members, *(name for name, _, _ in page.external)):
            if f'id="{page.module}.{member}"' not in html:
                missing.append(f"{page.module}.{member}")
    assert not missing, f"names without an entry on their reference page: {missing}"


def test_torchmetrics_page_links_the_compat_reference_only_when_built() -> None:
    with_compat = [reference.ReferencePage(reference.COMPAT, ("Accuracy",))]
    linked = reference.compat_sentence(with_compat, "torchmetrics.md")
    assert f"(reference/{reference.COMPAT}.md)" in linked
    assert "reference/" not in reference.compat_sentence([], "torchmetrics.md")
    assert "(../reference/" in reference.compat_sentence(with_compat, "guide/torchmetrics.md")


def test_extensions_recover_dynamic_exports_and_docstrings(tmp_path: Path) -> None:
    # A package named like ours (the extensions touch only `torchtally*` modules) whose
    # `__all__` griffe cannot evaluate and whose class docstring is set at run time.
    root = tmp_path / "torchtally_docs_probe"
    (root / "_impl").mkdir(parents=True)
    (root / "_impl" / "__init__.py").write_text(
        'class Shown:\n    pass\n\nShown.__doc__ = "Set at run time."\n\n'
        "def bare():\n    pass\n\n"
        '__all__ = ["Shown", "bare"]\n'
    )
    (root / "__init__.py").write_text(
        "from torchtally_docs_probe._impl import *\n"
        "from torchtally_docs_probe._impl import __all__ as _impl_all\n"
        "__all__ = list(_impl_all)\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        module = _load("_griffe_extensions", ROOT / "scripts" / "griffe_extensions.py")
        extensions = griffe.load_extensions(
            module.RuntimeExports(package="torchtally_docs_probe"),
            module.RuntimeDocstrings(package="torchtally_docs_probe"),
        )
        probe = griffe.load(
            "torchtally_docs_probe",
            search_paths=[str(tmp_path)],
            extensions=extensions,
            resolve_aliases=True,
            resolve_external=False,
        )
        assert probe.exports == ["Shown", "bare"]
        assert probe.members["Shown"].docstring.value == "Set at run time."
        # A name with no docstring anywhere stays undocumented, so the check above reports it.
        assert probe.members["bare"].docstring is None
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("torchtally_docs_probe")]:
            del sys.modules[name]
