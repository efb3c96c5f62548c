"""Checkpoint and resume: a stopped and resumed run logs what an uninterrupted run logs.

Every run here trains the same seeded model (with dropout, so the random state matters) on a
shuffled loader, and the reference is one uninterrupted 3-epoch run. Runs are stopped at an
epoch boundary, part-way through a train or valid epoch (request_stop), by a
KeyboardInterrupt raised in a step, and by a real SIGINT; each is then resumed by a new
Learner built from a differently seeded model, and must give the same records (all but
wall_time) and bit-identical parameters.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import torchtally as cstorch
from torchtally._records import MetricRecord, Progress, RunInfo
from torchtally.learn._learner.learner import Learner
from torchtally.learn._learner.steps import classification_step
from torchtally.metrics import AccuracyMetric, LearningRateMetric, MeanMetric

NUM_EPOCHS = 3
BATCH = 16
SAMPLES = 128  # 8 train steps per epoch


def make_data() -> torch.utils.data.TensorDataset:
    gen = torch.Generator().manual_seed(11)
    inputs = torch.randn(SAMPLES, 6, generator=gen)
    labels = (inputs[:, 0] - inputs[:, 1] > 0).long() + (inputs[:, 2] > 0.5).long()
    return torch.utils.data.TensorDataset(inputs, labels)


def loaders(kind: str = "global") -> tuple[Any, Any]:
    """Shuffled train batches drawn from torch's global generator ("global"), from the
    loader's own generator ("own"), or from one inside a cstorch DataLoader ("cstorch")."""
    data = make_data()

    def input_fn(batch_size: int) -> torch.utils.data.DataLoader:
        generator = torch.Generator().manual_seed(5) if kind != "global" else None
        return torch.utils.data.DataLoader(
            data, batch_size=batch_size, shuffle=True, generator=generator
        )

    train = cstorch.utils.data.DataLoader(input_fn, BATCH) if kind == "cstorch" else input_fn(BATCH)
    valid = torch.utils.data.DataLoader(data, batch_size=32)
    return train, valid


class Watcher:
    """Records run ends and optionally requests a stop on a given progress event."""

    def __init__(self, stop_when: Callable[[Progress], bool] | None = None) -> None:
        self.stop_when = stop_when
        self.learner: Learner | None = None
        self.ends: list[bool] = []
        self.starts: list[RunInfo] = []

    def on_run_start(self, info: RunInfo) -> None:
        self.starts.append(info)

    def on_progress(self, progress: Progress) -> None:
        if self.stop_when is not None and self.stop_when(progress) and self.learner is not None:
            self.learner.request_stop()

    def on_records(self, records: list[MetricRecord]) -> None:
        pass

    def on_epoch_end(self, split: str, epoch: int) -> None:
        pass

    def on_run_end(self, stopped_early: bool) -> None:
        self.ends.append(stopped_early)


def make_learner(
    seed: int,
    num_epochs: int,
    logdir: Path | None,
    watcher: Watcher | None = None,
    train_step: Any = None,
) -> Learner:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(16, 3)
    )
    optimizer = cstorch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    scheduler = cstorch.optim.lr_scheduler.StepLR(optimizer, 0.3, step_size=5, gamma=0.7)
    learner = Learner(
        model,
        optimizer,
        lr_scheduler=scheduler,
        train_step=train_step,
        eval_step=classification_step,
        metrics={
            "train": [MeanMetric("loss"), AccuracyMetric(), LearningRateMetric()],
            "valid": [MeanMetric("loss"), AccuracyMetric()],
        },
        num_epochs=num_epochs,
        logdir=logdir,
        log_every=3,
        observers=[watcher] if watcher is not None else [],
    )
    if watcher is not None:
        watcher.learner = learner
    return learner


def strip(records: list[MetricRecord]) -> list[tuple[Any, ...]]:
    return [(r.split, r.epoch, r.step, r.name, r.value, r.unit) for r in records]


def params(learner: Learner) -> list[torch.Tensor]:
    return [p.detach().clone() for p in learner.model.parameters()]


_REFERENCE: dict[str, tuple[list[tuple[Any, ...]], list[torch.Tensor]]] = {}


def reference(kind: str) -> tuple[list[tuple[Any, ...]], list[torch.Tensor]]:
    """The records and final weights of an uninterrupted run."""
    if kind not in _REFERENCE:
        learner = make_learner(0, NUM_EPOCHS, None)
        learner.fit(*loaders(kind))
        _REFERENCE[kind] = (strip(learner.history), params(learner))
    return _REFERENCE[kind]


def resume_and_compare(tmp_path: Path, first: Learner, kind: str, checkpoint: str) -> None:
    assert first.last_checkpoint is not None
    assert first.last_checkpoint.name == checkpoint
    second = make_learner(123, NUM_EPOCHS, tmp_path)
    second.fit(*loaders(kind), resume=True)
    history, weights = reference(kind)
    assert strip(first.history) + strip(second.history) == history
    assert all(torch.equal(a, b) for a, b in zip(params(second), weights))


@pytest.mark.parametrize("kind", ["global", "own", "cstorch"])
def test_resume_at_epoch_boundary_repeats_the_uninterrupted_run(tmp_path: Path, kind: str) -> None:
    first = make_learner(0, 2, tmp_path)
    first.fit(*loaders(kind))
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        "epoch-1.h5",
        "epoch-2.h5",
    ]
    resume_and_compare(tmp_path, first, kind, "epoch-2.h5")
    history, _ = reference(kind)
    assert len(history) > 0 and {r[1] for r in history} == {1, 2, 3}


@pytest.mark.parametrize(
    ("split", "epoch", "step", "checkpoint"),
    [("train", 2, 5, "epoch-2-train-step-5.h5"), ("valid", 2, 3, "epoch-2-valid-step-3.h5")],
)
def test_request_stop_part_way_then_resume(
    tmp_path: Path, split: str, epoch: int, step: int, checkpoint: str
) -> None:
    watcher = Watcher(lambda p: (p.split, p.epoch, p.step) == (split, epoch, step))
    first = make_learner(0, NUM_EPOCHS, tmp_path, watcher)
    first.fit(*loaders())
    assert watcher.ends == [True]
    last = first.history[-1]
    assert (last.split, last.epoch) == (split, epoch)
    assert (tmp_path / "checkpoints" / checkpoint).is_file()
    resume_and_compare(tmp_path, first, "global", checkpoint)


def test_request_stop_between_splits_saves_the_boundary(tmp_path: Path) -> None:
    watcher = Watcher(lambda p: (p.split, p.epoch, p.step) == ("train", 1, 8))
    first = make_learner(0, NUM_EPOCHS, tmp_path, watcher)
    first.fit(*loaders())
    assert watcher.ends == [True]
    assert {r.split for r in first.history} == {"train"}
    resume_and_compare(tmp_path, first, "global", "epoch-1-valid-step-0.h5")


def interrupting_step(at_call: int, action: Callable[[], None]) -> Any:
    calls = [0]

    def step(model: Any, batch: Any) -> Any:
        calls[0] += 1
        if calls[0] == at_call:
            action()
        return classification_step(model, batch)

    return step


def raise_interrupt() -> None:
    raise KeyboardInterrupt


def test_keyboard_interrupt_in_a_step_stops_saves_and_resumes(tmp_path: Path) -> None:
    watcher = Watcher()
    step = interrupting_step(12, raise_interrupt)  # epoch 2, step 4: steps 1-3 completed
    first = make_learner(0, NUM_EPOCHS, tmp_path, watcher, train_step=step)
    first.fit(*loaders())  # returns normally
    assert watcher.ends == [True]
    assert first.global_step == 11
    resume_and_compare(tmp_path, first, "global", "epoch-2-train-step-3.h5")


def test_sigint_stops_after_the_current_step(tmp_path: Path) -> None:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a plain script
    try:
        watcher = Watcher()
        step = interrupting_step(4, lambda: signal.raise_signal(signal.SIGINT))
        first = make_learner(0, NUM_EPOCHS, tmp_path, watcher, train_step=step)
        first.fit(*loaders())
        assert watcher.ends == [True]
        assert first.global_step == 4  # the step that got the signal completed
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    finally:
        signal.signal(signal.SIGINT, previous)
    resume_and_compare(tmp_path, first, "global", "epoch-1-train-step-4.h5")


def test_a_second_sigint_interrupts_the_step(tmp_path: Path) -> None:
    def twice() -> None:
        signal.raise_signal(signal.SIGINT)  # asks for a stop
        signal.raise_signal(signal.SIGINT)  # interrupts this step

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        watcher = Watcher()
        first = make_learner(0, NUM_EPOCHS, tmp_path, watcher, interrupting_step(4, twice))
        first.fit(*loaders())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert watcher.ends == [True] and first.global_step == 3
    resume_and_compare(tmp_path, first, "global", "epoch-1-train-step-3.h5")


def test_stop_without_logdir_ends_the_run_without_checkpoint() -> None:
    watcher = Watcher(lambda p: p.step == 2)
    learner = make_learner(0, NUM_EPOCHS, None, watcher)
    learner.fit(*loaders())
    assert watcher.ends == [True]
    assert learner.global_step == 2 and learner.last_checkpoint is None


def test_checkpoint_holds_the_training_state(tmp_path: Path) -> None:
    learner = make_learner(0, 1, tmp_path)
    learner.fit(*loaders())
    state = cstorch.load(tmp_path / "checkpoints" / "epoch-1.h5")
    assert state["position"] == {"epoch": 2, "split_index": 0, "step": 0}
    assert state["global_step"] == 8 and state["eval_steps"]["valid"] == 4
    for name, value in learner.model.state_dict().items():
        assert torch.equal(state["model"][name], value)
    assert torch.equal(state["rng"]["torch"], torch.get_rng_state())
    accuracy = AccuracyMetric().persistent()
    accuracy.load_state_dict(state["metrics"]["valid"]["accuracy"])
    assert float(accuracy.total) == SAMPLES  # the epoch's final metric state
    assert state["lr_scheduler"]["last_epoch"] is not None
    assert state["rng_split_start"] is None


def test_resume_without_checkpoint_starts_afresh_or_raises(tmp_path: Path) -> None:
    learner = make_learner(0, 1, tmp_path)
    with pytest.raises(FileNotFoundError, match="no"):
        learner.resume()
    learner.fit(*loaders(), resume=True)  # nothing to resume: a fresh run
    assert learner.global_step == 8 and learner.epochs_done == 1


def test_fit_after_the_last_epoch_runs_nothing(tmp_path: Path) -> None:
    first = make_learner(0, 1, tmp_path)
    first.fit(*loaders())
    again = make_learner(0, 1, tmp_path)
    again.fit(*loaders(), resume=True)
    assert again.history == [] and again.global_step == 8


@pytest.mark.parametrize("kind", ["own", "cstorch"])
def test_stop_part_way_with_the_loaders_own_generator(tmp_path: Path, kind: str) -> None:
    watcher = Watcher(lambda p: (p.split, p.epoch, p.step) == ("train", 3, 2))
    first = make_learner(0, NUM_EPOCHS, tmp_path, watcher)
    first.fit(*loaders(kind))
    resume_and_compare(tmp_path, first, kind, "epoch-3-train-step-2.h5")


def test_raising_num_epochs_continues_in_process() -> None:
    learner = make_learner(0, 2, None)
    train, valid = loaders()
    learner.fit(train, valid)
    learner.num_epochs = NUM_EPOCHS
    learner.fit(train, valid)
    history, weights = reference("global")
    assert strip(learner.history) == history
    assert all(torch.equal(a, b) for a, b in zip(params(learner), weights))


def test_resume_refuses_a_file_that_is_not_a_learner_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "other.h5"
    cstorch.save({"model": {}}, path)
    learner = make_learner(0, 1, tmp_path)
    with pytest.raises(ValueError, match=r"`path`.*other\.h5.*position"):
        learner.resume(path)
