"""The Examples in torchtally.optim's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import torchtally.optim

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(torchtally.optim.__path__, prefix="torchtally.optim.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
