"""`examples/modelzoo_flow.py`: the model-zoo-style train-then-eval flow runs and is right.

Oracles: TensorBoard's own event reader for what was logged, the learning-rate schedule
computed by hand from the config (linear warmup, then cosine decay), and scikit-learn plus
plain torch for the eval metrics of the last checkpoint's model on the eval data.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score

import torchtally as cstorch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "modelzoo_flow.py"

pytest.importorskip("tensorboard")
pytestmark = pytest.mark.slow  # two training runs and an eval: ~20 s on a shared 2-core CPU


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("modelzoo_flow", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["modelzoo_flow"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def flow() -> ModuleType:
    return _module()


@pytest.fixture(scope="module")
def result(
    flow: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], dict[str, Any]]:
    params = copy.deepcopy(flow.PARAMS)
    params["runconfig"]["model_dir"] = str(tmp_path_factory.mktemp("modelzoo"))
    return params, flow.run(params)


def test_only_the_import_line_names_torchtally() -> None:
    lines = [line for line in SCRIPT.read_text().splitlines() if "torchtally" in line]
    assert lines == ["import torchtally as cstorch"]


def test_checkpoints_follow_checkpoint_steps(result: tuple[dict[str, Any], dict[str, Any]]) -> None:
    params, out = result
    model_dir = Path(params["runconfig"]["model_dir"])
    every, last = params["runconfig"]["checkpoint_steps"], params["runconfig"]["max_steps"]
    expected = sorted(f"checkpoint_{s}.mdl" for s in range(every, last + 1, every))
    assert sorted(p.name for p in model_dir.glob("checkpoint_*.mdl")) == expected
    assert out["checkpoint"] == str(model_dir / f"checkpoint_{last}.mdl")
    for name in expected:
        state = cstorch.load(model_dir / name)
        assert state["global_step"] == int(name.removeprefix("checkpoint_").removesuffix(".mdl"))
        assert set(state) == {"model", "optimizer", "lr_scheduler", "grad_scaler", "global_step"}


def _expected_lr(step: int, schedules: list[dict[str, Any]]) -> float:
    warm, decay = schedules
    if step <= warm["total_iters"]:
        a, b = warm["initial_learning_rate"], warm["end_learning_rate"]
        return a + (b - a) * step / warm["total_iters"]
    t = min(step - warm["total_iters"], decay["total_iters"])
    a, b = decay["initial_learning_rate"], decay["end_learning_rate"]
    return b + (a - b) * (1 + math.cos(math.pi * t / decay["total_iters"])) / 2


def test_logged_loss_falls_and_lr_follows_schedule(
    result: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    params, _ = result
    events = EventAccumulator(str(Path(params["runconfig"]["model_dir"]) / "train"))
    events.Reload()
    log_steps, max_steps = params["runconfig"]["log_steps"], params["runconfig"]["max_steps"]
    losses = events.Scalars("loss")
    assert [e.step for e in losses] == list(range(log_steps, max_steps + 1, log_steps))
    assert losses[-1].value < 0.5 * losses[0].value
    schedules = params["optimizer"]["learning_rate"]
    for event in events.Scalars("lr"):
        assert event.value == pytest.approx(_expected_lr(event.step, schedules), rel=1e-5, abs=1e-8)
    assert all(e.value > 0 for e in events.Scalars("global_samples_per_sec"))


def test_eval_metrics_match_sklearn(
    flow: ModuleType, result: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    params, out = result
    model = flow.model_fn(params)
    model.load_state_dict(cstorch.load(out["checkpoint"])["model"])
    model.eval()
    labels, predictions, losses = [], [], []
    with torch.no_grad():
        for inputs, y in flow.eval_input_fn(params):
            logits = model.net(inputs)
            labels.append(y)
            predictions.append(logits.argmax(-1))
            losses.append(torch.nn.functional.cross_entropy(logits, y))
    y_true, y_pred = torch.cat(labels).numpy(), torch.cat(predictions).numpy()
    metrics = out["metrics"]
    assert metrics["eval/accuracy"] == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-6)
    num_classes = params["model"]["num_classes"]
    assert metrics["eval/macro_f1"] == pytest.approx(
        f1_score(y_true, y_pred, average="macro", labels=list(range(num_classes)), zero_division=0),
        abs=1e-6,
    )
    assert metrics["eval/loss"] == pytest.approx(float(torch.stack(losses).mean()), rel=1e-5)
    assert metrics["eval/accuracy"] > 0.6  # the blobs are learnable: training did something


def test_resume_from_a_checkpoint_runs_the_remaining_steps(
    flow: ModuleType, result: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    params, _ = result
    resumed = copy.deepcopy(params)
    middle = params["runconfig"]["checkpoint_steps"] * 2
    resumed["runconfig"].update(
        model_dir=str(tmp_path),
        mode="train",
        checkpoint_path=str(Path(params["runconfig"]["model_dir"]) / f"checkpoint_{middle}.mdl"),
    )
    out = flow.run(resumed)
    final = cstorch.load(out["checkpoint"])
    assert final["global_step"] == params["runconfig"]["max_steps"]
    assert sorted(p.name for p in tmp_path.glob("checkpoint_*.mdl")) == [
        f"checkpoint_{params['runconfig']['max_steps']}.mdl"
    ]
    # The scheduler continued where the checkpoint left it.
    assert final["optimizer"]["param_groups"][0]["lr"] == pytest.approx(
        _expected_lr(params["runconfig"]["max_steps"], params["optimizer"]["learning_rate"]),
        rel=1e-5,
    )
