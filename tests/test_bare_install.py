"""A bare install (torch alone, no extras) names the extra a feature needs, instead of failing
with a bare ModuleNotFoundError deep in an import (issue 27). `make bare-install-check` runs the
real thing in a fresh venv (scripts/bare_install_check.py); these tests hide the optional
packages inside this one, in a subprocess so that no module cache leaks into other tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Makes `import numpy` (and h5py, scikit-learn, matplotlib) fail as if they were not installed.
HIDE = """
import sys
class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"numpy", "h5py", "hdf5plugin", "sklearn", "matplotlib"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Hide())
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-c", HIDE + code],
        capture_output=True,
        text=True,
        timeout=240,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )


def test_the_core_imports_and_computes_without_numpy() -> None:
    done = _run(
        "import torch, torchtally\n"
        "from torchtally.metrics import AccuracyMetric, MetricCollection\n"
        "import torchtally.compat.torchmetrics as tm\n"
        "m = MetricCollection({'acc': AccuracyMetric(num_classes=3)})\n"
        "m.update(torch.tensor([0, 1, 2, 2]), torch.eye(3)[[0, 1, 2, 0]])\n"
        "print(float(m.compute()['acc']))\n"
        "assert 'numpy' not in sys.modules\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0.75"


@pytest.mark.parametrize(
    ("code", "extra"),
    [
        ("from torchtally.runtime import save; save({}, 'x.h5')", "checkpoint"),
        ("from torchtally.runtime import to_numpy; import torch; to_numpy(torch.ones(1))", "numpy"),
        ("import torchtally.bench.datasets", "numpy"),
    ],
    ids=["save", "to_numpy", "bench-datasets"],
)
def test_a_feature_that_needs_an_extra_names_it(code: str, extra: str) -> None:
    done = _run(code)
    assert done.returncode != 0
    assert "ImportError" in done.stderr
    assert f"pip install torchtally[{extra}]" in done.stderr


def test_the_demo_without_its_extras_says_which_without_a_traceback() -> None:
    done = _run("from torchtally.cli import main; sys.exit(main(['demo']))")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "scikit-learn" in done.stderr and "torchtally[all]" in done.stderr
