"""Griffe extension: read the source's `Example:` sections as Google-style `Examples:`.

The docstrings head their doctests `Example:`; Griffe's Google parser takes only the plural as
an examples section and renders the singular as an admonition, whose `>>>` lines Markdown then
parses as text (a `[...]` output line becomes a broken reference link). Renaming the heading at
load time renders every doctest as a code block without touching the sources.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rewrites `Example:` headings to `Examples:` in every loaded docstring."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        docstring = getattr(obj, "docstring", None)
        if docstring is not None and "Example:" in docstring.value:
            docstring.value = _HEADING.sub(r"\1Examples:", docstring.value)
