"""Early stopping, best-checkpoint selection, `evaluate`, and the metric classes' declared
`higher_is_better` / `unit`. The validation accuracy of each epoch is scripted (the eval step
predicts the right class for a chosen number of the 8 samples), so the expected stop epoch and
best epochs are worked out by hand."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import torchtally as cstorch
import torchtally.metrics as tm
from torchtally.learn import EarlyStopping
from torchtally.learn._learner.learner import Learner
from torchtally.learn._outputs import ClassificationOutput
from torchtally.metrics import AccuracyMetric, LearningRateMetric, MeanMetric

LABELS = torch.zeros(8, dtype=torch.long)


class Scripted:
    """An eval step whose accuracy in call i is `accuracies[i]` (k of 8 right)."""

    def __init__(self, accuracies: list[float]) -> None:
        self.accuracies = accuracies
        self.calls = 0

    def __call__(self, model: Any, batch: Any) -> ClassificationOutput:
        inputs, labels = batch
        right = round(self.accuracies[min(self.calls, len(self.accuracies) - 1)] * 8)
        self.calls += 1
        logits = model(inputs) * 0.0  # through the model, but the script decides
        logits = logits + F.one_hot((torch.arange(8) >= right).long(), 2).float() * 5.0
        return ClassificationOutput(F.cross_entropy(logits, labels), logits, labels)


def make(accuracies: list[float], num_epochs: int, **kwargs: Any) -> tuple[Learner, Any, Any]:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    data = torch.utils.data.TensorDataset(torch.randn(8, 3), LABELS)
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    learner = Learner(
        model,
        cstorch.optim.SGD(model.parameters(), lr=0.1),
        eval_step=Scripted(accuracies),
        metrics={
            "train": [MeanMetric("loss"), LearningRateMetric()],
            "valid": [MeanMetric("loss"), AccuracyMetric()],
        },
        num_epochs=num_epochs,
        **kwargs,
    )
    return learner, loader, loader


def test_early_stopping_stops_after_patience_epochs_without_improvement(tmp_path: Path) -> None:
    # best 0.5 (e1), 0.75 (e2); e3 0.625 and e4 0.75 (not better) -> 2 bad epochs: stop at 4.
    learner, train, valid = make(
        [0.5, 0.75, 0.625, 0.75, 1.0, 1.0],
        10,
        logdir=tmp_path,
        early_stopping=EarlyStopping("valid/accuracy", patience=2),
    )
    learner.fit(train, valid)
    assert learner.epochs_done == 4 and learner.stopped_at_epoch == 4
    assert (tmp_path / "checkpoints" / "epoch-4.h5").is_file()  # the stop checkpoints
    accuracy = [r.value for r in learner.history if r.name == "accuracy"]
    assert accuracy == [0.5, 0.75, 0.625, 0.75]


def test_min_delta_and_the_loss_is_lower_is_better() -> None:
    # Loss falls by less than min_delta after epoch 1: epochs 2 and 3 count as no improvement.
    learner, train, valid = make(
        [0.5, 0.625, 0.75, 0.875, 1.0],
        10,
        early_stopping=EarlyStopping("valid/loss", patience=2, min_delta=10.0),
    )
    learner.fit(train, valid)
    assert learner.stopped_at_epoch == 3


def test_keep_best_n_plus_last_and_resume_keeps_the_ranking(tmp_path: Path) -> None:
    script = [0.5, 0.75, 0.625, 0.875, 0.25, 0.375]
    learner, train, valid = make(script, 4, logdir=tmp_path, keep_best=2, best_by="valid/accuracy")
    learner.fit(train, valid)
    folder = tmp_path / "checkpoints"
    assert [(v, e) for v, e, _ in learner.best_checkpoints] == [(0.875, 4), (0.75, 2)]
    assert sorted(p.name for p in folder.glob("*.h5")) == ["epoch-2.h5", "epoch-4.h5"]
    # A new process resumes: the ranking rides in the checkpoint, epochs 5-6 are worse.
    again, train, valid = make(
        script[4:], 6, logdir=tmp_path, keep_best=2, best_by="valid/accuracy"
    )
    again.fit(train, valid, resume=True)
    assert [(v, e) for v, e, _ in again.best_checkpoints] == [(0.875, 4), (0.75, 2)]
    assert sorted(p.name for p in folder.glob("*.h5")) == [
        "epoch-2.h5",
        "epoch-4.h5",
        "epoch-6.h5",  # the last
    ]
    best = again.best_checkpoints[0][2]
    third, _, _ = make(script, 6, logdir=tmp_path)
    third.resume(best)
    assert third.epochs_done == 4


def test_evaluate_returns_the_results_dict() -> None:
    learner, _, valid = make([0.625], 1)
    results = learner.evaluate(valid)
    assert results["accuracy"] == 0.625 and set(results) == {"loss", "accuracy"}
    with pytest.raises(ValueError, match="`split` must be 'test' or 'valid'"):
        learner.evaluate(valid, split="train")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"early_stopping": EarlyStopping("train/learning_rate")}, "does not declare"),
        ({"early_stopping": EarlyStopping("valid/f1")}, "must name one of the learner's"),
        ({"keep_best": 1, "best_by": "accuracy"}, "'split/name'"),
        ({"best_by": "valid/accuracy"}, "needs `keep_best`"),
        (
            {
                "keep_best": 1,
                "best_by": "valid/accuracy",
                "early_stopping": EarlyStopping("valid/loss"),
            },
            "one monitored metric",
        ),
    ],
)
def test_bad_selection_arguments_are_named(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make([0.5], 2, **kwargs)


def test_bad_early_stopping_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping("valid/loss", patience=0)
    with pytest.raises(ValueError, match="min_delta"):
        EarlyStopping("valid/loss", min_delta=-1.0)
    with pytest.raises(ValueError, match="`mode` must be"):
        EarlyStopping("valid/loss", mode="up")


def test_every_metric_class_declares_direction_and_unit() -> None:
    classes = [
        obj
        for name in tm.__all__
        if inspect.isclass(obj := getattr(tm, name)) and issubclass(obj, tm.Metric)
    ]
    assert len(classes) > 15
    for cls in classes:
        assert cls.higher_is_better in (True, False, None), cls
        assert isinstance(cls.unit, str), cls
    expected = {
        tm.AccuracyMetric: (True, "%"),
        tm.F1ScoreMetric: (True, "%"),
        tm.AUROCMetric: (True, "%"),
        tm.MSEMetric: (False, ""),
        tm.MAEMetric: (False, ""),
        tm.PerplexityMetric: (False, ""),
        tm.R2ScoreMetric: (True, ""),
        tm.MeanMetric: (None, ""),
        tm.LearningRateMetric: (None, ""),
    }
    for cls, (higher, unit) in expected.items():
        assert (cls.higher_is_better, cls.unit) == (higher, unit), cls
