"""Griffe extensions for the docs site (listed under `extensions:` in mkdocs.yml).

`ExampleSections`: the docstrings head their doctests `Example:`; Griffe's Google parser takes
only the plural as an examples section and renders the singular as an admonition, whose `>>>`
lines Markdown then parses as text (a `[...]` output line becomes a broken reference link).
Renaming the heading at load time renders every doctest as a code block without touching the
sources.

`RuntimeExports`: Griffe reads `__all__` statically and cannot evaluate forms such as
`__all__ = list(other.__all__)` or `[*other.__all__]`; it then drops the names, mkdocstrings
skips them silently, and the reference misses them. The package's own `__all__` at run time is
the contract, so each public module's exports are taken from it wherever the module imports.

`RuntimeDocstrings`: some docstrings are set when the module runs (a loop assigning
`cls.__doc__` for a family of classes) or belong to a function bound to a second name
(`compile_step = trace`). `help()` shows them, so the reference does too: an object Griffe
found no docstring for takes the docstring its class or function carries at run time (never
a type's docstring inherited by a constant).
"""

from __future__ import annotations

import importlib
import re
import types
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rewrites `Example:` headings to `Examples:` in every loaded docstring."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        docstring = getattr(obj, "docstring", None)
        if docstring is not None and "Example:" in docstring.value:
            docstring.value = _HEADING.sub(r"\1Examples:", docstring.value)


class RuntimeExports(griffe.Extension):
    """Sets each module's exports to its imported `__all__` (before wildcards are expanded)."""

    def __init__(self, package: str = "torchtally") -> None:
        super().__init__()
        self.package = package

    def on_module_members(self, *, mod: Any, **kwargs: Any) -> None:
        # Only public modules: importing `__main__` would run the CLI, and private modules'
        # exports matter only through the public ones that re-export them.
        parts = mod.path.split(".")
        if parts[0] != self.package or any(part.startswith("_") for part in parts):
            return
        try:
            module = importlib.import_module(mod.path)
        except Exception:
            # Not importable here (an optional extra is missing): keep what Griffe read.
            return
        names = getattr(module, "__all__", None)
        if names is not None:
            mod.exports = [str(name) for name in names]


class RuntimeDocstrings(griffe.Extension):
    """Fills missing docstrings of classes and functions from the imported objects."""

    def __init__(self, package: str = "torchtally") -> None:
        super().__init__()
        self.package = package

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if getattr(obj, "docstring", None) is not None or obj.is_module:
            return
        module_path = obj.module.path
        if module_path.split(".")[0] != self.package or module_path.endswith("__main__"):
            return
        try:
            value: Any = importlib.import_module(module_path)
            for part in obj.path[len(module_path) + 1 :].split("."):
                value = getattr(value, part)
        except Exception:
            return
        if isinstance(value, type):
            doc = value.__dict__.get("__doc__")
        elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            doc = value.__doc__
        else:
            return
        if isinstance(doc, str) and doc.strip():
            obj.docstring = griffe.Docstring(doc, parent=obj)
