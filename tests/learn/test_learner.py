"""The learner on tiny models: what it logs, when, and that the values are right.

Metric values are checked against scikit-learn on the very predictions the steps made (the
step function keeps a copy of its logits, without reading them), and the learning rate
against the scheduler's own formula.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from sklearn import metrics as skm

import torchtally as cstorch
from torchtally._records import MetricRecord, Progress, RunInfo
from torchtally.learn._learner.learner import Learner
from torchtally.learn._learner.steps import classification_step
from torchtally.learn._outputs import ClassificationOutput, RegressionOutput, SequenceOutput
from torchtally.metrics import (
    AccuracyMetric,
    F1ScoreMetric,
    LearningRateMetric,
    MeanMetric,
    MetricValueError,
    MSEMetric,
    PerplexityMetric,
    PrecisionMetric,
    R2ScoreMetric,
)
from torchtally.runtime import TensorReadError

SAMPLES, BATCH = 96, 16  # 6 train steps per epoch


def blobs(seed: int = 3) -> torch.utils.data.TensorDataset:
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(SAMPLES) % 3
    centres = torch.tensor([[2.0, 0.0], [-2.0, 1.0], [0.0, -2.0]])
    return torch.utils.data.TensorDataset(
        centres[labels] + torch.randn(SAMPLES, 2, generator=gen), labels
    )


class Recorder:
    """Keeps every event."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_run_start(self, info: RunInfo) -> None:
        self.events.append(("start", info))

    def on_progress(self, progress: Progress) -> None:
        self.events.append(("progress", progress))

    def on_records(self, records: list[MetricRecord]) -> None:
        self.events.append(("records", records))

    def on_epoch_end(self, split: str, epoch: int) -> None:
        self.events.append(("epoch_end", (split, epoch)))

    def on_run_end(self, stopped_early: bool) -> None:
        self.events.append(("end", stopped_early))

    def of(self, kind: str) -> list[Any]:
        return [payload for k, payload in self.events if k == kind]


class Keeper:
    """A step function that keeps each batch's logits and labels (tensor copies, no read)."""

    def __init__(self) -> None:
        self.kept: list[tuple[torch.Tensor, torch.Tensor]] = []

    def __call__(self, model: Any, batch: Any) -> Any:
        output = classification_step(model, batch)
        self.kept.append((output.output.detach().clone(), output.targets))
        return output

    def take(self) -> tuple[torch.Tensor, torch.Tensor]:
        logits = torch.cat([k[0] for k in self.kept])
        labels = torch.cat([k[1] for k in self.kept])
        self.kept.clear()
        return logits, labels


def final(records: list[MetricRecord], split: str, epoch: int, name: str) -> float:
    values = [r for r in records if (r.split, r.epoch, r.name) == (split, epoch, name)]
    return values[-1].value


def test_fit_logs_values_equal_to_sklearn_on_the_same_predictions() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 3)
    optimizer = cstorch.optim.SGD(model.parameters(), lr=0.2)
    scheduler = cstorch.optim.lr_scheduler.StepLR(optimizer, 0.2, step_size=4, gamma=0.5)
    train_keeper, eval_keeper = Keeper(), Keeper()
    recorder = Recorder()
    # Each epoch's predictions, taken from the keepers at the epoch ends.
    per_epoch: dict[tuple[str, int], tuple[torch.Tensor, torch.Tensor]] = {}

    class Snap:
        def on_epoch_end(self, split: str, epoch: int) -> None:
            keeper = train_keeper if split == "train" else eval_keeper
            per_epoch[(split, epoch)] = keeper.take()

    learner = Learner(
        model,
        optimizer,
        lr_scheduler=scheduler,
        train_step=train_keeper,
        eval_step=eval_keeper,
        metrics={
            "train": [MeanMetric("loss"), AccuracyMetric(), LearningRateMetric()],
            "valid": [
                MeanMetric("loss"),
                AccuracyMetric(),
                F1ScoreMetric(3, average_type="macro"),
                PrecisionMetric(3, average_type="none"),
            ],
        },
        num_epochs=3,
        log_every=4,
        observers=[recorder, Snap()],
    )
    train_data = torch.utils.data.DataLoader(blobs(), batch_size=BATCH, shuffle=True)
    valid_data = torch.utils.data.DataLoader(blobs(9), batch_size=32)
    learner.fit(train_data, valid_data)
    history = learner.history
    losses = [final(history, "train", e, "loss") for e in (1, 2, 3)]
    assert losses[2] < losses[0]
    for epoch in (1, 2, 3):
        logits, labels = per_epoch[("train", epoch)]
        y, pred = labels.numpy(), logits.argmax(1).numpy()
        assert final(history, "train", epoch, "accuracy") == pytest.approx(
            skm.accuracy_score(y, pred),
            abs=1e-7,  # float32, as cstorch
        )
        mean_loss = F.cross_entropy(logits, labels).item()  # equal batches: mean of means
        assert final(history, "train", epoch, "loss") == pytest.approx(mean_loss, rel=1e-5)
        logits, labels = per_epoch[("valid", epoch)]
        y, pred = labels.numpy(), logits.argmax(1).numpy()
        assert final(history, "valid", epoch, "accuracy") == pytest.approx(
            skm.accuracy_score(y, pred),
            abs=1e-7,  # float32, as cstorch
        )
        assert final(history, "valid", epoch, "f1_score") == pytest.approx(
            skm.f1_score(y, pred, average="macro"), abs=1e-12
        )
        per_class = skm.precision_score(y, pred, average=None, zero_division=0)
        for c in range(3):
            assert final(history, "valid", epoch, f"precision[{c}]") == pytest.approx(
                per_class[c], abs=1e-12
            )
    # The rate of the last step of epoch e (global step 6e) is 0.2 * 0.5 ** ((6e - 1) // 4).
    for epoch in (1, 2, 3):
        expected = 0.2 * 0.5 ** ((6 * epoch - 1) // 4)
        assert final(history, "train", epoch, "learning_rate") == pytest.approx(expected)
    assert recorder.of("end") == [False]


def test_records_progress_and_epoch_events_come_in_order() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 3)
    recorder = Recorder()
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        num_epochs=2,
        log_every=4,
        observers=[recorder],
    )
    train = torch.utils.data.DataLoader(blobs(), batch_size=BATCH)  # 6 steps
    valid = torch.utils.data.DataLoader(blobs(), batch_size=40)  # 3 steps
    learner.fit(train, valid)
    info = recorder.of("start")[0]
    assert info.splits == ("train", "valid") and info.num_epochs == 2 and info.start_epoch == 1
    assert info.metric_names == {"train": ("loss", "learning_rate"), "valid": ("loss",)}
    train_steps = sorted({r.step for r in learner.history if r.split == "train"})
    assert train_steps == [4, 6, 10, 12]  # every 4 steps and at each epoch's last step
    valid_steps = sorted({r.step for r in learner.history if r.split == "valid"})
    assert valid_steps == [3, 6]  # evaluation steps, counted over the run
    progress = recorder.of("progress")
    assert [(p.split, p.epoch, p.step) for p in progress[:7]] == [
        *[("train", 1, s) for s in range(1, 7)],
        ("valid", 1, 1),
    ]
    assert all(p.steps_in_epoch == (6 if p.split == "train" else 3) for p in progress)
    assert progress[5].global_step == 6 and progress[-1].global_step == 12
    assert progress[0].samples_per_second is None
    assert all(p.samples_per_second > 0 for p in progress if p.step > 1)
    assert recorder.of("epoch_end") == [("train", 1), ("valid", 1), ("train", 2), ("valid", 2)]
    kinds = [k for k, _ in recorder.events]
    assert kinds[0] == "start" and kinds[-1] == "end"
    # the records of an epoch's last step arrive before its epoch end
    last_train = kinds.index("epoch_end")
    assert kinds[last_train - 1] == "records"
    assert recorder.of("end") == [False]


def test_the_step_is_traced_so_reading_a_value_in_it_fails() -> None:
    model = torch.nn.Linear(2, 3)

    def reading_step(model: Any, batch: Any) -> Any:
        output = classification_step(model, batch)
        if output.loss > 100:  # a host read
            raise AssertionError("unreachable")
        return output

    recorder = Recorder()
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        train_step=reading_step,
        observers=[recorder],
    )
    with pytest.raises(TensorReadError):
        learner.fit(torch.utils.data.DataLoader(blobs(), batch_size=BATCH))
    assert recorder.of("end") == [True]  # observers still see the run end


def test_metric_data_errors_surface_at_the_epoch_end() -> None:
    model = torch.nn.Linear(2, 3)
    bad = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.tensor([0, 1, 2, 5] * 2))

    def step(model: Any, batch: Any) -> ClassificationOutput:
        inputs, labels = batch  # label 5 is out of range for 3 classes
        logits = model(inputs)
        return ClassificationOutput(F.cross_entropy(logits, labels.clamp(max=2)), logits, labels)

    recorder = Recorder()
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        metrics={"train": [PrecisionMetric(3)]},
        train_step=step,
        observers=[recorder],
    )
    with pytest.raises(MetricValueError, match="precision"):
        learner.fit(torch.utils.data.DataLoader(bad, batch_size=4))
    assert recorder.of("end") == [True]


def test_regression_learner_matches_sklearn() -> None:
    torch.manual_seed(1)
    inputs = torch.randn(64, 3)
    targets = inputs @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(64)
    data = torch.utils.data.TensorDataset(inputs, targets)
    model = torch.nn.Linear(3, 1)
    kept: list[torch.Tensor] = []

    def step(model: Any, batch: Any) -> RegressionOutput:
        x, y = batch
        pred = model(x)
        kept.append(pred.detach().clone())
        return RegressionOutput(F.mse_loss(pred.squeeze(1), y), pred, y)

    learner = Learner(
        model,
        cstorch.optim.SGD(model.parameters(), lr=0.05),
        train_step=step,
        metrics={"valid": [MeanMetric("loss"), MSEMetric(), R2ScoreMetric()]},
        num_epochs=4,
    )
    learner.fit(torch.utils.data.DataLoader(data, batch_size=16))
    kept.clear()
    values = learner.validate(torch.utils.data.DataLoader(data, batch_size=16))
    pred = torch.cat(kept).squeeze(1).numpy()
    assert values["mse"] == pytest.approx(skm.mean_squared_error(targets.numpy(), pred), rel=1e-5)
    assert values["r2_score"] == pytest.approx(skm.r2_score(targets.numpy(), pred), rel=1e-5)
    assert values["loss"] == pytest.approx(values["mse"], rel=1e-5)


def test_sequence_learner_perplexity_ignores_padding() -> None:
    torch.manual_seed(2)
    vocab, pad = 7, 0
    tokens = torch.randint(1, vocab, (12, 5))
    tokens[:, 3:] = pad  # the last two positions are padding
    data = torch.utils.data.TensorDataset(tokens)
    model = torch.nn.Embedding(vocab, vocab)
    kept: list[tuple[torch.Tensor, torch.Tensor]] = []

    def step(model: Any, batch: Any) -> SequenceOutput:
        (seq,) = batch
        logits = model(seq[:, :-1])
        targets = seq[:, 1:]
        kept.append((logits.detach().clone(), targets))
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=pad)
        return SequenceOutput(loss, logits, targets, pad_id=pad)

    learner = Learner(
        model,
        cstorch.optim.SGD(model.parameters(), lr=0.1),
        train_step=step,
        metrics={"test": [PerplexityMetric(), AccuracyMetric()]},
    )
    values = learner.test(torch.utils.data.DataLoader(data, batch_size=4))
    logits = torch.cat([k[0] for k in kept]).flatten(0, 1)
    targets = torch.cat([k[1] for k in kept]).flatten()
    keep = targets != pad
    expected = math.exp(F.cross_entropy(logits[keep], targets[keep]).item())
    assert values["perplexity"] == pytest.approx(expected, rel=1e-6)
    accuracy = skm.accuracy_score(targets[keep].numpy(), logits[keep].argmax(1).numpy())
    assert values["accuracy"] == pytest.approx(accuracy, abs=1e-7)  # float32, as cstorch


class FakeMonitor:
    """The SystemMonitor surface the learner uses."""

    def __init__(self) -> None:
        self.observers: list[Any] = []
        self.calls: list[Any] = []
        self.running = False

    def add_observer(self, observer: Any) -> None:
        self.observers.append(observer)

    def set_epoch(self, epoch: int) -> None:
        self.calls.append(("epoch", epoch))
        for observer in self.observers:  # a sample, as the sampler thread would send
            observer.on_records([MetricRecord("system", epoch, 0, "cpu_usage", 0.5, 0.0, "%")])

    def start(self) -> None:
        self.running = True
        self.calls.append("start")

    def stop(self) -> None:
        self.running = False
        self.calls.append("stop")


def test_monitor_is_started_told_the_epoch_and_feeds_the_observers() -> None:
    model = torch.nn.Linear(2, 3)
    monitor, recorder = FakeMonitor(), Recorder()
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        num_epochs=2,
        monitor=monitor,
        observers=[recorder],
    )
    learner.fit(torch.utils.data.DataLoader(blobs(), batch_size=BATCH))
    assert monitor.calls == ["start", ("epoch", 1), ("epoch", 2), "stop"]
    system = [r for batch in recorder.of("records") for r in batch if r.split == "system"]
    assert [r.epoch for r in system] == [1, 2]
    assert all(r.split != "system" for r in learner.history)


def test_default_step_refuses_other_batches() -> None:
    model = torch.nn.Linear(2, 3)
    learner = Learner(model, torch.optim.SGD(model.parameters(), lr=0.1))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(4, 2)))
    with pytest.raises(TypeError, match="inputs, labels"):
        learner.fit(loader)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_epochs": 0}, ValueError, "num_epochs"),
        ({"log_every": 0}, ValueError, "log_every"),
        ({"checkpoint_every": 0}, ValueError, "checkpoint_every"),
        ({"metrics": {"tran": []}}, ValueError, "'tran'"),
        ({"metrics": {"train": [AccuracyMetric(), AccuracyMetric()]}}, ValueError, "accuracy"),
        ({"metrics": {"train": ["accuracy"]}}, TypeError, "metrics\\['train'\\]"),
        ({"train_step": 3}, TypeError, "train_step"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, Any], error: type, match: str) -> None:
    model = torch.nn.Linear(2, 3)
    with pytest.raises(error, match=match):
        Learner(model, torch.optim.SGD(model.parameters(), lr=0.1), **kwargs)


def test_bad_model_optimizer_and_shared_metrics_are_refused() -> None:
    model = torch.nn.Linear(2, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(TypeError, match="model"):
        Learner("model", optimizer)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="optimizer"):
        Learner(model, "sgd")  # type: ignore[arg-type]
    shared = AccuracyMetric()
    with pytest.raises(ValueError, match="'train' and 'valid'"):
        Learner(model, optimizer, metrics={"train": [shared], "valid": [shared]})


def test_loader_without_length_and_output_without_loss_are_refused(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 3)
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        train_step=lambda m, b: m(b[0]),
    )
    with pytest.raises(TypeError, match="train_loader"):
        learner.fit(iter([(torch.randn(2, 2), torch.tensor([0, 1]))]))
    with pytest.raises(TypeError, match="loss"):
        learner.fit([(torch.randn(2, 2), torch.tensor([0, 1]))])
