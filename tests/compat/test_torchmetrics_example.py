"""The Must-show script: examples/torchmetrics_train.py with `from torchtally.compat import
torchmetrics` as its only change runs compiled (fullgraph=True), gives the same values under
`torchrun --nproc_per_node=2` (gloo) as in one process, and the same values as the unchanged
script on TorchMetrics 1.9 itself (run eagerly: TorchMetrics does not compile)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "torchmetrics_train.py"
IMPORT = "from torchtally.compat import torchmetrics  # was: import torchmetrics"


def _run(command: list[str], cwd: Path) -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=560)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _same(a: dict, b: dict) -> None:  # type: ignore[type-arg]
    assert a.keys() == b.keys()
    for epoch in a:
        assert a[epoch].keys() == b[epoch].keys()
        for key in a[epoch]:
            torch.testing.assert_close(
                torch.tensor(a[epoch][key]).double(),
                torch.tensor(b[epoch][key]).double(),
                rtol=1e-5,
                atol=1e-6,
                msg=f"{epoch} {key}",
            )


def test_the_import_is_the_only_change() -> None:
    source = SCRIPT.read_text()
    assert source.count(IMPORT) == 1
    assert "torch.compile(train_metric_step, fullgraph=True)" in source


@pytest.mark.slow
def test_compiled_single_process_equals_torchrun_and_torchmetrics(tmp_path: Path) -> None:
    single = _run([sys.executable, str(SCRIPT)], ROOT)
    torchrun = str(Path(sys.executable).with_name("torchrun"))
    two_ranks = _run([torchrun, "--nproc_per_node=2", str(SCRIPT)], ROOT)
    _same(single, two_ranks)

    original = tmp_path / "train_with_torchmetrics.py"
    original.write_text(SCRIPT.read_text().replace(IMPORT, "import torchmetrics"))
    # Run outside the repository so `import torchmetrics` is the real TorchMetrics 1.9.
    reference = _run([sys.executable, str(original), "--no-compile"], tmp_path)
    _same(single, reference)
    assert single["epoch1"]["valid/MulticlassAccuracy"] > 0.6  # it did learn something
