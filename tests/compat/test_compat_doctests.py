"""The Examples in torchtally.compat's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import torchtally.compat

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(torchtally.compat.__path__, prefix="torchtally.compat.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_compat_layer_needs_only_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from torchtally.compat import torchmetrics as tm; "
        "tm.MulticlassAccuracy(3); tm.MeanSquaredError(); "
        "bad = [m for m in ('torchmetrics', 'matplotlib') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
