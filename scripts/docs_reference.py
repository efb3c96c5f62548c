"""The API reference of the docs site, generated from the packages' `__all__` at build time.

Used two ways: as an MkDocs hook (`hooks:` in mkdocs.yml), which adds one generated page per
public package and lists them under "API reference" in the navigation; and by
`tests/test_docs.py`, which checks that every public name lands on a page and has a docstring.
Pages are never written by hand, so a name another package adds to its `__all__` appears in
the reference at the next build, and a new public package gets its own page.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = "torchtally"

# The packages every reader looks for, in navigation order. Public modules found by walking the
# package follow them when they export a name none of these pages already shows.
CANONICAL = (
    "torchtally",
    "torchtally.metrics",
    "torchtally.metrics.system",
    "torchtally.functional",
    "torchtally.distributed",
    "torchtally.runtime",
    "torchtally.optim",
    "torchtally.optim.lr_scheduler",
    "torchtally.amp",
    "torchtally.utils.data",
    "torchtally.learn",
    "torchtally.bench",
    "torchtally.testing",
    "torchtally.compat.torchmetrics",
)

NAV_TITLE = "API reference"


@dataclass(frozen=True)
class ReferencePage:
    """One generated page: a module and the names of its `__all__` rendered there.

    `external` holds the names that re-export another package's object (tensorboard's
    `ScalarEvent`, say): mkdocstrings does not read other packages' sources, so those are
    listed with their origin and the docstring they carry at run time. So are our own
    objects whose name is also a submodule's (TorchMetrics' layout:
    `functional.classification.accuracy` is a module and, once imported, a function): the
    source reader sees the submodule there.
    """

    module: str
    members: tuple[str, ...]
    external: tuple[tuple[str, str, str], ...] = ()

    @property
    def path(self) -> str:
        return f"reference/{self.module}.md"


def _is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def public_modules() -> list[types.ModuleType]:
    """Every importable public module of the package that declares `__all__`, parents first."""
    root = importlib.import_module(ROOT)
    found = {ROOT: root}
    for info in pkgutil.walk_packages(root.__path__, ROOT + ".", onerror=lambda _name: None):
        if not _is_public(info.name):
            continue
        try:
            found[info.name] = importlib.import_module(info.name)
        except ImportError:
            # An optional extra is missing; that module cannot be documented on this machine.
            continue
    for name in CANONICAL:
        if name not in found:
            try:
                found[name] = importlib.import_module(name)
            except ImportError:
                continue
    return [module for name, module in sorted(found.items()) if hasattr(module, "__all__")]


def _key(name: str, obj: Any) -> Any:
    # Classes and functions are the same object wherever they are re-exported; constants such
    # as strings may be interned and shared by unrelated names, so they are keyed by name too.
    if isinstance(obj, type) or callable(obj):
        return id(obj)
    return (name, id(obj))


def documented_names(module: types.ModuleType) -> tuple[str, ...]:
    """The names of `module.__all__` that its page renders: all but submodules, which get pages."""
    return tuple(
        name
        for name in module.__all__
        if not isinstance(getattr(module, name, None), types.ModuleType)
    )


def _is_own(obj: Any) -> bool:
    # Only classes and functions name the module that defines them; constants and typing
    # forms (a `Literal` alias) are rendered from our own source.
    if not isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        return True
    origin = getattr(obj, "__module__", None)
    return origin is None or origin == ROOT or origin.startswith(ROOT + ".")


def _origin(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def _submodule_names(module: types.ModuleType) -> set[str]:
    path = getattr(module, "__path__", None)
    return {info.name for info in pkgutil.iter_modules(path)} if path is not None else set()


def _runtime_doc(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    if callable(obj) and not isinstance(obj, type) and doc:
        try:
            return f"{obj.__name__}{inspect.signature(obj)}\n\n{doc}"
        except (TypeError, ValueError):
            return doc
    return doc


def reference_pages() -> list[ReferencePage]:
    """The pages: every canonical package, then each other public module with a name of its own."""
    modules = {module.__name__: module for module in public_modules()}
    order = [name for name in CANONICAL if name in modules]
    order += [name for name in sorted(modules) if name not in CANONICAL]
    # Objects the source reader cannot reach by name: on their package's page, and on every
    # page that re-exports them from there.
    shadowed = {
        id(getattr(module, m))
        for module in modules.values()
        for m in documented_names(module)
        if m in _submodule_names(module)
    }
    covered: set[Any] = set()
    pages = []
    for name in order:
        module = modules[name]
        members = documented_names(module)
        keys = {_key(member, getattr(module, member)) for member in members}
        if name not in CANONICAL and keys <= covered:
            continue
        covered |= keys
        own = tuple(
            m
            for m in members
            if _is_own(getattr(module, m)) and id(getattr(module, m)) not in shadowed
        )
        external = tuple(
            (m, _origin(getattr(module, m)), _runtime_doc(getattr(module, m)))
            for m in members
            if m not in own
        )
        pages.append(ReferencePage(name, own, external))
    return pages


def page_markdown(page: ReferencePage) -> str:
    """The page source: one mkdocstrings directive listing the members explicitly."""
    members = "\n".join(f"        - {member}" for member in page.members)
    text = (
        f"# `{page.module}`\n\n"
        f"::: {page.module}\n"
        "    options:\n"
        "      show_root_heading: false\n"
        "      show_root_toc_entry: false\n"
        "      members:\n"
        f"{members}\n"
    )
    for name, origin, doc in page.external:
        where = (
            f"Defined in `{origin}` (also the name of a submodule, as in TorchMetrics)."
            if origin.startswith(ROOT + ".")
            else f"Re-exported from another package: `{origin}`."
        )
        text += f"\n## `{name}` {{#{page.module}.{name}}}\n\n{where}\n\n```text\n{doc}\n```\n"
    return text


# MkDocs hooks. Typed loosely so this module imports without mkdocs (the test needs only the
# functions above).
_PAGES: list[ReferencePage] = []


def on_config(config: Any) -> Any:
    # Import the package from the tree being documented, the one mkdocstrings reads
    # (`paths: [src]`), even where another checkout is installed in the environment.
    src = str(Path(config.config_file_path).resolve().parent / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    _PAGES[:] = reference_pages()
    entries = [{page.module: page.path} for page in _PAGES]
    nav = config["nav"]
    for index, item in enumerate(nav):
        if isinstance(item, dict) and NAV_TITLE in item:
            nav[index] = {NAV_TITLE: ["reference/index.md", *entries]}
            break
    else:
        nav.append({NAV_TITLE: ["reference/index.md", *entries]})
    return config


COMPAT = "torchtally.compat.torchmetrics"
COMPAT_MARKER = "<!-- compat-reference -->"


def compat_sentence(pages: list[ReferencePage], page_url: str) -> str:
    """What the TorchMetrics page says about the compatibility package in this build."""
    if any(page.module == COMPAT for page in pages):
        depth = page_url.count("/")
        prefix = "../" * depth
        return (
            "This build includes it: its classes and signatures are in the "
            f"[`{COMPAT}` reference]({prefix}reference/{COMPAT}.md)."
        )
    return (
        f"`{COMPAT}` is not part of this build; this section describes the surface it is "
        "designed to have."
    )


PAGES_MARKER = "<!-- reference-pages -->"


def pages_list(pages: list[ReferencePage]) -> str:
    """The reference index's list of pages (links relative to reference/index.md)."""
    return "\n".join(f"- [`{page.module}`]({page.module}.md)" for page in pages)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if COMPAT_MARKER in markdown:
        markdown = markdown.replace(COMPAT_MARKER, compat_sentence(_PAGES, page.file.src_uri))
    if PAGES_MARKER in markdown:
        markdown = markdown.replace(PAGES_MARKER, pages_list(_PAGES))
    return markdown


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for page in _PAGES:
        files.append(File.generated(config, page.path, content=page_markdown(page)))
    return files
