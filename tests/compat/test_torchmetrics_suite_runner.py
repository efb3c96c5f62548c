"""The TorchMetrics-suite runner (scripts/torchmetrics_suite) tests the library it names.

The full run is long and lives outside `make test`; these checks run it on a few ids in both
targets and prove the redirection took effect: the names TorchMetrics' test modules import from
`torchmetrics` are torchtally's classes in torchtally mode and TorchMetrics' own in reference
mode, with no real TorchMetrics module left behind the redirect.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torchmetrics")
pytest.importorskip("cachier")  # TorchMetrics' tests cache their reference values with it

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "scripts" / "torchmetrics_suite"
IDS = [
    "unittests/bases/test_hashing.py::test_metric_hashing[DummyMetric]",
    "unittests/classification/test_accuracy.py::TestBinaryAccuracy::test_binary_accuracy"
    "[False-global--1-input[single_dim-labels]]",
]


def _run(tmp_path: Path, target: str, mode: str = "strict") -> dict:
    ids = tmp_path / f"ids-{target}-{mode}.txt"
    ids.write_text("\n".join(IDS) + "\n")
    out = tmp_path / f"{target}-{mode}.jsonl"
    env = dict(os.environ, PYTEST_REFERENCE_CACHE=str(tmp_path / "cache"))
    cmd = [sys.executable, str(SUITE / "run.py"), "run", "--target", target, "--mode", mode]
    cmd += ["--ids", str(ids), "--workers", "0", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = out.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["results"] = [json.loads(line) for line in lines[1:]]
    return meta


def test_vendored_ids_are_in_the_subset() -> None:
    listed = set((SUITE / "ids.txt").read_text().splitlines())
    assert len(listed) >= 3000
    assert set(IDS) <= listed


def test_reference_mode_runs_torchmetrics(tmp_path: Path) -> None:
    meta = _run(tmp_path, "torchmetrics")
    assert meta["redirection_check"] == "ok"
    assert meta["session"]["Accuracy_module"].startswith("torchmetrics.classification")
    acc = meta["module_bindings"]["unittests.classification.test_accuracy"]
    assert acc["BinaryAccuracy"].startswith("torchmetrics.classification")
    assert meta["module_bindings"]["unittests._helpers.testers"]["Metric"] == "torchmetrics.metric"
    # TorchMetrics passes its own tests here: the ids and the environment are right.
    assert {r["nodeid"]: r["outcome"] for r in meta["results"]} == dict.fromkeys(IDS, "passed")


def test_torchtally_mode_runs_the_drop_in(tmp_path: Path) -> None:
    meta = _run(tmp_path, "torchtally", "lenient")
    assert meta["redirection_check"] == "ok"
    assert meta["session"]["Accuracy_module"].startswith("torchtally.compat.torchmetrics")
    acc = meta["module_bindings"]["unittests.classification.test_accuracy"]
    assert acc["BinaryAccuracy"].startswith("torchtally.compat.torchmetrics")
    assert meta["module_bindings"]["unittests._helpers.testers"]["Metric"].startswith("torchtally.")
    # Names the drop-in lacks are stubs that fail the test that uses them, never TorchMetrics'.
    assert all(
        not v.startswith("torchmetrics.")
        for b in meta["module_bindings"].values()
        for v in b.values()
        if not v.startswith("torchmetrics.utilities")
    )
    assert all(r["outcome"] != "not_run" for r in meta["results"])


def test_strict_redirect_is_the_same_module_object() -> None:
    code = (
        "import sys, tm_suite_redirect, torchmetrics, torchmetrics.classification as c\n"
        "from torchtally.compat import torchmetrics as ours\n"
        "assert torchmetrics is ours and c is ours.classification, torchmetrics\n"
        "assert c.BinaryAccuracy.__module__.startswith('torchtally.'), c.BinaryAccuracy\n"
        "try:\n"
        "    import torchmetrics.no_such_module\n"
        "except ModuleNotFoundError as err:\n"
        "    assert 'the drop-in has no' in str(err), err\n"
        "else:\n"
        "    raise AssertionError('a missing module imported')\n"
        "leaked = [n for n, m in sys.modules.items() if n.startswith('torchmetrics')\n"
        "          and '/site-packages/torchmetrics/' in str(getattr(m, '__file__', '') or '')\n"
        "          and not n.startswith('torchmetrics.utilities.')]\n"
        "assert not leaked, leaked\n"
    )
    env = dict(os.environ, TM_SUITE_TARGET="torchtally", TM_SUITE_MODE="strict")
    env["PYTHONPATH"] = os.pathsep.join([str(SUITE), str(REPO / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
