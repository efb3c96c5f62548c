"""Loggers attached to a learner: the files hold exactly what the learner logged, and a
resumed run keeps the earlier epochs' files and appends its own."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import torchtally as cstorch
from torchtally.learn._learner.learner import Learner
from torchtally.learn._logs.files import FileLogger, read_records
from torchtally.learn._logs.summary_table import SummaryTable
from torchtally.learn._logs.tensorboard import TensorBoardLogger
from torchtally.metrics import AccuracyMetric, MeanMetric


def data() -> tuple[torch.utils.data.DataLoader, torch.utils.data.DataLoader]:
    gen = torch.Generator().manual_seed(4)
    inputs = torch.randn(64, 3, generator=gen)
    dataset = torch.utils.data.TensorDataset(inputs, inputs.argmax(1))
    return (
        torch.utils.data.DataLoader(dataset, batch_size=8),
        torch.utils.data.DataLoader(dataset, batch_size=32),
    )


def learner(logdir: Path, num_epochs: int, fmt: str) -> tuple[Learner, SummaryTable]:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 3)
    table = SummaryTable(io.StringIO(), use_rich=False)
    return (
        Learner(
            model,
            cstorch.optim.SGD(model.parameters(), lr=0.1),
            metrics={
                "train": [MeanMetric("loss"), AccuracyMetric()],
                "valid": [MeanMetric("loss"), AccuracyMetric()],
            },
            num_epochs=num_epochs,
            logdir=logdir,
            log_every=3,
            observers=[FileLogger(logdir, format=fmt), TensorBoardLogger(logdir / "tb"), table],
        ),
        table,
    )


def test_logged_files_equal_the_history_across_a_resume(tmp_path: Path) -> None:
    first, _ = learner(tmp_path, 2, "jsonl")
    first.fit(*data())
    epoch_one = (tmp_path / "train" / "epoch-1.jsonl").read_text()
    second, table = learner(tmp_path, 3, "jsonl")
    second.fit(*data(), resume=True)
    assert (tmp_path / "train" / "epoch-1.jsonl").read_text() == epoch_one
    history = first.history + second.history
    key = {"train": 0, "valid": 1}
    expected = sorted(history, key=lambda r: (key[r.split], r.epoch))  # stable: file order
    assert read_records(tmp_path, "train") + read_records(tmp_path, "valid") == expected
    assert sorted(p.name for p in (tmp_path / "valid").iterdir()) == [
        "epoch-1.jsonl",
        "epoch-2.jsonl",
        "epoch-3.jsonl",
    ]
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    losses = [(e.step, e.value) for e in events.Scalars("train/loss")]
    logged = [r for r in history if (r.split, r.name) == ("train", "loss")]
    # TensorBoard stores float32
    assert losses == [(r.step, float(np.float32(r.value))) for r in logged]
    rows = {(r.split, r.name): r for r in table.rows()}  # the whole run's summary
    last_accuracy = [r.value for r in second.history if r.name == "accuracy"][-1]
    assert rows[("valid", "accuracy")].last == last_accuracy
    assert rows[("train", "loss")].count == len(  # one value per epoch of the whole run (issue 27)
        {r.epoch for r in history if (r.split, r.name) == ("train", "loss")}
    )
