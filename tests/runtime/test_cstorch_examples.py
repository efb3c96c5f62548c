"""The porting guide's full training and evaluation examples run end to end as scripts.

`examples/cstorch_train.py` and `examples/cstorch_eval.py` are the guide's skeletons filled in
(`import torchtally as cstorch` in place of the cstorch import). Training must lower the loss
its step closure prints and checkpoint on the executor's schedule; evaluation must report the
accuracy that plain PyTorch and scikit-learn compute from the same checkpoint and data.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
import torch
from sklearn.metrics import accuracy_score

from torchtally.runtime import load

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NUM_STEPS, CHECKPOINT_STEPS = 80, 20


def _run(script: str, *args: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _value(stdout: str, prefix: str) -> float:
    lines = [line for line in stdout.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, stdout
    return float(lines[0].removeprefix(prefix))


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out_dir = tmp_path_factory.mktemp("cstorch_train")
    stdout = _run(
        "cstorch_train.py",
        f"--out-dir={out_dir}",
        f"--num-steps={NUM_STEPS}",
        f"--checkpoint-steps={CHECKPOINT_STEPS}",
    )
    return out_dir, stdout


def test_training_example_lowers_the_loss_and_checkpoints_on_schedule(
    trained: tuple[Path, str],
) -> None:
    out_dir, stdout = trained
    losses = [float(line.split()[-1]) for line in stdout.splitlines() if line.startswith("Loss:")]
    assert len(losses) == NUM_STEPS  # one step closure call per step, none lost
    assert mean(losses[-10:]) < 0.75 * mean(losses[:10])
    # checkpoints on steps 19, 39, 59 and 79 (k-1, 2k-1, ... and the last, 0-based); the
    # backend's max_checkpoints=3 has removed the oldest (its hidden record lists them)
    assert sorted(p.name for p in out_dir.iterdir() if not p.name.startswith(".")) == [
        "checkpoint_39.mdl",
        "checkpoint_59.mdl",
        "checkpoint_79.mdl",
    ]
    state = load(out_dir / "checkpoint_79.mdl")
    assert state["global_step"] == 79
    assert set(state) >= {"model", "optimizer", "lr_scheduler", "grad_scaler"}


def test_eval_example_reports_the_independently_computed_accuracy(
    trained: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out_dir, _ = trained
    checkpoint = out_dir / "checkpoint_79.mdl"
    stdout = _run("cstorch_eval.py", f"--checkpoint={checkpoint}")
    reported_accuracy = _value(stdout, "Eval Accuracy: ")
    reported_loss = _value(stdout, "Eval Loss: ")

    # the oracle: the examples' own model and data, evaluated with plain PyTorch and sklearn
    monkeypatch.syspath_prepend(str(EXAMPLES))
    helpers: dict[str, Any] = runpy.run_path(str(EXAMPLES / "cstorch_eval.py"), run_name="oracle")
    model = helpers["MLP"]()
    model.load_state_dict(load(checkpoint)["model"])
    model.eval()
    labels, predictions, losses = [], [], []
    with torch.no_grad():
        for inputs, targets in helpers["eval_dataloader_fn"](64):
            outputs = model(inputs)
            labels += targets.tolist()
            predictions += outputs.argmax(-1).tolist()
            losses.append(torch.nn.functional.cross_entropy(outputs, targets).item())
    expected = accuracy_score(labels, predictions)
    assert 0.5 < expected < 1.0  # trained, and not a trivially perfect split
    assert reported_accuracy == pytest.approx(expected, abs=1e-7)  # float32, as cstorch
    assert reported_loss == pytest.approx(mean(losses), rel=1e-6)
