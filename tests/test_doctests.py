"""Every `>>>` example in src/torchtally runs as a doctest and prints what it shows.

Every module of the package is imported and its docstrings collected with
`doctest.DocTestFinder` (module, classes, functions, methods, properties). The examples run with
`torch` in their namespace (as in the per-package doctest tests), ELLIPSIS and
NORMALIZE_WHITESPACE, in a fresh temporary working directory, so an example that writes a log
or a checkpoint leaves nothing behind.

An example may be illustrative only when it needs what a test machine lacks (a GPU, a data set
on disk, the network): it is then marked `# doctest: +SKIP` in the source. A module whose
examples need an optional package that is not installed is skipped with the package's name.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import torchtally

# Optional dependencies (the extras in pyproject.toml and the oracles of the dev extra): an
# example failing because one of these is absent skips its module instead of failing it.
OPTIONAL = frozenset(
    {
        "h5py",
        "hdf5plugin",
        "rich",
        "matplotlib",
        "psutil",
        "pynvml",
        "tensorboard",
        "sklearn",
        "tqdm",
        "dill",
        "snntorch",
        "nir",
        "neurobench",
        "torchmetrics",
        "scipy",
        "numpy",
    }
)

# `__main__` runs the CLI on import.
EXCLUDED = frozenset({"torchtally.__main__"})


def _modules() -> list[str]:
    names = ["torchtally"]
    names += [
        info.name for info in pkgutil.walk_packages(torchtally.__path__, prefix="torchtally.")
    ]
    return sorted(name for name in names if name not in EXCLUDED)


MODULES = _modules()


class _Runner(doctest.DocTestRunner):
    """A runner that notes a missing optional package instead of counting it as a failure."""

    def __init__(self) -> None:
        super().__init__(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        self.missing: set[str] = set()

    def report_unexpected_exception(
        self, out: Any, test: doctest.DocTest, example: doctest.Example, exc_info: Any
    ) -> None:
        error = exc_info[1]
        if isinstance(error, ModuleNotFoundError) and (error.name or "").split(".")[0] in OPTIONAL:
            self.missing.add(str(error.name))
        super().report_unexpected_exception(out, test, example, exc_info)


def _import(name: str) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs the optional package {error.name}")
        raise


def test_the_modules_are_found() -> None:
    assert "torchtally.metrics._base" in MODULES
    assert "torchtally.learn._learner.learner" in MODULES
    assert len(MODULES) > 100


@pytest.fixture
def _isolated_globals(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Examples set process-wide state on purpose (the current backend and executor, the half
    dtype, the random seed); put it back so that no later test inherits it."""
    from torchtally.amp import _precision
    from torchtally.runtime import _backend
    from torchtally.utils.data import _executor

    monkeypatch.setattr(_backend, "_current", _backend._current)
    monkeypatch.setattr(_executor, "_current", _executor._current)
    precision = (list(_precision._state), list(_precision._half_dtype))
    rng = torch.random.get_rng_state()
    dtype = torch.get_default_dtype()
    try:
        yield
    finally:
        _precision._state[:], _precision._half_dtype[:] = precision
        torch.random.set_rng_state(rng)
        torch.set_default_dtype(dtype)


@pytest.mark.usefixtures("_isolated_globals")
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _import(name)
    monkeypatch.chdir(tmp_path)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [test for test in finder.find(module, name) if test.examples]
    if not tests:
        pytest.skip("no examples")
    runner = _Runner()
    report: list[str] = []
    for test in tests:
        test.globs.setdefault("torch", torch)
        runner.run(test, out=report.append)
    if runner.missing and runner.failures:
        pytest.skip(f"{name} needs the optional package(s) {sorted(runner.missing)}")
    assert runner.failures == 0, "".join(report)


def test_a_failing_example_fails() -> None:
    # The machinery itself: a wrong output is a failure, not a pass.
    module = types.ModuleType("fake")
    module.__doc__ = ">>> 1 + 1\n3\n"
    sys.modules["fake_doctest_module"] = module
    try:
        runner = _Runner()
        for test in doctest.DocTestFinder().find(module, "fake"):
            runner.run(test, out=lambda _: None)
        assert runner.failures == 1
    finally:
        del sys.modules["fake_doctest_module"]
