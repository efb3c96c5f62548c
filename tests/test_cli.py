"""`torchtally demo` / `torchtally plot` fail with one clear line, never a traceback: run as a
user runs them (`python -m torchtally` in a subprocess), with optional packages hidden by a
`sitecustomize` that sets `sys.modules[name] = None` (what Python does for a blocked import)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import torchtally

SRC = Path(torchtally.__file__).resolve().parents[1]
SITECUSTOMIZE = """\
import os, sys
for name in os.environ.get("HIDE_MODULES", "").split(","):
    if name:
        sys.modules[name] = None
"""


def run_cli(tmp_path: Path, *args: str, hide: str = "") -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = [str(site), str(SRC), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p), "HIDE_MODULES": hide}
    return subprocess.run(
        [sys.executable, "-m", "torchtally", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env=env,
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_the_sitecustomize_hides_a_module(tmp_path: Path) -> None:
    # the premise of the tests below: the child really cannot import a hidden module
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**os.environ, "PYTHONPATH": str(site), "HIDE_MODULES": "matplotlib"}
    code = "import matplotlib"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 1
    assert "ModuleNotFoundError" in done.stderr


def test_plot_of_a_missing_folder_names_it(tmp_path: Path) -> None:
    line = one_error_line(run_cli(tmp_path, "plot", "nope"))
    assert line.startswith("torchtally plot: error: Argument LOGDIR must be an existing directory")
    assert "Received: logdir='nope'" in line
    assert "Learner or FileLogger" in line


def test_plot_of_a_folder_without_logs_says_what_it_must_hold(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    line = one_error_line(run_cli(tmp_path, "plot", "empty"))
    assert "must hold learner logs (<split>/epoch-<n>.csv" in line
    assert "Received: logdir='empty', which has none" in line


def test_plot_without_matplotlib_names_the_extra(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "train"
    logs.mkdir(parents=True)
    (logs / "epoch-1.csv").write_text(
        "split,epoch,step,name,value,wall_time,unit\ntrain,1,5,loss,0.5,0.0,\n"
    )
    line = one_error_line(run_cli(tmp_path, "plot", "logs", hide="matplotlib"))
    assert line == (
        "torchtally plot: error: `torchtally plot` needs matplotlib, which is not installed. "
        "Install it with `pip install 'torchtally[plots]'`."
    )


@pytest.mark.parametrize(
    ("hide", "expected"),
    [
        (
            "matplotlib",
            "needs matplotlib, which is not installed. "
            "Install it with `pip install 'torchtally[plots]'`.",
        ),
        (
            "h5py",
            "needs h5py, which is not installed. "
            "Install it with `pip install 'torchtally[checkpoint]'`.",
        ),
        (
            "tensorboard",
            "needs tensorboard, which is not installed. "
            "Install it with `pip install 'torchtally[tensorboard]'`.",
        ),
        (
            "sklearn,matplotlib",
            "needs scikit-learn and matplotlib, which are not installed. "
            "Install them with `pip install 'torchtally[all]'`.",
        ),
    ],
)
def test_demo_without_an_extra_names_what_to_install(
    tmp_path: Path, hide: str, expected: str
) -> None:
    line = one_error_line(run_cli(tmp_path, "demo", "--out", "out", hide=hide))
    assert line == f"torchtally demo: error: `torchtally demo` {expected}"
    assert not (tmp_path / "out").exists()  # it stopped before starting the run


def test_demo_rejects_a_bad_argument_in_one_line(tmp_path: Path) -> None:
    line = one_error_line(run_cli(tmp_path, "demo", "--epochs", "0"))
    assert line == "torchtally demo: error: Argument `--epochs` must be >= 1. Received: --epochs 0"
    (tmp_path / "afile").write_text("x")
    line = one_error_line(run_cli(tmp_path, "demo", "--out", "afile"))
    assert "Argument `--out` must be a folder" in line
